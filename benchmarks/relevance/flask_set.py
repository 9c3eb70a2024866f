"""The second judged history set: pallets/flask's history, rebuilt from a fetched mirror.

Usage::

    python benchmarks/relevance/flask_set.py build /tmp/flask [--mirror DIR]
    python benchmarks/relevance/flask_set.py write /tmp/flask   # (re)write the two JSONL files
    python benchmarks/relevance/flask_set.py lint  /tmp/flask
    python benchmarks/eval_history.py --repo /tmp/flask \\
        --queries benchmarks/relevance/flask_history_queries.jsonl

``build`` makes a fresh repository holding exactly the ``main`` branch of pallets/flask at
:data:`PINNED` (5,531 commits, 2010-2026) from a bare mirror (``/work/.mirror/pallets+flask/repo``
by default; any clone holding that commit works).

:data:`QUESTIONS` were written first, in a user's words (what broke, why something changed,
when a behaviour came in), from the user-facing entries of flask's ``CHANGES.rst``; each was
then judged by reading the commits (``git log --grep/-S``, ``git show``), never by looking at
gitquarry's results. ``write`` resolves each judged commit to its full hash and adds, as an
alternative (``C=M``), the pull-request merge that brought it in when that merge brought at
most 8 commits; cherry-picked copies judged by hand are listed the same way. Every third
question (the 3rd, 6th, ...) goes to ``flask_history_heldout.jsonl`` (run it only at the end),
the rest to ``flask_history_queries.jsonl`` (dev). ``lint`` checks, as ``click_set.py`` does,
that no paraphrase shares a non-stopword porter stem with the title or body of its first
relevant commit.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEV_PATH = HERE / "flask_history_queries.jsonl"
HELDOUT_PATH = HERE / "flask_history_heldout.jsonl"
DEFAULT_MIRROR = Path("/work/.mirror/pallets+flask/repo")
PINNED = "2ac89889f4cc330eabd50f295dcef02828522c69"

sys.path.insert(0, str(HERE))
from click_set import build as click_build  # noqa: E402
from click_set import git, lint  # noqa: E402

#: (kind, question, judged commits (``a=b``: the same change twice), files_glob, after, before)
QUESTIONS: list[tuple[str, str, list[str], str | None, str | None, str | None]] = [
    ("paraphrase", "after a form submit the browser is sent on to the next page with a "
     "different HTTP status code than it used to get", ["eca5fd1d"], None, None, None),
    ("keyword", "SECRET_KEY_FALLBACKS", ["e13373f8", "fb541598"], None, None, None),
    ("paraphrase", "one cleanup hook raising an exception stops the remaining cleanup hooks at "
     "the end of a request", ["fbb6f0bc"], None, None, None),
    ("introduced", "when did flask start using click for its command line", ["3bdb90f0"],
     None, None, None),
    ("paraphrase", "checking whether a key exists in the user's cookie data or taking its "
     "length did not count as using it, so caches could share the page", ["c17f3793"],
     None, None, None),
    ("paraphrase", "with several old passwords set up for cookie signatures the wrong one "
     "was chosen to produce new ones", ["fb541598"], None, None, None),
    ("keyword", "SESSION_COOKIE_PARTITIONED", ["9efc1ebe"], None, None, None),
    ("paraphrase", "the usage screen of the CLI is missing subcommands registered by plugins "
     "unless you call it bare", ["da600394"], None, None, None),
    ("filtered", "the hash for cookie signatures was looked up too early", ["db461112"],
     "src/flask/sessions.py", None, None),
    ("paraphrase", "a generator reply wrapped to keep request globals alive breaks in "
     "coroutine handlers", ["9822a035"], None, None, None),
    ("keyword", "MAX_FORM_PARTS", ["c7a53888"], None, None, None),
    ("paraphrase", "the test client shows stale cookie data after it follows a chain of "
     "redirects", ["53b8f082"], None, None, None),
    ("introduced", "when were class-based views added", ["dcf21989"], None, None, None),
    ("paraphrase", "importing the framework crashes on a hardened python where the old hash "
     "algorithm is blocked by FIPS mode", ["db461112"], None, None, None),
    ("paraphrase", "templates for scalable vector graphics did not escape user input",
     ["79032ca5=cc66213e"], None, None, None),
    ("keyword", "trusted_hosts", ["4f7156f2"], None, None, None),
    ("paraphrase", "why is the login no longer shared with subdomains derived from SERVER_NAME",
     ["c24f8c81"], None, None, None),
    ("paraphrase", "a handler giving back an array gets serialized automatically instead of "
     "raising a TypeError", ["ca2bfbb0"], None, None, None),
    ("filtered", "typing of the error handler decorator was too strict",
     ["6a4e7e94", "46b39e26", "88863288"], "src/flask/*.py", "2021-05-01T00:00:00Z",
     "2022-04-01T00:00:00Z"),
    ("paraphrase", "money amounts with a fixed-point numeric type can't be serialized in API "
     "replies", ["892ae955"], None, None, None),
    ("keyword", "init_every_request", ["6e232395"], None, None, None),
    ("paraphrase", "mypy rejects a filesystem location object for the assets directory "
     "argument", ["9a2adfba"], None, None, None),
    ("introduced", "when was async view support introduced", ["6979265f"], None, None, None),
    ("paraphrase", "HTTPS options to the run command only worked in one order", ["5050a18a"],
     None, None, None),
    ("keyword", "locked_cached_property deprecated", ["4256fc63"], None, None, None),
    ("paraphrase", "on sign-out the expired identifier loses its protection against "
     "javascript access", ["b707bf44"], None, None, None),
    ("filtered", "custom test client subclass crashes on a 302 chain", ["1be65b1b"],
     "src/flask/testing.py", None, None),
    ("paraphrase", "class-based handlers created once and reused instead of on each hit",
     ["6e232395"], None, None, None),
    ("keyword", "flit_core build backend", ["f38f3a74"], None, None, None),
    ("paraphrase", "creating a module of routes with a blank string as its identifier should "
     "fail loudly", ["b8b41001"], None, None, None),
    ("introduced", "when did blueprints become nestable inside other blueprints", ["f92e820b"],
     None, None, None),
    ("paraphrase", "a module of routes mounted under another loses the host prefix of its "
     "parent", ["d7b6c1f6", "cabda593"], None, None, None),
    ("keyword", "should_ignore_error", ["c77a5203"], None, None, None),
    ("paraphrase", "the command that prints url rules should tell which domain each applies "
     "to", ["84c007d3"], None, None, None),
    ("filtered", "Vary header overwritten", ["e7cd68ba", "b8eba0a3"], None, None,
     "2018-01-01T00:00:00Z"),
    ("paraphrase", "read a bundled data file as text in a specific charset", ["28d5a4d7"],
     None, None, None),
    ("keyword", "LocalStack", ["d597db67"], None, None, None),
    ("paraphrase", "unhelpful message when producing HTML from a Jinja file in a thread that "
     "lacks the application setup", ["58f3536a"], None, None, None),
    ("introduced", "when was loading settings from prefixed environment variables added",
     ["08a283af"], None, None, None),
    ("paraphrase", "per-deployment data directory resolved to the wrong location for python "
     "modules lacking an __init__ file", ["88bcf784"], None, None, None),
    ("keyword", "select_jinja_autoescape svg", ["79032ca5=cc66213e"], None, None, None),
    ("paraphrase", "enabling the built-in preflight reply for a single endpoint was ignored "
     "when globally switched off", ["e82db2ca"], None, None, None),
    ("filtered", "cookie signing with several keys", ["e13373f8", "fb541598"], None,
     "2024-10-01T00:00:00Z", None),
    ("paraphrase", "replace werkzeug's thread-local stack with the standard library's "
     "contextvars", ["d597db67"], None, None, None),
    ("keyword", "jsonify Decimal", ["892ae955"], None, None, None),
    ("paraphrase", "the hook deciding which exceptions teardown may skip is going away",
     ["c77a5203"], None, None, None),
    ("introduced", "when was the Partitioned cookie attribute supported", ["9efc1ebe"],
     None, None, None),
    ("paraphrase", "why is there only a single kind of pushed environment now instead of two "
     "for each HTTP call", ["c2705ffd"], None, None, None),
    ("keyword", "stream_template", ["46433e98"], None, None, None),
    ("paraphrase", "decorating a Jinja helper function without calling the decorator first",
     ["daf1510a"], None, None, None),
    ("paraphrase", "yielding chunks straight from an endpoint handler instead of wrapping the "
     "iterator", ["762382e4"], None, None, None),
    ("keyword", "from_prefixed_env", ["08a283af", "4eb5e945"], None, None, None),
    ("paraphrase", "choose which application to serve via flags rather than exported shell "
     "settings", ["99fa3c36"], None, None, None),
    ("paraphrase", "reject oversized uploads or too many multipart pieces for a single "
     "endpoint", ["c7a53888"], None, None, None),
    ("filtered", "LocalStack", ["d597db67"], "src/flask/ctx.py", None, None),
    ("paraphrase", "shared caches served a personalized page to other visitors because "
     "responses did not announce they differ per visitor", ["8646edca=8705dd39"],
     None, None, None),
    ("paraphrase", "mounting one module of routes two times without a unique label now raises",
     ["48f2afbf"], None, None, None),
    ("paraphrase", "when my app module fails to load the command line hides the real reason",
     ["e679a85b"], None, None, None),
]


def build(dest: Path, mirror: Path = DEFAULT_MIRROR) -> Path:
    """A new repository at ``dest`` with ``main`` = :data:`PINNED`, checked out."""
    return click_build(dest, mirror, PINNED)


def pr_merge(repo: Path, commit: str, limit: int = 8) -> str | None:
    """The earliest merge on ``main`` whose merged side (``M^1..M``) holds ``commit`` and at
    most ``limit`` commits (a pull request bringing this change), or None."""
    merges = git(repo, "rev-list", "--merges", "--ancestry-path", "--reverse",
                 f"{commit}..{PINNED}").split()
    for merge in merges[:200]:
        inside = subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor",
                                 commit, f"{merge}^1"], capture_output=True)
        if inside.returncode == 0:
            continue  # already on the first-parent side: not this merge's doing
        count = int(git(repo, "rev-list", "--count", f"{merge}^1..{merge}").strip())
        return merge if count <= limit else None
    return None


def resolve(repo: Path, entry: str) -> tuple[str, str]:
    """``entry`` (short hashes joined by ``=``) as full hashes plus the PR merge, and the
    title of its first commit."""
    full = [git(repo, "rev-parse", "--verify", f"{h}^{{commit}}").strip()
            for h in entry.split("=")]
    merge = pr_merge(repo, full[0])
    if merge and merge not in full:
        full.append(merge)
    title = git(repo, "log", "-1", "--format=%s", full[0]).strip()
    return "=".join(full), title


def write(repo: Path) -> tuple[int, int]:
    """Write the dev and held-out JSONL files; (dev count, held-out count)."""
    dev, held = [], []
    for n, (kind, question, judged, glob, after, before) in enumerate(QUESTIONS, start=1):
        resolved = [resolve(repo, e) for e in judged]
        row = {"query": question, "relevant": [r for r, _ in resolved], "files_glob": glob,
               "after": after, "before": before, "kind": kind,
               "relevant_titles": [t for _, t in resolved]}
        (held if n % 3 == 0 else dev).append(json.dumps(row))
    DEV_PATH.write_text("\n".join(dev) + "\n", "utf-8")
    HELDOUT_PATH.write_text("\n".join(held) + "\n", "utf-8")
    return len(dev), len(held)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("build", "write", "lint"))
    parser.add_argument("repo", type=Path)
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    args = parser.parse_args(argv)
    if args.action == "build":
        build(args.repo, args.mirror)
        print(f"built {args.repo} at {PINNED}")
        return 0
    if args.action == "write":
        n_dev, n_held = write(args.repo)
        print(f"wrote {n_dev} dev and {n_held} held-out questions")
    problems = []
    for path in (DEV_PATH, HELDOUT_PATH):
        rows = [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]
        problems += lint(args.repo, rows)
    for p in problems:
        print(p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
