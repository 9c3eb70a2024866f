"""``gitquarry web`` as a user runs it: a real daemon process started by the command, the
printed link signing in over HTTP, ``--stop``; and the wheel carrying templates and assets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from .http_client import request, sign_in


def _env(tmp: Path) -> dict[str, str]:
    runtime = Path(tempfile.mkdtemp(prefix="gqw", dir="/tmp"))
    config = tmp / "config.toml"
    config.write_text("[embedding]\nprovider = \"none\"\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITQUARRY_"))}
    env.update({"HOME": str(tmp), "XDG_STATE_HOME": str(tmp / "state"),
                "XDG_RUNTIME_DIR": str(runtime), "XDG_CONFIG_HOME": str(tmp / "c"),
                "GITQUARRY_CONFIG": str(config), "GIT_CONFIG_NOSYSTEM": "1"})
    return env


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitquarry", *args], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_gitquarry_web_starts_the_daemon_and_prints_a_sign_in_link(tmp_path: Path) -> None:
    env = _env(tmp_path)
    try:
        first = _run(env, "web", "--no-open", "--json")
        assert first.returncode == 0, first.stderr
        data = json.loads(first.stdout)
        assert data["daemon_started"] and data["started"]
        assert data["login_url"].startswith("http://127.0.0.1:")
        base = data["url"]
        cookie = sign_in(base, data["login_url"])
        assert request(base, "GET", "/status", headers={"Cookie": cookie}).status == 200
        # a second call reuses the server and the daemon, with a new single-use link
        second = _run(env, "web", "--no-open")
        assert second.returncode == 0, second.stderr
        assert base in second.stdout and "single use" in second.stderr
        assert "Started" not in second.stderr
        # another port while it runs: a clear error, exit 1
        taken = _run(env, "web", "--no-open", "--port", "1")
        assert taken.returncode == 1 and "already runs on port" in taken.stderr
        assert "Traceback" not in taken.stderr
        stopped = _run(env, "web", "--stop")
        assert stopped.returncode == 0 and "Stopped serving" in stopped.stdout
    finally:
        _run(env, "daemon", "stop")


@pytest.mark.slow
def test_wheel_packages_templates_and_static_assets(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(tmp_path), str(root)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    wheel = next(tmp_path.glob("gitquarry-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    source = root / "src" / "gitquarry" / "web"
    for folder in ("templates", "static"):
        for path in (source / folder).iterdir():
            assert f"gitquarry/web/{folder}/{path.name}" in names, path.name
