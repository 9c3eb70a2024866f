"""A repository's refs: which commit each selected ref points to, and which refs are broken.

Ref names are bytes in git (any byte but a few controls); they are kept as ``str`` decoded
with ``surrogateescape`` (lossless: ``RefTip.name_bytes`` gives the bytes back) and shown
with ``\\xNN`` escapes (``RefTip.display``). Refs are selected with gitignore-style globs
(``refs/heads/**``) matched against that text. Tags are peeled through any number of tag
objects to what they finally point at; refs ending at a tree or a blob have no history and
are left out. A ref whose object (or a tag's target) is missing from the object store is
returned as a ``RefProblem``, never an exception: the other refs are still indexed.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitquarry.gitio.runner import display_bytes, run_git

#: ``wcmatch.glob.GLOBSTAR | DOTGLOB | BRACE`` (checked in ``tests/test_lazy_imports.py``)
_GLOB_FLAGS = 832

#: the default ``[git_indexing] refs`` globs → the patterns wcmatch compiles them to (include,
#: exclude), so that a query with the default globs needs no wcmatch import (~20 ms CPU of a
#: cold query, issue 21 §1). ``tests/test_lazy_imports.py`` checks them against the installed
#: wcmatch's own ``compile``; any other glob list is compiled by wcmatch.
_KNOWN: dict[tuple[str, ...], tuple[tuple[str, ...], tuple[str, ...]]] = {
    ("refs/heads/**", "refs/remotes/**", "refs/tags/**"): (tuple(
        rf"^(?s:refs[/]+{name}(?=[/])(?:(?!(?:[/]|^)(?:\.{{1,2}})(?:$|[/])).)*?(?:^|$|[/]+))$"
        for name in ("heads", "remotes", "tags")), ()),
}


@dataclass(frozen=True)
class RefTip:
    """``ref``: the full ref name (``refs/heads/main``), undecodable bytes as surrogate
    escapes; ``commit``: the commit it resolves to (tags peeled)."""

    ref: str
    commit: str

    @property
    def name_bytes(self) -> bytes:
        return ref_bytes(self.ref)

    @property
    def display(self) -> str:
        return display_ref(self.ref)


@dataclass(frozen=True)
class RefProblem:
    """A ref whose history cannot be read in full. ``code``: ``ref_target_missing`` (the
    object the ref or its tag chain points to is not in the object store) or
    ``ref_history_incomplete`` (a commit in its history is missing: ``object_id``)."""

    ref: str
    code: str
    object_id: str
    message: str

    @property
    def display(self) -> str:
        return display_ref(self.ref)


@dataclass
class RefSnapshot:
    """``tips``: selected refs resolving to a commit, sorted by name; ``problems``: selected
    refs whose object is missing; ``replace_refs``: how many ``refs/replace/*`` exist
    (gitquarry ignores them; see ``gitio.runner``)."""

    tips: list[RefTip] = field(default_factory=list)
    problems: list[RefProblem] = field(default_factory=list)
    replace_refs: int = 0
    #: selected ref → the object it names before peeling (``for-each-ref``'s ``objectname``)
    raw: dict[str, str] = field(default_factory=dict)


def ref_bytes(ref: str) -> bytes:
    """The exact bytes of a ref name held as surrogate-escaped text."""
    return ref.encode("utf-8", "surrogateescape")


def ref_from_bytes(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def display_ref(ref: str) -> str:
    """A ref name for people: invalid UTF-8 bytes as ``\\xNN``."""
    return display_bytes(ref_bytes(ref))


class RefMatcher:
    """Compiled ref globs (gitignore-style ``**``).

    A ref name is matched as a string, never against the file system (no ``REALPATH``), and
    for that wcmatch's matcher does exactly this: some include pattern matches the whole
    name and no exclude pattern does. That test is made here on the compiled patterns
    themselves, without the per-call ``_Match`` object (a freshness view matches every ref
    of the repository on every query: ~20 µs a ref, 1,000 refs on git.git, issue 21 §1);
    ``tests/history/test_ref_matcher.py`` checks it against ``wcmatch.glob.globmatch``. A
    wcmatch whose compiled matcher lacks those patterns gets its ``match`` called instead.
    """

    def __init__(self, globs: list[str]) -> None:
        known = _KNOWN.get(tuple(globs))
        if known is not None:
            self._matcher: Any = None
            self._include: tuple[Any, ...] | None = tuple(re.compile(p) for p in known[0])
            self._exclude: tuple[Any, ...] = tuple(re.compile(p) for p in known[1])
            return
        from wcmatch import glob as wcglob

        self._matcher = wcglob.compile(globs, flags=_GLOB_FLAGS)
        regexp = getattr(self._matcher, "_matcher", None)  # wcmatch's WcRegexp
        include = getattr(regexp, "_include", None)
        exclude = getattr(regexp, "_exclude", None)
        plain = getattr(regexp, "_real", True) is False and isinstance(include, tuple)
        self._include = include if plain else None
        self._exclude = tuple(exclude or ()) if plain else ()

    def __call__(self, ref: str) -> bool:
        if self._include is None:
            return bool(self._matcher.match(ref))
        return (any(p.fullmatch(ref) for p in self._include)
                and not any(p.fullmatch(ref) for p in self._exclude))


def _peel(git_dir: Path, object_ids: list[str]) -> dict[str, tuple[str, str] | None]:
    """``oid`` → (object it finally points at through tags, its type), or None: missing."""
    if not object_ids:
        return {}
    payload = "".join(f"{oid}^{{}}\n" for oid in object_ids).encode("ascii")
    proc = run_git(git_dir, ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
                   input_bytes=payload, check=False)
    lines = proc.stdout.decode("ascii", "replace").splitlines()
    out: dict[str, tuple[str, str] | None] = {}
    for oid, line in zip(object_ids, lines, strict=False):
        parts = line.split()
        if len(parts) == 2 and parts[1] != "missing":
            out[oid] = (parts[0], parts[1])
        else:
            out[oid] = None
    return out


def read_refs(git_dir: Path, ref_globs: list[str]) -> RefSnapshot:
    """The refs of the repository selected by ``ref_globs``, peeled (see module docstring).

    One ``git for-each-ref`` (which reads no object, so a broken ref cannot stop it) and one
    ``git cat-file --batch-check`` for all refs.
    :raises GitError: ``git for-each-ref`` failed.
    """
    proc = run_git(git_dir, ["for-each-ref", "--format=%(objectname) %(refname)"])
    matcher = RefMatcher(ref_globs)
    snapshot = RefSnapshot()
    selected: list[tuple[str, str]] = []
    for line in proc.stdout.split(b"\n"):
        oid_raw, _, name_raw = line.partition(b" ")
        if not name_raw:
            continue
        ref = ref_from_bytes(name_raw)
        if ref.startswith("refs/replace/"):
            snapshot.replace_refs += 1
        if not matcher(ref):
            continue
        if ref.endswith("/HEAD") and ref.startswith("refs/remotes/"):
            continue  # a symbolic alias of another remote branch
        selected.append((ref, oid_raw.decode("ascii", "replace")))
    snapshot.raw = dict(selected)
    peeled = _peel(git_dir, sorted({oid for _, oid in selected}))
    for ref, oid in selected:
        target = peeled.get(oid)
        if target is None:
            snapshot.problems.append(
                RefProblem(
                    ref, "ref_target_missing", oid,
                    f"{display_ref(ref)} points at {oid}, which is missing from the object "
                    "store (or is a tag whose target is missing); its history is not indexed",
                )
            )
        elif target[1] == "commit":
            snapshot.tips.append(RefTip(ref, target[0]))
    snapshot.tips.sort(key=lambda t: t.name_bytes)
    snapshot.problems.sort(key=lambda p: ref_bytes(p.ref))
    return snapshot


def listed_refs(git_dir: Path, ref_globs: list[str]) -> list[tuple[str, str]] | None:
    """The refs ``read_refs`` selects, each with the object it names before peeling, from one
    ``git for-each-ref`` that also reads each object's type and a tag's target type (so a
    ref whose object, or whose tag's target, is missing makes git fail): sorted by name.
    None when git fails (a missing object among them, an unreadable repository): the
    caller then reads the refs with ``read_refs``, which reports each broken ref.

    Used by the per-query freshness view (``history.index.freshness``): a ref naming the same
    object as when it was indexed resolves to the same commit (objects are content-addressed
    and both exist), so only refs that moved need ``cat-file``.
    """
    proc = run_git(git_dir, ["for-each-ref",
                             "--format=%(objectname) %(objecttype) %(*objecttype) %(refname)"],
                   check=False)
    if proc.returncode != 0:
        return None
    matcher = RefMatcher(ref_globs)
    out: list[tuple[str, str]] = []
    for line in proc.stdout.split(b"\n"):
        oid_raw, _, rest = line.partition(b" ")
        _type, _, rest = rest.partition(b" ")
        _target_type, _, name_raw = rest.partition(b" ")
        if not name_raw:
            continue
        ref = ref_from_bytes(name_raw)
        if not matcher(ref) or (ref.endswith("/HEAD") and ref.startswith("refs/remotes/")):
            continue
        out.append((ref, oid_raw.decode("ascii", "replace")))
    out.sort(key=lambda item: ref_bytes(item[0]))
    return out


def peeled_commits(git_dir: Path, refs: list[tuple[str, str]]) -> dict[str, str]:
    """``{ref: commit}`` for (ref, object) pairs whose object peels to a commit (one
    ``cat-file --batch-check``, as ``read_refs``); refs whose object is missing or is no
    commit are left out."""
    peeled = _peel(git_dir, sorted({oid for _, oid in refs}))
    out: dict[str, str] = {}
    for ref, oid in refs:
        target = peeled.get(oid)
        if target is not None and target[1] == "commit":
            out[ref] = target[0]
    return out


def snapshot_refs(git_dir: Path, ref_globs: list[str]) -> list[RefTip]:
    """The commit tips of every ref matching ``ref_globs``, sorted by ref name (broken refs
    left out; ``read_refs`` reports them).

    :raises GitError: ``git for-each-ref`` failed.
    """
    return read_refs(git_dir, ref_globs).tips


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


def rev_list_trees(
    git_dir: Path, include: list[str], exclude: list[str]
) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """``rev_list`` and, from the same ``git rev-list`` process (it parses every commit
    anyway: ~0.01 s more per 20,000 commits), each listed commit's tree and first parent:
    (hashes in ``rev_list``'s order, hash → (first parent or "" for a root, tree)).

    :raises GitError: a listed object is missing or git failed.
    """
    if not include:
        return [], {}
    stdin = "\n".join([*include, *(f"^{h}" for h in exclude)])
    # no --no-commit-header (Git 2.33): each commit's "commit <hash>" line is skipped
    proc = run_git(git_dir, ["rev-list", "--stdin", "--format=%H %T %P"],
                   input_bytes=(stdin + "\n").encode("ascii"))
    hashes: list[str] = []
    trees: dict[str, tuple[str, str]] = {}
    for line in proc.stdout.decode("ascii").splitlines():
        parts = line.split()
        if len(parts) < 2 or parts[0] == "commit":
            continue
        hashes.append(parts[0])
        trees[parts[0]] = (parts[2] if len(parts) > 2 else "", parts[1])
    return hashes, trees


def diff_keys(
    trees: dict[str, tuple[str, str]], skip: Collection[str] = ()
) -> dict[str, tuple[str, str]]:
    """hash → (tree of its first parent, or "" for a root; its tree), for each commit of
    ``trees`` (``rev_list_trees``) whose first parent is a root or listed too, except
    ``skip`` (shallow boundaries: git sees them as roots): ``log.stream_batches``'s
    ``diff_keys``."""
    keys: dict[str, tuple[str, str]] = {}
    for commit, (parent, tree) in trees.items():
        if commit in skip:
            continue
        if not parent:
            keys[commit] = ("", tree)
        elif parent in trees and parent not in skip:
            keys[commit] = (trees[parent][1], tree)
    return keys


def shallow_commits(git_dir: Path) -> set[str]:
    """Commits at a shallow clone's boundary (listed in ``<git dir>/shallow``): git sees them
    as parentless, so their parents and diff are not the real ones. Empty for full clones."""
    path = git_dir / "shallow"
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return set()
    return {line.strip() for line in text.splitlines() if line.strip()}


def head_commit(git_dir: Path, revision: str = "HEAD") -> str | None:
    """The commit ``revision`` (default HEAD) names in the repository whose git dir is
    ``git_dir``; None for an unborn branch, a name that is no commit, or a repository git
    cannot read. ``revision`` is passed after ``--end-of-options`` (never an option)."""
    proc = run_git(git_dir, ["rev-parse", "--verify", "--quiet", "--end-of-options",
                             f"{revision}^{{commit}}"], check=False)
    if proc.returncode != 0:
        return None
    text = proc.stdout.decode("ascii", "replace").strip()
    return text or None
