"""The client's errors and how a litellm exception is classified: retry, stop the run, or fail the call.

litellm maps every provider's errors to its own exception classes (subclasses
of openai's), each with an HTTP-like `status_code`; the classification goes by
what the error says first, then by class, then by status code. The text wins
because litellm does not always pick the class a user would: a missing
OpenAI key arrives as an InternalServerError (500) "Missing credentials ...",
which retrying can never cure.
"""

from __future__ import annotations

import re

from engine.errors import FatalStop, StopRun

RETRY = "retry"  # transient: rate limit, server error, timeout, lost connection
FATAL = "fatal"  # no later call can succeed: stop the run
FAIL = "fail"  # this call failed; the run may go on


class LLMError(Exception):
    """A model call failed (after its retries). The message is one line."""


class LLMFatalError(LLMError, FatalStop):
    """Stop the run: bad key, unknown model, prompt too long, a request the provider rejects,
    or a replayed run that asks something the original did not. The message is one line
    naming the model and what to do.

    A `FatalStop` wherever it is raised (a mutator's call, a judge's, the gateway's): no later call can succeed,
    so whoever meets it stops the run the same way, with nothing to translate."""


class BudgetExceeded(LLMError, StopRun):
    """The dollar or token budget is reached: no new paid call is made. A `StopRun`: what is in flight
    finishes, and a resume with a larger budget goes on."""


_LITELLM_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*)+")
# Missing, wrong or expired credentials, in the words providers use (OpenAI, Anthropic, Gemini, Azure, ...).
_CREDENTIALS = re.compile(
    r"missing credentials|invalid_api_key|invalid x-api-key|unauthori[sz]ed"
    r"|\b(?:no|missing|invalid|incorrect|expired|revoked|wrong)\W+(?:\w+\W+)?(?:api[\s_-]?key|credentials)"
    r"|\bapi[\s_-]?key\W+(?:\w+\W+)?(?:not valid|invalid|not found|not set|not provided|missing|required|expired)"
    r"|\b(?:set|setting|pass|passing)\W+(?:\S+\s+){0,6}?`?\w*_API_KEY",
    re.IGNORECASE,
)
# An account out of credit: retrying cannot help (a per-minute quota is a rate limit, not this).
_NO_CREDIT = re.compile(r"insufficient_quota|exceeded your current quota|credit balance is too low", re.IGNORECASE)


def first_line(exc: BaseException, limit: int = 300) -> str:
    """The first non-empty line of an exception's text, without litellm's 'litellm.X: ' prefixes."""
    text = _LITELLM_PREFIX.sub("", str(exc).strip())
    text = text.removeprefix(f"{type(exc).__name__}: ")  # litellm repeats the class name in the message
    line = next((part.strip() for part in text.splitlines() if part.strip()), "") or type(exc).__name__
    return line if len(line) <= limit else line[: limit - 3] + "..."


def error_text(exc: BaseException) -> str:
    """What the `error` column of a failed call holds: the exception's type and first line."""
    return f"{type(exc).__name__}: {first_line(exc)}"


def key_hint(model: str) -> str:
    """The environment variable(s) the model's provider reads its key from, as litellm knows them."""
    from engine.llm.preflight import missing_keys

    try:
        names = missing_keys(model)
    except Exception:  # noqa: BLE001 - no key hint is no reason to hide the real error
        names = []
    return " or ".join(names) if names else "the provider's API key (e.g. OPENAI_API_KEY)"


def classify(exc: BaseException, model: str) -> tuple[str, str]:
    """(RETRY | FATAL | FAIL, one line for the user) for an exception raised by a litellm call."""
    import litellm

    detail = first_line(exc, 200)
    if _CREDENTIALS.search(str(exc)):
        return FATAL, f"no valid API key for {model} ({detail}): set {key_hint(model)}"
    if _NO_CREDIT.search(str(exc)):
        return FATAL, f"{model}: the account is out of credit or quota ({detail}): top it up, or use another model"
    if isinstance(exc, litellm.AuthenticationError):
        return FATAL, f"authentication failed for {model} ({detail}): set {key_hint(model)}"
    if isinstance(exc, litellm.PermissionDeniedError):
        return FATAL, f"{model} refused the request (permission denied: {detail}): check the API key's access to it"
    if isinstance(exc, litellm.ContextWindowExceededError):
        return FATAL, (
            f"the prompt does not fit {model}'s context window ({detail}): "
            "use a model with a longer context or send smaller agents"
        )
    if isinstance(exc, litellm.NotFoundError):
        return FATAL, (
            f"model {model} not found by its provider ({detail}): "
            "check --model (provider/name, e.g. openai/gpt-4o-mini) and --api-base"
        )
    if isinstance(exc, litellm.BadRequestError):
        return FATAL, f"{model} rejected the request ({detail}): check --model and the call's parameters"
    if isinstance(
        exc,
        (
            litellm.RateLimitError,
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
            litellm.BadGatewayError,
            litellm.APIConnectionError,
            litellm.Timeout,
            TimeoutError,
        ),
    ):
        return RETRY, f"{model}: {error_text(exc)}"
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        if status in (408, 409, 429) or status >= 500:
            return RETRY, f"{model}: {error_text(exc)}"
        if status in (401, 403):
            return FATAL, f"authentication failed for {model} ({detail}): set {key_hint(model)}"
        if status in (400, 404, 422):
            return FATAL, f"{model} rejected the request ({detail}): check --model and the call's parameters"
    return FAIL, f"{model}: {error_text(exc)}"
