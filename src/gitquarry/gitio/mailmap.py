"""Which ``.mailmap`` gitquarry applies to a repository's identities.

The rule (git's own default, made explicit and independent of configuration):

* a repository with a working tree: the ``.mailmap`` file at the top of its main working
  tree, as it is on disk (committed or not), as ``git log --use-mailmap`` run there reads it;
  a symbolic link is ignored, as git ignores an in-tree ``.mailmap`` symlink;
* a bare repository: the ``.mailmap`` blob at ``HEAD`` (git's default ``mailmap.blob``);
* never ``mailmap.file``/``mailmap.blob`` from any configuration: identities must not depend
  on who indexes the repository.

The content is copied into gitquarry's private directory and that copy is what git reads,
so the digest stored with the repository is exactly the mapping its commits were read with;
a changed digest makes the indexer re-map the stored identities (a ``.mailmap`` edit moves
no ref). A ``.mailmap`` over ``MAILMAP_MAX_BYTES`` is ignored with a warning, and so is one
that is not a regular file (a FIFO, socket or device is never opened; see
``parsing.bounded_read``).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from gitquarry.errors import FileRefusedError
from gitquarry.gitio.discovery import Repository
from gitquarry.gitio.runner import display_path, neutral_dir, run_git
from gitquarry.parsing.bounded_read import read_capped

#: Largest ``.mailmap`` applied (bytes); the Linux kernel's is about 50 KiB.
MAILMAP_MAX_BYTES = 1 << 20
#: ``Mailmap.digest`` when no mapping applies.
NO_MAILMAP = "none"


@dataclass(frozen=True)
class Mailmap:
    """``file``: the private copy git is pointed at (None: no mapping); ``digest``: sha256
    of its content, or ``NO_MAILMAP``; ``source``: where it came from, for messages;
    ``warning``: why a ``.mailmap`` that exists was not applied."""

    file: Path | None
    digest: str
    source: str
    warning: str | None = None


def _materialise(content: bytes, source: str) -> Mailmap:
    if not content.strip():
        return Mailmap(None, NO_MAILMAP, source)
    digest = hashlib.sha256(content).hexdigest()
    folder = neutral_dir() / "mailmaps"
    folder.mkdir(exist_ok=True)
    target = folder / digest
    if not target.exists():
        tmp = folder / f".{digest}.{os.getpid()}"
        tmp.write_bytes(content)
        tmp.replace(target)
    return Mailmap(target, digest, source)


def _too_large(source: str, size: int) -> Mailmap:
    return Mailmap(
        None, NO_MAILMAP, source,
        f"{source} is {size:,} bytes (over {MAILMAP_MAX_BYTES:,}); identities are not mapped",
    )


def load_mailmap(repo: Repository) -> Mailmap:
    """The ``.mailmap`` that applies to ``repo`` (see the module docstring)."""
    if repo.is_bare:
        source = f"HEAD:.mailmap in {display_path(repo.path)}"
        size = run_git(repo.git_dir, ["cat-file", "-s", "HEAD:.mailmap"], check=False)
        if size.returncode != 0:
            return Mailmap(None, NO_MAILMAP, source)
        n = int(size.stdout.strip() or 0)
        if n > MAILMAP_MAX_BYTES:
            return _too_large(source, n)
        blob = run_git(repo.git_dir, ["cat-file", "blob", "HEAD:.mailmap"], check=False)
        return _materialise(blob.stdout if blob.returncode == 0 else b"", source)
    path = repo.path / ".mailmap"
    source = display_path(path)
    try:
        info = path.lstat()
    except OSError:
        return Mailmap(None, NO_MAILMAP, source)
    if stat.S_ISLNK(info.st_mode):
        return Mailmap(None, NO_MAILMAP, source,
                       f"{source} is a symbolic link; ignored (git does not follow it either)")
    try:  # no link, regular files only (a FIFO never blocks), at most the cap + 1 bytes
        got = read_capped(path, MAILMAP_MAX_BYTES)
    except FileRefusedError as exc:
        return Mailmap(None, NO_MAILMAP, source,
                       f"{source} {exc.reason}; identities are not mapped")
    if got.over:
        return _too_large(source, got.size)
    content = got.data
    return _materialise(content, source)
