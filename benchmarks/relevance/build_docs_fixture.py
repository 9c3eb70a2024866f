"""Build the repository-docs relevance fixture: a git repository made from the ``docs/`` folder
(and root ``README*``) of a real project's source distribution.

Usage::

    pip download --no-deps --no-binary :all: click==8.1.8 -d /tmp/sdist
    python benchmarks/relevance/build_docs_fixture.py /tmp/sdist/click-8.1.8.tar.gz /tmp/click-docs

The sdist is not committed (it is third-party text); the query set
``docs_queries.jsonl`` (40 questions, each with the answering file and line span) is. The
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
        dest.mkdir(parents=True)
        shutil.copytree(top / "docs", dest / "docs")
        for readme in top.glob("README*"):
            shutil.copy2(readme, dest / readme.name)
        version = top.name.rsplit("-", 1)[-1]
    env = dict(os.environ, GIT_AUTHOR_NAME="Fixture", GIT_AUTHOR_EMAIL="fixture@example.com",
               GIT_COMMITTER_NAME="Fixture", GIT_COMMITTER_EMAIL="fixture@example.com",
               GIT_AUTHOR_DATE=DATE, GIT_COMMITTER_DATE=DATE)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "commit.gpgsign=false", "commit", "-q", "-m", f"docs of {top.name}"],
                 ["tag", f"v{version}"]):
        subprocess.run(["git", *args], cwd=dest, env=env, check=True)
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sdist", type=Path)
    parser.add_argument("dest", type=Path)
    args = parser.parse_args()
    print(build(args.sdist, args.dest))


if __name__ == "__main__":
    main()
