"""A synthetic repository for ``bench_refs_contain.py``: N commits on ``main`` (one small file
change each, one minute apart), a lightweight tag every N/TAGS commits and a branch every
5,000 commits, written as a ``git fast-import`` stream on stdout.

Usage (100,000 commits, 1,000 tags, 20 branches: 1,021 refs)::

    mkdir -p /tmp/wsbig && git init -q --bare /tmp/wsbig/big.git
    python benchmarks/make_tagged_repo.py 100000 1000 \
        | git -C /tmp/wsbig/big.git fast-import --quiet
    gitquarry index --no-embed /tmp/wsbig
"""

from __future__ import annotations

import sys


def main() -> None:
    n, tags = int(sys.argv[1]), int(sys.argv[2])
    out = sys.stdout.buffer
    start = 1_600_000_000
    for i in range(1, n + 1):
        data = f"line {i}\n".encode()
        msg = f"commit {i}\n".encode()
        out.write(b"commit refs/heads/main\n")
        out.write(f"mark :{i}\ncommitter A <a@x> {start + i * 60} +0000\n".encode())
        out.write(b"data %d\n%s" % (len(msg), msg))
        if i > 1:
            out.write(f"from :{i - 1}\n".encode())
        out.write(b"M 100644 inline f%d.txt\ndata %d\n%s\n" % (i % 500, len(data), data))
        if i % (n // tags) == 0:
            out.write(f"reset refs/tags/v{i}\nfrom :{i}\n\n".encode())
        if i % 5000 == 0:
            out.write(f"reset refs/heads/b{i}\nfrom :{i}\n\n".encode())


if __name__ == "__main__":
    main()
