"""Build the relevance fixture: a small web-service repository ("shopfront") with realistic
history, and write ``queries.jsonl`` (next to this file) with the real commit hashes.

Usage::

    python benchmarks/relevance/build_fixture.py /tmp/shopfront            # build the repo
    python benchmarks/relevance/build_fixture.py /tmp/shopfront --write-queries
    python benchmarks/relevance/build_fixture.py --check-stable              # build twice, compare

Everything is deterministic: fixed author/committer identities and dates (env vars), an
isolated ``HOME`` with ``GIT_CONFIG_GLOBAL=/dev/null`` and ``GIT_CONFIG_NOSYSTEM=1``, and
``--no-ff`` merges with explicit messages, so the same script always yields the same hashes.

The query set (``QUERIES``) refers to commits by title; the builder resolves titles to hashes.
Paraphrased queries (``kind == "paraphrase"``) were written to avoid the words of the relevant
commit's title and body; ``lint_queries`` checks that with SQLite's own porter stemmer (the one
the FTS5 index uses) and warns on any shared non-stopword stem.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES_PATH = HERE / "queries.jsonl"

#: 2023-01-09T09:00:00Z. Commit n is dated BASE + n * STEP (+ a small per-commit offset).
BASE_TIME = 1_673_254_800
STEP = 86_400 + 3_600  # one day and an hour: dates spread over ~3 months

ALICE = ("Alice Moreau", "alice@shopfront.dev")
BOGDAN = ("Bogdan Nowak", "bogdan@shopfront.dev")
CHEN = ("Chen Wei", "chen@shopfront.dev")
DANA = ("Dana Okafor", "dana@shopfront.dev")
BOT = ("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com")


# --------------------------------------------------------------------------------------------
# history steps
# --------------------------------------------------------------------------------------------


@dataclass
class W:
    """Write a whole file."""

    path: str
    content: str


@dataclass
class R:
    """Replace ``old`` (must occur exactly once) with ``new`` in ``path``."""

    path: str
    old: str
    new: str


@dataclass
class A:
    """Append ``text`` to ``path``."""

    path: str
    text: str


@dataclass
class Del:
    path: str


@dataclass
class Commit:
    title: str
    body: str
    author: tuple[str, str]
    ops: list[W | R | A | Del] = field(default_factory=list)


@dataclass
class Branch:
    """``git checkout -b name`` from the current HEAD."""

    name: str


@dataclass
class Checkout:
    name: str


@dataclass
class Merge:
    branch: str
    title: str
    body: str
    author: tuple[str, str]


def _d(text: str) -> str:
    """Dedent a triple-quoted block and drop its leading newline."""
    import textwrap

    return textwrap.dedent(text).lstrip("\n")


# -- initial files ----------------------------------------------------------------------------

APP_PY = _d('''
    """Shopfront WSGI application."""


    class App:
        def __init__(self):
            self.routes = {}
            self.middleware = []

        def route(self, path):
            def register(handler):
                self.routes[path] = handler
                return handler

            return register

        def __call__(self, environ, start_response):
            handler = self.routes.get(environ["PATH_INFO"])
            if handler is None:
                start_response("404 Not Found", [("Content-Type", "text/plain")])
                return [b"not found"]
            status, headers, body = handler(environ)
            start_response(status, headers)
            return [body]


    def create_app():
        return App()
''')

README = _d('''
    # shopfront

    A small order-management web service: customers browse the catalogue, place orders and
    pay through an external provider; staff export orders for accounting.

    ## Running

        pip install -r requirements.txt
        python -m shopfront

    The service will recieve requests on port 8000 by default.
''')

PYPROJECT = _d('''
    [project]
    name = "shopfront"
    version = "0.1.0"
    requires-python = ">=3.10"

    [tool.pytest.ini_options]
    testpaths = ["tests"]
''')

SETTINGS_PY = _d('''
    """Settings: defaults, overridden by config/settings.toml, overridden by SHOPFRONT_* env."""

    import os
    import sys
    import tomllib
    from pathlib import Path

    DEFAULTS = {
        "debug": False,
        "database_url": "postgresql://localhost/shopfront",
        "secret_key": "change-me",
    }


    def load_settings(path="config/settings.toml"):
        settings = dict(DEFAULTS)
        file = Path(path)
        if file.exists():
            settings.update(tomllib.loads(file.read_text()))
        for key in settings:
            env = os.environ.get("SHOPFRONT_" + key.upper())
            if env is not None:
                settings[key] = env
        return settings
''')

SETTINGS_TOML = _d('''
    debug = true
    database_url = "postgresql://localhost/shopfront_dev"
''')

SESSION_PY = _d('''
    """Session handling: a signed session id in a cookie, data kept server-side."""

    import hmac
    import secrets

    COOKIE_NAME = "sf_session"


    class SessionStore:
        def __init__(self, secret_key):
            self.secret_key = secret_key.encode()
            self.sessions = {}

        def sign(self, session_id):
            mac = hmac.new(self.secret_key, session_id.encode(), "sha256").hexdigest()
            return f"{session_id}.{mac}"

        def unsign(self, value):
            session_id, _, mac = value.partition(".")
            if hmac.compare_digest(self.sign(session_id), value):
                return session_id
            return None

        def create(self, user_id):
            session_id = secrets.token_urlsafe(32)
            self.sessions[session_id] = {"user_id": user_id}
            return session_id

        def load(self, cookie_value):
            session_id = self.unsign(cookie_value) if cookie_value else None
            return self.sessions.get(session_id) if session_id else None


    def session_cookie_header(store, session_id):
        value = store.sign(session_id)
        return ("Set-Cookie", f"{COOKIE_NAME}={value}; Path=/; SameSite=None")
''')

PASSWORDS_PY = _d('''
    """Credential storage."""

    import bcrypt

    ROUNDS = 12


    def hash_password(plain):
        return bcrypt.hashpw(plain.encode(), bcrypt.gensalt(rounds=ROUNDS)).decode()


    def check_password(plain, hashed):
        return bcrypt.checkpw(plain.encode(), hashed.encode())
''')

POOL_PY = _d('''
    """A small PostgreSQL connection pool on top of psycopg2."""

    import queue

    import psycopg2

    POOL_SIZE = 5


    class Pool:
        def __init__(self, dsn, size=POOL_SIZE):
            self.dsn = dsn
            self.free = queue.Queue(maxsize=size)
            for _ in range(size):
                self.free.put(psycopg2.connect(dsn))

        def acquire(self, timeout=10):
            return self.free.get(timeout=timeout)

        def release(self, conn):
            self.free.put(conn)

        def execute(self, sql, params=()):
            conn = self.acquire()
            cur = conn.cursor()
            cur.execute(sql, params)
            rows = cur.fetchall()
            self.release(conn)
            return rows
''')

ORDERS_PY = _d('''
    """GET /orders: the orders of the signed-in customer."""

    import json


    def get_usr(environ):
        return environ.get("shopfront.user")


    def list_orders(environ, db):
        user = get_usr(environ)
        rows = db.execute(
            "SELECT id, created_at, total_cents, status FROM orders WHERE user_id = %s "
            "ORDER BY created_at DESC",
            (user["id"],),
        )
        items = [
            {"id": r[0], "created_at": r[1].isoformat(), "total_cents": r[2], "status": r[3]}
            for r in rows
        ]
        return "200 OK", [("Content-Type", "application/json")], json.dumps(items).encode()
''')

TEST_SESSION_PY = _d('''
    from shopfront.auth.session import SessionStore, session_cookie_header


    def test_sign_roundtrip():
        store = SessionStore("k")
        sid = store.create(user_id=7)
        assert store.unsign(store.sign(sid)) == sid


    def test_tampered_value_is_refused():
        store = SessionStore("k")
        sid = store.create(user_id=7)
        assert store.unsign(store.sign(sid) + "x") is None


    def test_header_name():
        store = SessionStore("k")
        name, value = session_cookie_header(store, store.create(user_id=1))
        assert name == "Set-Cookie"
        assert value.startswith("sf_session=")
''')

CI_YML = _d('''
    name: CI
    on: [push, pull_request]
    jobs:
      test:
        runs-on: ubuntu-latest
        steps:
          - uses: actions/checkout@v3
          - uses: actions/setup-python@v4
            with:
              python-version: "3.11"
          - run: pip install -r requirements.txt -r requirements-dev.txt
          - run: pytest -q
''')

LOGGING_PY = _d('''
    """Logging: one JSON object per line on stderr."""

    import json
    import logging
    import os
    import sys
    import time


    class JsonFormatter(logging.Formatter):
        def format(self, record):
            payload = {
                "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)),
                "level": record.levelname,
                "logger": record.name,
                "msg": record.getMessage(),
            }
            if record.exc_info:
                payload["exc"] = self.formatException(record.exc_info)
            return json.dumps(payload)


    def setup_logging(level="INFO"):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
        root = logging.getLogger()
        root.handlers[:] = [handler]
        root.setLevel(level)


    def log_request(environ, status, duration_ms):
        headers = {k: v for k, v in environ.items() if k.startswith("HTTP_")}
        logging.getLogger("shopfront.access").info(
            "%s %s %s %.1fms headers=%s",
            environ["REQUEST_METHOD"], environ["PATH_INFO"], status, duration_ms, headers,
        )
''')

HTTP_CLIENT_PY = _d('''
    """Client for the payment provider's REST API."""

    import requests

    BASE_URL = "https://api.paybridge.example/v2"


    class PaymentClient:
        def __init__(self, api_key, session=None):
            self.api_key = api_key
            self.session = session or requests.Session()

        def _post(self, path, payload):
            response = self.session.post(
                BASE_URL + path,
                json=payload,
                headers={"Authorization": f"Bearer {self.api_key}"},
            )
            response.raise_for_status()
            return response.json()

        def charge(self, order_id, amount_cents, card_token):
            return self._post(
                "/charges",
                {"reference": order_id, "amount": amount_cents, "source": card_token},
            )
''')

CACHE_PY = _d('''
    """A tiny in-process cache for rendered responses and lookups."""

    import os
    import time


    class Cache:
        def __init__(self):
            self._data = {}

        def get(self, key):
            entry = self._data.get(key)
            if entry is None:
                return None
            value, expires = entry
            if expires is not None and expires < time.monotonic():
                del self._data[key]
                return None
            return value

        def set(self, key, value, ttl=None):
            expires = time.monotonic() + ttl if ttl else None
            self._data[key] = (value, expires)

        def delete(self, key):
            self._data.pop(key, None)
''')

DEV_MD = _d('''
    # Local development

    1. Start PostgreSQL 15 (`docker compose up db`).
    2. Create a virtual environment and `pip install -r requirements.txt -r requirements-dev.txt`.
    3. Copy `config/settings.toml.example` to `config/settings.toml`.
    4. Run `python -m shopfront` and open http://localhost:8000.

    Run the tests with `pytest -q`.
''')

RATELIMIT_PY = _d('''
    """Token-bucket limiter applied to every request, keyed by client address."""

    import time

    RATE = 10  # tokens per second
    BURST = 20


    class TokenBucket:
        def __init__(self, rate=RATE, burst=BURST, clock=time.monotonic):
            self.rate = rate
            self.burst = burst
            self.clock = clock
            self.buckets = {}

        def allow(self, key):
            now = self.clock()
            tokens, last = self.buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1:
                self.buckets[key] = (tokens, now)
                return False
            self.buckets[key] = (tokens - 1, now)
            return True


    def ratelimit_middleware(app, bucket=None):
        bucket = bucket or TokenBucket()

        def wrapped(environ, start_response):
            key = environ.get("REMOTE_ADDR", "-")
            if not bucket.allow(key):
                start_response("429 Too Many Requests", [("Content-Type", "text/plain")])
                return [b"slow down"]
            return app(environ, start_response)

        return wrapped
''')

CSV_EXPORT_PY = _d('''
    """Export a customer's orders as CSV for accounting."""

    import csv
    import io

    COLUMNS = ["order_id", "customer", "created_at", "total", "status"]


    def export_orders(rows):
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow(
                [row["id"], row["customer"], row["created_at"].isoformat(),
                 f"{row['total_cents'] / 100:.2f}", row["status"]]
            )
        return buffer.getvalue()
''')

I18N_PY = _d('''
    """Message catalogues loaded from locales/<lang>.json."""

    import json
    from pathlib import Path

    LOCALES = Path(__file__).parent / "locales"
    _catalogues = {}


    def catalogue(lang):
        if lang not in _catalogues:
            _catalogues[lang] = json.loads((LOCALES / f"{lang}.json").read_text("utf-8"))
        return _catalogues[lang]


    def gettext(lang, key, **params):
        return catalogue(lang)[key].format(**params)


    def ngettext(lang, key, count):
        forms = catalogue(lang)[key]
        form = forms["one"] if count == 1 else forms["other"]
        return form.format(count=count)
''')

WORKER_PY = _d('''
    """Background worker: sends confirmation e-mails and builds exports off the request path."""

    import logging
    import queue
    import threading

    log = logging.getLogger(__name__)


    class Worker:
        def __init__(self):
            self.jobs = queue.Queue()
            self.results = []
            self.thread = threading.Thread(target=self.run, daemon=True)

        def submit(self, func, *args):
            self.jobs.put((func, args))

        def run(self):
            while True:
                func, args = self.jobs.get()
                try:
                    self.results.append((func.__name__, func(*args)))
                except Exception:
                    log.exception("job %s failed", func.__name__)
                finally:
                    self.jobs.task_done()
''')


def history() -> list[Commit | Branch | Checkout | Merge]:
    """The fixture's history, oldest first."""
    return [
        Commit("Initial project skeleton", "WSGI app object with a tiny router, README and "
               "packaging metadata.", ALICE, [
                   W("README.md", README), W("pyproject.toml", PYPROJECT),
                   W("src/shopfront/__init__.py", '__version__ = "0.1.0"\n'),
                   W("src/shopfront/app.py", APP_PY),
                   W(".gitignore", "__pycache__/\n*.pyc\n.venv/\nconfig/settings.toml\n"),
                   W("requirements.txt", "psycopg2-binary==2.9.5\nrequests==2.28.1\n"),
               ]),
        Commit("Add settings loader with environment overrides",
               "Settings come from built-in defaults, then config/settings.toml, then "
               "SHOPFRONT_* environment variables, so containers can be configured without "
               "editing files.", ALICE, [
                   W("src/shopfront/settings.py", SETTINGS_PY),
                   W("config/settings.toml.example", SETTINGS_TOML),
                   R("src/shopfront/app.py", '"""Shopfront WSGI application."""\n',
                     '"""Shopfront WSGI application."""\n\nfrom shopfront.settings import '
                     'load_settings\n'),
                   R("src/shopfront/app.py", "    def __init__(self):\n",
                     "    def __init__(self, settings):\n        self.settings = settings\n"),
                   R("src/shopfront/app.py", "def create_app():\n    return App()\n",
                     "def create_app(settings=None):\n    return App(settings or "
                     "load_settings())\n"),
               ]),
        Commit("Add signed session cookies for signed-in customers",
               "Sessions are kept server-side; the client only holds a random id signed with "
               "HMAC-SHA256 so it cannot be forged.", BOGDAN, [
                   W("src/shopfront/auth/__init__.py", ""),
                   W("src/shopfront/auth/session.py", SESSION_PY),
               ]),
        Commit("Add password hashing with bcrypt",
               "Cost factor 12, about 250 ms per check on the production instances.", BOGDAN, [
                   W("src/shopfront/auth/passwords.py", PASSWORDS_PY),
                   A("requirements.txt", "bcrypt==4.0.1\n"),
               ]),
        Commit("Add Postgres connection pool",
               "A fixed-size queue of psycopg2 connections shared by all request threads.",
               CHEN, [W("src/shopfront/db/__init__.py", "from .pool import Pool\n"),
                      W("src/shopfront/db/pool.py", POOL_PY)]),
        Commit("Add orders API endpoint", "GET /orders returns the signed-in customer's orders "
               "as JSON, newest first.", CHEN, [
                   W("src/shopfront/api/__init__.py", ""),
                   W("src/shopfront/api/orders.py", ORDERS_PY),
               ]),
        Commit("Add unit tests for session signing", "", BOGDAN, [
            W("tests/test_session.py", TEST_SESSION_PY),
            W("requirements-dev.txt", "pytest==7.2.0\npytest-cov==4.0.0\n"),
        ]),
        Commit("Set up GitHub Actions workflow", "Run the test suite on every push and pull "
               "request.", DANA, [W(".github/workflows/ci.yml", CI_YML)]),
        Commit("Add structured JSON logging", "One JSON object per line so the log shipper can "
               "parse fields without regexes. Access lines carry method, path, status and "
               "duration.", DANA, [W("src/shopfront/logging_setup.py", LOGGING_PY)]),
        Commit("Add PayBridge payment client", "Thin wrapper over the PayBridge v2 REST API; "
               "only charges for now.", ALICE, [W("src/shopfront/payments/__init__.py", ""),
                                                W("src/shopfront/payments/client.py",
                                                  HTTP_CLIENT_PY)]),
        Commit("Add in-process response cache", "Simple dict with optional TTL. Good enough for "
               "a single instance; we can swap the backend later.", CHEN,
               [W("src/shopfront/cache.py", CACHE_PY)]),
        Commit("Document local development setup", "", DANA, [W("docs/development.md", DEV_MD)]),
        Commit("fix SameSite default",
               "Chrome 80 and later treat SameSite=None without the Secure attribute as "
               "invalid. Default to Lax, and add Secure unless running in debug mode.", BOGDAN, [
                   R("src/shopfront/auth/session.py",
                     'def session_cookie_header(store, session_id):\n'
                     '    value = store.sign(session_id)\n'
                     '    return ("Set-Cookie", f"{COOKIE_NAME}={value}; Path=/; SameSite=None")\n',
                     'def session_cookie_header(store, session_id, secure=True, same_site="Lax"):\n'
                     '    value = store.sign(session_id)\n'
                     '    attrs = [f"{COOKIE_NAME}={value}", "Path=/", f"SameSite={same_site}"]\n'
                     '    if secure or same_site == "None":\n'
                     '        attrs.append("Secure")\n'
                     '    return ("Set-Cookie", "; ".join(attrs))\n'),
                   A("tests/test_session.py", _d('''


                       def test_default_is_lax_and_secure():
                           store = SessionStore("k")
                           _, value = session_cookie_header(store, store.create(user_id=1))
                           assert "SameSite=Lax" in value
                           assert "Secure" in value
                   ''')),
               ]),
        Commit("Add request rate limiter middleware",
               "Token bucket per client address: 10 requests per second with bursts of 20. "
               "Over the limit we answer 429.", DANA, [W("src/shopfront/ratelimit.py",
                                                         RATELIMIT_PY)]),
        Commit("Paginate orders listing", "Customers with years of history got thousands of "
               "rows in one response. Accept page and per_page query parameters, default 25.",
               CHEN, [
                   R("src/shopfront/api/orders.py", "import json\n",
                     "import json\nfrom urllib.parse import parse_qs\n\nPER_PAGE = 25\n"),
                   R("src/shopfront/api/orders.py",
                     '    user = get_usr(environ)\n',
                     '    user = get_usr(environ)\n'
                     '    qs = parse_qs(environ.get("QUERY_STRING", ""))\n'
                     '    page = int(qs.get("page", ["1"])[0])\n'
                     '    per_page = min(int(qs.get("per_page", [PER_PAGE])[0]), 100)\n'),
                   R("src/shopfront/api/orders.py",
                     '        "ORDER BY created_at DESC",\n        (user["id"],),\n',
                     '        "ORDER BY created_at DESC LIMIT %s OFFSET %s",\n'
                     '        (user["id"], per_page, page * per_page),\n'),
               ]),
        Branch("feature/csv-export"),
        Commit("Add CSV export of orders", "Accounting asked for a file they can import into "
               "their bookkeeping tool. One row per order.", ALICE, [
                   W("src/shopfront/export/__init__.py", ""),
                   W("src/shopfront/export/csv_export.py", CSV_EXPORT_PY),
               ]),
        Commit("Stream CSV export row by row",
               "Exporting a year of orders for a large merchant built a 400 MB string and the "
               "container was OOM-killed. Yield each line as it is written instead.", ALICE, [
                   R("src/shopfront/export/csv_export.py",
                     'def export_orders(rows):\n'
                     '    buffer = io.StringIO()\n'
                     '    writer = csv.writer(buffer)\n'
                     '    writer.writerow(COLUMNS)\n'
                     '    for row in rows:\n',
                     'class _Line:\n'
                     '    def write(self, text):\n'
                     '        return text\n\n\n'
                     'def export_orders(rows):\n'
                     '    writer = csv.writer(_Line())\n'
                     '    yield writer.writerow(COLUMNS)\n'
                     '    for row in rows:\n'),
                   R("src/shopfront/export/csv_export.py",
                     '        writer.writerow(\n', '        yield writer.writerow(\n'),
                   R("src/shopfront/export/csv_export.py",
                     '        )\n    return buffer.getvalue()\n',
                     '        )\n'),
                   R("src/shopfront/export/csv_export.py", "import csv\nimport io\n",
                     "import csv\n"),
               ]),
        Commit("Add tests for CSV export", "", ALICE, [
            W("tests/test_csv_export.py", _d('''
                import datetime

                from shopfront.export.csv_export import export_orders

                ROW = {"id": 1, "customer": "Zoë", "total_cents": 1250, "status": "paid",
                       "created_at": datetime.datetime(2023, 3, 1, 12, 0)}


                def test_header_and_row():
                    lines = list(export_orders([ROW]))
                    assert lines[0].startswith("order_id,customer")
                    assert lines[1].startswith("1,Zoë,2023-03-01")
            ''')),
        ]),
        Checkout("main"),
        Commit("Bump requests from 2.28.1 to 2.31.0",
               "Bumps [requests](https://github.com/psf/requests) from 2.28.1 to 2.31.0.\n\n"
               "Release notes: https://github.com/psf/requests/releases/tag/v2.31.0", BOT, [
                   R("requirements.txt", "requests==2.28.1\n", "requests==2.31.0\n"),
               ]),
        Merge("feature/csv-export", "Merge branch 'feature/csv-export'",
              "CSV export of orders for accounting.", ALICE),
        Commit("Fix typo in README", "", DANA, [
            R("README.md", "will recieve requests", "will receive requests"),
        ]),
        Commit("Retry payment calls with exponential backoff",
               "PayBridge drops a few connections during their deploys. Retry idempotent "
               "calls up to 3 times (0.5 s, 1 s, 2 s) using an idempotency key so a charge is "
               "never made twice.", ALICE, [
                   R("src/shopfront/payments/client.py", "import requests\n",
                     "import time\nimport uuid\n\nimport requests\n\nRETRIES = 3\n"),
                   R("src/shopfront/payments/client.py",
                     '    def _post(self, path, payload):\n'
                     '        response = self.session.post(\n'
                     '            BASE_URL + path,\n'
                     '            json=payload,\n'
                     '            headers={"Authorization": f"Bearer {self.api_key}"},\n'
                     '        )\n',
                     '    def _post(self, path, payload):\n'
                     '        key = str(uuid.uuid4())\n'
                     '        for attempt in range(RETRIES + 1):\n'
                     '            try:\n'
                     '                response = self.session.post(\n'
                     '                    BASE_URL + path,\n'
                     '                    json=payload,\n'
                     '                    headers={"Authorization": f"Bearer {self.api_key}",\n'
                     '                             "Idempotency-Key": key},\n'
                     '                )\n'
                     '                break\n'
                     '            except requests.ConnectionError:\n'
                     '                if attempt == RETRIES:\n'
                     '                    raise\n'
                     '                time.sleep(0.5 * 2**attempt)\n'),
               ]),
        Commit("Set explicit timeouts on PayBridge requests",
               "requests has no default timeout, so a stalled TCP connection to PayBridge kept "
               "a worker thread blocked indefinitely and the checkout page spun until the "
               "load balancer gave up. Connect timeout 3.05 s, read timeout 10 s.", ALICE, [
                   R("src/shopfront/payments/client.py", "RETRIES = 3\n",
                     "RETRIES = 3\nTIMEOUT = (3.05, 10)  # (connect, read) seconds\n"),
                   R("src/shopfront/payments/client.py",
                     '                             "Idempotency-Key": key},\n'
                     '                )\n',
                     '                             "Idempotency-Key": key},\n'
                     '                    timeout=TIMEOUT,\n'
                     '                )\n'),
                   R("src/shopfront/payments/client.py",
                     "            except requests.ConnectionError:\n",
                     "            except (requests.ConnectionError, requests.Timeout):\n"),
               ]),
        Commit("Add German and French translations", "Message catalogues under "
               "src/shopfront/locales; strings looked up with gettext(lang, key).", CHEN, [
                   W("src/shopfront/i18n.py", I18N_PY),
                   W("src/shopfront/locales/en.json", json.dumps({
                       "cart.title": "Your basket",
                       "cart.items": {"one": "{count} item", "other": "{count} items"},
                       "checkout.pay": "Pay now"}, indent=2, ensure_ascii=False) + "\n"),
                   W("src/shopfront/locales/de.json", json.dumps({
                       "cart.title": "Ihr Warenkorp",
                       "cart.items": {"one": "{count} Artikel", "other": "{count} Artikel"},
                       "checkout.pay": "Jetzt bezahlen"}, indent=2, ensure_ascii=False) + "\n"),
                   W("src/shopfront/locales/fr.json", json.dumps({
                       "cart.title": "Votre panier",
                       "cart.items": {"one": "{count} article", "other": "{count} articles"},
                       "checkout.pay": "Payer maintenant"}, indent=2, ensure_ascii=False) + "\n"),
               ]),
        Commit("Add Polish locale", "", CHEN, [
            W("src/shopfront/locales/pl.json", json.dumps({
                "cart.title": "Twój koszyk",
                "cart.items": {"one": "{count} produkt", "other": "{count} produkty"},
                "checkout.pay": "Zapłać teraz"}, indent=2, ensure_ascii=False) + "\n"),
        ]),
        Commit("Fix item counts in Polish",
               "Polish has three forms (1 produkt, 2-4 produkty, 5+ produktów) and our "
               "one/other scheme showed '5 produkty'. Use CLDR categories one/few/many.",
               BOGDAN, [
                   R("src/shopfront/i18n.py",
                     '    forms = catalogue(lang)[key]\n'
                     '    form = forms["one"] if count == 1 else forms["other"]\n',
                     '    forms = catalogue(lang)[key]\n'
                     '    form = forms.get(plural_category(lang, count), forms["other"])\n'),
                   A("src/shopfront/i18n.py", _d('''


                       def plural_category(lang, n):
                           if lang == "pl":
                               if n == 1:
                                   return "one"
                               if n % 10 in (2, 3, 4) and n % 100 not in (12, 13, 14):
                                   return "few"
                               return "many"
                           return "one" if n == 1 else "other"
                   ''')),
                   R("src/shopfront/locales/pl.json", '"other": "{count} produkty"',
                     '"few": "{count} produkty", "many": "{count} produktów", '
                     '"other": "{count} produktu"'),
               ]),
        Commit("Cache catalogue lookups for five minutes",
               "Product pages did three identical SELECTs per view. Keep the product row "
               "around for 300 s.", CHEN, [
                   W("src/shopfront/catalogue.py", _d('''
                       """Product catalogue."""

                       from shopfront.cache import Cache

                       PRODUCT_TTL = 300
                       cache = Cache()


                       def get_product(db, product_id):
                           key = f"product:{product_id}"
                           product = cache.get(key)
                           if product is None:
                               product = db.execute(
                                   "SELECT id, name, price_cents FROM products WHERE id = %s",
                                   (product_id,),
                               )[0]
                               cache.set(key, product, ttl=PRODUCT_TTL)
                           return product
                   ''')),
               ]),
        Commit("Invalidate cached product after a price change",
               "Staff changed a price and customers kept seeing the old one for up to five "
               "minutes.", CHEN, [
                   A("src/shopfront/catalogue.py", _d('''


                       def set_price(db, product_id, price_cents):
                           db.execute(
                               "UPDATE products SET price_cents = %s WHERE id = %s",
                               (price_cents, product_id),
                           )
                           cache.delete(f"product:{product_id}")
                   ''')),
               ]),
        Branch("fix/db-pool"),
        Commit("Release connections back to the pool on exceptions",
               "execute() only returned the connection after a successful fetch. Any SQL error "
               "leaked one connection, and after five errors every request waited for "
               "acquire() until it timed out. Use try/finally and roll back the failed "
               "transaction first.", CHEN, [
                   R("src/shopfront/db/pool.py",
                     '        conn = self.acquire()\n'
                     '        cur = conn.cursor()\n'
                     '        cur.execute(sql, params)\n'
                     '        rows = cur.fetchall()\n'
                     '        self.release(conn)\n'
                     '        return rows\n',
                     '        conn = self.acquire()\n'
                     '        try:\n'
                     '            with conn.cursor() as cur:\n'
                     '                cur.execute(sql, params)\n'
                     '                rows = cur.fetchall() if cur.description else []\n'
                     '            conn.commit()\n'
                     '            return rows\n'
                     '        except Exception:\n'
                     '            conn.rollback()\n'
                     '            raise\n'
                     '        finally:\n'
                     '            self.release(conn)\n'),
               ]),
        Commit("Raise pool size and add overflow setting",
               "Pool size now comes from settings (default 10) with up to 5 overflow "
               "connections opened on demand and closed on release.", CHEN, [
                   R("src/shopfront/db/pool.py", "POOL_SIZE = 5\n",
                     "POOL_SIZE = 10\nMAX_OVERFLOW = 5\n"),
                   R("src/shopfront/db/pool.py",
                     '    def __init__(self, dsn, size=POOL_SIZE):\n'
                     '        self.dsn = dsn\n',
                     '    def __init__(self, dsn, size=POOL_SIZE, max_overflow=MAX_OVERFLOW):\n'
                     '        self.dsn = dsn\n'
                     '        self.max_overflow = max_overflow\n'
                     '        self.overflow = 0\n'),
                   R("src/shopfront/db/pool.py",
                     '    def acquire(self, timeout=10):\n'
                     '        return self.free.get(timeout=timeout)\n',
                     '    def acquire(self, timeout=10):\n'
                     '        try:\n'
                     '            return self.free.get_nowait()\n'
                     '        except queue.Empty:\n'
                     '            if self.overflow < self.max_overflow:\n'
                     '                self.overflow += 1\n'
                     '                return psycopg2.connect(self.dsn)\n'
                     '        return self.free.get(timeout=timeout)\n'),
                   R("src/shopfront/db/pool.py",
                     '    def release(self, conn):\n'
                     '        self.free.put(conn)\n',
                     '    def release(self, conn):\n'
                     '        try:\n'
                     '            self.free.put_nowait(conn)\n'
                     '        except queue.Full:\n'
                     '            self.overflow -= 1\n'
                     '            conn.close()\n'),
                   A("config/settings.toml.example", "pool_size = 10\npool_max_overflow = 5\n"),
               ]),
        Checkout("main"),
        Commit("Add background job worker", "Confirmation e-mails and large exports run on a "
               "worker thread so requests return quickly.", DANA,
               [W("src/shopfront/worker.py", WORKER_PY)]),
        Merge("fix/db-pool", "Merge branch 'fix/db-pool'", "Pool fixes: release on error, "
              "configurable size with overflow.", CHEN),
        Commit("Fix memory leak in background worker",
               "Worker.results kept the return value of every job ever run, including whole "
               "export files, so resident memory grew by ~1 GB a day. Nothing reads it: keep "
               "only the last 100 outcomes.", DANA, [
                   R("src/shopfront/worker.py", "import threading\n",
                     "import threading\nfrom collections import deque\n"),
                   R("src/shopfront/worker.py", "        self.results = []\n",
                     "        self.results = deque(maxlen=100)\n"),
                   R("src/shopfront/worker.py",
                     "                self.results.append((func.__name__, func(*args)))\n",
                     "                func(*args)\n"
                     "                self.results.append((func.__name__, \"ok\"))\n"),
               ]),
        Commit("Redact Authorization headers in request logs",
               "The access log dumped every HTTP_* header, including bearer credentials and "
               "the session id. Mask Authorization and Cookie before formatting.", BOGDAN, [
                   R("src/shopfront/logging_setup.py", "import time\n",
                     'import time\n\nREDACTED = {"HTTP_AUTHORIZATION", "HTTP_COOKIE"}\n'),
                   R("src/shopfront/logging_setup.py",
                     '    headers = {k: v for k, v in environ.items() if k.startswith("HTTP_")}\n',
                     '    headers = {\n'
                     '        k: ("***" if k in REDACTED else v)\n'
                     '        for k, v in environ.items()\n'
                     '        if k.startswith("HTTP_")\n'
                     '    }\n'),
               ]),
        Commit("Lower health check access lines to DEBUG",
               "The load balancer probes /healthz twice a second per instance; those lines "
               "were 90% of our log volume.", DANA, [
                   R("src/shopfront/logging_setup.py",
                     '    logging.getLogger("shopfront.access").info(\n',
                     '    level = logging.DEBUG if environ["PATH_INFO"] == "/healthz" '
                     'else logging.INFO\n'
                     '    logging.getLogger("shopfront.access").log(\n'
                     '        level,\n'),
               ]),
        Commit("Add health check endpoint", "GET /healthz answers 200 when the database "
               "answers SELECT 1 within a second.", DANA, [
                   A("src/shopfront/app.py", _d('''


                       def healthz(environ, pool):
                           try:
                               pool.execute("SELECT 1")
                           except Exception:
                               return "503 Service Unavailable", [], b"db down"
                           return "200 OK", [("Content-Type", "text/plain")], b"ok"
                   ''')),
               ]),
        Commit("Rate limit by API token instead of address",
               "Office customers share one NAT address and were limited together. Key the "
               "bucket on the bearer credential when present, else on the address.", DANA, [
                   R("src/shopfront/ratelimit.py",
                     '        key = environ.get("REMOTE_ADDR", "-")\n',
                     '        auth = environ.get("HTTP_AUTHORIZATION", "")\n'
                     '        key = auth.removeprefix("Bearer ") or '
                     'environ.get("REMOTE_ADDR", "-")\n'),
               ]),
        Commit("Return Retry-After header when rate limited",
               "Well-behaved API clients back off for the advertised number of seconds.",
               DANA, [
                   R("src/shopfront/ratelimit.py",
                     '        if not bucket.allow(key):\n'
                     '            start_response("429 Too Many Requests", '
                     '[("Content-Type", "text/plain")])\n',
                     '        if not bucket.allow(key):\n'
                     '            wait = max(1, round(1 / bucket.rate))\n'
                     '            start_response(\n'
                     '                "429 Too Many Requests",\n'
                     '                [("Content-Type", "text/plain"), '
                     '("Retry-After", str(wait))],\n'
                     '            )\n'),
               ]),
        Commit("Cache pip downloads in CI", "Cuts about 90 s from every run.", DANA, [
            R(".github/workflows/ci.yml",
              '          python-version: "3.11"\n',
              '          python-version: "3.11"\n'
              '          cache: pip\n'
              '          cache-dependency-path: |\n'
              '            requirements.txt\n'
              '            requirements-dev.txt\n'),
        ]),
        Commit("Test on Python 3.10, 3.11 and 3.12", "", DANA, [
            R(".github/workflows/ci.yml", "    runs-on: ubuntu-latest\n",
              "    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n"
              '        python: ["3.10", "3.11", "3.12"]\n'),
            R(".github/workflows/ci.yml", '          python-version: "3.11"\n',
              "          python-version: ${{ matrix.python }}\n"),
        ]),
        Commit("Bump cryptography from 41.0.2 to 41.0.4",
               "Bumps [cryptography](https://github.com/pyca/cryptography) from 41.0.2 to "
               "41.0.4. Fixes CVE-2023-38325 (SSH certificate parsing).", BOT, [
                   A("requirements.txt", "cryptography==41.0.4\n"),
               ]),
        Commit("Move order serialization into its own module",
               "No behaviour change. orders.py only does HTTP now; the dict building lives in "
               "api/serializers.py so the CSV export can reuse it.", ALICE, [
                   W("src/shopfront/api/serializers.py", _d('''
                       def order_to_dict(row):
                           return {
                               "id": row[0],
                               "created_at": row[1].isoformat(),
                               "total_cents": row[2],
                               "status": row[3],
                           }
                   ''')),
                   R("src/shopfront/api/orders.py", "from urllib.parse import parse_qs\n",
                     "from urllib.parse import parse_qs\n\n"
                     "from shopfront.api.serializers import order_to_dict\n"),
                   R("src/shopfront/api/orders.py",
                     '    items = [\n'
                     '        {"id": r[0], "created_at": r[1].isoformat(), "total_cents": r[2], '
                     '"status": r[3]}\n'
                     '        for r in rows\n'
                     '    ]\n',
                     '    items = [order_to_dict(r) for r in rows]\n'),
               ]),
        Commit("Rename get_usr to get_user", "", BOGDAN, [
            R("src/shopfront/api/orders.py", "def get_usr(environ):", "def get_user(environ):"),
            R("src/shopfront/api/orders.py", "    user = get_usr(environ)\n",
              "    user = get_user(environ)\n"),
        ]),
        Commit("Fix off-by-one in orders pagination",
               "OFFSET was page * per_page with 1-based pages, so ?page=1 started at row 25 "
               "and the newest 25 rows were never shown.", CHEN, [
                   R("src/shopfront/api/orders.py", '(user["id"], per_page, page * per_page),',
                     '(user["id"], per_page, (max(page, 1) - 1) * per_page),'),
               ]),
        Commit("Escape formula cells in CSV export",
               "A customer name starting with '=', '+', '-' or '@' is evaluated by Excel and "
               "LibreOffice when the file is opened (CSV injection). Prefix such cells with a "
               "single quote.", BOGDAN, [
                   R("src/shopfront/export/csv_export.py",
                     'COLUMNS = ["order_id", "customer", "created_at", "total", "status"]\n',
                     'COLUMNS = ["order_id", "customer", "created_at", "total", "status"]\n'
                     'DANGEROUS = ("=", "+", "-", "@", "\\t", "\\r")\n\n\n'
                     'def safe(value):\n'
                     '    text = str(value)\n'
                     '    return "\'" + text if text.startswith(DANGEROUS) else text\n'),
                   R("src/shopfront/export/csv_export.py", '[row["id"], row["customer"],',
                     '[row["id"], safe(row["customer"]),'),
               ]),
        Commit("Write UTF-8 BOM so Excel detects the encoding",
               "Without a byte order mark Excel on Windows reads the file as cp1252 and "
               "'Zoë' shows up as 'ZoÃ«'.", ALICE, [
                   R("src/shopfront/export/csv_export.py",
                     '    writer = csv.writer(_Line())\n    yield writer.writerow(COLUMNS)\n',
                     '    writer = csv.writer(_Line())\n'
                     '    yield "\\ufeff" + writer.writerow(COLUMNS)\n'),
                   R("tests/test_csv_export.py", 'assert lines[0].startswith("order_id,customer")',
                     'assert lines[0].startswith("\\ufefforder_id,customer")'),
               ]),
        Commit("Convert order timestamps to UTC in export",
               "created_at came out in the server's local zone (Europe/Warsaw) without an "
               "offset; accounting compared it with PayBridge reports that are in UTC.", ALICE, [
                   R("src/shopfront/export/csv_export.py", "import csv\n",
                     "import csv\nimport datetime\n"),
                   R("src/shopfront/export/csv_export.py", "row[\"created_at\"].isoformat()",
                     "row[\"created_at\"].astimezone(datetime.timezone.utc).isoformat()"),
               ]),
        Commit("Document rate limiting configuration", "", DANA, [
            W("docs/ratelimit.md", _d('''
                # Rate limiting

                Every request passes through a token bucket (`shopfront.ratelimit`).

                | setting | default | meaning |
                |---------|---------|---------|
                | `RATE`  | 10      | tokens added per second |
                | `BURST` | 20      | bucket capacity |

                Requests carrying a bearer credential are counted per credential; others per
                client address. Over the limit the service answers `429` with `Retry-After`.
            ''')),
        ]),
        Commit("Add architecture overview", "", ALICE, [
            W("docs/architecture.md", _d('''
                # Architecture

                - `app.py`: WSGI entry point and router.
                - `auth/`: sessions and credentials.
                - `api/`: JSON endpoints (orders).
                - `db/pool.py`: PostgreSQL connections.
                - `payments/`: PayBridge client.
                - `export/`: CSV files for accounting.
                - `worker.py`: background jobs.

                Requests flow: rate limiter -> session -> handler -> pool.
            ''')),
        ]),
        Commit("Rotate session id on sign-in",
               "Session fixation: an id set before authentication stayed valid afterwards. "
               "Issue a fresh id when the user authenticates and drop the old one.", BOGDAN, [
                   A("src/shopfront/auth/session.py", _d('''


                       def rotate(store, old_session_id, user_id):
                           store.sessions.pop(old_session_id, None)
                           return store.create(user_id)
                   ''')),
               ]),
        Commit("Expire remember-me tokens after 30 days", "", BOGDAN, [
            R("src/shopfront/auth/session.py", 'COOKIE_NAME = "sf_session"\n',
              'COOKIE_NAME = "sf_session"\nREMEMBER_ME_DAYS = 30\n'),
            R("src/shopfront/auth/session.py",
              '        self.sessions[session_id] = {"user_id": user_id}\n',
              '        self.sessions[session_id] = {"user_id": user_id, '
              '"expires": time.time() + REMEMBER_ME_DAYS * 86400}\n'),
            R("src/shopfront/auth/session.py", "import secrets\n", "import secrets\nimport time\n"),
        ]),
        Commit("Mark session cookie HttpOnly",
               "document.cookie could see sf_session, so any XSS would hand over the "
               "session.", BOGDAN, [
                   R("src/shopfront/auth/session.py",
                     'attrs = [f"{COOKIE_NAME}={value}", "Path=/", f"SameSite={same_site}"]',
                     'attrs = [f"{COOKIE_NAME}={value}", "Path=/", "HttpOnly", '
                     'f"SameSite={same_site}"]'),
               ]),
        Commit("Add Redis backend for the cache",
               "Needed once we run more than one instance: set SHOPFRONT_CACHE_URL to use it.",
               CHEN, [
                   A("src/shopfront/cache.py", _d('''


                       class RedisCache:
                           def __init__(self, url):
                               import redis

                               self.client = redis.Redis.from_url(url)

                           def get(self, key):
                               raw = self.client.get(key)
                               return None if raw is None else pickle.loads(raw)

                           def set(self, key, value, ttl=None):
                               self.client.set(key, pickle.dumps(value), ex=ttl)

                           def delete(self, key):
                               self.client.delete(key)
                   ''')),
                   R("src/shopfront/cache.py", "import time\n", "import pickle\nimport time\n"),
                   A("requirements.txt", "redis==4.6.0\n"),
               ]),
        Commit("Fix cache stampede on product expiry",
               "When a popular product entry expired, hundreds of concurrent requests all "
               "missed and ran the same SELECT at once. Only one request recomputes; the "
               "others wait on a per-key lock.", CHEN, [
                   R("src/shopfront/catalogue.py", "from shopfront.cache import Cache\n",
                     "import threading\nfrom collections import defaultdict\n\n"
                     "from shopfront.cache import Cache\n"),
                   R("src/shopfront/catalogue.py", "cache = Cache()\n",
                     "cache = Cache()\n_locks = defaultdict(threading.Lock)\n"),
                   R("src/shopfront/catalogue.py",
                     '    product = cache.get(key)\n'
                     '    if product is None:\n'
                     '        product = db.execute(\n',
                     '    product = cache.get(key)\n'
                     '    if product is not None:\n'
                     '        return product\n'
                     '    with _locks[key]:\n'
                     '        product = cache.get(key)\n'
                     '        if product is not None:\n'
                     '            return product\n'
                     '        product = db.execute(\n'),
               ]),
        Commit("Translate checkout error messages", "", CHEN, [
            R("src/shopfront/locales/en.json", '  "checkout.pay": "Pay now"\n',
              '  "checkout.pay": "Pay now",\n  "checkout.declined": "Your card was declined."\n'),
            R("src/shopfront/locales/de.json", '  "checkout.pay": "Jetzt bezahlen"\n',
              '  "checkout.pay": "Jetzt bezahlen",\n'
              '  "checkout.declined": "Ihre Karte wurde abgelehnt."\n'),
            R("src/shopfront/locales/fr.json", '  "checkout.pay": "Payer maintenant"\n',
              '  "checkout.pay": "Payer maintenant",\n'
              '  "checkout.declined": "Votre carte a été refusée."\n'),
        ]),
        Commit("Fall back to English for missing translation keys",
               "Polish lacks checkout.declined, and the page raised KeyError -> 500.", BOGDAN, [
                   R("src/shopfront/i18n.py",
                     "def gettext(lang, key, **params):\n"
                     "    return catalogue(lang)[key].format(**params)\n",
                     "def gettext(lang, key, **params):\n"
                     "    text = catalogue(lang).get(key)\n"
                     "    if text is None:\n"
                     "        text = catalogue(\"en\").get(key, key)\n"
                     "    return text.format(**params)\n"),
               ]),
        Commit("Close idle database connections after 5 minutes",
               "The cloud NAT silently forgets TCP flows idle for more than 350 s; the next "
               "query on such a connection failed with 'server closed the connection "
               "unexpectedly'. Recycle connections idle longer than 300 s.", CHEN, [
                   R("src/shopfront/db/pool.py", "POOL_SIZE = 10\n",
                     "POOL_SIZE = 10\nIDLE_RECYCLE_S = 300\n"),
                   R("src/shopfront/db/pool.py", "import queue\n", "import queue\nimport time\n"),
                   R("src/shopfront/db/pool.py",
                     '        try:\n'
                     '            return self.free.get_nowait()\n',
                     '        try:\n'
                     '            conn, idle_since = self.free.get_nowait()\n'
                     '            if time.monotonic() - idle_since > IDLE_RECYCLE_S:\n'
                     '                conn.close()\n'
                     '                conn = psycopg2.connect(self.dsn)\n'
                     '            return conn\n'),
                   R("src/shopfront/db/pool.py", "            self.free.put_nowait(conn)\n",
                     "            self.free.put_nowait((conn, time.monotonic()))\n"),
               ]),
        Commit("Log slow SQL over 500 ms",
               "Warn with the statement text and elapsed time so we can find candidates for "
               "an index.", CHEN, [
                   R("src/shopfront/db/pool.py", "import queue\n",
                     "import logging\nimport queue\n"),
                   R("src/shopfront/db/pool.py", "IDLE_RECYCLE_S = 300\n",
                     "IDLE_RECYCLE_S = 300\nSLOW_MS = 500\nlog = logging.getLogger(__name__)\n"),
                   R("src/shopfront/db/pool.py",
                     '            with conn.cursor() as cur:\n'
                     '                cur.execute(sql, params)\n',
                     '            with conn.cursor() as cur:\n'
                     '                started = time.monotonic()\n'
                     '                cur.execute(sql, params)\n'
                     '                elapsed_ms = (time.monotonic() - started) * 1000\n'
                     '                if elapsed_ms > SLOW_MS:\n'
                     '                    log.warning("slow sql %.0f ms: %s", elapsed_ms, sql)\n'),
               ]),
        Commit("Fix flaky rate limiter test",
               "test_burst_then_refill slept 0.1 s and failed on loaded CI runners. Inject a "
               "fake monotonic source instead of sleeping.", DANA, [
                   W("tests/test_ratelimit.py", _d('''
                       from shopfront.ratelimit import TokenBucket


                       class FakeClock:
                           def __init__(self):
                               self.now = 0.0

                           def __call__(self):
                               return self.now


                       def test_burst_then_refill():
                           clock = FakeClock()
                           bucket = TokenBucket(rate=10, burst=2, clock=clock)
                           assert bucket.allow("a") and bucket.allow("a")
                           assert not bucket.allow("a")
                           clock.now += 0.1
                           assert bucket.allow("a")
                   ''')),
               ]),
        Commit("Update contributing guide", "Describe branch naming, commit message style and "
               "the review checklist.", ALICE, [
                   W("docs/CONTRIBUTING.md", _d('''
                       # Contributing

                       - Branch from `main` as `feature/<topic>` or `fix/<topic>`.
                       - Commit titles in the imperative, under 60 characters.
                       - Every change needs a test; run `pytest -q` before pushing.
                       - One approval is required; the author merges.
                   ''')),
               ]),
        Commit("Bump pytest to 7.4.2 and pytest-cov to 4.1.0", "", BOT, [
            R("requirements-dev.txt", "pytest==7.2.0\npytest-cov==4.0.0\n",
              "pytest==7.4.2\npytest-cov==4.1.0\n"),
        ]),
        Commit("Remove unused imports", "Found by ruff F401.", DANA, [
            R("src/shopfront/settings.py", "import os\nimport sys\n", "import os\n"),
            R("src/shopfront/logging_setup.py", "import logging\nimport os\n",
              "import logging\n"),
            R("src/shopfront/cache.py", "import os\nimport pickle\n", "import pickle\n"),
            W("src/shopfront/export/__init__.py", '"""CSV exports."""\n'),
        ]),
        Commit("Attach a request id to every log line",
               "Read X-Request-ID from the load balancer (or generate one) and add it to each "
               "JSON record via a contextvar.", DANA, [
                   R("src/shopfront/logging_setup.py", "import json\n",
                     "import contextvars\nimport json\n"),
                   R("src/shopfront/logging_setup.py", "import time\n",
                     'import time\nimport uuid\n\nrequest_id = contextvars.ContextVar('
                     '"request_id", default="-")\n'),
                   R("src/shopfront/logging_setup.py", '            "msg": record.getMessage(),\n',
                     '            "msg": record.getMessage(),\n'
                     '            "request_id": request_id.get(),\n'),
                   A("src/shopfront/logging_setup.py", _d('''


                       def bind_request_id(environ):
                           rid = environ.get("HTTP_X_REQUEST_ID") or uuid.uuid4().hex
                           request_id.set(rid)
                           return rid
                   ''')),
               ]),
        Commit("Add circuit breaker around PayBridge",
               "After 5 consecutive failures stop calling PayBridge for 30 s and fail fast "
               "with a friendly error, instead of piling up threads on a provider that is "
               "down.", ALICE, [
                   W("src/shopfront/payments/breaker.py", _d('''
                       import time


                       class CircuitOpen(Exception):
                           pass


                       class CircuitBreaker:
                           def __init__(self, threshold=5, reset_after=30.0, clock=time.monotonic):
                               self.threshold = threshold
                               self.reset_after = reset_after
                               self.clock = clock
                               self.failures = 0
                               self.opened_at = None

                           def call(self, func, *args, **kwargs):
                               if self.opened_at is not None:
                                   if self.clock() - self.opened_at < self.reset_after:
                                       raise CircuitOpen()
                                   self.opened_at = None
                               try:
                                   result = func(*args, **kwargs)
                               except Exception:
                                   self.failures += 1
                                   if self.failures >= self.threshold:
                                       self.opened_at = self.clock()
                                   raise
                               self.failures = 0
                               return result
                   ''')),
               ]),
        Commit("Fix typo in German translation", "", CHEN, [
            R("src/shopfront/locales/de.json", "Ihr Warenkorp", "Ihr Warenkorb"),
        ]),
        Commit("Add API reference for the orders endpoint", "", ALICE, [
            W("docs/api.md", _d('''
                # API

                ## GET /orders

                Query parameters: `page` (1-based, default 1), `per_page` (default 25, max 100).

                Response: a JSON array of `{id, created_at, total_cents, status}`, newest first.
                Errors: `401` without a session, `429` when rate limited (see `Retry-After`).
            ''')),
        ]),
    ]


# --------------------------------------------------------------------------------------------
# queries (written before any search was run; see README.md)
# --------------------------------------------------------------------------------------------

#: (query, relevant commit titles, kind, files_glob, after, before)
QUERIES: list[tuple[str, list[str], str, str | None, str | None, str | None]] = [
    # -- paraphrases: describe the symptom or intent without the commit's own words --------
    ("cookies were rejected by browsers after an update", ["fix SameSite default"],
     "paraphrase", None, None, None),
    ("the purchase screen hung forever waiting on the card processor",
     ["Set explicit timeouts on PayBridge requests"], "paraphrase", None, None, None),
    ("database ran out of available handles after a few broken queries under load",
     ["Release connections back to the pool on exceptions"], "paraphrase", None, None, None),
    ("RAM usage of the task runner kept climbing for weeks",
     ["Fix memory leak in background worker"], "paraphrase", None, None, None),
    ("API keys visible in plain text in the server output",
     ["Redact Authorization headers in request logs"], "paraphrase", None, None, None),
    ("tell throttled callers how long to wait before trying again",
     ["Return Retry-After header when rate limited"], "paraphrase", None, None, None),
    ("speed up the build pipeline by reusing fetched packages",
     ["Cache pip downloads in CI"], "paraphrase", None, None, None),
    ("patch a security hole in an encryption library dependency",
     ["Bump cryptography from 41.0.2 to 41.0.4"], "paraphrase", None, None, None),
    ("the first batch of entries in a list view was always skipped",
     ["Fix off-by-one in orders pagination"], "paraphrase", None, None, None),
    ("a malicious value could run code when accountants load the report into a spreadsheet",
     ["Escape formula cells in CSV export"], "paraphrase", None, None, None),
    ("accented customer names looked garbled in the downloaded spreadsheet",
     ["Write UTF-8 BOM so Excel detects the encoding"], "paraphrase", None, None, None),
    ("attacker could plant an identifier before login and take over the account",
     ["Rotate session id on sign-in"], "paraphrase", None, None, None),
    ("javascript on the page was able to read the login token",
     ["Mark session cookie HttpOnly"], "paraphrase", None, None, None),
    ("thundering herd hitting the database when a hot item times out of memory",
     ["Fix cache stampede on product expiry"], "paraphrase", None, None, None),
    ("untranslated labels crashed the screen instead of showing the default language",
     ["Fall back to English for missing translation keys"], "paraphrase", None, None, None),
    ("postgres sockets dropped by the network after sitting unused",
     ["Close idle database connections after 5 minutes"], "paraphrase", None, None, None),
    ("which database calls take too long",
     ["Log slow SQL over 500 ms"], "paraphrase", None, None, None),
    ("intermittent failure in the throttling suite caused by timing",
     ["Fix flaky rate limiter test"], "paraphrase", None, None, None),
    ("correlate all the diagnostics emitted while serving one call",
     ["Attach a request id to every log line"], "paraphrase", None, None, None),
    ("give the card processor a rest while it is broken",
     ["Add circuit breaker around PayBridge"], "paraphrase", None, None, None),
    ("wrong grammatical number for quantities in a slavic language",
     ["Fix item counts in Polish"], "paraphrase", None, None, None),
    ("protect the service from anyone sending too many calls",
     ["Add request rate limiter middleware", "Rate limit by API token instead of address"],
     "paraphrase", None, None, None),
    ("big report downloads made the server run out of RAM",
     ["Stream CSV export row by row"], "paraphrase", None, None, None),
    ("store user credentials with a slow one-way function",
     ["Add password hashing with bcrypt"], "paraphrase", None, None, None),
    ("shoppers were shown an outdated cost after an admin edited it",
     ["Invalidate cached product after a price change"], "paraphrase", None, None, None),
    # paraphrases with filters
    ("dates in the downloaded file were off by a few hours",
     ["Convert order timestamps to UTC in export"], "paraphrase",
     "src/shopfront/export/**", None, None),
    ("speed up the build pipeline",
     ["Cache pip downloads in CI", "Test on Python 3.10, 3.11 and 3.12"], "paraphrase",
     ".github/**", None, None),
    ("protect the service from anyone sending too many calls",
     ["Add request rate limiter middleware"], "paraphrase", None, None, "2023-01-26"),
    # -- keyword queries: identifiers, file names, exact terms --------------------------------
    ("SameSite", ["fix SameSite default"], "keyword", None, None, None),
    ("bcrypt", ["Add password hashing with bcrypt"], "keyword", None, None, None),
    ("Retry-After", ["Return Retry-After header when rate limited"], "keyword", None, None, None),
    ("CVE-2023-38325", ["Bump cryptography from 41.0.2 to 41.0.4"], "keyword", None, None, None),
    ("get_usr", ["Rename get_usr to get_user"], "keyword", None, None, None),
    ("HttpOnly", ["Mark session cookie HttpOnly"], "keyword", None, None, None),
    ("cache stampede", ["Fix cache stampede on product expiry"], "keyword", None, None, None),
    ("pytest-cov", ["Bump pytest to 7.4.2 and pytest-cov to 4.1.0"], "keyword", None, None, None),
    ("Warenkorb", ["Fix typo in German translation"], "keyword", None, None, None),
    ("MAX_OVERFLOW", ["Raise pool size and add overflow setting"], "keyword", None, None, None),
    ("circuit breaker", ["Add circuit breaker around PayBridge"], "keyword", None, None, None),
    ("memory leak worker", ["Fix memory leak in background worker"], "keyword", None, None, None),
    ("csv_export.py", ["Add CSV export of orders", "Stream CSV export row by row",
                       "Escape formula cells in CSV export",
                       "Write UTF-8 BOM so Excel detects the encoding",
                       "Convert order timestamps to UTC in export"], "keyword",
     "src/shopfront/export/*.py", None, None),
    ("typo", ["Fix typo in German translation"], "keyword", None, "2023-02-15", None),
    ("typo", ["Fix typo in README"], "keyword", None, None, "2023-02-15"),
    ("Idempotency-Key", ["Retry payment calls with exponential backoff"], "keyword",
     None, None, None),
]

# Words too common to count as "sharing a word" with a commit.
_STOPWORD_TEXT = """
a an and are as at be been before by can could for from had has have in into is it its of on
or our the their them then there these this to was were when while with without after all
any each how instead kept same so than that what which who why will would not no up out one
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


# --------------------------------------------------------------------------------------------
# building
# --------------------------------------------------------------------------------------------


def _clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C", TZ="UTC")
    return env


def _git(repo: Path, env: dict[str, str], *args: str, when: int | None = None,
         who: tuple[str, str] | None = None) -> str:
    env = dict(env)
    if when is not None:
        date = f"@{when} +0000"
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    if who is not None:
        env.update(GIT_AUTHOR_NAME=who[0], GIT_AUTHOR_EMAIL=who[1],
                   GIT_COMMITTER_NAME=who[0], GIT_COMMITTER_EMAIL=who[1])
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def _apply(repo: Path, op: W | R | A | Del) -> None:
    target = repo / op.path
    if isinstance(op, W):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(op.content, encoding="utf-8")
    elif isinstance(op, A):
        with target.open("a", encoding="utf-8") as fh:
            fh.write(op.text)
    elif isinstance(op, R):
        text = target.read_text(encoding="utf-8")
        if text.count(op.old) != 1:
            raise ValueError(f"{op.path}: expected exactly one {op.old!r}, "
                             f"found {text.count(op.old)}")
        target.write_text(text.replace(op.old, op.new), encoding="utf-8")
    elif isinstance(op, Del):
        target.unlink()


def build(repo: Path) -> dict[str, str]:
    """Create the fixture repository at ``repo`` (must not exist or be empty).

    Returns {commit title: full hash}. Titles are unique by construction (checked).
    """
    repo.mkdir(parents=True, exist_ok=True)
    if any(repo.iterdir()):
        raise FileExistsError(f"{repo} is not empty")
    with tempfile.TemporaryDirectory(prefix="gq-fixture-home-") as home:
        env = _clean_env(Path(home))
        _git(repo, env, "init", "-q", "-b", "main")
        _git(repo, env, "config", "commit.gpgsign", "false")
        _git(repo, env, "config", "core.autocrlf", "false")
        hashes: dict[str, str] = {}
        n = 0
        for step in history():
            if isinstance(step, Branch):
                _git(repo, env, "checkout", "-q", "-b", step.name)
                continue
            if isinstance(step, Checkout):
                _git(repo, env, "checkout", "-q", step.name)
                continue
            n += 1
            when = BASE_TIME + n * STEP + (n * 617) % 3_000
            if isinstance(step, Merge):
                message = f"{step.title}\n\n{step.body}" if step.body else step.title
                _git(repo, env, "merge", "-q", "--no-ff", "-m", message, step.branch,
                     when=when, who=step.author)
            else:
                for op in step.ops:
                    _apply(repo, op)
                _git(repo, env, "add", "-A")
                message = f"{step.title}\n\n{step.body}" if step.body else step.title
                _git(repo, env, "commit", "-q", "-m", message, when=when, who=step.author)
            if step.title in hashes:
                raise ValueError(f"duplicate title {step.title!r}")
            hashes[step.title] = _git(repo, env, "rev-parse", "HEAD")
        return hashes


def commit_texts() -> dict[str, str]:
    """{title: title + body} for every commit and merge."""
    return {s.title: f"{s.title}\n{s.body}" for s in history()
            if isinstance(s, Commit | Merge)}


def _stems(conn: sqlite3.Connection, text: str) -> set[str]:
    """Porter stems of ``text`` as FTS5 (``porter unicode61``) produces them."""
    conn.execute("DELETE FROM t")
    conn.execute("INSERT INTO t (x) VALUES (?)", (text,))
    return {r[0] for r in conn.execute("SELECT term FROM v")}


def lint_queries() -> list[str]:
    """Warnings: unknown titles, and paraphrases sharing a non-stopword stem with the title
    or body of a relevant commit (what BM25 over title/message would match on)."""
    texts = commit_texts()
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, row)")
    stop = {s for w in STOPWORDS for s in _stems(conn, w)}
    warnings = []
    for query, titles, kind, *_ in QUERIES:
        for title in titles:
            if title not in texts:
                warnings.append(f"unknown title {title!r} in query {query!r}")
                continue
            if kind != "paraphrase":
                continue
            shared = (_stems(conn, query) & _stems(conn, texts[title])) - stop
            if shared:
                warnings.append(f"paraphrase {query!r} shares {sorted(shared)} with {title!r}")
    return warnings


def query_records(hashes: dict[str, str]) -> list[dict[str, object]]:
    records = []
    for query, titles, kind, glob, after, before in QUERIES:
        records.append({
            "query": query,
            "relevant": [hashes[t] for t in titles],
            "files_glob": glob,
            "after": after,
            "before": before,
            "kind": kind,
            "relevant_titles": titles,
        })
    return records


def write_queries(hashes: dict[str, str], path: Path = QUERIES_PATH) -> None:
    lines = [json.dumps(r, ensure_ascii=False) for r in query_records(hashes)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def check_stable() -> dict[str, str]:
    """Build twice in two temporary directories; raise unless the hashes are identical."""
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        first = build(Path(a) / "shopfront")
        second = build(Path(b) / "shopfront")
    if first != second:
        diff = [t for t in first if first[t] != second.get(t)]
        raise AssertionError(f"hashes differ between builds: {diff[:5]}")
    return first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, help="where to create the repository")
    parser.add_argument("--write-queries", action="store_true",
                        help=f"(re)write {QUERIES_PATH.name} with the built hashes")
    parser.add_argument("--check-stable", action="store_true",
                        help="build twice in temp dirs and compare hashes")
    args = parser.parse_args(argv)
    for w in lint_queries():
        print(f"warning: {w}", file=sys.stderr)
    if args.check_stable:
        hashes = check_stable()
        print(f"stable: {len(hashes)} commits, identical hashes in two builds", file=sys.stderr)
    elif args.path is not None:
        hashes = build(args.path)
        print(f"built {args.path}: {len(hashes)} commits", file=sys.stderr)
    else:
        parser.error("give a PATH or --check-stable")
    if args.write_queries:
        write_queries(hashes)
        print(f"wrote {QUERIES_PATH} ({len(QUERIES)} queries)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
