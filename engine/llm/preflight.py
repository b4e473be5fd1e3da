"""Before a search spends anything: every model has a provider and a key, and a given server answers.

Without `--api-base`, a model whose provider's key variable is unset would
fail on every call (litellm even reports a missing OpenAI key as a retryable
500), so the run refuses to start and names the variable; litellm's own
`validate_environment` says which variables a provider reads. Only key-like
names count (`*API_KEY*`, `*_TOKEN`): settings such as OLLAMA_API_BASE or
VERTEXAI_PROJECT have defaults or other sources, and a failed call still
stops the run with one line if they are wrong.

With `--api-base` the key check is skipped (a local server usually needs
none; `NO_KEY` is sent in place of a missing one) and one tiny call per model
must answer instead, booked in `llm_calls` with purpose `probe`, before any
evaluation starts.
"""

from __future__ import annotations

import contextlib
import io
import os
import re

from engine.llm.provider import load_litellm
from engine.llm.records import CallLimits

PROBE_MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]
PROBE_RETRIES = 1
PROBE_TIMEOUT_S = 30.0
NO_KEY = "no-key"  # what a local server gets when the provider's key variable is unset
_KEY_LIKE = re.compile(r"API_KEY|_TOKEN$")
# The key variables of common providers, as litellm's validate_environment names them (a test holds them
# equal): a missing key is said without importing litellm, which takes seconds of CPU.
KNOWN_KEYS = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY",),
}


def _validate(model: str) -> dict:
    litellm = load_litellm()
    with contextlib.redirect_stdout(io.StringIO()):  # litellm prints a provider list for names it does not know
        try:
            return dict(litellm.validate_environment(model=model))
        except Exception:  # noqa: BLE001 - no verdict is no reason to refuse a run
            return {}


def missing_keys(model: str) -> list[str]:
    """The key variables the model's provider reads, when none of them is set ([] when one is, or unknown)."""
    return [name for name in _validate(model).get("missing_keys") or [] if _KEY_LIKE.search(name)]


def unknown_provider(model: str, api_base: str | None) -> str | None:
    """Why litellm cannot route `model` (one line), or None."""
    litellm = load_litellm()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            litellm.get_llm_provider(model=model, api_base=api_base)
    except Exception:  # noqa: BLE001 - litellm raises several kinds here
        return (
            f"--model {model}: litellm knows no provider for it; name one as provider/name, "
            "e.g. openai/gpt-4o-mini (openai/<name> with --api-base for an OpenAI-compatible server)"
        )
    return None


def _known_missing(model: str) -> list[str] | None:
    """The fast path: the missing key variables of a common provider ([] when one is set), None if not common."""
    provider, slash, _ = model.partition("/")
    names = KNOWN_KEYS.get(provider) if slash else None
    if names is None:
        return None
    return [] if any(os.environ.get(name) for name in names) else list(names)


def check_models(models: list[str], api_base: str | None) -> str | None:
    """One line saying why these models cannot be called from here, or None."""
    from importlib.util import find_spec

    if models and find_spec("litellm") is None:  # found without importing it (seconds of CPU)
        from engine.install import install_extra

        return f"a model is called through litellm, which is not installed: {install_extra('llm')}"
    for model in models:
        known = _known_missing(model) if api_base is None else None
        if known is not None:
            if known:
                return _no_key(model, known)
            continue
        why = unknown_provider(model, api_base)
        if why:
            return why
        if api_base is None:
            missing = missing_keys(model)
            if missing:
                return _no_key(model, missing)
    return None


def _no_key(model: str, names: list[str]) -> str:
    return f"no API key for {model}: set {' or '.join(names)} (or give --api-base for a local OpenAI-compatible server)"


def placeholder_key(models: list[str], api_base: str | None) -> str | None:
    """The key to send a server given by --api-base when the provider's key variable is unset."""
    if api_base and any(missing_keys(m) for m in models):
        return NO_KEY
    return None


async def probe(client, model: str, number: int) -> None:
    """One tiny call that must answer; raises the client's LLMError (one line) when it does not.
    `number` makes each probe a new request, never an answer recorded by an earlier start."""
    await client.complete(
        PROBE_MESSAGES,
        model=model,
        purpose="probe",
        node_id=None,
        key=f"probe {number}",
        limits=CallLimits(retries=PROBE_RETRIES, timeout_s=PROBE_TIMEOUT_S),
        max_tokens=5,
    )
