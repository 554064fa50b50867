"""Alembic environment: runs against the engine the application hands over."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Engine

from docshelf.storage.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    engine: Engine | None = config.attributes.get("engine")
    if engine is None:
        from docshelf.storage.database import create_db_engine

        engine = create_db_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


run_migrations_online()
