"""Seed agent for HumanEval: ask the model once for the function, take the first Python block of its answer.

`clade_llm` is copied beside this file by the task; it reaches the run's LLM
gateway (no API key here). If the answer holds no code block, the whole
answer is taken as code.
"""
import re

import clade_llm

SYSTEM = ("You are an expert Python programmer. Complete the function the user gives you. "
          "Answer with the complete function, including the imports it needs, in one ```python block.")
FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)


def extract_code(answer: str) -> str:
    """The first fenced code block of the answer, or the answer itself."""
    found = FENCE.search(answer)
    return (found.group(1) if found else answer).strip("\n") + "\n"


def solve(problem: dict) -> str:
    """Code for `problem` ("task_id", "prompt", "entry_point"): a whole definition of the function."""
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Complete `{problem['entry_point']}`:\n```python\n{problem['prompt']}```"},
    ]
    answer = clade_llm.chat(messages, temperature=0.0, max_tokens=1024)
    return extract_code(answer)
