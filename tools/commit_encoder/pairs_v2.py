"""Training pairs whose documents look like the index's: commit document v2 *with* the message
or the title, and a query that is not a verbatim part of its document.

The s3 pairs (``tools/commit_pairs.py``) pair a title with the diff-side document alone, while
the index embeds title + message + diff side; a model trained on them learnt to match the
title's words to the diff, which BM25 (over title and message) already does, and lost hybrid
search. Here each pair of an existing pairs file is rebuilt from the same commit (read by its
SHA from the bare mirror, so the repository's HEAD does not matter), in one of two modes
(seeded):

* ``title``: query = the title (trailing ``(#123)`` removed); document = the commit document
  v2 with an empty title but the whole message, as the index stores it (for a commit without a
  message this is the s3 pair);
* ``body``: query = the message's first paragraph (trailers removed, 300 characters at most);
  document = commit document v2 with the title but without the message. Chosen with
  probability ``--body-share`` among the commits whose first paragraph has >= 6 words.

Every line also gets ``doc_full`` (title + message + diff side: what gitquarry embeds), the
text BM25 mines hard negatives over, and ``doc_title`` / ``doc_body`` (the two partial
documents), so a hard negative is shown in the same shape as its pair's positive.

Run with gitquarry importable (the project's ``.venv``)::

    .venv/bin/python tools/commit_encoder/pairs_v2.py --pairs /tmp/pairs.jsonl \
        --out /tmp/pairs_v2.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import commit_pairs as base

SEP = base.SEP


def read_commits(repo: str, shas: list[str]) -> dict[str, dict[str, object]]:
    """``sha -> {title, body, delta, files}`` of ``shas`` in ``repo``'s mirror (one git call)."""
    git_dir = base.MIRRORS / repo.replace("/", "+") / "repo"
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", "log", "--no-walk=unsorted", "--stdin", "-p",
         "--no-renames", "--format=%x1e%x1dgitquarry-commit%x1d%x1e%H%x1f%an%x1f%s%x1f%b%x1f"],
        input="\n".join(shas) + "\n", check=True, capture_output=True, text=True,
        errors="replace").stdout
    found: dict[str, dict[str, object]] = {}
    for chunk in out.split(SEP)[1:]:
        fields = chunk.split("\x1f", 4)
        if len(fields) != 5:
            continue
        sha, _author, title, body, rest = fields
        files = re.findall(r"^diff --git a/(\S+) b/", rest, re.MULTILINE)
        found[sha] = {"title": title.strip(), "body": body.strip(),
                      "delta": rest.lstrip("\n"), "files": files}
    return found


def build(title: str, message: str, c: dict[str, object]) -> str:
    row = {"title": title, "message": message, "files_changed": c["files"],
           "delta_truncated": c["delta"]}
    return base.FORMAT.build(row, base.MODEL_TOKENS).strip("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, required=True, help="tools/commit_pairs.py output")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--body-share", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    pairs = [json.loads(line) for line in args.pairs.read_text("utf-8").splitlines() if line]
    by_repo: dict[str, list[str]] = {}
    for p in pairs:
        if p["repo"] in base.EVALUATION:
            raise SystemExit(f"{p['repo']} is an evaluation repository: never training data")
        by_repo.setdefault(p["repo"], []).append(p["commit"])
    commits: dict[str, dict[str, object]] = {}
    for repo in sorted(by_repo):
        commits.update(read_commits(repo, by_repo[repo]))
        print(f"{repo}: {len(by_repo[repo])} commits", file=sys.stderr, flush=True)
    modes = {"title": 0, "body": 0, "missing": 0}
    with args.out.open("w", encoding="utf-8") as f:
        for p in pairs:
            c = commits.get(p["commit"])
            if c is None:
                modes["missing"] += 1
                continue
            title, body = str(c["title"]), str(c["body"])
            para = base.first_paragraph(body)
            doc_title = build(title, "", c)
            doc_body = build("", body, c)
            if len(para.split()) >= 6 and rng.random() < args.body_share:
                mode, query, doc = "body", para, doc_title
            else:
                mode, query, doc = "title", base._PR.sub("", title).strip(), doc_body
            modes[mode] += 1
            f.write(json.dumps({"repo": p["repo"], "commit": p["commit"], "mode": mode,
                                "query": query, "document": doc,
                                "doc_full": build(title, body, c), "doc_title": doc_title,
                                "doc_body": doc_body}, ensure_ascii=False) + "\n")
    print(json.dumps({"pairs": sum(modes.values()) - modes["missing"], **modes}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
