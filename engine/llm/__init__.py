"""The LLM client: the only code in Clade that imports litellm (lazily, on the first call).

    client = LLMClient(archive, LLMSettings(max_cost_usd=5.0))
    answer = await client.complete(messages, model="openai/gpt-4o-mini", purpose="mutate",
                                   node_id=7, key="child 17, attempt 0", temperature=0.7)

Every call is a row in the archive's `llm_calls` table, written when it returns
or fails; the same table answers repeated requests (resume, `--replay`) at no
cost. Importing this package does not import litellm.
"""

from __future__ import annotations

from engine.llm.budget import Budget
from engine.llm.client import LLMClient
from engine.llm.errors import BudgetExceeded, LLMError, LLMFatalError
from engine.llm.records import CallLimits, LLMAnswer, LLMSettings
from engine.llm.request import LLMRequest, build_request
from engine.llm.spend import Spend, SpendLine

__all__ = [
    "Budget",
    "BudgetExceeded",
    "CallLimits",
    "LLMAnswer",
    "LLMClient",
    "LLMError",
    "LLMFatalError",
    "LLMRequest",
    "LLMSettings",
    "Spend",
    "SpendLine",
    "build_request",
]
