"""Keep the index directory out of ``git status`` without touching tracked files."""

from __future__ import annotations

import os
from pathlib import Path

from gitquarry.gitio.runner import run_git
from gitquarry.store import safe_paths

#: the most of ``info/exclude`` read to look for gitquarry's entry (a larger one gets the
#: entry appended again, harmlessly)
_EXCLUDE_MAX_BYTES = 1 << 20


def ensure_info_exclude(index_dir: Path) -> Path | None:
    """If ``index_dir`` lies inside a working tree, add it to that repository's
    ``.git/info/exclude`` (once). Returns the exclude file changed or already holding the
    entry, or None when ``index_dir`` is not inside a working tree. Never edits ``.gitignore``.

    :raises IndexPathUnsafeError: ``info/`` or ``info/exclude`` is a link or not a regular
        file (the callers treat this as best effort and carry on).
    """
    probe = index_dir
    while not probe.is_dir() and probe != probe.parent:
        probe = probe.parent  # the index dir need not exist yet; ask from its nearest ancestor
    proc = run_git(
        None,
        ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"],
        cwd=probe,
        check=False,
    )
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode != 0 or len(lines) < 2:
        return None
    top, common = Path(lines[0]).resolve(), Path(lines[1]).resolve()
    try:
        rel = index_dir.resolve().relative_to(top).as_posix()
    except ValueError:
        return None
    entry = f"/{rel}/"
    exclude = common / "info" / "exclude"
    # never through a link nor into a FIFO (``store.safe_paths``): refused, typed
    safe_paths.ensure_state_dir(exclude.parent, common)
    existing = ""
    if safe_paths.check_regular(exclude):
        fd = safe_paths.open_regular(exclude, os.O_RDONLY)
        with os.fdopen(fd, "rb") as handle:
            existing = handle.read(_EXCLUDE_MAX_BYTES).decode("utf-8", "replace")
    if entry in existing.splitlines():
        return exclude
    fd = safe_paths.open_regular(exclude, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    with os.fdopen(fd, "ab") as fh:
        if existing and not existing.endswith("\n"):
            fh.write(b"\n")
        fh.write(f"# gitquarry index\n{entry}\n".encode())
    return exclude


