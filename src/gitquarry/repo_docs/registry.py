"""The registration registry: which local Git authority serves which repository name.

Only ``register`` looks at the working directory (its default ``--repository-path``; the
default name comes from the ``origin`` remote's URL or the directory, :func:`derive_repo_name`):
a repository is registered once and later named by ``repo_id`` and, when
more than one authority is registered, the full opaque selector (``registration_id``,
``source_registration_id``, ``source_registration_generation``). The absolute path lives only
in this file: ``<state dir>/repo-docs-registry.json`` (``$XDG_STATE_HOME/gitquarry/``), mode
0600 in a 0700 directory, written atomically under an ``flock``. Every public value is
opaque: ``git_store_ref`` and ``worktree_ref`` are hashes of the resolved git common dir (plus
object format) and working-tree path, so a symlinked or linked worktree of the same
repository has the same ``git_store_ref``, and the same path always gets the same ids.

Repository names are aliases until canonicalised: ``https://host/Owner/Repo.git``,
``git@host:Owner/Repo``, ``host.tld/Owner/Repo`` and ``owner/repo`` all resolve to the
canonical ``repo_id`` ``owner/repo`` before any identity is written. ``rebind`` is a
compare-and-swap on the source generation: a stale generation is refused, and a successful
rebind makes every selector carrying the old generation stale.

The daemon (issue 10) will own this file; :class:`Registry` is the API it calls.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gitquarry.errors import (
    NotARepositoryError,
    RepoDocsRegistrationError,
    RepoDocsStaleGenerationError,
)
from gitquarry.gitio.discovery import inspect_repository
from gitquarry.gitio.worktree import worktree_top

REGISTRY_NAME = "repo-docs-registry.json"
_NAME = re.compile(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*")
_PREFIX = re.compile(r"^(?:[a-z][a-z0-9+.-]*://[^/]+/|[^@/\s]+@[^:/\s]+:)", re.IGNORECASE)


def state_dir() -> Path:
    """``$XDG_STATE_HOME/gitquarry`` (platformdirs' user state dir on other systems)."""
    from platformdirs import user_state_dir

    return Path(user_state_dir("gitquarry"))


def canonical_repo_id(name: str) -> str:
    """The canonical ``repo_id`` of a repository name or alias (see module docstring).

    :raises RepoDocsRegistrationError: not a repository name.
    """
    text = name.strip()
    text = _PREFIX.sub("", text)
    text = text.removesuffix("/").removesuffix(".git").strip("/")
    parts = text.split("/")
    if len(parts) >= 3 and "." in parts[0]:  # github.com/owner/name: the host is an alias
        text = "/".join(parts[1:])
    if not text or len(text) > 200 or not _NAME.fullmatch(text) or ".." in text.split("/"):
        raise RepoDocsRegistrationError(
            "invalid_name", f"{name!r} is not a repository name (use owner/name)"
        )
    return text.lower()


#: a GitHub-style remote URL: ``scheme://[user@]host[:port]/owner/name[.git]`` or the scp
#: form ``user@host:owner/name[.git]``, exactly two path segments after the host
_HOSTED_URL = re.compile(
    r"(?:(?:https?|ssh|git)://(?:[^@/\s]+@)?[^/\s]+/|[^@/\s]+@[^:/\s]+:)"
    r"(?P<owner>[^/\s]+)/(?P<name>[^/\s]+?)(?:\.git)?/?",
    re.IGNORECASE,
)


def derive_repo_name(path: Path, registry: Registry | None = None) -> tuple[str, str]:
    """A default repository name for the local repository at ``path``, for ``register``
    without ``--repo``: ``(repo_id, source)``. ``source`` is ``"registered"`` when this
    very authority (git store and working tree) is already registered in ``registry``
    (default: the user's): its name, so a second ``register`` adds no second name for it;
    else ``"origin"`` when it comes from the ``origin`` remote's URL (a GitHub-style URL,
    ``https://host/owner/name.git`` or ``git@host:owner/name``), else ``"directory"`` (the
    working tree's, or the bare repository's, directory name without ``.git``).

    The URL is repository content (untrusted): it is read with ``git config`` (no parsing of
    ``.git/config`` here), and whatever it yields passes :func:`canonical_repo_id`, the same
    rules as an explicit ``--repo``; a name is only ever a registry key, never a path.

    :raises RepoDocsRegistrationError: ``path`` is not a Git repository (``invalid_path``),
        or neither the URL nor the directory name is a valid name (``name_required``: the
        message says to pass ``--repo owner/name``).
    """
    from gitquarry.errors import GitError
    from gitquarry.gitio.runner import run_git

    authority, store_ref, wt_ref, _fmt, bare = describe_authority(path)
    for binding in (registry or Registry()).bindings():
        if binding.source.git_store_ref == store_ref and binding.source.worktree_ref == wt_ref:
            return binding.repo_id, "registered"
    try:
        repo = inspect_repository(authority)
        proc = run_git(repo.git_dir, ["config", "--get", "remote.origin.url"], check=False)
    except (GitError, NotARepositoryError):
        proc = None
    if proc is not None and proc.returncode == 0:
        url = proc.stdout.decode("utf-8", "replace").strip()
        match = _HOSTED_URL.fullmatch(url)
        if match:
            with contextlib.suppress(RepoDocsRegistrationError):
                return canonical_repo_id(f"{match['owner']}/{match['name']}"), "origin"
    name = authority.name
    if bare:
        name = name.removesuffix(".git")
    try:
        return canonical_repo_id(name), "directory"
    except RepoDocsRegistrationError:
        raise RepoDocsRegistrationError(
            "name_required",
            "cannot derive a repository name for this repository (no GitHub-style origin "
            "remote, and its directory name is not a valid name): pass --repo owner/name",
        ) from None


def _ref(kind: str, *parts: str) -> str:
    digest = hashlib.sha256("\x00".join((kind, *parts)).encode("utf-8", "surrogateescape"))
    return f"{kind}-{digest.hexdigest()[:24]}"


@dataclass
class Source:
    """One registered Git authority. ``repository_path`` is private (never in public
    output); everything in :meth:`public` is opaque."""

    source_registration_id: str
    generation: int
    repository_path: str
    git_store_ref: str
    worktree_ref: str | None
    object_format: str
    bare: bool
    created_at: int
    updated_at: int

    def public(self) -> dict[str, Any]:
        return {
            "source_registration_id": self.source_registration_id,
            "source_registration_generation": self.generation,
            "git_store_ref": self.git_store_ref, "worktree_ref": self.worktree_ref,
            "object_format": self.object_format, "bare": self.bare,
        }


@dataclass
class Registration:
    registration_id: str
    repo_id: str
    sources: list[Source] = field(default_factory=list)
    created_at: int = 0


@dataclass(frozen=True)
class Binding:
    """A resolved selector: the registration and exactly one source."""

    registration: Registration
    source: Source

    @property
    def repo_id(self) -> str:
        return self.registration.repo_id

    @property
    def path(self) -> Path:
        return Path(self.source.repository_path)

    def selector(self) -> dict[str, Any]:
        return {
            "repo_id": self.registration.repo_id,
            "registration_id": self.registration.registration_id,
            "source_registration_id": self.source.source_registration_id,
            "source_registration_generation": self.source.generation,
        }

    def public(self) -> dict[str, Any]:
        return {**self.selector(), **self.source.public()}


@dataclass(frozen=True)
class Selector:
    """What a caller passed: ``repo`` (name or alias; None = the only registration) and
    the optional three-field selector, all or none."""

    repo: str | None = None
    registration_id: str | None = None
    source_registration_id: str | None = None
    source_registration_generation: int | None = None


def describe_authority(path: Path) -> tuple[Path, str, str | None, str, bool]:
    """(resolved path, git_store_ref, worktree_ref, object format, bare) of ``path``.

    :raises RepoDocsRegistrationError: ``path`` is not a directory in a Git repository.
    """
    try:
        resolved = path.expanduser().resolve(strict=True)
    except OSError as exc:
        raise RepoDocsRegistrationError("invalid_path", f"{path} does not exist") from exc
    if not resolved.is_dir():
        raise RepoDocsRegistrationError("invalid_path", f"{path} is not a directory")
    try:
        repo = inspect_repository(resolved)
    except NotARepositoryError as exc:
        raise RepoDocsRegistrationError("invalid_path",
                                        f"{path} is not a Git repository") from exc
    store_ref = _ref("gs", str(repo.common_dir), repo.object_format)
    top = None if repo.is_bare else worktree_top(resolved)
    worktree_ref = _ref("wt", str(top.resolve())) if top is not None else None
    authority = top.resolve() if top is not None else repo.common_dir
    return authority, store_ref, worktree_ref, repo.object_format, repo.is_bare


class Registry:
    """The registry file at ``path`` (default: :func:`state_dir` / ``REGISTRY_NAME``)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or state_dir() / REGISTRY_NAME

    # -- storage ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(OSError):
            os.chmod(self.path.parent, 0o700)
        fd = os.open(str(self.path) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _read(self) -> list[Registration]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise RepoDocsRegistrationError(
                "registry_unreadable", f"the repository-docs registry is unreadable ({exc})"
            ) from exc
        out: list[Registration] = []
        for item in raw.get("registrations", []):
            sources = [Source(**s) for s in item.get("sources", [])]
            out.append(Registration(item["registration_id"], item["repo_id"], sources,
                                    int(item.get("created_at", 0))))
        return out

    def _write(self, registrations: list[Registration]) -> None:
        data = {"version": 1, "registrations": [asdict(r) for r in registrations]}
        fd, tmp = tempfile.mkstemp(prefix=".registry-", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # -- operations ------------------------------------------------------------------------

    def register(self, repo: str, repository_path: Path) -> Binding:
        """Attach the Git authority at ``repository_path`` to ``repo`` (idempotent for the
        same authority). Returns the binding with its opaque selector.

        :raises RepoDocsRegistrationError: bad name or path.
        """
        repo_id = canonical_repo_id(repo)
        authority, store_ref, wt_ref, fmt, bare = describe_authority(repository_path)
        now = int(time.time())
        with self._locked():
            registrations = self._read()
            reg = next((r for r in registrations if r.repo_id == repo_id), None)
            if reg is None:
                reg = Registration(_ref("reg", repo_id), repo_id, [], now)
                registrations.append(reg)
            for source in reg.sources:
                if source.git_store_ref == store_ref and source.worktree_ref == wt_ref:
                    if source.repository_path != str(authority):
                        source.repository_path, source.updated_at = str(authority), now
                        self._write(registrations)
                    return Binding(reg, source)
            source = Source(
                _ref("src", reg.registration_id, store_ref, wt_ref or ""), 1, str(authority),
                store_ref, wt_ref, fmt, bare, now, now,
            )
            reg.sources.append(source)
            self._write(registrations)
            return Binding(reg, source)

    def rebind(self, repo: str, registration_id: str, generation: int, repository_path: Path,
               source_registration_id: str | None = None) -> Binding:
        """Compare-and-swap the authority of one source: only when its generation is still
        ``generation``; the new generation is ``generation + 1``.

        :raises RepoDocsStaleGenerationError: the generation moved on.
        :raises RepoDocsRegistrationError: unknown registration/source, or several sources
            and no ``source_registration_id``.
        """
        repo_id = canonical_repo_id(repo)
        authority, store_ref, wt_ref, fmt, bare = describe_authority(repository_path)
        with self._locked():
            registrations = self._read()
            reg = next((r for r in registrations if r.repo_id == repo_id
                        and r.registration_id == registration_id), None)
            if reg is None:
                raise RepoDocsRegistrationError(
                    "unknown_selector", f"no registration {registration_id!r} for {repo_id}"
                )
            if source_registration_id is None:
                if len(reg.sources) != 1:
                    raise RepoDocsRegistrationError(
                        "ambiguous", f"{repo_id} has {len(reg.sources)} sources; pass "
                        "--source-registration-id",
                    )
                source = reg.sources[0]
            else:
                found = [s for s in reg.sources if s.source_registration_id ==
                         source_registration_id]
                if not found:
                    raise RepoDocsRegistrationError(
                        "unknown_selector", f"no source {source_registration_id!r} in "
                        f"{registration_id}",
                    )
                source = found[0]
            if source.generation != generation:
                raise RepoDocsStaleGenerationError(generation, source.generation)
            source.generation += 1
            source.repository_path = str(authority)
            source.git_store_ref, source.worktree_ref = store_ref, wt_ref
            source.object_format, source.bare = fmt, bare
            source.updated_at = int(time.time())
            self._write(registrations)
            return Binding(reg, source)

    def bindings(self, repo: str | None = None) -> list[Binding]:
        """Every (registration, source) pair, for ``repo`` only when given."""
        repo_id = canonical_repo_id(repo) if repo is not None else None
        out: list[Binding] = []
        for reg in self._read():
            if repo_id is not None and reg.repo_id != repo_id:
                continue
            out.extend(Binding(reg, s) for s in reg.sources)
        return out

    def resolve(self, selector: Selector) -> Binding:
        """The one binding ``selector`` names.

        :raises RepoDocsRegistrationError: partial selector, nothing registered, several
            candidates without a full selector, or an unknown selector.
        :raises RepoDocsStaleGenerationError: the selector's generation is not current.
        """
        parts = (selector.registration_id, selector.source_registration_id,
                 selector.source_registration_generation)
        given = [p is not None for p in parts]
        if any(given) and not all(given):
            raise RepoDocsRegistrationError(
                "partial_selector", "pass all of --registration-id, --source-registration-id "
                "and --source-registration-generation, or none of them",
            )
        candidates = self.bindings(selector.repo)
        if not candidates:
            what = f"{selector.repo!r} is not" if selector.repo else "no repository is"
            raise RepoDocsRegistrationError(
                "not_registered", f"{what} registered; run `gitquarry repo-docs register` "
                "in its checkout (or pass --repo owner/name --repository-path PATH)",
            )
        if not all(given):
            if len(candidates) > 1:
                names = sorted({b.repo_id for b in candidates})
                raise RepoDocsRegistrationError(
                    "ambiguous", f"{len(candidates)} registrations match ({', '.join(names)}); "
                    "run `gitquarry repo-docs sources` and pass --repo and the full selector",
                )
            return candidates[0]
        for binding in candidates:
            if (binding.registration.registration_id == selector.registration_id
                    and binding.source.source_registration_id
                    == selector.source_registration_id):
                if binding.source.generation != selector.source_registration_generation:
                    raise RepoDocsStaleGenerationError(
                        int(selector.source_registration_generation or 0),
                        binding.source.generation,
                    )
                return binding
        raise RepoDocsRegistrationError("unknown_selector",
                                        "no registration matches that selector")
