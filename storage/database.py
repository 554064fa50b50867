"""Engine and session set-up, and schema upgrades through Alembic.

SQLite is the embedded default. Every SQLite connection gets WAL journaling (so
readers never block the indexer's writes), a busy timeout, and foreign keys on.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import ExecutionContext, make_url
from sqlalchemy.orm import Session, sessionmaker

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
_REVISION = re.compile(r'^(down_)?revision\s*=\s*"([^"]*)"', re.MULTILINE)
SQLITE_BUSY_TIMEOUT_MS = 10_000
SQLITE_POOL_SIZE = 20


def _configure_sqlite(dbapi_connection: object, _record: object) -> None:
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def create_db_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite files get their folder created and the pragmas above."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        # Enough pooled connections for every request thread that may query at once: past
        # the pool, SQLAlchemy opens a connection (four PRAGMAs) per checkout and closes it
        # after, which at 32 clients was a twentieth of the serving time (issue 13).
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False},
            pool_size=SQLITE_POOL_SIZE,
            max_overflow=SQLITE_POOL_SIZE,
        )
        event.listen(engine, "connect", _configure_sqlite)
        return engine
    return create_engine(url, pool_pre_ping=True)


def alembic_config(engine: Engine) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["engine"] = engine
    return config


def head_revision() -> str:
    """The newest migration's id: the one no other migration names as its parent."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in (MIGRATIONS_DIR / "versions").glob("*.py"):
        for down, value in _REVISION.findall(script.read_text()):
            (parents if down else revisions).add(value)
    (head,) = revisions - parents
    return head


def revisions(engine: Engine) -> list[str]:
    """The migrations the database says it is at: none for an empty one."""
    if not inspect(engine).has_table("alembic_version"):
        return []
    with engine.connect() as connection:
        current = connection.execute(text("SELECT version_num FROM alembic_version")).scalars()
        return list(current)


def upgrade_schema(engine: Engine) -> None:
    """Bring the schema to the newest migration (run by the server and ``docshelf index``).

    Alembic (with Mako and Pygments behind it) takes a few hundred milliseconds to
    import; a warm start with an up-to-date schema skips it, so the first list
    is answered sooner. Alembic logs each plugin it loads and each migration it runs
    at INFO, a dozen lines at a first start: one line says what happened instead, and
    Alembic's own lines are kept for ``--log-level debug``.
    """
    before, head = revisions(engine), head_revision()
    if before == [head]:
        return
    alembic_log = logging.getLogger("alembic")
    level = alembic_log.level
    if not log.isEnabledFor(logging.DEBUG):
        alembic_log.setLevel(logging.WARNING)
    try:
        from alembic import command

        command.upgrade(alembic_config(engine), "head")
    finally:
        alembic_log.setLevel(level)
    log.info("database upgraded to %s (was %s)", head, ", ".join(before) or "empty")


#: How often a write that met rows another process sharing the database wrote meanwhile (a
#: duplicate key: both catalogued the same file, or built the same format) is tried in all.
RACE_ATTEMPTS = 3

# A statement that may change rows or schema (a CTE may, too: counted as one).
_WRITES = re.compile(r"\s*(INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|WITH)\b", re.IGNORECASE)
# The tables the catalog is read from: a write elsewhere (sessions, jobs, the change log)
# leaves what the catalog cache holds true, and a session started by every new client
# must not empty it (issue 13: each bench round started cold).
_CATALOG_TABLES = re.compile(r"\b(documents|representations)\b", re.IGNORECASE)


class Database:
    """The engine plus a session factory; the one way storage code talks to the database.

    ``generation`` counts this process's commits that wrote to the catalog; a cache of
    what the database says (:class:`storage.catalog.Catalog`) keeps an entry only
    while the generation it was read under is current. It moves twice per
    writing commit, before and after: a read that overlaps the commit sees it move
    and is not cached, whichever side of the commit its query fell on.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = create_db_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._generations = itertools.count(1)
        self.generation = 0
        self._committed = threading.local()  # whether this thread's last commit wrote
        event.listen(self.engine, "before_cursor_execute", self._note_write)
        event.listen(self.engine, "commit", self._committing)
        event.listen(self.engine, "rollback", self._rolled_back)

    def bump(self) -> None:
        """Say the database changed (a commit here, or a change another process announced)."""
        self.generation = next(self._generations)  # atomic, unlike += from several threads

    def _note_write(
        self,
        conn: Connection,
        _cursor: object,
        statement: str,
        _parameters: object,
        context: ExecutionContext | None,
        *_: object,
    ) -> None:
        # A statement run with ``catalog_unchanged`` (a conversion lease: storage.leases)
        # writes only what no reader sees, so the catalog cache stays good.
        if context is not None and context.execution_options.get("catalog_unchanged"):
            return
        if _WRITES.match(statement) and _CATALOG_TABLES.search(statement):
            conn.info["wrote"] = True

    def _committing(self, conn: Connection) -> None:
        if conn.info.pop("wrote", False):
            self.bump()
            self._committed.wrote = True

    def _rolled_back(self, conn: Connection) -> None:
        conn.info.pop("wrote", None)

    def upgrade(self) -> None:
        upgrade_schema(self.engine)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session that commits on success and rolls back on error."""
        with self._sessions() as session, session.begin():
            yield session
        if getattr(self._committed, "wrote", False):
            self._committed.wrote = False
            self.bump()  # the second move: the commit has happened

    def dispose(self) -> None:
        self.engine.dispose()
