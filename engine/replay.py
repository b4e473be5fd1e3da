"""`--replay`: a new run whose model calls are all answered from an earlier run's archive."""
from __future__ import annotations

from archive import Archive


class ReplaySource:
    """The new run's archive for every write and read, except that recorded answers come from the original.

    The LLM client looks answers up by request hash; with the same seed and
    the same recorded answers the replayed search asks the same questions in
    the same order and grows the same tree, at no cost. A question the
    original never asked stops the replay (the client's replay_only rule).
    """

    def __init__(self, own: Archive, original_path: str) -> None:
        self._own = own
        self._original = Archive.open(original_path, read_only=True)

    def llm_answer(self, request_hash: str):
        return self._original.llm_answer(request_hash)

    def __getattr__(self, name: str):
        return getattr(self._own, name)
