"""No scratch data committed at the repository root (``X.npy``, a 19 KB numpy array, was the
first thing a newcomer saw in ``ls``). Test data belongs under ``tests/data/``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: suffixes of files that are data or build output, never source, at the root
SCRATCH = (".npy", ".npz", ".pkl", ".pickle", ".db", ".sqlite", ".onnx", ".log", ".pyc")


def test_no_scratch_files_tracked_at_the_root() -> None:
    proc = subprocess.run(["git", "ls-files", "--", "."], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0 or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    root_files = [name for name in proc.stdout.splitlines() if "/" not in name]
    assert "README.md" in root_files
    assert [name for name in root_files if name.endswith(SCRATCH)] == []
