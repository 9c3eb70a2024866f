"""How gitquarry runs git: one environment, fixed options, bytes in and out.

What gitquarry indexes must not depend on who runs it or where: the same repository gives
the same rows whatever the user's ``~/.gitconfig``, the repository's ``.git/config``, a
harness's ``GIT_CONFIG_COUNT`` or ``GIT_*`` variables say. Git still reads every
configuration file (``safe.directory``, the repository format and its extensions are the
user's and the repository's business), but:

* ``_OVERRIDES`` pins, as command-line configuration (which beats every file and
  ``GIT_CONFIG_COUNT``), every key that changes what the commands we run print: log output
  encoding, diff algorithm, context, rename limits, prefixes, order file, submodule format,
  big-file threshold, colours, signatures, attributes file, mailmap sources, fsmonitor;
* ``_SCRUBBED`` environment variables that point git at another repository, object store,
  index, namespace or ceiling, or change diffs and pathspecs, are removed;
* replace refs and grafts are ignored (``GIT_NO_REPLACE_OBJECTS``, ``GIT_GRAFT_FILE``
  pointing at nothing): a commit hash always means the object as stored, in every
  repository and every index;
* commands against a known repository run with ``--git-dir`` and a private, empty
  ``--work-tree`` and index, so nothing in the working tree or the caller's current
  directory (``.gitattributes``, ``.mailmap``) leaks into the output; the ``.mailmap``
  gitquarry applies is passed explicitly (``mailmap=``);
* no network: ``GIT_NO_LAZY_FETCH=1`` and ``GIT_ALLOW_PROTOCOL`` naming no protocol, so a
  partial clone never fetches a missing object (it is reported missing instead);
* ``LC_ALL=C`` (stable messages), ``GIT_OPTIONAL_LOCKS=0`` (reading never takes the index
  lock), ``GIT_TERMINAL_PROMPT=0``, pager ``cat``.

See ``docs/git.md`` for the full list and the reasons.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from gitquarry.errors import GitError, GitNotFoundError

log = logging.getLogger(__name__)

#: Configuration pinned on every call: each key changes what a command we run prints.
_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.quotepath", "false"),
    ("core.abbrev", "auto"),
    ("core.bigFileThreshold", "512m"),
    ("core.attributesFile", os.devnull),
    ("core.fsmonitor", "false"),
    ("core.useReplaceRefs", "false"),
    ("color.ui", "false"),
    ("color.diff", "false"),
    ("i18n.logOutputEncoding", "UTF-8"),
    ("i18n.commitEncoding", "UTF-8"),
    ("log.showSignature", "false"),
    ("log.mailmap", "false"),
    ("diff.mnemonicPrefix", "false"),
    ("diff.noprefix", "false"),
    ("diff.srcPrefix", "a/"),
    ("diff.dstPrefix", "b/"),
    ("diff.relative", "false"),
    ("diff.orderFile", os.devnull),
    ("diff.algorithm", "myers"),
    ("diff.indentHeuristic", "true"),
    ("diff.context", "3"),
    ("diff.interHunkContext", "0"),
    ("diff.suppressBlankEmpty", "false"),
    ("diff.renames", "true"),
    ("diff.renameLimit", "1000"),
    ("diff.ignoreSubmodules", "none"),
    ("diff.submodule", "short"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)

#: Environment variables removed before running git: each one redirects git to other data
#: (repository, work tree, index, object store, namespace, shallow file), changes how a
#: repository is discovered, or changes diff/pathspec output.
_SCRUBBED: frozenset[str] = frozenset(
    {
        "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_INDEX_VERSION",
        "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH",
        "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_NAMESPACE",
        "GIT_REPLACE_REF_BASE", "GIT_SHALLOW_FILE", "GIT_DEFAULT_HASH",
        "GIT_DIFF_OPTS", "GIT_EXTERNAL_DIFF", "GIT_DIFF_PATH_COUNTER", "GIT_DIFF_PATH_TOTAL",
        "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS",
        "GIT_ICASE_PATHSPECS", "GIT_ATTR_SOURCE", "GIT_CONFIG", "LANGUAGE",
    }
)

#: Not a transport git knows: with it as the only allowed protocol, nothing is fetched.
_NO_PROTOCOL = "gitquarry-offline"

_env_lock = threading.Lock()
_neutral: Path | None = None
_env_warned: list[bool] = []


def neutral_dir() -> Path:
    """A private, empty directory used as git's work tree and index location for commands
    against a known repository (created on first use, removed at exit)."""
    global _neutral
    with _env_lock:
        if _neutral is None or not _neutral.is_dir():
            path = Path(tempfile.mkdtemp(prefix="gitquarry-git-"))
            (path / "worktree").mkdir()
            atexit.register(shutil.rmtree, path, True)
            _neutral = path
        return _neutral


def _env_config_valid(environ: Mapping[str, str]) -> bool:
    """Whether ``GIT_CONFIG_COUNT``/``_KEY_n``/``_VALUE_n`` form a block git accepts."""
    raw = environ.get("GIT_CONFIG_COUNT")
    if raw is None or raw == "":
        return True
    try:
        count = int(raw)
    except ValueError:
        return False
    if count < 0:
        return False
    return all(
        environ.get(f"GIT_CONFIG_KEY_{i}") and f"GIT_CONFIG_VALUE_{i}" in environ
        for i in range(count)
    )


_MALFORMED_ENV_CONFIG = (
    "ignoring GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n: the block is malformed "
    "(git would refuse to run)"
)


def environment_warnings() -> list[str]:
    """Problems in the current git environment that gitquarry works around."""
    return [] if _env_config_valid(os.environ) else [_MALFORMED_ENV_CONFIG]


def git_env(*, repository: bool = True) -> dict[str, str]:
    """The environment for a git process. ``repository``: the command names its repository
    with ``--git-dir`` (its index is redirected to an empty private location)."""
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    if not _env_config_valid(env):
        with _env_lock:
            if not _env_warned:
                _env_warned.append(True)
                log.warning(_MALFORMED_ENV_CONFIG)
        for key in [k for k in env if k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))]:
            del env[key]
        env.pop("GIT_CONFIG_COUNT", None)
    neutral = neutral_dir()
    env.update(
        GIT_NO_LAZY_FETCH="1",
        GIT_ALLOW_PROTOCOL=_NO_PROTOCOL,
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_GRAFT_FILE=str(neutral / "no-grafts"),
        GIT_ATTR_NOSYSTEM="1",
        GIT_REF_PARANOIA="1",
        GIT_ADVICE="0",
        LC_ALL="C",
        LANG="C",
        GIT_OPTIONAL_LOCKS="0",
        GIT_PAGER="cat",
        PAGER="cat",
    )
    if repository:
        env["GIT_INDEX_FILE"] = str(neutral / "no-index")
    return env


def git_executable() -> str:
    """Path of ``git``. :raises GitNotFoundError: not on PATH."""
    path = shutil.which("git")
    if path is None:
        raise GitNotFoundError()
    return path


def _options(mailmap: Path | None) -> list[str]:
    out: list[str] = []
    for key, value in _OVERRIDES:
        out += ["-c", f"{key}={value}"]
    out += ["-c", f"mailmap.file={mailmap or ''}", "-c", "mailmap.blob="]
    return out


def git_argv(git_dir: Path, args: Sequence[str], *, mailmap: Path | None = None) -> list[str]:
    """argv running ``git`` against the repository whose git dir is ``git_dir``, with the
    private empty work tree and the pinned options. ``mailmap``: the ``.mailmap`` file to
    apply to ``%aN``/``%aE``/``%cN``/``%cE`` (None: none)."""
    return [
        git_executable(),
        f"--git-dir={git_dir}",
        f"--work-tree={neutral_dir() / 'worktree'}",
        *_options(mailmap),
        *args,
    ]


def popen_git(
    git_dir: Path,
    args: Sequence[str],
    *,
    mailmap: Path | None = None,
    **kwargs: object,
) -> subprocess.Popen[bytes]:
    """Start git against ``git_dir`` (see ``git_argv``) in the private directory."""
    return subprocess.Popen(  # type: ignore[call-overload,no-any-return]
        git_argv(git_dir, args, mailmap=mailmap),
        cwd=str(neutral_dir()),
        env=git_env(),
        **kwargs,
    )


@dataclass
class GitStream:
    """A git process read as a stream (``stream_git``): ``stdout`` while inside the ``with``;
    ``code`` and ``stderr`` once it has ended (git is killed when the reader stops early)."""

    stdout: IO[bytes]
    code: int = 0
    stderr: bytes = b""

    def error(self, git_dir: Path, args: Sequence[str]) -> GitError:
        """The ``GitError`` for this run (the caller decides whether its exit code counts)."""
        return GitError(git_argv(git_dir, args), self.code,
                        self.stderr.decode("utf-8", "replace"))


@contextlib.contextmanager
def stream_git(git_dir: Path, args: Sequence[str]) -> Iterator[GitStream]:
    """Run git against ``git_dir`` with its stdout as a stream. On leaving the block, git is
    killed if still running (a reader that stops early costs only what it read), its stderr
    collected and its exit status recorded on the ``GitStream``."""
    proc = popen_git(git_dir, args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    stream = GitStream(proc.stdout)
    try:
        yield stream
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        stream.stderr = proc.stderr.read() if proc.stderr else b""
        if proc.stderr:
            proc.stderr.close()
        stream.code = proc.wait()


def run_git(
    git_dir: Path | None,
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    input_bytes: bytes | None = None,
    check: bool = True,
    mailmap: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run git to completion and return its output as bytes.

    ``git_dir`` given: the command runs against that repository (``git_argv``), ``cwd`` is
    ignored. ``git_dir`` None: it runs in ``cwd`` and git discovers the repository there
    (discovery only), with the same pinned options and environment.
    :raises GitError: non-zero exit and ``check``.
    :raises GitNotFoundError: git is not installed.
    """
    if git_dir is not None:
        argv = git_argv(git_dir, args, mailmap=mailmap)
        run_cwd: str | None = str(neutral_dir())
        env = git_env()
    else:
        argv = [git_executable(), *_options(None), *args]
        run_cwd = str(cwd) if cwd else None
        env = git_env(repository=False)
    proc = subprocess.run(
        argv, cwd=run_cwd, input=input_bytes, capture_output=True, env=env, check=False
    )
    if check and proc.returncode != 0:
        raise GitError(argv, proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return proc


def decode(data: bytes) -> tuple[str, bool]:
    """Decode git output as UTF-8; invalid bytes become U+FFFD. Returns (text, had_errors)."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), True


def display_bytes(data: bytes) -> str:
    """Bytes from git (a ref name, a path) as text: UTF-8, invalid bytes as ``\\xNN``."""
    return data.decode("utf-8", "backslashreplace")


def display_path(path: Path | str) -> str:
    """A filesystem path as text: undecodable bytes (surrogate escapes) as ``\\xNN``."""
    return display_bytes(os.fsencode(path))
