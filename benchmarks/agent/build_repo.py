"""Rebuild the repository the agent-question benchmark runs on, from a fetched mirror.

The question set (``click_questions.json``) pins the branch tips it was judged on; this script
creates ``DEST/click`` with exactly those branches and the tags they contain, so the same
commits are indexed whatever the mirror has gained since::

    # the mirror: the `fetch` tool's copy of github:pallets/click
    python benchmarks/agent/build_repo.py /work/.mirror/pallets+click/repo /tmp/agentws
    gitquarry index /tmp/agentws          # history with embeddings (hybrid, the default)

Exits 1 with a message when the mirror lacks a pinned commit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

QUESTIONS = Path(__file__).with_name("click_questions.json")


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: build_repo.py MIRROR_GIT_DIR DEST_WORKSPACE", file=sys.stderr)
        return 2
    mirror, dest = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    pins: dict[str, str] = json.loads(QUESTIONS.read_text())["branches"]
    repo = dest / "click"
    if repo.exists():
        print(f"{repo} exists; remove it first", file=sys.stderr)
        return 1
    repo.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=repo)
    for branch, commit in pins.items():
        try:
            git("fetch", "-q", "--no-tags", "--update-head-ok", str(mirror),
                f"{commit}:refs/heads/{branch}",
                cwd=repo)
        except subprocess.CalledProcessError as exc:
            print(f"the mirror lacks {branch} at {commit}: {exc.stderr.strip()}",
                  file=sys.stderr)
            return 1
    git("fetch", "-q", str(mirror), "refs/tags/*:refs/tags/*", cwd=repo)
    heads = [f"refs/heads/{b}" for b in pins]
    keep = set()
    for head in heads:
        keep |= set(git("tag", "--merged", head, cwd=repo).split())
    for tag in set(git("tag", cwd=repo).split()) - keep:
        git("tag", "-d", tag, cwd=repo)  # tags newer than the pinned tips
    git("reset", "-q", "--hard", "main", cwd=repo)  # HEAD is main; fill the work tree
    git("reflog", "expire", "--expire=now", "--all", cwd=repo)
    git("gc", "-q", "--prune=now", cwd=repo)
    count = git("rev-list", "--count", *heads, cwd=repo).strip()
    print(json.dumps({"repository": str(repo), "commits": int(count),
                      "tags": len(keep), "branches": pins}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
