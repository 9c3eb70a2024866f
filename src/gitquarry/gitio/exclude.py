"""Keep the index directory out of ``git status`` without touching tracked files."""

from __future__ import annotations

from pathlib import Path

from gitquarry.gitio.runner import run_git


def ensure_info_exclude(index_dir: Path) -> Path | None:
    """If ``index_dir`` lies inside a working tree, add it to that repository's
    ``.git/info/exclude`` (once). Returns the exclude file changed or already holding the
    entry, or None when ``index_dir`` is not inside a working tree. Never edits ``.gitignore``.
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
    existing = exclude.read_text(encoding="utf-8", errors="replace") if exclude.exists() else ""
    if entry in existing.splitlines():
        return exclude
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as fh:
        if existing and not existing.endswith("\n"):
            fh.write("\n")
        fh.write(f"# gitquarry index\n{entry}\n")
    return exclude
