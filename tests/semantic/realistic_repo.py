"""A small, realistic web-app history for the real-model tests (12 commits)."""

from __future__ import annotations

from .conftest import GitRepo

SAMESITE_TITLE = "Fix SameSite default"

COOKIE_SETTINGS_V1 = '''\
"""Session cookie settings."""

SESSION_COOKIE_NAME = "sid"
SESSION_COOKIE_SECURE = False
SESSION_COOKIE_HTTPONLY = True


def cookie_options():
    return {
        "httponly": SESSION_COOKIE_HTTPONLY,
        "secure": SESSION_COOKIE_SECURE,
        "samesite": "None",
    }
'''

COOKIE_SETTINGS_V2 = COOKIE_SETTINGS_V1.replace('"samesite": "None"', '"samesite": "Lax"')

COMMITS: list[tuple[str, dict[str, str]]] = [
    ("Initial project layout", {
        "README.md": "# shopfront\n\nA small web shop.\n",
        "app/__init__.py": "",
        "pyproject.toml": '[project]\nname = "shopfront"\nversion = "0.1.0"\n',
    }),
    ("Add session cookie settings", {"app/settings/cookies.py": COOKIE_SETTINGS_V1}),
    ("Add product listing page with pagination", {
        "app/views/products.py": (
            "PAGE_SIZE = 20\n\n\ndef list_products(db, page=1):\n"
            "    offset = (page - 1) * PAGE_SIZE\n"
            "    return db.query('SELECT * FROM products LIMIT ? OFFSET ?', PAGE_SIZE, offset)\n"
        ),
    }),
    ("Use connection pooling for PostgreSQL", {
        "app/db.py": (
            "import psycopg_pool\n\n"
            "POOL = psycopg_pool.ConnectionPool(min_size=2, max_size=10)\n"
        ),
    }),
    ("Translate checkout page into German", {
        "app/locale/de/checkout.po": 'msgid "Pay now"\nmsgstr "Jetzt bezahlen"\n',
    }),
    ("Bump dependencies", {
        "pyproject.toml": '[project]\nname = "shopfront"\nversion = "0.1.0"\n'
                          'dependencies = ["flask>=3.0", "psycopg[pool]>=3.1"]\n',
    }),
    ("Add CSV export of orders for accounting", {
        "app/reports/export.py": (
            "import csv\n\n\ndef export_orders(orders, handle):\n"
            "    writer = csv.writer(handle)\n"
            "    for order in orders:\n        writer.writerow([order.id, order.total])\n"
        ),
    }),
    (SAMESITE_TITLE + "\n\nChrome and Safari now reject cookies marked SameSite=None unless "
     "they are also Secure, so users were logged out after every request. Default to Lax.", {
        "app/settings/cookies.py": COOKIE_SETTINGS_V2,
    }),
    ("Speed up image thumbnails with a disk cache", {
        "app/media/thumbs.py": "CACHE_DIR = '/var/cache/thumbs'\nMAX_SIDE = 256\n",
    }),
    ("Fix off-by-one in invoice numbering", {
        "app/billing/invoice.py": "def next_number(last):\n    return last + 1\n",
    }),
    ("Document deployment with Docker Compose", {
        "docs/deploy.md": "# Deploy\n\nRun `docker compose up -d` on the server.\n",
    }),
    ("Add unit tests for the shopping cart totals", {
        "tests/test_cart.py": "def test_total():\n    assert sum([1, 2]) == 3\n",
    }),
]


def build_shop_repo(repo: GitRepo) -> dict[str, str]:
    """Commit the history; returns {title: hash}."""
    return {message.split("\n")[0]: repo.commit(message, files) for message, files in COMMITS}
