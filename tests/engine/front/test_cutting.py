"""A stop asked from another thread (engine/front/cutting.py): carried out whenever the session attaches,
and cancelling the session's task on its own loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from engine.front.cutting import CutShort, stop_on_signals


def test_a_stop_asked_before_the_session_attaches_is_carried_out_when_it_does():
    cut, stopped = CutShort(), []
    cut()
    assert cut.asked and not stopped
    cut.attach(lambda: stopped.append("now"))
    assert stopped == ["now"]
    cut()
    assert stopped == ["now", "now"]


def test_a_stop_from_another_thread_cancels_the_session_on_its_own_thread():
    cut, outcome = CutShort(), []

    async def session() -> None:
        stop_on_signals(cut)  # off the main thread: no signal handler, and no error for its lack
        await asyncio.sleep(60)

    def loop_thread() -> None:
        try:
            asyncio.run(session())
        except asyncio.CancelledError:
            outcome.append("cancelled")

    thread = threading.Thread(target=loop_thread)
    thread.start()
    for _ in range(1000):  # up to 10 s for the session to attach
        if cut._stop is not None:
            break
        threading.Event().wait(0.01)
    cut()
    thread.join(10)
    assert outcome == ["cancelled"] and not thread.is_alive()
    cut()  # its loop has closed: asking again does nothing


def test_stop_on_signals_needs_the_sessions_task():
    with pytest.raises(RuntimeError):
        stop_on_signals(None)  # no running loop
