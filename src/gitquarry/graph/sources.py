"""Where the graph corpus comes from: graph files, doc files and their fingerprints.

Paths handed out are absolute; ``relative`` turns them into the project-relative POSIX form
the index stores. A fingerprint is ``(mtime_ns, size_bytes)``, or ``(0, -1)`` for a file that
does not exist.

Every file read must *resolve* (following symlinks) inside its containment root
(``containment_root``): the project root, or, for a graph/docs directory configured as an
absolute path outside the project, that directory. A symlink (to a file or a directory,
``docs/`` itself included) that leads elsewhere is not read; ``resolve_within`` says so.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gitquarry.config import GraphConfig

GRAPH_SUFFIXES = (".yml", ".yaml")
MARKDOWN_SUFFIXES = (".md", ".markdown")

MISSING: tuple[int, int] = (0, -1)

#: the most of one Markdown doc the graph corpus reads (bytes): a larger doc is cut there (at
#: a character boundary) with a warning naming it; at most this + 1 bytes of it are read.
#: Graph YAML files have their own cap, ``parsing.strict_yaml.DEFAULT_MAX_BYTES`` (4 MiB),
#: over which the file is refused.
MAX_DOC_BYTES = 1024 * 1024


def _resolve_dir(project: Path, configured: str) -> Path:
    path = Path(os.path.expanduser(configured))
    return path if path.is_absolute() else project / path


def graph_dir(project: Path, config: GraphConfig) -> Path:
    """The graph directory (``[graph] graph_dir``, default ``.beadloom/_graph``)."""
    return _resolve_dir(project, config.graph_dir)


def docs_dir(project: Path, config: GraphConfig) -> Path:
    """The docs directory (``[graph] docs_dir``, default ``docs``)."""
    return _resolve_dir(project, config.docs_dir)


def _walk(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    if not root.is_dir():
        return []
    found: list[Path] = []
    for dirpath, _dirnames, filenames in os.walk(root):
        found.extend(Path(dirpath, name) for name in filenames if name.lower().endswith(suffixes))
    return sorted(found)


def containment_root(project: Path, configured: str) -> Path:
    """Where files found under the configured directory ``configured`` must resolve to.

    The project (``project`` must be resolved) for a relative directory or an absolute one
    inside the project; for an absolute directory outside the project, configured on
    purpose, that directory with its symlinks resolved.
    """
    path = Path(os.path.expanduser(configured))
    if not path.is_absolute():
        return project
    lexical = Path(os.path.normpath(path))
    if lexical == project or project in lexical.parents:
        return project
    return lexical.resolve()


def resolve_within(path: Path, root: Path) -> Path | None:
    """``path`` with every symlink resolved when the result lies inside ``root`` (a resolved
    directory); None when it leads outside ``root`` or cannot be resolved (a symlink loop).
    A path that does not exist resolves as far as it can, so a missing file inside ``root``
    is returned as such."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: symlink loop (Python < 3.13)
        return None
    if real != root and root not in real.parents:
        return None
    return real


def graph_files(project: Path, config: GraphConfig) -> list[Path]:
    """Every ``*.yml``/``*.yaml`` file under the graph directory, sorted; [] when none."""
    return _walk(graph_dir(project, config), GRAPH_SUFFIXES)


def docs_dir_files(project: Path, config: GraphConfig) -> list[Path]:
    """Every Markdown file (``*.md``, ``*.markdown``) under the docs directory, sorted."""
    return _walk(docs_dir(project, config), MARKDOWN_SUFFIXES)


def source_keys(project: Path, config: GraphConfig) -> list[str]:
    """The ``relative`` form of every graph file and docs-directory Markdown file, as
    ``graph_files`` + ``docs_dir_files`` would give, built with string operations only
    (it runs before every search, over thousands of files)."""
    base = str(project)
    keys: list[str] = []
    for root, suffixes in (
        (graph_dir(project, config), GRAPH_SUFFIXES),
        (docs_dir(project, config), MARKDOWN_SUFFIXES),
    ):
        for dirpath, _dirnames, filenames in os.walk(root):
            if dirpath.startswith(base + os.sep):
                prefix = dirpath[len(base) + 1 :].replace(os.sep, "/") + "/"
            else:
                prefix = dirpath.replace(os.sep, "/") + "/"
            keys.extend(prefix + n for n in filenames if n.lower().endswith(suffixes))
    return keys


def relative(project: Path, path: Path) -> str:
    """``path`` relative to ``project`` with POSIX separators (absolute if outside it)."""
    try:
        return path.relative_to(project).as_posix()
    except ValueError:
        return path.as_posix()


def fingerprint(path: Path | str) -> tuple[int, int]:
    """``(mtime_ns, size_bytes)`` of ``path`` (one ``stat``), or ``MISSING`` when it is not a
    regular file."""
    try:
        st = os.stat(path)
    except OSError:
        return MISSING
    if not stat.S_ISREG(st.st_mode):
        return MISSING
    return (st.st_mtime_ns, st.st_size)


def resolve_doc_path(project: Path, declared: str) -> Path | None:
    """The absolute, normalised path of a node's ``docs:`` entry (``project`` must be
    absolute), or None when it lexically leaves the project (``../``, an absolute path
    elsewhere). Symlinks are not followed here: check the result with ``resolve_within``
    before reading it."""
    candidate = Path(os.path.normpath(project / declared))
    if candidate != project and project not in candidate.parents:
        return None
    return candidate
