"""``gitquarry.cli.dataclass_code``: dataclass methods compiled in an earlier process are the
very code objects ``exec`` compiles, and the cold ``repo-docs search`` answers the same bytes
with the file absent, filled, or corrupt.

Every check runs fresh interpreters (this process's dataclasses are already defined)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: dumps, for every dataclass of the cold docs path's gitquarry modules, each generated
#: method's code object (marshal bytes, hex), and how many texts were compiled afresh
_PROBE = """
import dataclasses, json, marshal, sys
if sys.argv[1] == "cached":
    from gitquarry.cli import dataclass_code
    dataclass_code.install()
import gitquarry.config, gitquarry.query.docs, gitquarry.repo_docs.api
out = {}
for name, module in sorted(sys.modules.items()):
    if not name.startswith("gitquarry"):
        continue
    for attr, cls in sorted(vars(module).items()):
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == name:
            for meth in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__",
                         "__delattr__", "__lt__"):
                fn = cls.__dict__.get(meth)
                code = getattr(fn, "__code__", None)
                if code is not None:
                    out[f"{name}.{attr}.{meth}"] = marshal.dumps(code).hex()
fresh = 0
if sys.argv[1] == "cached":
    fresh = len(dataclass_code._new)
    dataclass_code.save()
print(json.dumps({"codes": out, "fresh": fresh}))
"""


def _probe(mode: str, env: dict[str, str]) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, mode], env=env, capture_output=True,
                          text=True, check=True, timeout=120)
    return dict(json.loads(proc.stdout))


@pytest.fixture()
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "XDG_STATE_HOME": str(tmp_path / "state"), "GITQUARRY_CONFIG": "/dev/null",
            "GITQUARRY_FAST": "local"}


def test_cached_methods_are_the_compiled_ones(env: dict[str, str], tmp_path: Path) -> None:
    plain = _probe("plain", env)
    first = _probe("cached", env)  # no file yet: compiles, then writes it
    again = _probe("cached", env)  # every text from the file
    codes = plain["codes"]
    assert isinstance(codes, dict) and len(codes) > 100
    assert first["codes"] == codes and again["codes"] == codes
    assert isinstance(first["fresh"], int) and first["fresh"] > 100
    assert again["fresh"] == 0
    files = list((tmp_path / "cache" / "gitquarry").iterdir())
    assert len(files) == 1 and files[0].name.startswith("dataclass-code-")


def _search(env: dict[str, str], repo: Path) -> str:
    cli = [sys.executable, "-m", "gitquarry", "repo-docs"]
    proc = subprocess.run([*cli, "search", "gunicorn", "--repo", "acme/widget", "--mode",
                           "fulltext", "--json"], env=env, capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_cold_search_answers_the_same_with_any_cache_file(env: dict[str, str],
                                                            tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "deploy.md").write_text(
        "# Deployment\n\n## Nginx\n\nThe reverse proxy forwards to the gunicorn workers.\n",
        encoding="utf-8")
    git = ["git", "-c", "user.name=A", "-c", "user.email=a@example.com", "-c",
           "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "-m", "docs"], check=True)
    subprocess.run([sys.executable, "-m", "gitquarry", "repo-docs", "register", "--repo",
                    "acme/widget", "--repository-path", str(repo)], env=env, check=True,
                   capture_output=True)
    cache = tmp_path / "cache" / "gitquarry"
    first = _search(env, repo)  # no file
    assert '"docs/deploy.md"' in first
    (written,) = cache.iterdir()
    size = written.stat().st_size
    assert _search(env, repo) == first  # from the file
    written.write_bytes(b"\x00not marshal")
    assert _search(env, repo) == first  # corrupt: compiled as usual, file rewritten
    assert written.stat().st_size == size
    written.write_bytes(b"")
    assert _search(env, repo) == first


def test_the_cold_docs_path_installs_it_and_the_thin_path_does_not(
        env: dict[str, str], tmp_path: Path) -> None:
    """The local cold search defines ``config``'s sections through the file's ``exec``; a
    command answered before that point (``--version``) imports neither it nor dataclasses."""
    probe = ("import dataclasses, json, sys\nfrom gitquarry.cli.entry import main\n"
             "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    code = exc.code\n"
             "from gitquarry.cli import dataclass_code\nimport gitquarry.config as c\n"
             "init = c.DocsConfig.__init__.__code__\n"
             "sys.stderr.write('STATE ' + json.dumps([code, getattr(dataclasses, 'exec', None)"
             " is dataclass_code._exec, any(init is y for k in dataclass_code._codes.values() "
             "for x in k.co_consts if hasattr(x, 'co_consts') for y in x.co_consts)])"
             " + '\\n')\n")
    version = ("import sys\nfrom gitquarry.cli.entry import main\n"
               "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
               "sys.stderr.write('MODS ' + str(['gitquarry.cli.dataclass_code' in sys.modules,"
               " 'dataclasses' in sys.modules]) + '\\n')\n")
    repo = tmp_path / "r"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=A", "-c", "user.email=a@example.com",
           "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "a"], check=True)
    subprocess.run([sys.executable, "-m", "gitquarry", "repo-docs", "register", "--repo",
                    "acme/a", "--repository-path", str(repo)], env=env, check=True,
                   capture_output=True)
    argv = ["repo-docs", "search", "alpha", "--repo", "acme/a", "--mode", "fulltext", "--json"]
    proc = subprocess.run([sys.executable, "-c", probe, *argv], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert json.loads(proc.stderr.rsplit("STATE ", 1)[-1]) == [0, True, True], proc.stderr
    proc = subprocess.run([sys.executable, "-c", version], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.stderr.rsplit("MODS ", 1)[-1].strip() == "[False, False]", proc.stderr
