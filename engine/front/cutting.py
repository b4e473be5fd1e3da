"""How a session is cut short from outside its event loop's thread.

The command runs a search on the main thread, where Ctrl-C and SIGTERM reach its loop. `clade.search`
called where an event loop already runs (a Jupyter notebook's cell) cannot start another on that thread,
so it runs the search on a thread of its own; Ctrl-C then reaches only the caller, which asks the
session to stop through a `CutShort` handed to it in the `Front`. Either way the session ends as
`interrupted`, with nothing finished lost.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable


class CutShort:
    """A stop asked from another thread: `__call__` asks, the session `attach`es what stops it. A stop asked
    before the session attached is carried out the moment it does."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stop: Callable[[], None] | None = None
        self.asked = False

    def __call__(self) -> None:
        with self._lock:
            self.asked, stop = True, self._stop
        if stop is not None:
            stop()

    def attach(self, stop: Callable[[], None]) -> None:
        with self._lock:
            self._stop, asked = stop, self.asked
        if asked:
            stop()


def stop_on_signals(cut: CutShort | None) -> None:
    """Let SIGTERM (on the main thread) and `cut` (from any thread) cancel the running session's task; call
    it from that task."""
    current = asyncio.current_task()
    assert current is not None  # called from the session's task
    loop = asyncio.get_running_loop()
    if threading.current_thread() is threading.main_thread():  # only the main thread can take a signal
        loop.add_signal_handler(signal.SIGTERM, current.cancel)
    if cut is not None:

        def cancel() -> None:
            try:
                loop.call_soon_threadsafe(current.cancel)
            except RuntimeError:  # the loop has closed: the session is over already
                pass

        cut.attach(cancel)
