"""Engine and session set-up, and schema upgrades through Alembic.

SQLite is the embedded default. Every SQLite connection gets WAL journaling (so
readers never block the indexer's writes), a busy timeout, and foreign keys on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
_REVISION = re.compile(r'^(down_)?revision\s*=\s*"([^"]*)"', re.MULTILINE)
SQLITE_BUSY_TIMEOUT_MS = 10_000


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
        engine = create_engine(url, connect_args={"check_same_thread": False})
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


def at_head(engine: Engine) -> bool:
    """Whether the database is at the newest migration already."""
    if not inspect(engine).has_table("alembic_version"):
        return False
    with engine.connect() as connection:
        current = connection.execute(text("SELECT version_num FROM alembic_version")).scalars()
        return list(current) == [head_revision()]


def upgrade_schema(engine: Engine) -> None:
    """Bring the schema to the newest migration (run by the server and ``docshelf index``).

    Alembic (with Mako and Pygments behind it) takes a few hundred milliseconds to
    import; a warm start with an up-to-date schema skips it, so the first list
    is answered sooner.
    """
    if at_head(engine):
        return
    from alembic import command

    command.upgrade(alembic_config(engine), "head")


class Database:
    """The engine plus a session factory; the one way storage code talks to the database."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = create_db_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def upgrade(self) -> None:
        upgrade_schema(self.engine)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session that commits on success and rolls back on error."""
        with self._sessions() as session, session.begin():
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
