"""Build synthetic Git repositories quickly with one ``git fast-import`` stream.

Reusable by every benchmark::

    from _synthetic import build_repo, append_commits
    info = build_repo(Path("/tmp/repo"), 10_000, seed=0)
    append_commits(Path("/tmp/repo"), 10, seed=1)

The history is "realistic-ish": a few hundred files in nested directories
(``src/<pkg>/<mod>.py``, ``src/<pkg>/<sub>/<mod>.py``, ``docs/*.md``, ``tests/<pkg>/test_*.py``)
created on first touch; each commit changes 1-4 files (hot files more often, Zipf-like) by a
few lines (replace / insert / delete), with the whole new blob given inline; subjects and bodies
are drawn from a vocabulary of commit words (fix/add/refactor + cache, parser, auth, token,
timeout, ...); a few feature branches run alongside ``main`` and most are merged back with a
merge commit; a few renames and lightweight tags; author/committer dates are fixed and strictly
increasing. The same ``seed`` always yields the same commit hashes.

All content is ASCII, so ``len(str)`` is the byte length fast-import needs.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import os
import random
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

VERBS = [
    "fix", "add", "refactor", "remove", "update", "handle", "improve", "simplify", "rename",
    "document", "test", "optimize", "revert", "support", "validate", "cache", "retry",
    "deprecate", "extract", "inline", "guard", "log", "parse", "normalize", "bump",
]
NOUNS = [
    "cache", "parser", "auth", "token", "timeout", "retry", "config", "logger", "session",
    "socket", "request", "response", "scheduler", "queue", "worker", "index", "migration",
    "schema", "encoder", "decoder", "router", "middleware", "handler", "client", "server",
    "connection", "pool", "buffer", "stream", "serializer", "metrics", "exporter", "plugin",
    "loader", "resolver", "validator", "template", "renderer", "query", "transaction", "lock",
    "checksum", "compression", "archive", "upload", "download", "webhook", "permission",
    "role", "password", "signature", "certificate", "proxy", "redirect", "cookie", "header",
    "payload", "batch", "cursor", "snapshot", "backup", "replica", "shard", "partition",
    "deadline", "heartbeat", "backoff", "throttle", "quota", "limit", "offset", "encoding",
    "locale", "timezone", "calendar", "invoice", "account", "profile", "avatar", "search",
    "filter", "sort", "pagination", "endpoint", "credential", "secret", "keyring", "daemon",
]
CONDITIONS = [
    "is empty", "expires", "is missing", "overflows", "times out", "is None", "is stale",
    "changes", "fails to parse", "is reused", "is closed early", "races", "leaks",
    "is too large", "has unicode", "is negative", "is duplicated", "loops forever",
]
PKGS = [
    "core", "api", "auth", "storage", "net", "cli", "utils", "db", "cache", "jobs", "web",
    "metrics", "billing", "search",
]
SUBPKGS = ["internal", "backends", "compat", "v2"]
AUTHORS = [
    ("Alice Martin", "alice@example.com"), ("Bob Chen", "bob@example.org"),
    ("Carla Diaz", "carla@example.net"), ("Deepak Rao", "deepak@example.com"),
    ("Eva Novak", "eva@example.com"), ("Farid Haddad", "farid@example.org"),
    ("Grace Kim", "grace@example.com"), ("Hugo Lefevre", "hugo@example.fr"),
    ("Ines Sousa", "ines@example.pt"), ("Jonas Berg", "jonas@example.se"),
    ("Kenji Sato", "kenji@example.jp"), ("Lena Vogel", "lena@example.de"),
    ("Mateo Rossi", "mateo@example.it"), ("Nora Quinn", "nora@example.ie"),
    ("Omar Said", "omar@example.com"), ("Priya Nair", "priya@example.in"),
]
START_TIME = 1_420_070_400  # 2015-01-01T00:00:00Z


def _pick(rng: random.Random, seq: list[str]) -> str:
    return seq[int(rng.random() * len(seq))]


def _py_line(rng: random.Random) -> str:
    v, n1, n2, n3 = _pick(rng, VERBS), _pick(rng, NOUNS), _pick(rng, NOUNS), _pick(rng, NOUNS)
    k = int(rng.random() * 10)
    if k == 0:
        return f"def {v}_{n1}({n2}, {n3}=None):"
    if k == 1:
        return f"    {n1} = {n2}.get('{n3}', {int(rng.random() * 1000)})"
    if k == 2:
        return f"    if {n1} is None or {n2}.{n3}_{v}d:"
    if k == 3:
        return f"        raise {n1.capitalize()}Error('{n2} {_pick(rng, CONDITIONS)}')"
    if k == 4:
        return f"    return {v}_{n1}({n2}, timeout={int(rng.random() * 60)})"
    if k == 5:
        return f"    # TODO: {v} the {n1} when the {n2} {_pick(rng, CONDITIONS)}"
    if k == 6:
        return f"    self._{n1}_{n2} = {n3.capitalize()}{n1.capitalize()}()"
    if k == 7:
        return f"    log.debug('{v} {n1}: %s', {n2})"
    if k == 8:
        return f"class {n1.capitalize()}{n2.capitalize()}({n3.capitalize()}Base):"
    return f"    for {n1} in self.{n2}s:  # {v} {n3}"


def _md_line(rng: random.Random) -> str:
    v, n1, n2 = _pick(rng, VERBS), _pick(rng, NOUNS), _pick(rng, NOUNS)
    k = int(rng.random() * 5)
    if k == 0:
        return f"## {v.capitalize()} the {n1}"
    if k == 1:
        return f"The {n1} {v}s the {n2} when it {_pick(rng, CONDITIONS)}."
    if k == 2:
        return f"- `{n1}.{n2}`: how long to wait before the {n1} {_pick(rng, CONDITIONS)}."
    if k == 3:
        return f"Set `{n1}_{n2}` to {v} the {n2} on every {_pick(rng, NOUNS)}."
    return ""


class _LinePool:
    """Pre-generated random lines, sampled cheaply."""

    def __init__(self, rng: random.Random, size: int = 6000) -> None:
        self.py = [_py_line(rng) for _ in range(size)]
        self.md = [_md_line(rng) for _ in range(size // 3)]

    def line(self, rng: random.Random, path: str) -> str:
        pool = self.md if path.endswith(".md") else self.py
        return pool[int(rng.random() * len(pool))]


def _file_universe(rng: random.Random) -> list[str]:
    files: list[str] = []
    for pkg in PKGS:
        mods = rng.sample(NOUNS, 12)
        files.append(f"src/{pkg}/__init__.py")
        files.extend(f"src/{pkg}/{m}.py" for m in mods)
        for sub in rng.sample(SUBPKGS, 2):
            files.extend(f"src/{pkg}/{sub}/{m}.py" for m in rng.sample(NOUNS, 3))
        files.extend(f"tests/{pkg}/test_{m}.py" for m in mods[:5])
    files.extend(f"docs/{n}.md" for n in rng.sample(NOUNS, 30))
    files.extend(["README.md", "CHANGELOG.md", "pyproject.toml", "docs/index.md"])
    return sorted(set(files))


def _subject(rng: random.Random, path: str) -> str:
    v, n1, n2 = _pick(rng, VERBS), _pick(rng, NOUNS), _pick(rng, NOUNS)
    parts = path.split("/")
    pkg = parts[1] if len(parts) > 2 else "docs"
    k = int(rng.random() * 6)
    if k == 0:
        return f"{v.capitalize()} {n1} {n2}"
    if k == 1:
        return f"{pkg}: {v} {n1} when {n2} {_pick(rng, CONDITIONS)}"
    if k == 2:
        return f"{v.capitalize()} {n1} in {pkg}.{Path(path).stem}"
    if k == 3:
        return f"{v.capitalize()} the {n1} {n2} for {_pick(rng, NOUNS)} requests"
    if k == 4:
        return f"[{pkg}] {v} {n1} {_pick(rng, CONDITIONS)}"
    return f"{v.capitalize()} {n1}: {_pick(rng, VERBS)} {n2} on {_pick(rng, NOUNS)}"


def _body(rng: random.Random) -> str:
    n = int(rng.random() * 4)
    if n == 0:
        return ""
    sentences = []
    for _ in range(n):
        sentences.append(
            f"The {_pick(rng, NOUNS)} {_pick(rng, CONDITIONS)} so the "
            f"{_pick(rng, NOUNS)} now {_pick(rng, VERBS)}s the {_pick(rng, NOUNS)} instead."
        )
    body = " ".join(sentences)
    # wrap at ~72 columns like a real commit body
    words, lines, cur = body.split(), [], ""
    for w in words:
        if len(cur) + len(w) + 1 > 72:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    text = "\n".join(lines)
    if rng.random() < 0.3:
        text += f"\n\nFixes #{int(rng.random() * 5000) + 1}"
    return text


@dataclass
class _Branch:
    ref: str
    tip: int  # mark
    files: dict[str, tuple[str, ...]]
    touched: set[str] = field(default_factory=set)
    target: int = 0
    commits: int = 0


@dataclass
class RepoInfo:
    path: str
    commits: int
    merges: int
    branches: int
    tags: int
    files: int
    build_s: float
    git_dir_bytes: int


class _Emitter:
    def __init__(self, stream) -> None:  # type: ignore[no-untyped-def]
        self.stream = stream
        self.parts: list[str] = []
        self.size = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size > (1 << 20):
            self.flush()

    def data(self, text: str) -> None:
        self.add(f"data {len(text)}\n{text}\n")

    def flush(self) -> None:
        if self.parts:
            self.stream.write("".join(self.parts).encode("ascii"))
            self.parts.clear()
            self.size = 0


def _git(path: Path, *args: str, input_bytes: bytes | None = None) -> bytes:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(
        ["git", "-C", str(path), *args], input=input_bytes, capture_output=True, check=True,
        env=env,
    ).stdout


def _dir_bytes(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(dirpath, f)).st_size
    return total


class _Writer:
    """Turns the generator's decisions into fast-import commands."""

    def __init__(self, emit: _Emitter, rng: random.Random, pool: _LinePool, t0: int,
                 mark0: int = 0) -> None:
        self.emit = emit
        self.rng = rng
        self.pool = pool
        self.time = t0
        self.mark = mark0
        self.commits = 0

    def new_content(self, path: str) -> tuple[str, ...]:
        n = 10 + int(self.rng.random() * 30)
        return tuple(self.pool.line(self.rng, path) for _ in range(n))

    def edit(self, path: str, lines: tuple[str, ...]) -> tuple[str, ...]:
        rng = self.rng
        out = list(lines)
        for _ in range(1 + int(rng.random() * 4)):
            op = rng.random()
            pos = int(rng.random() * (len(out) + 1))
            if op < 0.5 and out:
                out[min(pos, len(out) - 1)] = self.pool.line(rng, path)
            elif op < 0.8 or len(out) < 12:
                out.insert(pos, self.pool.line(rng, path))
            elif len(out) > 1:
                del out[min(pos, len(out) - 1)]
        if len(out) > 80:  # keep files bounded: drop a block
            start = int(rng.random() * (len(out) - 20))
            del out[start : start + 20]
        return tuple(out)

    def commit(self, ref: str, message: str, parents: list[str],
               changes: list[tuple[str, str, tuple[str, ...] | str]]) -> int:
        """``changes``: ('M', path, lines) or ('R', old, new). Returns the new mark."""
        self.mark += 1
        self.commits += 1
        self.time += 60 + int(self.rng.random() * 3600)
        name, email = AUTHORS[int(self.rng.random() * len(AUTHORS))]
        e = self.emit
        e.add(f"commit {ref}\nmark :{self.mark}\n"
              f"author {name} <{email}> {self.time} +0000\n"
              f"committer {name} <{email}> {self.time} +0000\n")
        e.data(message)
        if parents:
            e.add(f"from {parents[0]}\n")
            for p in parents[1:]:
                e.add(f"merge {p}\n")
        for kind, a, b in changes:
            if kind == "R":
                e.add(f"R {a} {b}\n")
            else:
                assert not isinstance(b, str)
                e.add(f"M 100644 inline {a}\n")
                e.data("\n".join(b) + "\n")
        e.add("\n")
        return self.mark


def build_repo(
    path: Path,
    n_commits: int,
    seed: int = 0,
    *,
    max_feature_branches: int = 3,
    feature_rate: float = 0.01,
    merge_fraction: float = 0.85,
    rename_rate: float = 0.002,
    tag_every: int = 2500,
    checkout: bool = True,
) -> RepoInfo:
    """Create a new non-bare repository at ``path`` holding exactly ``n_commits`` commits.

    Branches: ``main`` plus feature branches ``feature/<k>`` (at most ``max_feature_branches``
    alive at once; names are reused, so the repository ends with a handful of branches).
    A feature branch gets 2-15 commits interleaved with ``main`` and is then merged into
    ``main``, taking its files (``merge_fraction`` of them) or keeping main's (``-s ours``);
    branches still open at the end keep their refs. Every commit is reachable. Tags ``v<k>.0`` every
    ``tag_every`` commits. ``checkout`` fills the working tree (cheap: a few hundred files).
    """
    started = time.monotonic()
    path = Path(path)
    if path.exists() and any(path.iterdir()):
        raise FileExistsError(f"{path} exists and is not empty")
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q", "-b", "main")
    _git(path, "config", "gc.auto", "0")
    rng = random.Random(seed)
    pool = _LinePool(rng)
    universe = _file_universe(rng)
    weights = [1.0 / (i + 1) ** 0.8 for i in range(len(universe))]
    rng.shuffle(universe)
    cum = list(itertools.accumulate(weights))

    proc = subprocess.Popen(
        ["git", "-C", str(path), "fast-import", "--quiet", "--done"],
        stdin=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    emit = _Emitter(proc.stdin)
    emit.add("feature done\n")
    w = _Writer(emit, rng, pool, START_TIME)

    def pick_files(k: int) -> list[str]:
        out: list[str] = []
        while len(out) < k:
            p = universe[bisect.bisect(cum, rng.random() * cum[-1])]
            if p not in out:
                out.append(p)
        return out

    # root commit: a first slice of the tree
    initial = {p: w.new_content(p) for p in universe[:40]}
    root = w.commit("refs/heads/main", "Initial import\n", [],
                    [("M", p, c) for p, c in sorted(initial.items())])
    main = _Branch("refs/heads/main", root, dict(initial))
    features: list[_Branch] = []
    free_names = [f"refs/heads/feature/{k}" for k in range(max_feature_branches)]
    merges = tags = 0
    tagged = set()

    while w.commits < n_commits:
        remaining = n_commits - w.commits
        # merge a finished feature branch
        done = [f for f in features if f.commits >= f.target]
        if done:
            f = done[0]
            features.remove(f)
            free_names.append(f.ref)
            # Every branch is merged so that its commits stay reachable when its name is
            # reused: most take the branch's files, the rest keep main's ("-s ours").
            changes = []
            short = f.ref.removeprefix("refs/heads/")
            if rng.random() < merge_fraction:
                for p in sorted(f.touched):
                    if p in f.files:
                        main.files[p] = f.files[p]
                        changes.append(("M", p, f.files[p]))
                msg = f"Merge branch '{short}'\n\n{_subject(rng, sorted(f.touched)[0])}\n"
            else:
                msg = f"Merge branch '{short}' (superseded; keep main's version)\n"
            main.tip = w.commit(main.ref, msg, [f":{main.tip}", f":{f.tip}"], changes)
            merges += 1
            continue
        # start a feature branch
        if free_names and remaining > 20 and rng.random() < feature_rate:
            ref = free_names.pop(0)
            features.append(
                _Branch(ref, main.tip, dict(main.files), target=2 + int(rng.random() * 14))
            )
        # pick the branch for this commit
        if features and rng.random() < 0.25:
            br = features[int(rng.random() * len(features))]
        else:
            br = main
        k = 1 + min(3, int(rng.random() ** 2 * 4))
        paths = pick_files(k)
        changes: list[tuple[str, str, tuple[str, ...] | str]] = []
        if br is main and rng.random() < rename_rate:
            old = paths[0]
            if old in br.files and old.endswith(".py"):
                new = old[:-3] + f"_{_pick(rng, NOUNS)}.py"
                if new not in br.files:
                    changes.append(("R", old, new))
                    br.files[new] = br.files.pop(old)
                    universe[universe.index(old)] = new
                    paths[0] = new
        for p in paths:
            old_lines = br.files.get(p)
            new_lines = w.new_content(p) if old_lines is None else w.edit(p, old_lines)
            br.files[p] = new_lines
            br.touched.add(p)
            changes.append(("M", p, new_lines))
        subject = _subject(rng, paths[0])
        body = _body(rng)
        msg = subject + "\n" + (f"\n{body}\n" if body else "")
        parents = [f":{br.tip}"]
        br.tip = w.commit(br.ref, msg, parents, changes)
        br.commits += 1
        if br is main and w.commits // tag_every not in tagged and w.commits >= tag_every:
            tagged.add(w.commits // tag_every)
            tags += 1
            emit.add(f"reset refs/tags/v{tags}.0\nfrom :{main.tip}\n\n")

    emit.add("done\n")
    emit.flush()
    proc.stdin.close()
    err = proc.stderr.read() if proc.stderr else b""
    if proc.wait() != 0:
        raise RuntimeError(f"git fast-import failed: {err.decode(errors='replace')}")
    if checkout:
        _git(path, "reset", "-q", "--hard", "main")
    branches = len(_git(path, "for-each-ref", "refs/heads").splitlines())
    return RepoInfo(
        path=str(path), commits=w.commits, merges=merges, branches=branches, tags=tags,
        files=len(main.files), build_s=round(time.monotonic() - started, 3),
        git_dir_bytes=_dir_bytes(path / ".git"),
    )


def append_commits(path: Path, n: int, seed: int = 1, *, ref: str = "refs/heads/main") -> float:
    """Add ``n`` ordinary commits on top of ``ref`` (one fast-import stream). Returns seconds.

    Each edits 1-3 existing files of the tip by a few lines; dates continue after the tip.
    """
    started = time.monotonic()
    path = Path(path)
    rng = random.Random(seed)
    pool = _LinePool(rng, size=500)
    tip_time = int(_git(path, "log", "-1", "--format=%ct", ref).strip())
    files = [
        f for f in _git(path, "ls-tree", "-r", "--name-only", ref).decode().splitlines()
        if f.endswith((".py", ".md"))
    ]
    chosen = sorted({_pick(rng, files) for _ in range(3 * n)})
    payload = "".join(f"{ref}:{p}\n" for p in chosen).encode()
    raw = _git(path, "cat-file", "--batch", input_bytes=payload)
    contents: dict[str, tuple[str, ...]] = {}
    pos = 0
    for p in chosen:
        nl = raw.index(b"\n", pos)
        size = int(raw[pos:nl].split()[2])
        blob = raw[nl + 1 : nl + 1 + size].decode("ascii")
        contents[p] = tuple(blob.rstrip("\n").split("\n"))
        pos = nl + 1 + size + 1
    proc = subprocess.Popen(
        ["git", "-C", str(path), "fast-import", "--quiet", "--done"],
        stdin=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    emit = _Emitter(proc.stdin)
    emit.add("feature done\n")
    w = _Writer(emit, rng, pool, tip_time, mark0=0)
    parent = f"{ref}^0"
    for _ in range(n):
        k = 1 + int(rng.random() * 3)
        paths = rng.sample(chosen, k)
        changes: list[tuple[str, str, tuple[str, ...] | str]] = []
        for p in paths:
            contents[p] = w.edit(p, contents[p])
            changes.append(("M", p, contents[p]))
        body = _body(rng)
        msg = _subject(rng, paths[0]) + "\n" + (f"\n{body}\n" if body else "")
        mark = w.commit(ref, msg, [parent], changes)
        parent = f":{mark}"
    emit.add("done\n")
    emit.flush()
    proc.stdin.close()
    err = proc.stderr.read() if proc.stderr else b""
    if proc.wait() != 0:
        raise RuntimeError(f"git fast-import failed: {err.decode(errors='replace')}")
    if (path / ".git").is_dir() and ref == "refs/heads/main":
        _git(path, "reset", "-q", "--hard", "main")
    return time.monotonic() - started


if __name__ == "__main__":  # quick manual check: python benchmarks/_synthetic.py DIR N
    import json
    import sys

    info = build_repo(Path(sys.argv[1]), int(sys.argv[2]))
    print(json.dumps(vars(info), indent=2))
