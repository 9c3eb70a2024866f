"""Work that ``gitquarry index`` does after the commit history: graph and embeddings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gitquarry.history.progress import Progress
from gitquarry.store import Store
from gitquarry.workspace import Workspace


@dataclass
class ExtrasReport:
    graph: dict[str, Any] | None = None
    embeddings: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"graph": self.graph, "embeddings": self.embeddings}

    def summary_lines(self) -> list[str]:
        return list(self.notes)


def index_extras(
    workspace: Workspace, store: Store, *, progress: Progress, embed: bool
) -> ExtrasReport:
    """Reindex the architecture graph (if the project has one) and embed new commits."""
    return ExtrasReport()


def extras_status(workspace: Workspace, store: Store) -> dict[str, Any]:
    return {}
