"""What one docshelf process does, from its settings: index, convert, serve (issue 27).

``/readyz`` and ``/healthz`` say it, so an operator running several processes on several
hosts sees which does what (issue 27, item 5).

- *indexes*: the start-up catalog pass and, unless ``--no-watch``, the watcher. Exactly one
  process per database indexes (``--no-index`` makes the others replicas, DESIGN §8).
- *converts*: ``background`` — it takes pending documents from the shared backlog under a
  lease (:mod:`storage.leases`) and builds them unasked; ``on-demand`` — it builds only
  what its own reads need, at once (``FormatBuilder.ensure``). Issue 27, item 3: "every
  process that is not ``--no-convert`` converts" — on PostgreSQL, which hosts share, every
  process with ``convert`` on builds in the background, replicas included; SQLite keeps
  its single-host queue: only the indexing process builds in the background.
  ``--no-convert`` turns background building off but not on-demand building: a read must
  never wait on a queue nobody may be draining (every process ``--no-convert``, or a
  SQLite replica), and a format its reader waits for is made where the reader is.
- *serves*: every ``serve`` and ``stdio`` process answers MCP requests.

``serve --processes N`` shares one host's CPU among its children: only the first builds in
the background (with ``--workers`` worker processes, as one process would), the others
build on demand (``app.supervisor``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlalchemy.engine import make_url

from docshelf.app.settings import Settings

Converts = Literal["background", "on-demand"]


@dataclass(frozen=True, slots=True)
class Role:
    indexes: bool
    watches: bool
    converts: Converts

    @classmethod
    def of(cls, settings: Settings) -> Role:
        shared = make_url(settings.resolved_database_url).get_backend_name() == "postgresql"
        background = settings.convert and (settings.index_on_start or shared)
        return cls(
            indexes=settings.index_on_start,
            watches=settings.index_on_start and settings.watch,
            converts="background" if background else "on-demand",
        )

    def describe(self) -> dict[str, object]:
        """The role as ``/readyz`` and ``/healthz`` give it."""
        return {
            "indexes": self.indexes,
            "watches": self.watches,
            "converts": self.converts,
            "serves": True,
        }
