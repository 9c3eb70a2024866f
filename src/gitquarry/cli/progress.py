"""Rich progress bars on stderr implementing ``gitquarry.history.progress.Progress``."""

from __future__ import annotations

from types import TracebackType

from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from gitquarry.cli.common import printable, stderr


class _RateColumn(TextColumn):
    def __init__(self) -> None:
        super().__init__("")

    def render(self, task):  # type: ignore[no-untyped-def]
        speed = task.finished_speed or task.speed
        from rich.text import Text

        return Text(f"{speed:,.0f}/s" if speed else "", style="progress.data.speed")


class RichProgress:
    """One bar per phase (repository, embedding…) with count, rate and ETA, on stderr.

    Silent when ``quiet`` or when stderr is not a terminal (CI logs stay clean; notes are
    still printed).
    """

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=stderr,
            transient=False,
            disable=quiet or not stderr.is_terminal,
        )
        self._task: TaskID | None = None

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

    def phase(self, name: str, total: int | None) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=self._progress.tasks[-1].total or 0)
        # names hold repository paths: escaped, and never read as Rich markup
        self._task = self._progress.add_task(escape(printable(name)), total=total)

    def advance(self, units: int) -> None:
        if self._task is not None:
            self._progress.advance(self._task, units)

    def note(self, message: str) -> None:
        if not self.quiet:
            self._progress.console.print(printable(message), markup=False, highlight=False)
