"""The progress protocol the indexer reports through; surfaces render it (Rich on the CLI)."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """Receives progress events. All methods must be cheap and must not raise."""

    def phase(self, name: str, total: int | None) -> None:
        """A new phase starts (e.g. ``"commits: repo"``); ``total`` units, or None if unknown."""

    def advance(self, units: int) -> None:
        """``units`` more units of the current phase are done."""

    def note(self, message: str) -> None:
        """A one-line message for the user (not an error)."""


class NullProgress:
    """Discards every event."""

    def phase(self, name: str, total: int | None) -> None:
        pass

    def advance(self, units: int) -> None:
        pass

    def note(self, message: str) -> None:
        pass
