"""The live progress display: evaluations against the budget, nodes, best score, workers, model calls, ETA."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from types import TracebackType

    from rich.progress import Progress, TaskID

PLAIN_FAILURE_EVERY_S = 15.0  # without a terminal, failures print the progress line at most this often


class SearchProgress:
    """A rich progress bar the scheduler feeds; `quiet` keeps the same calls silent."""

    def __init__(
        self, console, budget: int, workers: int, quiet: bool = False, done: int = 0, bar: bool = True
    ) -> None:
        """`bar`: False prints plain lines even on a terminal (a person types answers there: --mutator human)."""
        self.bar = bar
        self.console = console
        self.budget = budget
        self.workers = workers
        self.quiet = quiet
        self.valid = self.invalid = 0
        self.best = float("nan")
        self.best_node: int | None = None
        self._busy = 0
        self._progress: Progress | None = None
        self._task: TaskID | None = None  # the evaluations' bar
        self._extra: TaskID | None = None  # the bar of holdout and reference runs after the search
        self._start_done = done
        self._done = done
        self._plain_every = max(1, budget // 10)  # without a terminal: a plain line every 10 %
        self._calls: list[int] | None = None  # [ok, failed] model calls of this session, once a client exists
        self._last_plain = 0.0

    def __enter__(self) -> SearchProgress:
        if self.quiet or not self.console.is_terminal or not self.bar:
            return self
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
            refresh_per_second=4,
        )
        self._progress.__enter__()
        self._task = self._progress.add_task(
            "evaluations", total=self.budget, completed=self._start_done, stats=self._stats()
        )
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(kind, exc, trace)

    def _stats(self) -> str:
        best = "-" if np.isnan(self.best) else f"{self.best:.3f} (node {self.best_node})"
        calls = "" if self._calls is None else f" | model calls {self._calls[0]} ok / {self._calls[1]} failed"
        return (
            f"nodes {self.valid} valid / {self.invalid} invalid | best full-dev mean {best} | "
            f"workers {self._busy}/{self.workers}{calls}"
        )

    def count_model_calls(self, ok: int = 0, failed: int = 0) -> None:
        """Show model calls on the line (a run with a model), starting from these counts."""
        self._calls = [ok, failed]
        self._refresh()

    def model_call(self, ok: bool) -> None:
        """One model call ended; a run stuck on failing calls shows it, also without a terminal."""
        if self._calls is None:
            self._calls = [0, 0]
        self._calls[0 if ok else 1] += 1
        self._refresh()
        if not ok:
            self._plain_now()

    def _refresh(self, advance: int = 0) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=advance, stats=self._stats())

    def start(self, state) -> None:
        """Take the counts of a (possibly resumed) tree."""
        tree = state.tree
        self.valid = int(tree.n_valid)
        self.invalid = int(tree.n - tree.n_valid)
        self._update_best(state)
        self._refresh()

    def _update_best(self, state) -> None:
        """The best mean among nodes evaluated on every dev instance (`runs list`'s "best mean"): it never
        goes down, unlike a mean over fewer instances that more evaluations may lower."""
        tree = state.tree
        n = tree.n
        ok = tree.valid[:n] & (tree.n_evals[:n] >= max(1, tree.n_instances))
        if ok.any():
            nodes = np.flatnonzero(ok)
            means = tree.mean(nodes)
            k = int(np.argmax(means))
            self.best, self.best_node = float(means[k]), int(nodes[k])

    def expanded(self, result) -> None:
        if result.status == "valid":
            self.valid += 1
        else:
            self.invalid += 1
        self._refresh()
        if result.status == "failed":
            self._plain_now()

    def _plain_now(self) -> None:
        """Without a terminal, a run stuck on failures prints its line now and then (no evaluation moves it)."""
        now = time.monotonic()
        if self._progress is None and not self.quiet and now - self._last_plain >= PLAIN_FAILURE_EVERY_S:
            self._last_plain = now
            print(f"evaluations {self._done}/{self.budget} | {self._stats()}", flush=True)

    def busy(self, count: int) -> None:
        self._busy = count
        self._refresh()

    def evaluated(self, state, outcome, busy: int) -> None:
        self._busy = busy
        self._done += 1
        self._update_best(state)
        self._refresh(advance=1)
        if (
            self._progress is None
            and not self.quiet
            and (self._done % self._plain_every == 0 or self._done == self.budget)
        ):
            print(f"evaluations {self._done}/{self.budget} | {self._stats()}", flush=True)

    def extra_work(self, count: int) -> None:
        """Holdout and reference runs after the search: a second bar, its whole total known at once."""
        if self._progress is None or count == 0:
            return
        self._extra = self._progress.add_task("holdout + references", total=count, stats="")

    def advance_extra(self) -> None:
        if self._progress is not None and self._extra is not None:
            self._progress.update(self._extra, advance=1)

    def say(self, message: str) -> None:
        self.console.print(message, markup=False)  # plain text: a bracket in it is its own
