"""Fixtures for the web page tests: one isolated user, one daemon (in this process, on its
own thread: the real ``Daemon`` with its job store, runner, coordinator and IPC socket), one
web server it serves, one Chromium (Debian's, driven by Playwright), for the whole package.

The daemon runs in-process so the tests can register embedding providers it uses (the
deterministic fake, a slow one for live progress, a failing one) through the real provider
registry, as a plugin would. Everything else is real: git repositories with dated commits,
SQLite indexes built by the daemon's own jobs, the private registry, HTTP over TCP.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from testkit import GitRepo

from .fixture_data import COMMITS, DOC_FILES, GRAPH_DOCS, GRAPH_YAML, many_docs

CHROMIUM = os.environ.get("GITQUARRY_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

CONFIG = """
[daemon]
debounce_s = 0.3
reconcile_s = 3600
poll_s = 1.0
lease_wait_s = 1.0
retry_base_s = 3600
retry_max_s = 3600
socket_check_s = 1.0

[embedding]
provider = "{provider}"
batch_size = {batch}
"""


def git(cwd: Path, *args: str, date: str | None = None) -> str:
    env = dict(os.environ)
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {proc.stderr.decode()}")
    return proc.stdout.decode().strip()


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def make_repo(path: Path, files: dict[str, str], message: str = "docs") -> Path:
    """A new repository at ``path`` with one commit of ``files`` (the shared builder)."""
    path.mkdir(parents=True)
    GitRepo(path, identity=False).commit(files, message, date="2024-03-01T12:00:00Z")
    return path


# -- embedding providers for the tests (registered like plugins) ------------------------------

def _providers() -> list[Any]:
    from gitquarry.embedding.fake import FAKE_PROVIDER, HashingEmbedder
    from gitquarry.embedding.registry import EmbedderProvider
    from gitquarry.errors import EmbeddingError

    class Slow(HashingEmbedder):
        provider = "slowfake"

        def _embed_batch(self, texts: list[str]) -> np.ndarray:
            time.sleep(0.4)
            return super()._embed_batch(texts)

    class Failing(HashingEmbedder):
        provider = "failing"

        def _embed_batch(self, texts: list[str]) -> np.ndarray:
            raise EmbeddingError("the embedding server refused the batch (test provider)")

    return [
        FAKE_PROVIDER,
        EmbedderProvider(name="slowfake", factory=lambda cfg: Slow(),
                         data_boundary="local_process", description="slow test provider"),
        EmbedderProvider(name="failing", factory=lambda cfg: Failing(),
                         data_boundary="local_process", description="failing test provider"),
    ]


@dataclass
class WebEnv:
    """The running daemon and web page, and what the tests need to know about them."""

    daemon: Any
    base: str
    config_path: Path
    private_roots: list[str]
    selectors: dict[str, dict[str, Any]] = field(default_factory=dict)
    workspace_ref: str = ""
    commits: list[str] = field(default_factory=list)

    def set_config(self, provider: str = "fake", batch: int = 8) -> None:
        self.config_path.write_text(CONFIG.format(provider=provider, batch=batch),
                                    encoding="utf-8")

    def login_url(self) -> str:
        return str(self.daemon.web.login()["login_url"])

    def docs_url(self, name: str, **extra: Any) -> str:
        from urllib.parse import urlencode

        s = self.selectors[name]
        query = {"repo": s["repo_id"], "reg": s["registration_id"],
                 "src": s["source_registration_id"],
                 "gen": s["source_registration_generation"], **extra}
        return f"{self.base}repos/docs?{urlencode(query)}"

    def wait_jobs_idle(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            active = self.daemon.state.list_jobs(statuses=("queued", "running"), limit=10)
            if not active and self.daemon.runner.current is None:
                return
            time.sleep(0.1)
        raise AssertionError("daemon jobs did not finish")


@pytest.fixture(scope="package")
def web_env() -> Iterator[WebEnv]:
    from gitquarry.config import load_config
    from gitquarry.embedding.registry import register_provider, unregister_provider
    from gitquarry.errors import EmbeddingError, IndexCancelledError
    from gitquarry.repo_docs.api import RepoDocsService
    from gitquarry.repo_docs.registry import Registry, Selector
    from gitquarry.service.daemon import Daemon
    from gitquarry.web import WebService

    mp = pytest.MonkeyPatch()
    top = Path(tempfile.mkdtemp(prefix="gqweb"))
    home = top / "home"
    home.mkdir()
    gitconfig = home / ".gitconfig"
    # a long e-mail address (issue 24: one made the History page wider than a 390 px phone)
    gitconfig.write_text("[init]\n\tdefaultBranch = main\n[user]\n\tname = Ada Lovelace\n"
                         "\temail = ada.lovelace.countess.of.lovelace.analytical.engine.notes"
                         "@translations.example.com\n"
                         "[commit]\n\tgpgsign = false\n[gc]\n"
                         "\tauto = 0\n", encoding="utf-8")
    config_path = home / "gitquarry.toml"
    for key, value in {"HOME": str(home), "XDG_STATE_HOME": str(top / "state"),
                       "XDG_RUNTIME_DIR": str(top / "run"), "XDG_CONFIG_HOME": str(home / "c"),
                       "GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1",
                       "GITQUARRY_CONFIG": str(config_path)}.items():
        mp.setenv(key, value)
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GITQUARRY_DEBUG",
                "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        mp.delenv(key, raising=False)
    (top / "run").mkdir(mode=0o700)
    providers = _providers()
    for p in providers:
        register_provider(p, replace=True)
    env = WebEnv(daemon=None, base="", config_path=config_path,
                 private_roots=[str(top), os.path.realpath(str(top))])
    env.set_config()
    daemon = None
    thread = None
    try:
        # the workspace: one repository with dated commits, a graph and its docs
        ws = top / "workspace"
        app_repo = ws / "app"
        app = GitRepo(app_repo, identity=False)
        for date, files, title, body in COMMITS:
            env.commits.append(app.commit(files, f"{title}\n\n{body}", date=date))
        write(ws, {".beadloom/_graph/graph.yml": GRAPH_YAML, **GRAPH_DOCS})

        daemon = Daemon(load_config(None).daemon, web=WebService)
        ready = threading.Event()
        thread = threading.Thread(target=daemon.run, kwargs={"on_ready": ready.set},
                                  name="test-daemon", daemon=True)
        thread.start()
        assert ready.wait(30), "the daemon did not start"
        env.daemon = daemon
        watched = daemon.op_watch({"path": str(ws)})
        env.workspace_ref = watched["workspace_ref"]
        env.wait_jobs_idle()
        # registered after the daemon's start-up reconcile (which would index them all)
        # documentation repositories, one per Documentation-tab state
        repos = top / "repos"
        registry = Registry()
        config = load_config(None)
        service = RepoDocsService(config, registry)

        def register(name: str, path: Path) -> dict[str, Any]:
            public = registry.register(f"demo/{name}", path).public()
            env.selectors[name] = public
            return public

        def sel(name: str) -> Selector:
            s = env.selectors[name]
            return Selector(s["repo_id"], s["registration_id"], s["source_registration_id"],
                            s["source_registration_generation"])

        register("ready", make_repo(repos / "ready", DOC_FILES))
        service.index(sel("ready"))
        register("noset", make_repo(repos / "noset", DOC_FILES))
        register("partial", make_repo(repos / "partial", {**DOC_FILES, **many_docs(12)}))
        embedded = {"batches": 0}

        def count_batches(event: Any) -> None:
            if event.phase == "embed" and event.done:
                embedded["batches"] += 1

        with contextlib.suppress(IndexCancelledError):  # a partial set
            service.index(sel("partial"), progress=count_batches,
                          should_cancel=lambda: embedded["batches"] >= 1)
        failed = make_repo(repos / "failed", DOC_FILES)
        register("failed", failed)
        service.index(sel("failed"))
        write(failed, {"docs/deploy.md": DOC_FILES["docs/deploy.md"] + "\n## Later\n\nMore.\n"})
        git(failed, "commit", "-qam", "more docs", date="2024-04-01T12:00:00Z")
        failing_config = load_config(None).replaced(embedding={"provider": "failing"})
        with RepoDocsService(failing_config, registry) as failing, \
                pytest.raises(EmbeddingError):
            failing.index(sel("failed"))
        stale = make_repo(repos / "stale", DOC_FILES)
        register("stale", stale)
        s = env.selectors["stale"]
        registry.rebind(s["repo_id"], s["registration_id"], 1, stale)
        register("badpolicy", make_repo(repos / "badpolicy", {
            **DOC_FILES, ".gitquarry.yaml": "repository_docs:\n  schema: 2\n"}))
        overlay = make_repo(repos / "overlay", DOC_FILES)
        register("overlay", overlay)
        write(overlay, {"docs/deploy.md": DOC_FILES["docs/deploy.md"] + "\nLocal edit one.\n"})
        service.index(sel("overlay"), include_worktree=True)
        write(overlay, {"docs/deploy.md": DOC_FILES["docs/deploy.md"] + "\nLocal edit two.\n"})
        register("slow", make_repo(repos / "slow", {**DOC_FILES, **many_docs(40)}))
        service.close()

        info = daemon.op_web_start({})
        env.base = info["url"]
        yield env
    finally:
        if daemon is not None:
            daemon.stop()
        if thread is not None:
            thread.join(timeout=30)
        for p in providers:
            unregister_provider(p.name)
        mp.undo()
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="package")
def browser(web_env: WebEnv) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium; "
                    ".ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class Console:
    """Console errors and failed requests of one page (asserted empty by the tests)."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def attach(self, page: Any) -> None:
        page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))


@pytest.fixture
def page_factory(browser: Any, web_env: WebEnv) -> Iterator[Any]:
    """``new(width=1280, dark=False, login=True)`` -> (page, console) in a fresh context."""
    contexts: list[Any] = []

    def new(width: int = 1280, *, dark: bool = False, login: bool = True,
            permissions: list[str] | None = None) -> tuple[Any, Console]:
        context = browser.new_context(
            viewport={"width": width, "height": 900},
            color_scheme="dark" if dark else "light",
            permissions=permissions or [],
        )
        contexts.append(context)
        page = context.new_page()
        console = Console()
        console.attach(page)
        if login:
            page.goto(web_env.login_url())
            assert page.url.rstrip("/") == web_env.base.rstrip("/"), page.url
        return page, console

    yield new
    for context in contexts:
        context.close()
