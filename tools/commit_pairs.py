"""Training pairs for the commit-search encoder: (commit title or message, diff-side document).

Reads public repositories' history (bare mirrors brought here with the search tool's
``fetch``; see ``REPOSITORIES``) and writes JSON Lines, one pair a line::

    {"repo": "psf/black", "commit": "<sha>", "query": "<title or title + message>",
     "document": "<commit document v2 without title and message>"}

The document is gitquarry's own commit document (``gitquarry.history.index.document``, layout v2:
changed paths, hunk contexts, identifiers on changed lines, changed lines) built with an
empty title and message, cut to the characters of 128 tokens: what the model must learn to
match the words of a title to. The query is the title (trailing ``(#123)`` removed), or, for a
seeded quarter of the commits whose message has a first paragraph, the title and that
paragraph.

Kept out:

* the evaluation repositories (pallets/click, pallets/flask, psf/requests) are never read as
  training data; every commit whose normalised title or normalised diff equals one of theirs
  is dropped as well (the pallets projects share tooling commits);
* forks and cherry-picks across the training repositories: a commit whose normalised diff
  (the changed lines, whitespace removed, sorted; a patch-id in spirit) or normalised title
  and paths was already taken is dropped;
* merges, bots (``[bot]`` authors, pre-commit-ci), release and version-bump commits, titles
  of fewer than 3 words, documents of fewer than 40 characters.

Run with gitquarry importable (the project's ``.venv``)::

    .venv/bin/python tools/commit_pairs.py --out /tmp/pairs.jsonl --manifest \
        tools/commit_encoder/training_commits.tsv
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from gitquarry.history.index.document import DocumentFormat

MIRRORS = Path("/work/.mirror")
#: (repository, newest non-merge commits read). Python, JavaScript and Go projects.
REPOSITORIES: tuple[tuple[str, int], ...] = (
    ("psf/black", 2400),
    ("pallets/jinja", 2200),
    ("pallets/werkzeug", 2600),
    ("encode/httpx", 1500),
    ("encode/starlette", 1450),
    ("pytest-dev/pytest", 3500),
    ("simonw/sqlite-utils", 1200),
    ("tiangolo/fastapi", 2000),
    ("marshmallow-code/marshmallow", 2000),
    ("expressjs/express", 2500),
    ("spf13/cobra", 1000),
    ("sirupsen/logrus", 1000),
)
#: never training data: the relevance sets are written on these.
EVALUATION = ("pallets/click", "pallets/flask", "psf/requests")

FORMAT = DocumentFormat("v2", 128)
MODEL_TOKENS = 256
SEP = "\x1e\x1dgitquarry-commit\x1d\x1e"
_PR = re.compile(r"\s*\((?:#|gh-|GH-)\d+\)\s*$")
_SKIP_TITLE = re.compile(
    r"^(merge\b|revert \"merge|release\b|version\b|v?\d+\.\d+|bump\b|prepare\b.*release|"
    r"\[pre-commit\.ci\]|pre-commit autoupdate|update (dev )?(dependencies|requirements)|"
    r"update changelog|changelog\b|🔖|📝 update release notes|⬆)",
    re.IGNORECASE,
)
_TRAILER = re.compile(r"^(signed-off-by|co-authored-by|reviewed-by|fixes|closes|refs?)\b",
                      re.IGNORECASE)


def _git(repo: str, *args: str) -> str:
    git_dir = MIRRORS / repo.replace("/", "+") / "repo"
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,
                          capture_output=True, text=True, errors="replace").stdout


def commits(repo: str, limit: int) -> Iterator[dict[str, str]]:
    """Newest ``limit`` non-merge commits of ``repo`` with their diffs (``git log -p``)."""
    out = _git(repo, "log", "--no-merges", f"-n{limit}", "-p", "--no-renames",
               "--format=%x1e%x1dgitquarry-commit%x1d%x1e%H%x1f%an%x1f%s%x1f%b%x1f", "HEAD")
    for chunk in out.split(SEP)[1:]:
        fields = chunk.split("\x1f", 4)
        if len(fields) != 5:  # a diff that contains the separator itself: skip the commit
            continue
        sha, author, title, body, rest = fields
        files = re.findall(r"^diff --git a/(\S+) b/", rest, re.MULTILINE)
        yield {"commit": sha, "author": author, "title": title.strip(), "body": body.strip(),
               "delta": rest.lstrip("\n"), "files": files}


def norm_title(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", _PR.sub("", title).lower()).strip()


def diff_key(delta: str) -> str:
    """Normalised diff: changed lines without whitespace, sorted, hashed (patch-id-like)."""
    lines = sorted(re.sub(r"\s+", "", line[1:]) for line in delta.splitlines()
                   if line[:1] in "+-" and not line.startswith(("+++", "---")))
    return hashlib.sha1("\n".join(lines).encode()).hexdigest()


def first_paragraph(body: str) -> str:
    para = body.split("\n\n", 1)[0]
    lines = [ln for ln in para.splitlines() if ln.strip() and not _TRAILER.match(ln.strip())]
    return " ".join(" ".join(lines).split())[:300]


def keep(c: dict[str, str]) -> bool:
    title = _PR.sub("", c["title"])
    if "[bot]" in c["author"] or "pre-commit-ci" in c["author"]:
        return False
    return len(title.split()) >= 3 and not _SKIP_TITLE.match(title)


def document(c: dict[str, object]) -> str:
    row = {"title": "", "message": "", "files_changed": c["files"],
           "delta_truncated": c["delta"]}
    return FORMAT.build(row, MODEL_TOKENS).strip("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--manifest", type=Path, required=True,
                        help="TSV of the repositories and commits used")
    parser.add_argument("--calibration-out", type=Path, default=None,
                        help="also write 512 whole commit documents (title and message "
                        "included, as gitquarry indexes them) of the kept commits, JSON Lines "
                        "{\"text\": ...}: the calibration set of build_minilm_static_int8.py")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)

    banned_titles: set[str] = set()
    banned_diffs: set[str] = set()
    for repo in EVALUATION:
        for c in commits(repo, 100_000):
            banned_titles.add(norm_title(c["title"]))
            banned_diffs.add(diff_key(c["delta"]))
    seen_diffs: set[str] = set()
    seen_titles: set[tuple[str, str]] = set()
    pairs: list[dict[str, str]] = []
    whole: list[str] = []
    stats: dict[str, dict[str, int]] = {}
    for repo, limit in REPOSITORIES:
        s = stats.setdefault(repo, {"read": 0, "kept": 0, "filtered": 0, "eval_overlap": 0,
                                    "duplicate": 0})
        head = _git(repo, "rev-parse", "HEAD").strip()
        s["head"] = head  # type: ignore[assignment]
        for c in commits(repo, limit):
            s["read"] += 1
            if not keep(c):
                s["filtered"] += 1
                continue
            title = norm_title(c["title"])
            dkey = diff_key(c["delta"])
            if title in banned_titles or dkey in banned_diffs:
                s["eval_overlap"] += 1
                continue
            tkey = (title, " ".join(sorted(c["files"])))
            if dkey in seen_diffs or tkey in seen_titles:
                s["duplicate"] += 1
                continue
            doc = document(c)
            if len(doc) < 40:
                s["filtered"] += 1
                continue
            seen_diffs.add(dkey)
            seen_titles.add(tkey)
            query = _PR.sub("", c["title"]).strip()
            para = first_paragraph(c["body"])
            if para and rng.random() < 0.25:
                query = f"{query}. {para}"
            pairs.append({"repo": repo, "commit": c["commit"], "query": query,
                          "document": doc})
            whole.append(FORMAT.build({"title": c["title"], "message": c["body"],
                                       "files_changed": c["files"],
                                       "delta_truncated": c["delta"]}, MODEL_TOKENS))
            s["kept"] += 1
    if args.calibration_out is not None:
        sample = random.Random(args.seed + 1).sample(whole, min(512, len(whole)))
        with args.calibration_out.open("w", encoding="utf-8") as f:
            for text in sample:
                f.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
    rng.shuffle(pairs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for p in pairs:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    args.manifest.parent.mkdir(parents=True, exist_ok=True)
    with args.manifest.open("w", encoding="utf-8") as f:
        f.write("# order\trepo\tcommit (training pairs of tools/commit_pairs.py, shuffled)\n")
        for i, p in enumerate(pairs):
            f.write(f"{i}\t{p['repo']}\t{p['commit']}\n")
    print(json.dumps({"pairs": len(pairs), "repositories": stats}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
