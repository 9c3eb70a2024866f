"""Build the repository-docs relevance fixture: a git repository made from the ``docs/`` folder
(and root ``README*``) of a real project's source distribution.

Usage::

    pip download --no-deps --no-binary :all: click==8.1.8 -d /tmp/sdist
    python benchmarks/relevance/build_docs_fixture.py /tmp/sdist/click-8.1.8.tar.gz /tmp/click-docs

    # or from a git repository (a bare mirror works) at a tag:
    python benchmarks/relevance/build_docs_fixture.py --git /work/.mirror/pallets+flask/repo \
        --ref 3.1.0 /tmp/flask-docs

The sdist is not committed (it is third-party text); the query sets
``docs_queries.jsonl`` (click 8.1.8, 40 questions, each with the answering file and line span)
and ``flask_docs_queries.jsonl`` / ``flask_docs_heldout.jsonl`` (flask 3.1.0) are. The
repository gets one commit with a fixed author and date, tagged ``v<version>``, so line
numbers and blob ids are stable.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

DATE = "@1735689600 +0000"  # 2025-01-01


def build(sdist: Path, dest: Path) -> Path:
    """Extract ``docs/**`` and root ``README*`` of ``sdist`` into a new repository ``dest``."""
    if dest.exists():
        raise SystemExit(f"{dest} exists; remove it first")
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(sdist) as tar:
        tar.extractall(tmp, filter="data")
        (top,) = [p for p in Path(tmp).iterdir() if p.is_dir()]
        return _commit(top, dest, top.name)


def build_from_git(repo: Path, ref: str, dest: Path) -> Path:
    """``docs/**`` and root ``README*`` of ``ref`` in the git repository ``repo`` (bare or
    not) as a new repository ``dest``."""
    if dest.exists():
        raise SystemExit(f"{dest} exists; remove it first")
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", f"--git-dir={_git_dir(repo)}", "archive", ref],
                                 capture_output=True, check=True).stdout
        top = Path(tmp) / f"{repo.parent.name if repo.name == 'repo' else repo.name}-{ref}"
        top.mkdir()
        subprocess.run(["tar", "-x", "-C", str(top)], input=archive, check=True)
        return _commit(top, dest, top.name)


def _git_dir(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").exists() else repo


def _commit(top: Path, dest: Path, name: str) -> Path:
    dest.mkdir(parents=True)
    shutil.copytree(top / "docs", dest / "docs")
    for readme in top.glob("README*"):
        shutil.copy2(readme, dest / readme.name)
    version = name.rsplit("-", 1)[-1]
    env = dict(os.environ, GIT_AUTHOR_NAME="Fixture", GIT_AUTHOR_EMAIL="fixture@example.com",
               GIT_COMMITTER_NAME="Fixture", GIT_COMMITTER_EMAIL="fixture@example.com",
               GIT_AUTHOR_DATE=DATE, GIT_COMMITTER_DATE=DATE)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "commit.gpgsign=false", "commit", "-q", "-m", f"docs of {name}"],
                 ["tag", f"v{version}"]):
        subprocess.run(["git", *args], cwd=dest, env=env, check=True)
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="an sdist (.tar.gz), or with --git a repo")
    parser.add_argument("dest", type=Path, nargs="?")
    parser.add_argument("--git", type=Path, help="build from this git repository instead")
    parser.add_argument("--ref", help="with --git: the tag or commit")
    args = parser.parse_args()
    if args.git is not None:
        if not args.ref:
            parser.error("--git needs --ref")
        print(build_from_git(args.git, args.ref, args.source))
    else:
        if args.dest is None:
            parser.error("dest is required")
        print(build(args.source, args.dest))


if __name__ == "__main__":
    main()
