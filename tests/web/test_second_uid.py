"""Issue 19 §4 and §6 with a real second local user (created here with ``useradd``; skipped
unless the tests run as root).

§4: while ``gitquarry web`` opens the browser (a ``BROWSER`` launcher that stays alive while
the other user looks), the other user reads every ``/proc/*/cmdline`` and ``/proc/*/environ``
it can and tries the sign-in page: the login token is in none of them, and the real user then
signs in with it. §6: the other user against the daemon's socket (refused by the directory's
mode, and by the ``SO_PEERCRED`` check when the modes are loosened) and the web page (no
session, forged tokens refused): refused, and nothing private in any answer."""

from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .http_client import request

# issue 24: real daemon processes or a second uid (seconds each); CI runs the slow set
pytestmark = pytest.mark.slow

SYSTEM_PYTHON = "/usr/bin/python3"


@dataclass
class OtherUser:
    name: str
    uid: int
    gid: int

    def run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """``argv`` as this user (``setpriv``: real and effective ids, no groups, no caps)."""
        return subprocess.run(
            ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups",
             "--", *argv], capture_output=True, text=True, timeout=timeout, check=False,
            env={"PATH": "/usr/bin:/bin", "HOME": "/"}, cwd="/")

    def argv(self) -> list[str]:
        return ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups",
                "--"]


@pytest.fixture
def other_user() -> Iterator[OtherUser]:
    if os.geteuid() != 0:
        pytest.skip("needs root to create a second local user")
    if not (shutil.which("useradd") and shutil.which("userdel") and shutil.which("setpriv")):
        pytest.skip("useradd, userdel and setpriv are needed")
    name = f"gq2nd{secrets.token_hex(4)}"
    proc = subprocess.run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", name],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"useradd failed: {proc.stderr.strip()}")
    try:
        entry = pwd.getpwnam(name)
        assert entry.pw_uid != 0
        yield OtherUser(name, entry.pw_uid, entry.pw_gid)
    finally:
        subprocess.run(["userdel", name], capture_output=True, check=False)


def _env(tmp: Path) -> dict[str, str]:
    runtime = Path(tempfile.mkdtemp(prefix="gqu", dir="/tmp"))
    # the runtime dir itself is open to others: only gitquarry's own modes protect it
    os.chmod(runtime, 0o755)
    config = tmp / "config.toml"
    config.write_text("[embedding]\nprovider = \"none\"\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITQUARRY_"))}
    env.pop("BROWSER", None)
    env.update({"HOME": str(tmp), "XDG_STATE_HOME": str(tmp / "state"),
                "XDG_RUNTIME_DIR": str(runtime), "XDG_CONFIG_HOME": str(tmp / "c"),
                "GITQUARRY_CONFIG": str(config), "GIT_CONFIG_NOSYSTEM": "1"})
    return env


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory the other user can read (for the scripts it runs)."""
    path = Path(tempfile.mkdtemp(prefix="gqshared", dir="/tmp"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _gitquarry(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitquarry", *args], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


READER = r"""
for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do
  cat "$f" 2>/dev/null | tr '\000' ' '; echo
done
echo "== page"; cat "$1" 2>&1
echo "== dir"; ls -la "$2" 2>&1
"""

WEB_PROBE = r"""
import http.client, json, sys
port = int(sys.argv[1]); out = []
def ask(method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    out.append({"req": f"{method} {path}", "status": r.status,
                "cookie": r.getheader("set-cookie"), "body": r.read().decode("utf-8", "replace")})
for path in ("/", "/status", "/api/status", "/history?q=x", "/repos", "/jobs",
             "/static/app.js", "/?token=forged", "/login"):
    ask("GET", path)
form = {"Content-Type": "application/x-www-form-urlencoded", "Origin": "null"}
ask("POST", "/login", "token=forged", form)
ask("POST", "/login", "token=", form)
print(json.dumps(out))
"""

SOCKET_PROBE = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as exc:
    print(json.dumps({"connect": type(exc).__name__})); sys.exit(0)
s.settimeout(30)
# nothing is sent: the daemon refuses another uid before it reads a request (a request
# written first could turn the refusal into a connection reset)
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
print(json.dumps({"connect": "ok", "reply": data.decode("utf-8", "replace")}))
"""


def test_second_user_cannot_steal_the_login_token(tmp_path: Path, other_user: OtherUser,
                                                   shared_dir: Path) -> None:
    env = _env(tmp_path)
    reader = shared_dir / "reader.sh"
    reader.write_text(READER, encoding="utf-8")
    os.chmod(reader, 0o755)
    logs = tmp_path / "logs"
    logs.mkdir()
    launcher = tmp_path / "browser.sh"
    launcher.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\n' \"$@\" > {logs}/argv\n"
        f"env > {logs}/environ\n"
        # the other user looks while this launcher (and `gitquarry web`) is alive
        f"{' '.join(other_user.argv())} /bin/sh {reader} \"${{1#file://}}\" "
        f"\"$(dirname \"${{1#file://}}\")\" > {logs}/stolen 2>&1\n", encoding="utf-8")
    os.chmod(launcher, 0o755)
    env["BROWSER"] = str(launcher)
    try:
        proc = _gitquarry(env, "web", "--json")
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        assert "login_url" not in data and "token" not in proc.stdout
        page = Path(data["login_page"])
        html = page.read_text(encoding="utf-8")
        token = re.search(r'name="token" value="([^"]+)"', html)
        assert token, html
        secret = token.group(1)
        assert len(secret) >= 40
        assert stat.S_IMODE(page.stat().st_mode) == 0o600
        assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
        argv = (logs / "argv").read_text(encoding="utf-8")
        assert argv.strip() == page.as_uri()
        assert secret not in argv and secret not in (logs / "environ").read_text()
        assert secret not in proc.stderr
        stolen = (logs / "stolen").read_text(encoding="utf-8", errors="replace")
        # the reader did read other processes' command lines (the launcher's, with the path)
        assert str(page) in stolen, stolen[-2000:]
        assert secret not in stolen
        assert "token=" not in stolen
        page_part = stolen.split("== page", 1)[1]
        assert "Permission denied" in page_part.split("== dir", 1)[0]
        assert "Permission denied" in page_part.split("== dir", 1)[1]
        # the real user still signs in with it, once
        form = {"Content-Type": "application/x-www-form-urlencoded", "Origin": "null"}
        good = request(data["url"], "POST", "/login", body=f"token={secret}", headers=form)
        assert good.status == 200, good
        cookie = good.headers["set-cookie"].split(";", 1)[0]
        assert request(data["url"], "GET", "/status", headers={"Cookie": cookie}).status == 200
    finally:
        _gitquarry(env, "daemon", "stop")
        shutil.rmtree(env["XDG_RUNTIME_DIR"], ignore_errors=True)


def test_second_user_is_refused_by_the_daemon_socket_and_the_web_page(
        tmp_path: Path, other_user: OtherUser, shared_dir: Path) -> None:
    env = _env(tmp_path)
    probes = shared_dir
    (probes / "web.py").write_text(WEB_PROBE, encoding="utf-8")
    (probes / "sock.py").write_text(SOCKET_PROBE, encoding="utf-8")
    for path in (probes / "web.py", probes / "sock.py"):
        os.chmod(path, 0o644)
    runtime = Path(env["XDG_RUNTIME_DIR"])
    sock_dir = runtime / "gitquarry"
    sock = sock_dir / "daemon.sock"
    try:
        proc = _gitquarry(env, "web", "--no-open", "--json")
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        port = str(data["port"])
        private = [str(tmp_path), str(runtime), os.path.realpath(tmp_path)]

        # the web page: every answer is a refusal without a cookie, and says nothing private
        web = other_user.run(SYSTEM_PYTHON, str(probes / "web.py"), port)
        assert web.returncode == 0, web.stderr
        answers = json.loads(web.stdout)
        assert len(answers) == 11
        for answer in answers:
            assert answer["status"] in (401, 403), answer
            assert answer["cookie"] is None, answer
            for root in private:
                assert root not in answer["body"], answer
        # the real user's link still works after the other user's attempts
        query = data["login_url"].split("?", 1)[1]
        assert request(data["url"], "GET", f"/?{query}").status == 303

        # the daemon's socket: the directory's mode refuses the other user...
        assert stat.S_IMODE(sock_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
        first = other_user.run(SYSTEM_PYTHON, str(probes / "sock.py"), str(sock))
        assert first.returncode == 0, first.stderr
        assert json.loads(first.stdout) == {"connect": "PermissionError"}
        # ...and with the modes loosened, the peer-uid check still refuses before reading
        os.chmod(sock_dir, 0o711)
        os.chmod(sock, 0o666)
        try:
            second = other_user.run(SYSTEM_PYTHON, str(probes / "sock.py"), str(sock))
        finally:
            os.chmod(sock, 0o600)
            os.chmod(sock_dir, 0o700)
        assert second.returncode == 0, second.stderr
        got = json.loads(second.stdout)
        assert got["connect"] == "ok"
        lines = [json.loads(line) for line in got["reply"].splitlines() if line]
        assert len(lines) == 1 and lines[0]["ok"] is False
        assert lines[0]["error"]["code"] == "peer_rejected"
        for root in private:
            assert root not in got["reply"]
        # the daemon still serves its own user
        status = _gitquarry(env, "daemon", "status", "--json")
        assert status.returncode == 0, status.stderr
    finally:
        _gitquarry(env, "daemon", "stop")
        shutil.rmtree(runtime, ignore_errors=True)
