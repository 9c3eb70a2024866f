"""Configuration, read from TOML, with a trust boundary between the user and the repository.

Sources, later overriding earlier, key by key:

1. built-in defaults;
2. the **user's own** file: ``$GITQUARRY_CONFIG`` when set (``~`` expanded; a named file that
   does not exist is an error; ``/dev/null`` means "no file"), else
   ``<user config dir>/gitquarry/config.toml`` (absent: defaults);
3. the **workspace** file ``<workspace>/.gitquarry.toml``. It lives inside the directory being
   indexed, usually inside a repository someone else wrote, so it is *repository-owned* and
   untrusted: it may set only the keys in :data:`REPOSITORY_OWNED_KEYS` (exclusions, ref globs,
   whether history is indexed, ranking defaults, and graph/docs directories that resolve inside
   the workspace). Every other key it sets (provider, endpoint, model, credentials, data
   boundary, device, index location, resource limits) is ignored, and the file and keys are
   named in ``Config.warnings`` (code ``config_key_refused``). The user may record a trust
   decision in their own file, ``[trust] workspaces = ["/path/to/workspace"]``, after which
   that workspace's file may set every key (like git's ``safe.directory``).

Unknown sections or keys, and values of the wrong type, raise ``ConfigError`` naming the file:
nothing is silently dropped.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from gitquarry.errors import ConfigError, FileRefusedError
from gitquarry.parsing.bounded_read import read_capped
from gitquarry.retrieval.pipeline_settings import PipelineSettings

#: the result pipeline's defaults: ``[search]`` takes them (the pipeline owns them)
_PIPELINE = PipelineSettings()

DEFAULT_EXCLUDES: tuple[str, ...] = (
    "**/.stversions/**",
    "**/build/**",
    "**/dist/**",
    "**/.venv/**",
    "**/venv/**",
    "**/node_modules/**",
    "**/__pycache__/**",
    "**/.pytest_cache/**",
    "**/.tox/**",
    "**/.mypy_cache/**",
)

DEFAULT_REF_GLOBS: tuple[str, ...] = ("refs/heads/**", "refs/remotes/**", "refs/tags/**")


class Owner(Enum):
    """Which file may set a key (the trust rule of docs/security.md)."""

    #: any file, also a workspace's repository-owned ``.gitquarry.toml``
    REPOSITORY = "repository"
    #: as REPOSITORY, when the directory is relative and resolves inside the workspace
    REPOSITORY_PATH = "repository (inside the workspace)"
    #: the user's own file, or the ``.gitquarry.toml`` of a workspace listed in
    #: ``[trust] workspaces``
    USER = "user"
    #: the user's own file only, whatever the workspace's trust
    USER_FILE = "user file only"


@dataclass(frozen=True)
class Check:
    """A range rule of one key: ``ok(value)`` must hold, else ``ConfigError`` says
    ``<name> <why>`` (``name``: the key as ``[section] key``, unless the rule names
    several)."""

    ok: Callable[[Any], bool]
    why: str
    name: str | None = None


def at_least(low: float) -> Check:
    """``value >= low``."""
    return Check(lambda v: v >= low, f"must be >= {low}")


def between(low: float, high: float) -> Check:
    """``low <= value <= high``."""
    return Check(lambda v: low <= v <= high, f"must be from {low} to {high}")


#: a finite number in [0, 1]
FRACTION = Check(lambda v: math.isfinite(v) and 0 <= v <= 1, "must be a number from 0 to 1")
#: a finite weight >= 0
WEIGHT = Check(lambda v: math.isfinite(v) and v >= 0, "must be a finite number >= 0")
#: a finite number of seconds >= 0
SECONDS = Check(lambda v: math.isfinite(v) and v >= 0, "must be a finite number of seconds >= 0")
_TICK = Check(lambda v: v >= 0.1, "must be >= 0.1", name="[daemon] reconcile_s and poll_s")
_LOG = "[daemon] log_max_bytes / log_backups"


def setting(default: Any, help: str, *, owner: Owner = Owner.USER,
            checks: tuple[Check, ...] = ()) -> Any:
    """The one declaration of a key, as a dataclass field: its type is the field's
    annotation, then ``default``, ``help`` (one sentence, shown by docs/configuration.md),
    ``owner`` and range ``checks``. A list default is copied for each instance."""
    meta = {"help": help, "owner": owner, "checks": checks}
    if isinstance(default, list | tuple):
        items = list(default)
        return field(default_factory=lambda: list(items), metadata=meta)
    return field(default=default, metadata=meta)


R, RP, U, UF = Owner.REPOSITORY, Owner.REPOSITORY_PATH, Owner.USER, Owner.USER_FILE


@dataclass(frozen=True)
class IndexingConfig:
    """``[indexing]``: where repositories are discovered and where the index lives."""

    exclude: list[str] = setting(  # noqa: RUF009 (a fresh list per instance)
        DEFAULT_EXCLUDES, "globs of directories never searched for repositories", owner=R)
    exclude_hidden_dirs: bool = setting(
        True, "skip directories whose name starts with a dot", owner=R)
    index_dir: str = setting(
        ".gitquarry", "index directory; a relative path is relative to the workspace")


@dataclass(frozen=True)
class GitIndexingConfig:
    """``[git_indexing]``: what the commit-history corpus reads from each repository."""

    enabled: bool = setting(True, "index commit history at all", owner=R)
    refs: list[str] = setting(  # noqa: RUF009 (a fresh list per instance)
        DEFAULT_REF_GLOBS, "ref globs (gitignore-style ``**``) whose history is indexed",
        owner=R)
    delta_max_lines: int = setting(
        200, "lines of ``git show`` diff kept per commit; the rest is counted, not stored",
        checks=(at_least(1),))
    batch_size: int = setting(
        2000, "commits per ``git log`` process and per SQLite transaction",
        checks=(at_least(1),))


@dataclass(frozen=True)
class EmbeddingConfig:
    """``[embedding]``: the embedding provider. Default: bundled all-MiniLM-L6-v2 on ONNX."""

    provider: str = setting(
        "minilm-onnx", "minilm-onnx (bundled, offline), onnx (an encoder directory, "
        "offline), sentence-transformers, openai, or none")
    model: str = setting(
        "", "model directory (onnx), model name or local path (sentence-transformers) or "
        "served model id (openai)")
    device: Literal["cpu", "cuda", "auto"] = setting(
        "cpu", "device of the in-process providers")
    url: str = setting(
        "", "base URL of an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    api_key_env: str = setting(
        "", "name of the environment variable holding the API key (never the key itself)")
    data_boundary: str = setting(
        "", "where text goes: local_process, local_network, remote, unknown")
    allow_remote: bool = setting(
        False, "explicit opt-in to send repository content to a remote/unknown boundary")
    batch_size: int = setting(100, "texts per embedding call while indexing",
                              checks=(at_least(1),))
    timeout_s: float = setting(
        60.0, "request timeout of HTTP providers, seconds",
        checks=(Check(lambda v: math.isfinite(v) and v > 0,
                      "must be a positive number of seconds"),))
    threads: int = setting(
        0, "ONNX Runtime intra-op threads (minilm-onnx, onnx); 0: one per available CPU, at "
        "most 8", checks=(Check(lambda v: 0 <= v <= 256, "must be 0 (automatic) to 256"),))


@dataclass(frozen=True)
class SearchConfig:
    """``[search]``: ranking defaults, and the result pipeline every corpus runs after
    ranking (``retrieval.pipeline``; the seed's ``SearchPipelineConfig`` names and defaults,
    except ``rerank_model``: empty, since the seed's default names a hub model that would
    have to be downloaded). The pipeline's keys take their defaults from
    ``retrieval.pipeline_settings.PipelineSettings`` (one declaration of each default)."""

    mode: Literal["hybrid", "semantic", "lexical"] = setting(
        "hybrid", "default search mode", owner=R)
    rrf_k: int = setting(
        40, "RRF constant (40, with keyword-shaped queries weighted 1/1, measured best on the "
        "click and flask history dev sets with v3 commit vectors)",
        owner=R, checks=(at_least(1),))
    lexical_weight: float = setting(1.0, "weight of the keyword ranking in the fusion",
                                    owner=R, checks=(WEIGHT,))
    semantic_weight: float = setting(1.0, "weight of the vector ranking in the fusion",
                                     owner=R, checks=(WEIGHT,))
    weight_by_shape: bool = setting(
        True, "multiply the weights by the query's shape (a question in prose: semantic "
        "weight x 2)", owner=R)
    top_n: int = setting(5, "results shown", owner=R, checks=(between(1, 100),))
    collapse_copies: bool = setting(
        _PIPELINE.collapse, "commits that are copies of one change (same ``git patch-id``) "
        "shown once", owner=R)
    min_confidence: float = setting(
        _PIPELINE.min_confidence, "results scoring below this (score in [0, 1]) are removed",
        owner=R, checks=(FRACTION,))
    max_chunks_per_doc: int = setting(
        _PIPELINE.max_chunks_per_doc, "results per document (repository docs: chunks per "
        "heading section; a commit is one document)", owner=R, checks=(between(1, 100),))
    dedup_enabled: bool = setting(
        _PIPELINE.dedup_enabled, "remove results whose vectors have cosine similarity >= "
        "dedup_threshold to a kept one", owner=R)
    dedup_threshold: float = setting(_PIPELINE.dedup_threshold, "see dedup_enabled",
                                     owner=R, checks=(FRACTION,))
    ngram_dedup_enabled: bool = setting(
        _PIPELINE.ngram_dedup_enabled, "remove results whose text has word-trigram Jaccard "
        ">= ngram_dedup_threshold", owner=R)
    ngram_dedup_threshold: float = setting(
        _PIPELINE.ngram_dedup_threshold, "see ngram_dedup_enabled", owner=R,
        checks=(FRACTION,))
    mmr_enabled: bool = setting(_PIPELINE.mmr_enabled,
                                "maximal marginal relevance (diversity)", owner=R)
    mmr_lambda: float = setting(_PIPELINE.mmr_lambda, "MMR trade-off; 1 = plain relevance",
                                owner=R, checks=(FRACTION,))
    rerank_enabled: bool = setting(_PIPELINE.rerank_enabled,
                                   "cross-encoder rerank of the first rerank_top_n")
    rerank_model: str = setting(
        "", "cross-encoder: a local directory or .onnx file, or \"package:NAME\" (an "
        "installed Python package holding the model); never downloaded")
    rerank_top_n: int = setting(_PIPELINE.rerank_top_n, "results the cross-encoder reranks",
                                checks=(between(1, 100),))
    merges: Literal["include", "exclude", "only"] = setting(
        "include", "merge commits in results", owner=R)


@dataclass(frozen=True)
class GraphConfig:
    """``[graph]``: architecture-graph sources, relative to the project root."""

    graph_dir: str = setting(".beadloom/_graph", "directory of the graph's YAML files",
                             owner=RP)
    docs_dir: str = setting("docs", "directory of the graph's Markdown docs", owner=RP)
    chunk_max_chars: int = setting(2000, "chunk bound of graph docs, characters",
                                   checks=(at_least(100),))


@dataclass(frozen=True)
class DocsConfig:
    """``[docs]``: repository-documentation search. Machine-local settings only (limits and
    defaults); which files form the corpus is the repository's own tracked policy."""

    max_blob_bytes: int = setting(
        1024 * 1024, "blobs larger than this are excluded (``too_large``) and never read",
        checks=(between(1024, 64 * 1024 * 1024),))
    chunk_max_chars: int = setting(1500, "chunk bound, characters",
                                   checks=(between(200, 20_000),))
    chunk_min_chars: int = setting(200, "sections shorter than this merge forward")
    lexical_cache_bytes: int = setting(
        256 * 1024 * 1024, "bytes of document text the in-memory full-text indexes of one "
        "process may hold", checks=(at_least(0),))
    mode: Literal["hybrid", "fulltext"] = setting("hybrid", "default search mode", owner=R)
    limit: int = setting(10, "default result count", owner=R, checks=(between(1, 50),))
    rrf_k: int = setting(
        10, "hybrid docs search: RRF constant fusing full-text and cosine (by heading "
        "section); own key, not [search]'s (k = 10 beat 20 on the click and flask docs dev "
        "sets)", owner=R, checks=(at_least(1),))
    lexical_weight: float = setting(1.0, "weight of the full-text ranking in the docs fusion",
                                    owner=R, checks=(WEIGHT,))
    semantic_weight: float = setting(1.5, "weight of the vector ranking in the docs fusion "
                                     "(1.5 beat 1.0 on the docs dev sets)",
                                     owner=R, checks=(WEIGHT,))
    heading_weight: float = setting(
        0.4, "hybrid docs search: weight of the cosine between the query and a chunk's "
        "heading path (embedded alone, a second vector per chunk) added to the chunk's own "
        "cosine; 0 turns it off (and ``repo-docs index`` then embeds no heading paths). 0.4 "
        "beat 0 on the click and flask docs dev sets", owner=R, checks=(between(0, 2),))
    refresh_on_index: bool = setting(
        True, "``gitquarry index`` also refreshes the HEAD docs set of registered "
        "repositories under the workspace")


@dataclass(frozen=True)
class TrustConfig:
    """``[trust]``: recorded trust decisions. Read from the user's own file only."""

    workspaces: list[str] = setting(  # noqa: RUF009 (a fresh list per instance)
        [], "workspace directories (``~`` expanded, compared resolved) whose "
        "``.gitquarry.toml`` may set every key", owner=UF)


@dataclass(frozen=True, kw_only=True)
class ConfigWarning:
    """A configuration problem that did not stop the command. ``code`` is stable
    (``config_key_refused``); ``path`` the file; ``keys`` the ``[section] key`` names."""

    code: str
    message: str
    path: Path
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class DaemonConfig:
    """``[daemon]``: read from the user's own file only; a workspace's ``.gitquarry.toml``
    setting it is refused with a warning, even when the workspace is trusted.

    Times are seconds. See docs/daemon.md."""

    debounce_s: float = setting(
        2.0, "quiet time after the last ``.git`` event before indexing starts", owner=UF,
        checks=(SECONDS,))
    reconcile_s: float = setting(
        60.0, "how often every watched workspace is checked for missed events", owner=UF,
        checks=(SECONDS, _TICK))
    poll_s: float = setting(
        5.0, "polling interval of repositories watched by polling (inotify limits "
        "exhausted)", owner=UF, checks=(SECONDS, _TICK))
    lease_wait_s: float = setting(
        10.0, "how long a daemon job waits for another writer before it is re-queued",
        owner=UF, checks=(SECONDS,))
    cli_lease_wait_s: float = setting(
        120.0, "how long ``gitquarry index`` waits for another writer (daemon job) before "
        "failing", owner=UF, checks=(SECONDS,))
    embed: bool = setting(True, "compute embeddings after indexing watched workspaces",
                          owner=UF)
    retry_base_s: float = setting(
        60.0, "first retry delay after a failed job; doubles per failure up to retry_max_s",
        owner=UF, checks=(SECONDS,))
    retry_max_s: float = setting(3840.0, "longest retry delay", owner=UF, checks=(SECONDS,))
    log_max_bytes: int = setting(
        1_048_576, "daemon.log rotation size", owner=UF,
        checks=(Check(lambda v: v >= 4096, "must be >= 4096 / >= 1", name=_LOG),))
    log_backups: int = setting(
        3, "rotated daemon.log files kept", owner=UF,
        checks=(Check(lambda v: v >= 1, "must be >= 4096 / >= 1", name=_LOG),))
    socket_check_s: float = setting(
        2.0, "how often the daemon checks that its socket still exists (re-created if "
        "removed)", owner=UF, checks=(SECONDS,))


@dataclass(frozen=True)
class Config:
    """The effective configuration: one frozen section per TOML table (assigning to it
    raises ``dataclasses.FrozenInstanceError``; :meth:`replaced` makes a changed copy)."""

    indexing: IndexingConfig = field(default_factory=IndexingConfig)
    git_indexing: GitIndexingConfig = field(default_factory=GitIndexingConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    trust: TrustConfig = field(default_factory=TrustConfig)
    docs: DocsConfig = field(default_factory=DocsConfig)
    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    #: files that were read, in order.
    sources: list[Path] = field(default_factory=list)
    #: settings that were refused or ignored (see the module docstring), for the surfaces
    #: to show.
    warnings: list[ConfigWarning] = field(default_factory=list)

    def replaced(self, **sections: dict[str, Any]) -> Config:
        """A copy with some keys changed: ``config.replaced(embedding={"provider":
        "none"})``. Values are not validated (callers: tests, tools, a fallback)."""
        changes = {name: dataclasses.replace(getattr(self, name), **values)
                   for name, values in sections.items()}
        return dataclasses.replace(self, **changes)


#: Sections of the schema (the fields of ``Config`` that are TOML tables).
SECTIONS: tuple[str, ...] = (
    "indexing", "git_indexing", "embedding", "search", "graph", "docs", "trust", "daemon",
)


@dataclass(frozen=True)
class Setting:
    """The declaration of one key, read from its section's dataclass field: ``type`` (the
    annotation), ``default``, ``owner``, ``help`` and range ``checks``; ``choices`` are the
    allowed values of a ``Literal`` type (else empty)."""

    section: str
    key: str
    default: Any
    owner: Owner
    help: str
    checks: tuple[Check, ...]
    #: the section's dataclass (``type`` is resolved from it when first asked: evaluating
    #: every annotation at import would cost each command start)
    section_type: type

    @property
    def type(self) -> Any:
        """The key's type: its field's annotation, evaluated."""
        return _type_hints(self.section_type)[self.key]

    @property
    def name(self) -> str:
        """``[section] key``, as messages and docs name it."""
        return f"[{self.section}] {self.key}"

    @property
    def choices(self) -> tuple[Any, ...]:
        return typing.get_args(self.type) if typing.get_origin(self.type) is Literal else ()


@functools.cache
def _type_hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _section_types() -> dict[str, type]:
    """Each section's dataclass, by section name (the ``Config`` fields' factories)."""
    return {f.name: typing.cast(type, f.default_factory) for f in dataclasses.fields(Config)
            if f.name in SECTIONS}


def _settings() -> tuple[Setting, ...]:
    out = []
    for section, cls in _section_types().items():
        for key in dataclasses.fields(cls):
            default = (key.default_factory() if key.default_factory is not dataclasses.MISSING
                       else key.default)
            meta = key.metadata
            out.append(Setting(section, key.name, default, meta["owner"], meta["help"],
                               meta["checks"], cls))
    return tuple(out)


#: Every key, in section order (``SECTIONS``' fields of ``Config``), then field order: the one
#: declaration the loader, the trust rule, ``gitquarry config`` and docs/configuration.md
#: (``tools/config_table.py``) read.
SETTINGS: tuple[Setting, ...] = _settings()
_BY_KEY: dict[tuple[str, str], Setting] = {(s.section, s.key): s for s in SETTINGS}
_SECTION_TYPES: dict[str, type] = _section_types()

#: ``(section, key)`` pairs a repository-owned file (``<workspace>/.gitquarry.toml``) may set:
#: what the repository is and how it ranks. Nothing here chooses where text goes, which
#: credentials are used, what is read outside the workspace or how much a run may cost.
REPOSITORY_OWNED_KEYS: frozenset[tuple[str, str]] = frozenset(
    (s.section, s.key) for s in SETTINGS if s.owner in (Owner.REPOSITORY, Owner.REPOSITORY_PATH)
)

#: Repository-owned keys holding a directory: accepted from a repository-owned file only when
#: the path is relative and resolves (symlinks followed) inside the workspace.
CONTAINED_PATH_KEYS: frozenset[tuple[str, str]] = frozenset(
    (s.section, s.key) for s in SETTINGS if s.owner is Owner.REPOSITORY_PATH
)

WORKSPACE_CONFIG_NAME = ".gitquarry.toml"

#: sections only the user's own file sets, whatever the workspace's trust (``[daemon]`` is
#: one process per user serving every workspace); ``[trust]`` set by a workspace file is an
#: error, not a refusal.
USER_ONLY_SECTIONS: frozenset[str] = frozenset(
    s.section for s in SETTINGS if s.owner is Owner.USER_FILE and s.section != "trust"
)


def user_config_path() -> Path | None:
    """The user's own configuration file: ``$GITQUARRY_CONFIG`` (``~`` expanded) when set
    and not empty, else ``<user config dir>/gitquarry/config.toml``. None when
    ``$GITQUARRY_CONFIG`` is ``/dev/null`` (no user file, on purpose)."""
    env = os.environ.get("GITQUARRY_CONFIG", "").strip()
    if env:
        if env == os.devnull:
            return None
        return Path(os.path.expanduser(env))
    from platformdirs import user_config_dir

    return Path(user_config_dir("gitquarry")) / "config.toml"


def _check_type(value: Any, annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return value in typing.get_args(annotation)
    if origin in (list,):
        (inner,) = typing.get_args(annotation)
        return isinstance(value, list) and all(_check_type(v, inner) for v in value)
    if origin in (typing.Union, types.UnionType):
        return any(_check_type(value, a) for a in typing.get_args(annotation))
    if annotation is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    return True


def _describe(annotation: Any) -> str:
    """A type annotation in words, for error messages."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(annotation))
    if origin is list:
        (inner,) = typing.get_args(annotation)
        return f"a list of {_describe(inner)}s"
    names = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
    return names.get(annotation, str(annotation))


#: the largest configuration file read (bytes); a larger one is an error naming it
CONFIG_MAX_BYTES = 1024 * 1024


def _read_toml(path: Path) -> dict[str, Any]:
    """The TOML table of ``path``: a regular file (links followed; a FIFO or device is never
    opened), of at most ``CONFIG_MAX_BYTES`` (``CONFIG_MAX_BYTES + 1`` bytes are read).

    :raises ConfigError: not a regular file, unreadable, too large, not UTF-8 TOML.
    """
    try:
        got = read_capped(path, CONFIG_MAX_BYTES, follow_symlinks=True)
    except FileRefusedError as exc:
        raise ConfigError(path, exc.reason) from exc
    if got.over:
        raise ConfigError(path, f"is {got.size:,} bytes; a configuration file may hold at "
                          f"most {CONFIG_MAX_BYTES:,}")
    import tomllib  # only when there is a file (its regexes compile at import)

    try:
        return tomllib.loads(got.data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(path, f"not valid TOML: {exc}") from exc


def _checked_items(
    data: dict[str, Any], path: Path
) -> list[tuple[str, str, Any]]:
    """``(section, key, value)`` for every setting in ``data``, each checked against the
    schema. :raises ConfigError: unknown section or key, or a value of the wrong type."""
    items: list[tuple[str, str, Any]] = []
    for section, values in data.items():
        if section not in SECTIONS:
            raise ConfigError(path, f"unknown section [{section}]; known: {', '.join(SECTIONS)}")
        if not isinstance(values, dict):
            raise ConfigError(path, f"[{section}] must be a table")
        for key, value in values.items():
            declared = _BY_KEY.get((section, key))
            if declared is None:
                known = ", ".join(s.key for s in SETTINGS if s.section == section)
                raise ConfigError(path, f"unknown key {key!r} in [{section}]; known: {known}")
            if not _check_type(value, declared.type):
                raise ConfigError(
                    path, f"{declared.name} = {value!r}: expected {_describe(declared.type)}"
                )
            items.append((section, key, value))
    return items


def _inside(root: Path, value: str) -> bool:
    """Whether the directory ``value`` (as configured) resolves, symlinks followed, inside
    the workspace ``root`` (resolved)."""
    if value.startswith("~") or Path(value).is_absolute():
        return False
    try:
        real = (root / value).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return False
    return real == root or root in real.parents


def _trusted_workspace(config: Config, root: Path) -> bool:
    return _listed(config.trust.workspaces, root)


def _listed(workspaces: list[str], root: Path) -> bool:
    """Whether ``root`` (resolved) is one of ``[trust] workspaces``."""
    for entry in workspaces:
        try:
            if Path(os.path.expanduser(entry)).resolve() == root:
                return True
        except (OSError, RuntimeError):
            continue
    return False


#: the values chosen so far, ``{section: {key: value}}`` (keys left out keep their default)
_Chosen = dict[str, dict[str, Any]]


def _apply_workspace_file(chosen: _Chosen, warnings: list[ConfigWarning],
                          items: list[tuple[str, str, Any]], path: Path, root: Path,
                          *, trusted: bool) -> None:
    """Apply the settings of ``path`` its owner allows (a trusted workspace: every key but
    the user-file-only ones); refuse the others with a warning in ``warnings``."""
    refused: list[str] = []
    outside: list[str] = []
    for section, key, value in items:
        declared = _BY_KEY[(section, key)]
        if declared.owner is Owner.USER_FILE or (
                not trusted and declared.owner is Owner.USER):
            refused.append(declared.name)
        elif (not trusted and declared.owner is Owner.REPOSITORY_PATH
              and not _inside(root, value)):
            outside.append(f"{declared.name} = {value!r}")
        else:
            chosen.setdefault(section, {})[key] = value
    if refused:
        warnings.append(ConfigWarning(
            code="config_key_refused",
            path=path,
            keys=tuple(refused),
            message=(
                f"{path} is inside the workspace (repository-owned), so its "
                f"{', '.join(refused)} {'was' if len(refused) == 1 else 'were'} ignored: "
                "providers, endpoints, models, credentials, data boundaries, the index "
                "location and resource limits come only from your own configuration "
                f"({_user_config_hint()}); to trust this file, add its directory to "
                "[trust] workspaces there"
            ),
        ))
    if outside:
        warnings.append(ConfigWarning(
            code="config_path_refused",
            path=path,
            keys=tuple(item.split(" = ")[0] for item in outside),
            message=(
                f"{path} is inside the workspace (repository-owned), so its "
                f"{', '.join(outside)} {'was' if len(outside) == 1 else 'were'} ignored: a "
                "repository-owned directory must resolve inside the workspace (set it in "
                f"your own configuration, {_user_config_hint()}, to read elsewhere)"
            ),
        ))


def _user_config_hint() -> str:
    path = user_config_path()
    return str(path) if path is not None else "$GITQUARRY_CONFIG"


def load_config(workspace: Path | None = None, *, user_file: Path | None = None) -> Config:
    """Build the effective configuration for ``workspace`` (see the module docstring).

    ``user_file`` replaces the user's own file (tests, tools). Refused workspace settings are
    listed in ``Config.warnings``, never applied.

    :raises ConfigError: a file is not valid TOML, holds an unknown section/key or a value of
        the wrong type or range; or ``$GITQUARRY_CONFIG`` names a file that does not exist;
        or the workspace file sets ``[trust]``.
    """
    chosen: _Chosen = {}
    sources: list[Path] = []
    warnings: list[ConfigWarning] = []
    user_path = user_file or user_config_path()
    explicit = user_file is not None or bool(os.environ.get("GITQUARRY_CONFIG", "").strip())
    if user_path is not None:
        if user_path.exists() or user_path.is_symlink():
            for section, key, value in _checked_items(_read_toml(user_path), user_path):
                chosen.setdefault(section, {})[key] = value
            sources.append(user_path)
        elif explicit:
            raise ConfigError(
                user_path,
                "this configuration file (named by GITQUARRY_CONFIG) does not exist; create "
                "it, fix the path, or unset GITQUARRY_CONFIG",
            )
    config = _assemble(chosen, sources, warnings)
    _validate(config, sources[-1] if sources else None)
    if workspace is not None:
        path = workspace / WORKSPACE_CONFIG_NAME
        same_as_user = user_path is not None and _same_file(path, user_path)
        if not same_as_user and (path.exists() or path.is_symlink()):
            items = _checked_items(_read_toml(path), path)
            if any(section == "trust" for section, _key, _value in items):
                raise ConfigError(path, "[trust] may only be set in your own configuration")
            root = workspace.resolve()
            _apply_workspace_file(chosen, warnings, items, path, root,
                                  trusted=_trusted_workspace(config, root))
            sources.append(path)
            config = _assemble(chosen, sources, warnings)
            _validate(config, path)
    return config


def _assemble(chosen: _Chosen, sources: list[Path], warnings: list[ConfigWarning]) -> Config:
    """The frozen ``Config`` of the chosen values (defaults for the rest)."""
    sections = {name: _SECTION_TYPES[name](**chosen.get(name, {})) for name in SECTIONS}
    return Config(**sections, sources=list(sources), warnings=list(warnings))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


#: the default ``exclude`` and ``refs`` globs, which ``_validate`` need not compile again on
#: every start (issue 21 §1: compiling them took ~20 ms CPU of each load, two per cold query)
_DEFAULT_GLOBS = frozenset(DEFAULT_EXCLUDES) | frozenset(DEFAULT_REF_GLOBS)


def _validate(config: Config, path: Path | None) -> None:
    """The declared range checks of every key (``Setting.checks``), then the rules that
    involve several keys or compile globs. :raises ConfigError: naming the key."""
    def bad(key: str, why: str) -> ConfigError:
        return ConfigError(path, f"{key} {why}")

    for declared in SETTINGS:
        if declared.checks:
            value = getattr(getattr(config, declared.section), declared.key)
            for check in declared.checks:
                if not check.ok(value):
                    raise bad(check.name or declared.name, check.why)
    search = config.search
    if search.lexical_weight == 0 and search.semantic_weight == 0:
        raise bad("[search] lexical_weight and semantic_weight", "cannot both be 0")
    if config.docs.lexical_weight == 0 and config.docs.semantic_weight == 0:
        raise bad("[docs] lexical_weight and semantic_weight", "cannot both be 0")
    docs = config.docs
    if not 0 <= docs.chunk_min_chars < docs.chunk_max_chars:
        raise bad("[docs] chunk_min_chars", "must be >= 0 and below chunk_max_chars")
    index_dir = config.indexing.index_dir.strip()
    if index_dir in ("", ".", "./"):
        raise bad("[indexing] index_dir", "must name a directory other than the workspace")
    for key, patterns in (
        ("[git_indexing] refs", config.git_indexing.refs),
        ("[indexing] exclude", config.indexing.exclude),
    ):
        for pattern in patterns:
            if pattern in _DEFAULT_GLOBS:
                continue  # known valid (tests/surfaces/test_default_globs.py)
            from gitquarry.errors import InvalidGlobError
            from gitquarry.retrieval.filters import compile_glob

            try:
                compile_glob(pattern)
            except InvalidGlobError as exc:
                raise bad(key, f"holds an invalid glob: {exc}") from exc
