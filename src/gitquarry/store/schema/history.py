"""Schema of the commit-history corpus.

``git_commits`` keeps the seed's columns (hash, timestamp, author, committer, title, message,
files_changed, delta_truncated, indexed_at) plus what multi-repository search needs.
``timestamp`` is the committer time and ``author_time`` the author time, Unix seconds, UTC.
``files_changed`` is a JSON array of repository-relative paths (a rename lists old and new).
Vectors are not a column of ``git_commits`` (the seed's ``embedding``): they live in
``commit_vectors``, keyed by embedding namespace, so a model change never mixes vector spaces
and several models can coexist; and loading vectors never walks a row's large diff text.

``delta_truncated`` is stored zlib-compressed (``gitquarry.store.compression``: a BLOB; read it
with ``inflate_text`` or ``gq_inflate``); rows written before migration 0007 were converted.

``commit_fts`` is a contentless FTS5 index of ``git_commits``: each of its columns holds
``gitquarry.retrieval.tokenize.index_text`` of the commit's column (the text plus its
identifier / CJK / version expansions; the diff without its file headers, ``index_diff_text``).
The indexer fills it per batch with ``COMMIT_FTS_VALUES_SQL`` and ``fts_values`` (the same
rows ``COMMIT_FTS_INSERT_SQL`` computes from stored rows, which rebuilds use); delete and
update triggers keep it current, calling the SQL functions ``gq_index_text``, ``gq_index_diff`` and
``gq_inflate`` that ``open_store`` registers on every connection. It is never read back (only
``rowid`` and ``bm25`` are selected).
``paths``/``commit_paths`` let a files glob select candidate commits before ranking: the glob
is matched against distinct paths, not against every commit.
"""

from __future__ import annotations

import sqlite3

from gitquarry.retrieval.tokenize import (
    FTS5_TOKENIZE,
    SQL_DIFF_FUNCTION,
    SQL_FUNCTION,
    index_diff_text,
    index_text,
    register_functions,
)
from gitquarry.store.capabilities import fts5_available, has_table
from gitquarry.store.compression import register_functions as register_compression
from gitquarry.store.migrations import MIGRATIONS, run_script

#: The indexed columns of ``git_commits``, in ``commit_fts`` column order.
COMMIT_FTS_COLUMNS = ("title", "message", "author", "committer", "files_changed", "delta_truncated")


def _index_values(row: str) -> str:
    """The FTS5 values of one ``git_commits`` row (``row`` is its SQL name): ``index_text``
    of each column; the diff decompressed, without file headers (``index_diff_text``)."""
    values = [f"{SQL_FUNCTION}({row}.{column})" for column in COMMIT_FTS_COLUMNS[:-1]]
    values.append(f"{SQL_DIFF_FUNCTION}(gq_inflate({row}.delta_truncated))")
    return ", ".join(values)


_FTS_COLUMNS = ", ".join(COMMIT_FTS_COLUMNS)
#: Adds the ``commit_fts`` rows of the ``git_commits`` rows with ``id >= ?``.
COMMIT_FTS_INSERT_SQL = (
    f"INSERT INTO commit_fts (rowid, {_FTS_COLUMNS}) "
    f"SELECT c.id, {_index_values('c')} FROM git_commits c WHERE c.id >= ?"
)

#: Adds one ``commit_fts`` row from its values (rowid, then ``fts_values`` of the row).
COMMIT_FTS_VALUES_SQL = (
    f"INSERT INTO commit_fts (rowid, {_FTS_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


#: ``index_text`` of identities (``Name <email>``) already seen by ``fts_values``: a history
#: repeats its authors (flask: 896 for 5,572 commits). Cleared when full.
_IDENTITY_TEXT: dict[str, str] = {}
_IDENTITY_TEXT_MAX = 1 << 14


def _identity_text(identity: str | None) -> str:
    if not identity:
        return ""
    text = _IDENTITY_TEXT.get(identity)
    if text is None:
        if len(_IDENTITY_TEXT) >= _IDENTITY_TEXT_MAX:
            _IDENTITY_TEXT.clear()
        text = _IDENTITY_TEXT[identity] = index_text(identity)
    return text


def fts_values(title: str | None, message: str | None, author: str | None,
               committer: str | None, files_changed: str | None, diff: str | None,
               *, diff_text: str | None = None) -> tuple[str, str, str, str, str, str]:
    """The ``commit_fts`` values of one commit from its column texts (``diff``
    uncompressed): exactly what ``COMMIT_FTS_INSERT_SQL`` computes in SQL from the stored
    row (``index_text`` of each column, ``index_diff_text`` of the diff; identities' texts
    kept in a bounded cache). ``diff_text``: ``index_diff_text(diff)`` when the caller has
    it already (a diff shared by several commits), used instead of computing it."""
    return (index_text(title), index_text(message), _identity_text(author),
            _identity_text(committer), index_text(files_changed),
            index_diff_text(diff) if diff_text is None else diff_text)


#: The contentless FTS5 index and the triggers that keep it current (where SQLite has FTS5).
COMMIT_FTS_DDL = f"""
        CREATE VIRTUAL TABLE commit_fts USING fts5(
            {_FTS_COLUMNS},
            content='', tokenize='{FTS5_TOKENIZE}'
        );
        CREATE TRIGGER git_commits_ad AFTER DELETE ON git_commits BEGIN
            INSERT INTO commit_fts(commit_fts, rowid, {_FTS_COLUMNS})
            VALUES ('delete', old.id, {_index_values('old')});
        END;
        CREATE TRIGGER git_commits_au AFTER UPDATE OF {_FTS_COLUMNS} ON git_commits BEGIN
            INSERT INTO commit_fts(commit_fts, rowid, {_FTS_COLUMNS})
            VALUES ('delete', old.id, {_index_values('old')});
            INSERT INTO commit_fts(rowid, {_FTS_COLUMNS})
            VALUES (new.id, {_index_values('new')});
        END;
"""


def rebuild_commit_fts(conn: sqlite3.Connection) -> int:
    """Drop ``commit_fts`` and its triggers, create them as ``COMMIT_FTS_DDL`` says and index
    every stored commit again. Runs in the caller's transaction. Returns the rows indexed;
    0 without doing anything where SQLite has no FTS5. Cost: one ``index_text`` pass over
    every commit's text plus FTS5's own tokenising (seconds per 10,000 commits)."""
    if not fts5_available(conn):
        return 0
    register_functions(conn)
    register_compression(conn)
    for trigger in ("git_commits_ai", "git_commits_ad", "git_commits_au"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    if has_table(conn, "commit_fts"):
        conn.execute("DROP TABLE commit_fts")
    run_script(conn, COMMIT_FTS_DDL)
    return conn.execute(COMMIT_FTS_INSERT_SQL, (0,)).rowcount


#: The first FTS5 index (external content, raw text): kept as migration 0001 created it.
_COMMIT_FTS_DDL_V1 = """
        CREATE VIRTUAL TABLE commit_fts USING fts5(
            title, message, author, committer, files_changed, delta_truncated,
            content='git_commits', content_rowid='id',
            tokenize='porter unicode61'
        );
        CREATE TRIGGER git_commits_ai AFTER INSERT ON git_commits BEGIN
            INSERT INTO commit_fts(rowid, title, message, author, committer, files_changed,
                                   delta_truncated)
            VALUES (new.id, new.title, new.message, new.author, new.committer,
                    new.files_changed, new.delta_truncated);
        END;
        CREATE TRIGGER git_commits_ad AFTER DELETE ON git_commits BEGIN
            INSERT INTO commit_fts(commit_fts, rowid, title, message, author, committer,
                                   files_changed, delta_truncated)
            VALUES ('delete', old.id, old.title, old.message, old.author, old.committer,
                    old.files_changed, old.delta_truncated);
        END;
        CREATE TRIGGER git_commits_au AFTER UPDATE OF title, message, author, committer,
            files_changed, delta_truncated ON git_commits BEGIN
            INSERT INTO commit_fts(commit_fts, rowid, title, message, author, committer,
                                   files_changed, delta_truncated)
            VALUES ('delete', old.id, old.title, old.message, old.author, old.committer,
                    old.files_changed, old.delta_truncated);
            INSERT INTO commit_fts(rowid, title, message, author, committer, files_changed,
                                   delta_truncated)
            VALUES (new.id, new.title, new.message, new.author, new.committer,
                    new.files_changed, new.delta_truncated);
        END;

"""


@MIGRATIONS("history_0001_init")
def _init(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE repositories (
            id INTEGER PRIMARY KEY,
            common_dir TEXT NOT NULL UNIQUE,   -- absolute git common dir: the identity
            path TEXT NOT NULL,                -- worktree root, or the bare repository dir
            is_bare INTEGER NOT NULL DEFAULT 0,
            object_format TEXT NOT NULL DEFAULT 'sha1',
            last_indexed_at INTEGER,           -- Unix seconds, UTC
            run_in_progress INTEGER NOT NULL DEFAULT 0,
            last_error TEXT
        );

        CREATE TABLE repo_refs (
            repo_id INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
            ref TEXT NOT NULL,
            tip TEXT NOT NULL,
            PRIMARY KEY (repo_id, ref)
        );

        CREATE TABLE git_commits (
            id INTEGER PRIMARY KEY,
            hash TEXT NOT NULL UNIQUE,
            timestamp INTEGER NOT NULL,
            author TEXT NOT NULL,
            committer TEXT NOT NULL,
            title TEXT NOT NULL,
            message TEXT NOT NULL,
            files_changed TEXT NOT NULL,
            delta_truncated TEXT NOT NULL,
            indexed_at INTEGER NOT NULL,
            author_time INTEGER NOT NULL,
            parents TEXT NOT NULL,            -- space-separated parent hashes
            is_merge INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX idx_timestamp ON git_commits(timestamp);
        CREATE INDEX idx_indexed_at ON git_commits(indexed_at);

        CREATE TABLE repo_commits (
            repo_id INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
            commit_id INTEGER NOT NULL REFERENCES git_commits(id) ON DELETE CASCADE,
            PRIMARY KEY (repo_id, commit_id)
        ) WITHOUT ROWID;
        CREATE INDEX idx_repo_commits_commit ON repo_commits(commit_id);

        CREATE TABLE paths (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE
        );
        CREATE TABLE commit_paths (
            path_id INTEGER NOT NULL REFERENCES paths(id),
            commit_id INTEGER NOT NULL REFERENCES git_commits(id) ON DELETE CASCADE,
            PRIMARY KEY (path_id, commit_id)
        ) WITHOUT ROWID;
        CREATE INDEX idx_commit_paths_commit ON commit_paths(commit_id);

        CREATE TABLE embedding_namespaces (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,          -- provider/model/dims/text-format identity
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            dimensions INTEGER NOT NULL,
            text_format TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE commit_vectors (
            namespace_id INTEGER NOT NULL REFERENCES embedding_namespaces(id) ON DELETE CASCADE,
            commit_id INTEGER NOT NULL REFERENCES git_commits(id) ON DELETE CASCADE,
            text_sha256 TEXT NOT NULL,         -- digest of the exact embedded text
            vector BLOB NOT NULL,              -- little-endian float32, L2-normalised
            PRIMARY KEY (namespace_id, commit_id)
        ) WITHOUT ROWID;
        CREATE INDEX idx_commit_vectors_commit ON commit_vectors(commit_id);
        CREATE INDEX idx_commit_vectors_text ON commit_vectors(namespace_id, text_sha256);

        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """
    )
    if fts5_available(conn):
        run_script(conn, _COMMIT_FTS_DDL_V1)


@MIGRATIONS("history_0002_batch_fts")
def _batch_fts(conn: sqlite3.Connection) -> None:
    """The indexer now fills ``commit_fts`` once per batch (``INSERT … SELECT``), about 2x
    faster than a per-row trigger; deletes and updates keep their triggers."""
    conn.execute("DROP TRIGGER IF EXISTS git_commits_ai")


@MIGRATIONS("history_0003_complete")
def _complete(conn: sqlite3.Connection) -> None:
    """``complete = 0`` marks a commit read from a copy that lacks data: its diff's objects
    are missing (partial clone, pruned store) or it is a shallow-clone boundary (parents
    cut off). Another repository holding the full commit replaces such a row."""
    conn.execute("ALTER TABLE git_commits ADD COLUMN complete INTEGER NOT NULL DEFAULT 1")


@MIGRATIONS("history_0004_tokenize_v2")
def _tokenize_v2(conn: sqlite3.Connection) -> None:
    """Shared tokenisation version 2 (identifiers split, CJK characters spaced, ``v``
    versions also without the ``v``). It rebuilt the keyword index; migration 0007 rebuilds it
    again (version 3), so an index that has not run this step yet leaves the work to 0007."""


@MIGRATIONS("history_0005_git_inputs")
def _git_inputs(conn: sqlite3.Connection) -> None:
    """What the git-input hardening needs (issue 7 §1-3, §8, issue 15 §2):

    * ``git_commits.author_raw``/``committer_raw``: the identity as committed when the
      ``.mailmap`` maps it to another (``author``/``committer`` hold the canonical one);
      NULL when they are equal (so old rows need no rewrite).
    * ``repositories``: ``mailmap_digest`` (the ``.mailmap`` applied last: a change re-maps
      stored identities), ``shallow_digest`` (the ``shallow`` file: a deepened clone is
      reconciled), ``workspace_root`` (where it was found: a moved workspace is recognised),
      ``path_raw``/``common_dir_raw`` (exact bytes of paths that are not valid UTF-8; the text
      columns then hold them with ``\\xNN`` escapes), ``last_error_code``.
    * ``repo_refs.ref`` becomes a BLOB: ref names are bytes, stored losslessly.
    * ``repo_problems``: refs found broken by the last run (name, code, object), for
      ``status``; ``skipped_repositories``: repositories git refused to read.
    """
    run_script(
        conn,
        """
        ALTER TABLE git_commits ADD COLUMN author_raw TEXT;
        ALTER TABLE git_commits ADD COLUMN committer_raw TEXT;
        ALTER TABLE repositories ADD COLUMN mailmap_digest TEXT;
        ALTER TABLE repositories ADD COLUMN shallow_digest TEXT;
        ALTER TABLE repositories ADD COLUMN workspace_root TEXT;
        ALTER TABLE repositories ADD COLUMN path_raw BLOB;
        ALTER TABLE repositories ADD COLUMN common_dir_raw BLOB;
        ALTER TABLE repositories ADD COLUMN last_error_code TEXT;

        CREATE TABLE repo_refs_v2 (
            repo_id INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
            ref BLOB NOT NULL,                 -- the ref name's exact bytes
            tip TEXT NOT NULL,
            PRIMARY KEY (repo_id, ref)
        );
        INSERT INTO repo_refs_v2 (repo_id, ref, tip)
            SELECT repo_id, CAST(ref AS BLOB), tip FROM repo_refs;
        DROP TABLE repo_refs;
        ALTER TABLE repo_refs_v2 RENAME TO repo_refs;

        CREATE TABLE repo_problems (
            repo_id INTEGER NOT NULL REFERENCES repositories(id) ON DELETE CASCADE,
            code TEXT NOT NULL,                -- stable: ref_target_missing, ...
            ref BLOB,                          -- the ref name's bytes, if a ref is concerned
            object TEXT,                       -- the missing object, if any
            message TEXT NOT NULL
        );
        CREATE INDEX idx_repo_problems_repo ON repo_problems(repo_id);

        CREATE TABLE skipped_repositories (
            path_raw BLOB PRIMARY KEY,         -- exact bytes of the directory
            path TEXT NOT NULL,                -- display form
            workspace_root TEXT,
            code TEXT NOT NULL,                -- repository_not_trusted, ...
            message TEXT NOT NULL,
            seen_at INTEGER NOT NULL           -- Unix seconds, UTC
        );
        """,
    )


@MIGRATIONS("history_0006_patch_ids")
def _patch_ids(conn: sqlite3.Connection) -> None:
    """``git_commits.patch_id``: ``git patch-id --stable`` of the commit's patch (a merge's
    first-parent diff), the identity of cherry-picks, rebased copies and backports, which
    search collapses into one result. NULL: not computed yet (rows written before this
    migration; the next ``gitquarry index`` run backfills them from git, see
    ``history.patch_ids``); "": computed, none (an empty diff, or its objects are missing)."""
    run_script(
        conn,
        """
        ALTER TABLE git_commits ADD COLUMN patch_id TEXT;
        CREATE INDEX idx_patch_id ON git_commits(patch_id);
        """,
    )


@MIGRATIONS("history_0007_compact_diffs")
def _compact_diffs(conn: sqlite3.Connection) -> None:
    """Index size (issue 8 §4): stored diffs are zlib-compressed, and the keyword index is
    rebuilt with tokenisation version 3 (diffs indexed without their file headers). No git
    needed. The file keeps its size until ``VACUUM`` (``gitquarry rebuild-index`` builds a
    compact one); the freed pages are reused by later runs."""
    for trigger in ("git_commits_ai", "git_commits_ad", "git_commits_au"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    register_compression(conn)
    conn.execute(
        "UPDATE git_commits SET delta_truncated = gq_deflate(delta_truncated) "
        "WHERE typeof(delta_truncated) = 'text' AND delta_truncated != ''"
    )
    rebuild_commit_fts(conn)


@MIGRATIONS("history_0008_ref_sets")
def _ref_sets(conn: sqlite3.Connection) -> None:
    """The refs-containing bit sets (``history.refs_contain``) persisted with the index, so
    a cold query reads a hit's refs instead of rebuilding them from the whole commit graph:
    ``ref_sets_meta`` (one row: the digest of the index state they were built from, the ref
    names in bit order as a JSON list, the tag bits), ``ref_set_values`` (each distinct set
    once, little-endian bits) and ``commit_ref_sets`` (the set of every commit that some ref
    reaches). Written by ``gitquarry index`` when the digest moved; a reader whose digest
    differs ignores them. No foreign keys: a pruned commit changes the refs, so the digest."""
    run_script(
        conn,
        """
        CREATE TABLE ref_sets_meta (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            digest TEXT NOT NULL,
            names TEXT NOT NULL,
            tag_bits BLOB NOT NULL
        );
        CREATE TABLE ref_set_values (
            id INTEGER PRIMARY KEY,
            bits BLOB NOT NULL
        );
        CREATE TABLE commit_ref_sets (
            commit_id INTEGER PRIMARY KEY,
            set_id INTEGER NOT NULL
        );
        """,
    )


@MIGRATIONS("history_0009_s3_cold_generations")
def _generations(conn: sqlite3.Connection) -> None:
    """Each commit's generation in the index's commit graph (``history.index.generations``),
    persisted by ``gitquarry index`` beside the refs-containing sets under the same
    index-state digest, so a cold query answers "which commits did this merge bring in" from
    the index instead of one ``git rev-list`` per ranked merge. A reader whose digest differs
    asks git. No foreign keys, as for the ref sets: a pruned commit moves the digest."""
    run_script(
        conn,
        """
        CREATE TABLE commit_generations (
            commit_id INTEGER PRIMARY KEY,
            generation INTEGER NOT NULL
        );
        CREATE TABLE commit_generations_meta (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            digest TEXT NOT NULL
        );
        """,
    )


@MIGRATIONS("history_0010_s3_cold_ref_raw")
def _ref_raw(conn: sqlite3.Connection) -> None:
    """``repo_refs.raw``: the object the ref named before peeling when it was indexed (a
    tag object for an annotated tag, else the commit). The per-query freshness view
    (``history.index.freshness``) lists the refs with one ``git for-each-ref`` and peels only
    those whose object differs, instead of peeling every ref again. NULL (rows written
    before this migration, until the next ``gitquarry index``): that ref is peeled."""
    run_script(conn, "ALTER TABLE repo_refs ADD COLUMN raw TEXT;")
