"""Snapshot a repository's refs: which commit each selected ref points to.

Refs are selected with gitignore-style globs (``refs/heads/**``). Annotated tags are peeled
to their commit; refs pointing at trees or blobs are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wcmatch import glob as wcglob

from gitquarry.gitio.runner import run_git

_GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE


@dataclass(frozen=True)
class RefTip:
    ref: str  # full ref name, e.g. refs/heads/main
    commit: str  # full commit hash the ref resolves to (tags peeled)


def snapshot_refs(git_dir: Path, ref_globs: list[str]) -> list[RefTip]:
    """The commit tips of every ref matching ``ref_globs``, sorted by ref name.

    :raises GitError: ``git for-each-ref`` failed.
    """
    proc = run_git(
        git_dir,
        [
            "for-each-ref",
            "--format=%(refname)%00%(objecttype)%00%(objectname)%00%(*objecttype)%00%(*objectname)",
        ],
    )
    tips: list[RefTip] = []
    for line in proc.stdout.split(b"\n"):
        if not line:
            continue
        parts = line.split(b"\x00")
        if len(parts) != 5:
            continue
        ref = parts[0].decode("utf-8", "surrogateescape")
        if not wcglob.globmatch(ref, ref_globs, flags=_GLOB_FLAGS):
            continue
        if ref.endswith("/HEAD") and ref.startswith("refs/remotes/"):
            continue  # a symbolic alias of another remote branch
        kind, name, peeled_kind, peeled = (p.decode("ascii", "replace") for p in parts[1:])
        if kind == "commit":
            tips.append(RefTip(ref, name))
        elif kind == "tag" and peeled_kind == "commit":
            tips.append(RefTip(ref, peeled))
    return sorted(tips, key=lambda t: t.ref)


def existing_objects(git_dir: Path, object_ids: list[str]) -> set[str]:
    """The subset of ``object_ids`` present in the object store (``cat-file --batch-check``)."""
    if not object_ids:
        return set()
    payload = ("\n".join(object_ids) + "\n").encode("ascii")
    proc = run_git(git_dir, ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
                   input_bytes=payload, check=False)
    present: set[str] = set()
    for line in proc.stdout.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] != "missing":
            present.add(parts[0])
    return present


def rev_list(git_dir: Path, include: list[str], exclude: list[str]) -> list[str]:
    """``git rev-list <include> --not <exclude>``: commits reachable from ``include`` only.

    Hashes in git's default (reverse chronological) order. Empty ``include`` gives [].
    Exclusions are passed as ``^<hash>`` lines: ``--not`` on stdin needs Git 2.42 or newer.
    :raises GitError: a listed object is missing or git failed.
    """
    if not include:
        return []
    stdin = "\n".join([*include, *(f"^{h}" for h in exclude)])
    proc = run_git(git_dir, ["rev-list", "--stdin"], input_bytes=(stdin + "\n").encode("ascii"))
    return proc.stdout.decode("ascii").split()


def shallow_commits(git_dir: Path) -> set[str]:
    """Commits at a shallow clone's boundary (listed in ``<git dir>/shallow``): git sees them
    as parentless, so their parents and diff are not the real ones. Empty for full clones."""
    path = git_dir / "shallow"
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return set()
    return {line.strip() for line in text.splitlines() if line.strip()}
