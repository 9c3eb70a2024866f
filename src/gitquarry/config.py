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

import math
import os
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gitquarry.errors import ConfigError, FileRefusedError
from gitquarry.parsing.bounded_read import read_capped

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


@dataclass
class IndexingConfig:
    """``[indexing]``: where repositories are discovered and where the index lives."""

    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    exclude_hidden_dirs: bool = True
    #: index directory; relative paths are relative to the workspace.
    index_dir: str = ".gitquarry"


@dataclass
class GitIndexingConfig:
    """``[git_indexing]``: what the commit-history corpus reads from each repository."""

    enabled: bool = True
    #: ref globs (gitignore-style ``**``) selecting the refs whose history is indexed.
    refs: list[str] = field(default_factory=lambda: list(DEFAULT_REF_GLOBS))
    #: lines of ``git show`` diff kept per commit; the rest is counted, not stored.
    delta_max_lines: int = 200
    #: commits per ``git log`` process and per SQLite transaction.
    batch_size: int = 2000


@dataclass
class EmbeddingConfig:
    """``[embedding]``: the embedding provider. Default: bundled all-MiniLM-L6-v2 on ONNX."""

    #: "minilm-onnx" (bundled, offline), "onnx" (an encoder directory, offline),
    #: "sentence-transformers", "openai", or "none".
    provider: str = "minilm-onnx"
    #: model directory (onnx), model name or local path (sentence-transformers) or served
    #: model id (openai).
    model: str = ""
    #: "cpu", "cuda" or "auto", for in-process providers.
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    #: base URL of an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1.
    url: str = ""
    #: name of the environment variable holding the API key (never the key itself).
    api_key_env: str = ""
    #: where text goes: local_process, local_network, remote, unknown.
    data_boundary: str = ""
    #: explicit opt-in to send repository content to a remote/unknown boundary.
    allow_remote: bool = False
    #: texts per embedding call while indexing.
    batch_size: int = 100
    #: request timeout for HTTP providers, seconds.
    timeout_s: float = 60.0
    #: ONNX Runtime intra-op threads for minilm-onnx and onnx; 0 = one per available CPU
    #: (at most 8).
    threads: int = 0


@dataclass
class SearchConfig:
    """``[search]``: ranking defaults, and the result pipeline every corpus runs after
    ranking (``retrieval.pipeline``; the seed's ``SearchPipelineConfig`` names and defaults,
    except ``rerank_model``: empty, since the seed's default names a hub model that would
    have to be downloaded)."""

    mode: Literal["hybrid", "semantic", "lexical"] = "hybrid"
    #: RRF constant (20 measured better than the textbook 60 on both relevance sets).
    rrf_k: int = 20
    lexical_weight: float = 1.0
    semantic_weight: float = 1.0
    #: multiply the weights by the query's shape (identifiers → keywords, prose → vectors).
    weight_by_shape: bool = True
    top_n: int = 5
    #: commits that are copies of one change (same ``git patch-id``) shown once
    collapse_copies: bool = True
    #: results scoring below this (score in [0, 1]) are removed
    min_confidence: float = 0.0
    #: results per document (repository docs: chunks per heading section; a commit is one
    #: document)
    max_chunks_per_doc: int = 2
    #: remove results whose vectors have cosine similarity >= dedup_threshold to a kept one
    dedup_enabled: bool = False
    dedup_threshold: float = 0.85
    #: remove results whose text has word-trigram Jaccard >= ngram_dedup_threshold
    ngram_dedup_enabled: bool = True
    ngram_dedup_threshold: float = 0.7
    #: maximal marginal relevance (diversity); lambda 1 = plain relevance
    mmr_enabled: bool = False
    mmr_lambda: float = 0.7
    #: cross-encoder rerank: a local directory or .onnx file, or "package:NAME" (an installed
    #: Python package holding the model); never downloaded
    rerank_enabled: bool = False
    rerank_model: str = ""
    rerank_top_n: int = 10
    #: merge commits in results: "include", "exclude" or "only".
    merges: Literal["include", "exclude", "only"] = "include"


@dataclass
class GraphConfig:
    """``[graph]``: architecture-graph sources, relative to the project root."""

    graph_dir: str = ".beadloom/_graph"
    docs_dir: str = "docs"
    chunk_max_chars: int = 2000


@dataclass
class DocsConfig:
    """``[docs]``: repository-documentation search. Machine-local settings only (limits and
    defaults); which files form the corpus is the repository's own tracked policy."""

    #: blobs larger than this are excluded (``too_large``) and never read.
    max_blob_bytes: int = 1024 * 1024
    #: chunk bound in characters; sections shorter than ``chunk_min_chars`` merge forward.
    chunk_max_chars: int = 1500
    chunk_min_chars: int = 200
    #: bytes of document text the in-memory full-text indexes of one process may hold.
    lexical_cache_bytes: int = 256 * 1024 * 1024
    #: default search mode and result count.
    mode: Literal["hybrid", "fulltext"] = "hybrid"
    limit: int = 10
    #: hybrid docs search: RRF constant and list weights fusing full-text and cosine (by
    #: heading section). Own keys, not ``[search]``'s (the history corpus's): measured on
    #: the click and flask docs dev sets, k = 10 and semantic 1.5 beat [search]'s 20 / 1.0
    #: (benchmarks/results/docs-levers-2026-12-02.jsonl).
    rrf_k: int = 10
    lexical_weight: float = 1.0
    semantic_weight: float = 1.5
    #: ``gitquarry index`` also refreshes the HEAD docs set of registered repositories
    #: under the workspace.
    refresh_on_index: bool = True


@dataclass
class TrustConfig:
    """``[trust]``: recorded trust decisions. Read from the user's own file only."""

    #: workspace directories (``~`` expanded, compared resolved) whose ``.gitquarry.toml`` may
    #: set every key, not only the repository-owned ones.
    workspaces: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class ConfigWarning:
    """A configuration problem that did not stop the command. ``code`` is stable
    (``config_key_refused``); ``path`` the file; ``keys`` the ``[section] key`` names."""

    code: str
    message: str
    path: Path
    keys: tuple[str, ...] = ()


@dataclass
class DaemonConfig:
    """``[daemon]``: read from the user's own file only; a workspace's ``.gitquarry.toml``
    setting it is refused with a warning, even when the workspace is trusted.

    Times are seconds. See docs/daemon.md."""

    #: quiet time after the last ``.git`` event before indexing starts.
    debounce_s: float = 2.0
    #: how often every watched workspace is checked for missed events.
    reconcile_s: float = 60.0
    #: polling interval for repositories watched by polling (inotify limits exhausted).
    poll_s: float = 5.0
    #: how long a daemon job waits for another writer before it is re-queued.
    lease_wait_s: float = 10.0
    #: how long ``gitquarry index`` waits for another writer (daemon job) before failing.
    cli_lease_wait_s: float = 120.0
    #: compute embeddings after indexing watched workspaces.
    embed: bool = True
    #: first retry delay after a failed job; doubles per failure up to ``retry_max_s``.
    retry_base_s: float = 60.0
    retry_max_s: float = 3840.0
    #: daemon.log rotation.
    log_max_bytes: int = 1_048_576
    log_backups: int = 3
    #: how often the daemon checks that its socket still exists (re-created if removed).
    socket_check_s: float = 2.0


@dataclass
class Config:
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


#: Sections of the schema (the fields of ``Config`` that are TOML tables).
SECTIONS: tuple[str, ...] = (
    "indexing", "git_indexing", "embedding", "search", "graph", "docs", "trust", "daemon",
)

#: ``(section, key)`` pairs a repository-owned file (``<workspace>/.gitquarry.toml``) may set:
#: what the repository is and how it ranks. Nothing here chooses where text goes, which
#: credentials are used, what is read outside the workspace or how much a run may cost.
REPOSITORY_OWNED_KEYS: frozenset[tuple[str, str]] = frozenset({
    ("indexing", "exclude"),
    ("indexing", "exclude_hidden_dirs"),
    ("git_indexing", "enabled"),
    ("git_indexing", "refs"),
    ("search", "mode"),
    ("search", "top_n"),
    ("search", "rrf_k"),
    ("search", "lexical_weight"),
    ("search", "semantic_weight"),
    # the result pipeline's switches and thresholds (not rerank: it names a model on this
    # machine and costs a model run per query)
    ("search", "collapse_copies"),
    ("search", "min_confidence"),
    ("search", "max_chunks_per_doc"),
    ("search", "dedup_enabled"),
    ("search", "dedup_threshold"),
    ("search", "ngram_dedup_enabled"),
    ("search", "ngram_dedup_threshold"),
    ("search", "mmr_enabled"),
    ("search", "mmr_lambda"),
    ("search", "weight_by_shape"),
    ("search", "merges"),
    ("graph", "graph_dir"),
    ("graph", "docs_dir"),
    # [docs]: only the ranking defaults; size limits, chunking and cache bounds are the user's
    ("docs", "mode"),
    ("docs", "limit"),
    ("docs", "rrf_k"),
    ("docs", "lexical_weight"),
    ("docs", "semantic_weight"),
})

#: Repository-owned keys holding a directory: accepted from a repository-owned file only when
#: the path is relative and resolves (symlinks followed) inside the workspace.
CONTAINED_PATH_KEYS: frozenset[tuple[str, str]] = frozenset({
    ("graph", "graph_dir"), ("graph", "docs_dir"),
})

WORKSPACE_CONFIG_NAME = ".gitquarry.toml"

#: sections only the user's own file sets, whatever the workspace's trust: ``[daemon]`` is
#: one process per user serving every workspace.
USER_ONLY_SECTIONS: frozenset[str] = frozenset({"daemon"})


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
    defaults = Config()
    for section, values in data.items():
        if section not in SECTIONS:
            raise ConfigError(path, f"unknown section [{section}]; known: {', '.join(SECTIONS)}")
        if not isinstance(values, dict):
            raise ConfigError(path, f"[{section}] must be a table")
        hints = typing.get_type_hints(type(getattr(defaults, section)))
        for key, value in values.items():
            if key not in hints:
                raise ConfigError(
                    path, f"unknown key {key!r} in [{section}]; known: {', '.join(hints)}"
                )
            if not _check_type(value, hints[key]):
                raise ConfigError(
                    path, f"[{section}] {key} = {value!r}: expected {_describe(hints[key])}"
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
    for entry in config.trust.workspaces:
        try:
            if Path(os.path.expanduser(entry)).resolve() == root:
                return True
        except (OSError, RuntimeError):
            continue
    return False


def _apply_workspace_file(
    config: Config, items: list[tuple[str, str, Any]], path: Path, root: Path
) -> None:
    """Apply the repository-owned settings of ``path``; refuse the others with a warning."""
    refused: list[str] = []
    outside: list[str] = []
    for section, key, value in items:
        name = f"[{section}] {key}"
        if (section, key) not in REPOSITORY_OWNED_KEYS:
            refused.append(name)
        elif (section, key) in CONTAINED_PATH_KEYS and not _inside(root, value):
            outside.append(f"{name} = {value!r}")
        else:
            setattr(getattr(config, section), key, value)
    if refused:
        config.warnings.append(ConfigWarning(
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
        config.warnings.append(ConfigWarning(
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
    config = Config()
    user_path = user_file or user_config_path()
    explicit = user_file is not None or bool(os.environ.get("GITQUARRY_CONFIG", "").strip())
    if user_path is not None:
        if user_path.exists() or user_path.is_symlink():
            for section, key, value in _checked_items(_read_toml(user_path), user_path):
                setattr(getattr(config, section), key, value)
            config.sources.append(user_path)
        elif explicit:
            raise ConfigError(
                user_path,
                "this configuration file (named by GITQUARRY_CONFIG) does not exist; create "
                "it, fix the path, or unset GITQUARRY_CONFIG",
            )
    _validate(config, config.sources[-1] if config.sources else None)
    if workspace is not None:
        path = workspace / WORKSPACE_CONFIG_NAME
        same_as_user = user_path is not None and _same_file(path, user_path)
        if not same_as_user and (path.exists() or path.is_symlink()):
            items = _checked_items(_read_toml(path), path)
            if any(section == "trust" for section, _key, _value in items):
                raise ConfigError(path, "[trust] may only be set in your own configuration")
            root = workspace.resolve()
            if _trusted_workspace(config, root):
                for section, key, value in items:
                    if section in USER_ONLY_SECTIONS:  # even a trusted file: refused below
                        continue
                    setattr(getattr(config, section), key, value)
                _apply_workspace_file(
                    config, [i for i in items if i[0] in USER_ONLY_SECTIONS], path, root)
            else:
                _apply_workspace_file(config, items, path, root)
            config.sources.append(path)
            _validate(config, path)
    return config


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


#: the default ``exclude`` and ``refs`` globs, which ``_validate`` need not compile again on
#: every start (issue 21 §1: compiling them took ~20 ms CPU of each load, two per cold query)
_DEFAULT_GLOBS = frozenset(DEFAULT_EXCLUDES) | frozenset(DEFAULT_REF_GLOBS)


def _validate(config: Config, path: Path | None) -> None:
    """Range checks the types alone cannot express. :raises ConfigError: naming the key."""
    from gitquarry.errors import InvalidGlobError
    from gitquarry.retrieval.filters import compile_glob

    def bad(key: str, why: str) -> ConfigError:
        return ConfigError(path, f"{key} {why}")

    if config.git_indexing.delta_max_lines < 1:
        raise bad("[git_indexing] delta_max_lines", "must be >= 1")
    if config.git_indexing.batch_size < 1:
        raise bad("[git_indexing] batch_size", "must be >= 1")
    if config.embedding.batch_size < 1:
        raise bad("[embedding] batch_size", "must be >= 1")
    if not (math.isfinite(config.embedding.timeout_s) and config.embedding.timeout_s > 0):
        raise bad("[embedding] timeout_s", "must be a positive number of seconds")
    if not 0 <= config.embedding.threads <= 256:
        raise bad("[embedding] threads", "must be 0 (automatic) to 256")
    search = config.search
    if search.rrf_k < 1:
        raise bad("[search] rrf_k", "must be >= 1")
    for key in ("lexical_weight", "semantic_weight"):
        value = getattr(search, key)
        if not (math.isfinite(value) and value >= 0):
            raise bad(f"[search] {key}", "must be a finite number >= 0")
    if search.lexical_weight == 0 and search.semantic_weight == 0:
        raise bad("[search] lexical_weight and semantic_weight", "cannot both be 0")
    docs = config.docs
    if docs.rrf_k < 1:
        raise bad("[docs] rrf_k", "must be >= 1")
    for key in ("lexical_weight", "semantic_weight"):
        value = getattr(docs, key)
        if not (math.isfinite(value) and value >= 0):
            raise bad(f"[docs] {key}", "must be a finite number >= 0")
    if docs.lexical_weight == 0 and docs.semantic_weight == 0:
        raise bad("[docs] lexical_weight and semantic_weight", "cannot both be 0")
    if not 1 <= search.top_n <= 100:
        raise bad("[search] top_n", "must be from 1 to 100")
    for key in ("debounce_s", "reconcile_s", "poll_s", "lease_wait_s", "cli_lease_wait_s",
                "retry_base_s", "retry_max_s", "socket_check_s"):
        value = getattr(config.daemon, key)
        if not (math.isfinite(value) and value >= 0):
            raise bad(f"[daemon] {key}", "must be a finite number of seconds >= 0")
    if config.daemon.reconcile_s < 0.1 or config.daemon.poll_s < 0.1:
        raise bad("[daemon] reconcile_s and poll_s", "must be >= 0.1")
    if config.daemon.log_max_bytes < 4096 or config.daemon.log_backups < 1:
        raise bad("[daemon] log_max_bytes / log_backups", "must be >= 4096 / >= 1")
    for key in ("min_confidence", "dedup_threshold", "ngram_dedup_threshold", "mmr_lambda"):
        value = getattr(search, key)
        if not (math.isfinite(value) and 0 <= value <= 1):
            raise bad(f"[search] {key}", "must be a number from 0 to 1")
    if not 1 <= search.max_chunks_per_doc <= 100:
        raise bad("[search] max_chunks_per_doc", "must be from 1 to 100")
    if not 1 <= search.rerank_top_n <= 100:
        raise bad("[search] rerank_top_n", "must be from 1 to 100")
    if config.graph.chunk_max_chars < 100:
        raise bad("[graph] chunk_max_chars", "must be >= 100")
    docs = config.docs
    if not 1024 <= docs.max_blob_bytes <= 64 * 1024 * 1024:
        raise bad("[docs] max_blob_bytes", "must be from 1024 to 67108864")
    if not 200 <= docs.chunk_max_chars <= 20_000:
        raise bad("[docs] chunk_max_chars", "must be from 200 to 20000")
    if not 0 <= docs.chunk_min_chars < docs.chunk_max_chars:
        raise bad("[docs] chunk_min_chars", "must be >= 0 and below chunk_max_chars")
    if docs.lexical_cache_bytes < 0:
        raise bad("[docs] lexical_cache_bytes", "must be >= 0")
    if not 1 <= docs.limit <= 50:
        raise bad("[docs] limit", "must be from 1 to 50")
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
            try:
                compile_glob(pattern)
            except InvalidGlobError as exc:
                raise bad(key, f"holds an invalid glob: {exc}") from exc
