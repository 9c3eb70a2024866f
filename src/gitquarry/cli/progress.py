"""Progress on stderr implementing ``gitquarry.history.index.progress.Progress``.

On a terminal: one Rich bar per phase (repository, embedding…) with count, rate, elapsed time
and an ETA weighted by what each batch cost (``EtaEstimator``). Off a terminal (piped, CI, a
daemon's log): plain lines, one when a phase starts and then at most one every
``GITQUARRY_PROGRESS_INTERVAL`` seconds (default 15; 0 prints every batch), so a long run is
never silent for minutes. ``quiet`` turns both off; notes are still printed unless quiet.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from types import TracebackType

from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from gitquarry.cli.console import stderr
from gitquarry.cli.plain import printable
from gitquarry.history.index.progress import EtaEstimator
from gitquarry.percent import floor_percent

#: default seconds between progress lines off a terminal
DEFAULT_INTERVAL_S = 15.0


def progress_interval() -> float:
    """``GITQUARRY_PROGRESS_INTERVAL`` (seconds, ≥ 0) or the default."""
    raw = os.environ.get("GITQUARRY_PROGRESS_INTERVAL", "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if value >= 0 else DEFAULT_INTERVAL_S


def format_duration(seconds: float | None) -> str:
    """``0:03:07`` (h:mm:ss), ``-:--:--`` when unknown."""
    if seconds is None:
        return "-:--:--"
    total = round(seconds)
    return f"{total // 3600}:{total % 3600 // 60:02d}:{total % 60:02d}"


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f}/s" if speed else "", style="progress.data.speed")


class _EtaColumn(ProgressColumn):
    def __init__(self, eta: Callable[[TaskID], float | None]) -> None:
        super().__init__()
        self._eta = eta

    def render(self, task: Task) -> Text:
        remaining = 0.0 if task.finished else self._eta(task.id)
        return Text(f"ETA {format_duration(remaining)}", style="progress.remaining")


class RichProgress:
    """Progress bars on a terminal, periodic lines elsewhere (see the module docstring)."""

    def __init__(self, *, quiet: bool = False, interval_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet = quiet
        self.interactive = stderr.is_terminal
        self.interval_s = progress_interval() if interval_s is None else interval_s
        self._clock = clock
        self._etas: dict[TaskID, EtaEstimator] = {}
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            _EtaColumn(self._remaining),
            console=stderr,
            transient=False,
            disable=quiet or not self.interactive,
        )
        self._task: TaskID | None = None
        self._name = ""
        self._started = 0.0
        self._last_line = 0.0

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def _remaining(self, task_id: TaskID) -> float | None:
        eta = self._etas.get(task_id)
        return eta.remaining(self._clock()) if eta is not None else None

    def phase(self, name: str, total: int | None) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=self._progress.tasks[-1].total or 0)
        now = self._clock()
        # names hold repository paths: escaped, and never read as Rich markup
        self._task = self._progress.add_task(escape(printable(name)), total=total)
        self._etas[self._task] = EtaEstimator(total, now)
        self._name, self._started, self._last_line = printable(name), now, now
        if not self.quiet and not self.interactive and total:
            self._line(f"{self._name}: {total:,} to do")

    def advance(self, units: int) -> None:
        if self._task is None:
            return
        now = self._clock()
        eta = self._etas[self._task]
        eta.advance(units, now)
        self._progress.advance(self._task, units)
        if self.quiet or self.interactive or now - self._last_line < self.interval_s:
            return
        if eta.total and eta.done >= eta.total:
            return  # the summary says it is done
        self._last_line = now
        elapsed = max(now - self._started, 1e-9)
        share = f" ({floor_percent(eta.done, eta.total)}%)" if eta.total else ""
        of_total = f"/{eta.total:,}" if eta.total else ""
        self._line(
            f"{self._name}: {eta.done:,}{of_total}{share}, {eta.done / elapsed:,.0f}/s, "
            f"elapsed {format_duration(elapsed)}, ETA {format_duration(eta.remaining(now))}"
        )

    def _line(self, message: str) -> None:
        self._progress.console.print(f"progress: {message}", markup=False, highlight=False)

    def note(self, message: str) -> None:
        if not self.quiet:
            self._progress.console.print(printable(message), markup=False, highlight=False)
