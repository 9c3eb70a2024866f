"""What an indexing run did: per repository, per workspace. Plain data for the surfaces.

Every list and count here ends up in ``gitquarry index`` output (text and ``--json``); each
problem carries a stable ``code``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class RefProblemReport:
    """A ref whose history could not be read in full (see ``gitio.refs.RefProblem``):
    ``ref`` shown with ``\\xNN`` escapes, ``code`` stable, ``object`` the missing object."""

    ref: str
    code: str
    object: str
    message: str


@dataclass
class RepoReport:
    """What one repository's run did. ``seconds`` is wall time.

    ``reconcile_reason`` says why every reachable commit was checked rather than only the
    new ones: ``interrupted`` (a previous run stopped), ``rewritten`` (an indexed tip is
    gone), ``broken_refs`` (a ref's history is incomplete, now or last run),
    ``shallow_changed`` (the clone was deepened or made shallower). ``full_reconcile`` is
    ``reconcile_reason is not None``.
    """

    path: str
    new_commits: int = 0
    reused_commits: int = 0
    pruned_commits: int = 0
    up_to_date: bool = False
    full_reconcile: bool = False
    reconcile_reason: str | None = None
    missing_object_commits: int = 0
    #: shallow-clone boundary commits stored without parents, files or diff
    shallow_commits: int = 0
    #: incomplete copies stored earlier (another repository) replaced by this one's full copy
    completed_commits: int = 0
    decode_warnings: int = 0
    #: commits whose author or committer time was out of range (clamped; see gitio.log)
    invalid_time_commits: int = 0
    invalid_time_examples: list[str] = field(default_factory=list)
    #: commits that change more than ``gitio.log.FILES_MAX`` paths: the first ones are kept
    files_cut_commits: int = 0
    files_cut_examples: list[str] = field(default_factory=list)
    #: stored commits whose identity changed because the .mailmap changed
    identities_remapped: int = 0
    mailmap_changed: bool = False
    #: stored commits (indexed before patch-ids existed) whose patch-id this run computed
    patch_ids_backfilled: int = 0
    #: refs/replace/* present in the repository (ignored: commits are indexed as stored)
    replace_refs: int = 0
    problems: list[RefProblemReport] = field(default_factory=list)
    error: str | None = None
    error_code: str | None = None
    #: something the user should know that is not an error (e.g. no ref matched)
    warning: str | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SkippedReport:
    """A repository git refused or failed to open (``code`` as in ``errors.py``)."""

    path: str
    code: str
    message: str


@dataclass
class RemovedReport:
    """A repository forgotten by this run. ``reason``: ``gone`` (its git directory no longer
    exists), ``not_found`` (no longer found under the workspace: excluded, or moved
    elsewhere). ``commits``: its commits dropped from the index's view of it;
    ``deleted_commits``: those no other repository holds, deleted."""

    path: str
    reason: str
    commits: int = 0
    deleted_commits: int = 0


@dataclass
class MovedReport:
    """A repository found at a new path (its workspace was moved): its rows were kept."""

    old_path: str
    path: str


@dataclass
class IndexReport:
    """What an indexing run did across the workspace."""

    repositories: list[RepoReport] = field(default_factory=list)
    removed: list[RemovedReport] = field(default_factory=list)
    skipped: list[SkippedReport] = field(default_factory=list)
    moved: list[MovedReport] = field(default_factory=list)
    #: problems with the git environment worked around (e.g. a malformed GIT_CONFIG_COUNT)
    environment_warnings: list[str] = field(default_factory=list)
    total_commits: int = 0
    seconds: float = 0.0
    #: the repository being indexed when the run was interrupted (its report is partial)
    interrupted_in: str | None = None

    @property
    def removed_repositories(self) -> list[str]:
        return [r.path for r in self.removed]

    @property
    def new_commits(self) -> int:
        return sum(r.new_commits for r in self.repositories)

    @property
    def pruned_commits(self) -> int:
        """Commits dropped from repositories, including every commit of a removed one."""
        return sum(r.pruned_commits for r in self.repositories) + sum(
            r.commits for r in self.removed
        )

    @property
    def failed(self) -> list[RepoReport]:
        return [r for r in self.repositories if r.error]

    @property
    def up_to_date(self) -> bool:
        return all(r.up_to_date for r in self.repositories) and not (
            self.removed or self.moved
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "repositories": [r.to_dict() for r in self.repositories],
            "removed_repositories": self.removed_repositories,
            "removed": [asdict(r) for r in self.removed],
            "skipped": [asdict(s) for s in self.skipped],
            "moved": [asdict(m) for m in self.moved],
            "environment_warnings": list(self.environment_warnings),
            "new_commits": self.new_commits,
            "pruned_commits": self.pruned_commits,
            "total_commits": self.total_commits,
            "up_to_date": self.up_to_date,
        }


class IndexingInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) during ``index_workspace``: ``report`` holds what was done before it.
    Every finished batch is committed; the next run resumes."""

    def __init__(self, report: IndexReport) -> None:
        super().__init__()
        self.report = report
