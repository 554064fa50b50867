"""The ``database_url`` fixture: a fresh, empty database for each storage test (DESIGN D6).

Every test that asks for ``database_url`` runs twice:

- ``[sqlite]``: the embedded default, a new SQLite file in the test's ``tmp_path``;
- ``[postgresql]``: a new database, created for the test on the PostgreSQL server
  named by ``DOCSHELF_TEST_DATABASE_URL`` and dropped afterwards. Without that
  variable the variant is skipped with the reason printed (``-ra``); ``.ci/run``
  starts a throwaway server and sets it (``deploy/test-postgres.sh``).

``DOCSHELF_TEST_DATABASE_URL`` is an SQLAlchemy URL of a role allowed to create
databases, e.g. ``postgresql+psycopg://postgres:secret@127.0.0.1:5432/postgres``;
its database is only used to create and drop the per-test ones. If the variable
is set but the server cannot be reached, the tests fail: a configured database
that silently skips would hide exactly the bugs it is there to find.

A test that checks something only SQLite has (pragmas, the file itself) is marked
``@pytest.mark.sqlite_only``: its PostgreSQL variant is deselected.

Registered for the whole suite in ``tests/conftest.py`` with
``pytest_plugins = ["tests.support.databases"]``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import URL, make_url

TEST_DATABASE_ENV = "DOCSHELF_TEST_DATABASE_URL"
BACKENDS = ("sqlite", "postgresql")


def sqlite_url(tmp_path: Path) -> str:
    """The file the default settings use for ``data_dir=tmp_path / "data"``.

    Tests may open that file directly (``sqlite3``) or restart a runtime on the same
    data dir and expect the same index, so the SQLite variant keeps the default place.
    """
    return f"sqlite:///{tmp_path / 'data' / 'docshelf.db'}"


def postgres_server_url() -> URL | None:
    """The server from ``DOCSHELF_TEST_DATABASE_URL``, or None when it is unset or empty."""
    raw = os.environ.get(TEST_DATABASE_ENV, "").strip()
    if not raw:
        return None
    url = make_url(raw)
    if url.get_backend_name() != "postgresql":
        raise pytest.UsageError(
            f"{TEST_DATABASE_ENV} must be a postgresql URL, not {url.get_backend_name()}"
        )
    return url


def skip_reason() -> str:
    return f"PostgreSQL tests need a server: {TEST_DATABASE_ENV} is not set (.ci/run starts one)"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "sqlite_only: the test checks SQLite itself; its database_url is never PostgreSQL",
    )


class PostgresServer:
    """An admin connection to the test server that creates and drops per-test databases."""

    def __init__(self, url: URL) -> None:
        self.url = url
        self.engine: Engine = create_engine(url, isolation_level="AUTOCOMMIT", pool_pre_ping=True)
        try:
            with self.engine.connect() as connection:
                self.version = str(connection.exec_driver_sql("show server_version").scalar())
        except Exception as exc:
            self.engine.dispose()
            raise RuntimeError(
                f"{TEST_DATABASE_ENV} is set but the server cannot be reached "
                f"({url.render_as_string(hide_password=True)}): {exc}"
            ) from exc

    def create(self, **options: str) -> URL:
        """A new empty database; ``options`` go to ``CREATE DATABASE`` (e.g. LC_COLLATE)."""
        name = f"docshelf_test_{uuid.uuid4().hex[:16]}"
        clause = " ".join(f"{key} '{value}'" for key, value in options.items())
        template = " TEMPLATE template0" if options else ""
        with self.engine.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"{template} {clause}'.rstrip())
        return self.url.set(database=name)

    def drop(self, url: URL) -> None:
        with self.engine.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)')

    def close(self) -> None:
        self.engine.dispose()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The PostgreSQL test server; skips (with the reason) when none is configured."""
    url = postgres_server_url()
    if url is None:
        pytest.skip(skip_reason())
    server = PostgresServer(url)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test only, dropped afterwards."""
    url = postgres_server.create()
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        postgres_server.drop(url)


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database for this test: SQLite in ``tmp_path``, then PostgreSQL."""
    if request.param == "sqlite":
        yield sqlite_url(tmp_path)
        return
    yield request.getfixturevalue("postgres_url")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the PostgreSQL variant of ``sqlite_only`` tests instead of listing it as skipped."""
    kept = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        if (
            callspec is not None
            and callspec.params.get("database_url") == "postgresql"
            and item.get_closest_marker("sqlite_only") is not None
        ):
            config.hook.pytest_deselected(items=[item])
            continue
        kept.append(item)
    items[:] = kept
