"""Conversion leases (storage.leases, issue 27 item 3) on a real database, both engines.

Several holders stand for several processes or hosts: each is a :class:`Leases` with a name
of its own on one database. What the process-level tests (tests/test_shared_conversion.py)
show end to end, these show one rule at a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from docshelf.storage.database import Database
from docshelf.storage.leases import Leases
from docshelf.storage.models import Document, DocumentState, OcrState
from docshelf.storage.queues import Queues

COUNT = 12


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    db = Database(database_url)
    db.upgrade()
    now = datetime.now(UTC)
    with db.session() as session:
        for number in range(COUNT):
            path = f"doc-{number:02}.txt"
            session.add(
                Document(
                    shelf="shelf",
                    path=path,
                    uri=f"file:///shelf/{path}",
                    name=path,
                    mime_type="text/plain",
                    size=100 + number,  # smallest first is id order
                    mtime_ns=1,
                    title=path,
                    facts={},
                    state=DocumentState.PENDING,
                    modified_at=now,
                    indexed_at=now,
                )
            )
    try:
        yield db
    finally:
        db.dispose()


def _ids(db: Database) -> list[int]:
    with db.session() as session:
        return list(session.scalars(select(Document.id).order_by(Document.id)))


def _holders(db: Database) -> dict[int, str | None]:
    with db.session() as session:
        return {
            i: holder for i, holder in session.execute(select(Document.id, Document.lease_holder))
        }


@pytest.fixture
def queues(database: Database) -> Queues:
    return Queues(database, ["shelf"])


def test_two_holders_take_different_documents_smallest_first(
    database: Database, queues: Queues
) -> None:
    one, two = Leases(database, "host-a:1:aa"), Leases(database, "host-b:2:bb")
    try:
        ids = _ids(database)
        first = one.claim(queues.in_order(), 3)
        second = two.claim(queues.in_order(), COUNT)
        assert sorted(first) == ids[:3]
        assert sorted(second) == ids[3:]
        assert two.claim(queues.in_order(), COUNT) == []  # everything is held
        holders = _holders(database)
        assert {holders[i] for i in first} == {"host-a:1:aa"}
        assert {holders[i] for i in second} == {"host-b:2:bb"}
    finally:
        one.close()
        two.close()


def test_edits_go_first_and_busy_documents_are_not_taken(
    database: Database, queues: Queues
) -> None:
    leases = Leases(database, "host-a:1:aa")
    try:
        ids = _ids(database)
        taken = leases.claim(queues.in_order(), 2, busy=[ids[0]], first=[ids[-1]])
        assert taken and sorted(taken) == sorted([ids[-1], ids[1]])
    finally:
        leases.close()


def test_the_ocr_queue_is_taken_only_once_no_cheap_document_is_free(
    database: Database, queues: Queues
) -> None:
    ids = _ids(database)
    with database.session() as session:
        for doc in session.scalars(select(Document).where(Document.id.in_(ids[:2]))):
            doc.state, doc.ocr = DocumentState.READY, OcrState.PENDING
    one, two = Leases(database, "host-a:1:aa"), Leases(database, "host-b:2:bb")
    try:
        assert sorted(one.claim(queues.in_order(), COUNT)) == ids[2:]  # the cheap ones
        assert sorted(two.claim(queues.in_order(), COUNT)) == ids[:2]  # then OCR passes
    finally:
        one.close()
        two.close()


def test_a_lease_that_ran_out_is_taken_by_another_holder(
    database: Database, queues: Queues
) -> None:
    dead, alive = Leases(database, "host-a:1:aa", lease_s=1), Leases(database, "host-b:2:bb")
    try:
        taken = dead.claim(queues.in_order(), 2)
        dead.forget(taken)  # its heartbeat stops renewing them: as if the process died
        assert set(alive.claim(queues.in_order(), COUNT)).isdisjoint(taken)
        time.sleep(1.3)
        assert sorted(alive.claim(queues.in_order(), COUNT)) == sorted(taken)
        assert {_holders(database)[i] for i in taken} == {"host-b:2:bb"}
    finally:
        dead.close()
        alive.close()


def test_the_heartbeat_keeps_a_long_task_s_lease(database: Database, queues: Queues) -> None:
    """Renewed three times per lease: a task running four leases long keeps its documents."""
    busy, other = Leases(database, "host-a:1:aa", lease_s=1), Leases(database, "host-b:2:bb")
    try:
        taken = busy.claim(queues.in_order(), 2)
        time.sleep(4)
        assert set(other.claim(queues.in_order(), COUNT)).isdisjoint(taken)
        assert busy.renew() == 2
    finally:
        busy.close()
        other.close()


def test_the_expiry_is_now_plus_the_lease_on_the_database_s_clock(
    database: Database, queues: Queues
) -> None:
    leases = Leases(database, "host-a:1:aa", lease_s=30)
    try:
        (taken,) = leases.claim(queues.in_order(), 1)
        with database.session() as session:
            expires = session.scalar(select(Document.lease_expires).where(Document.id == taken))
            if database.engine.dialect.name == "postgresql":
                now = session.scalar(select(func.now()))
            else:  # one machine, one clock
                now = datetime.now(UTC)
        assert expires is not None and now is not None
        assert abs(expires - now - timedelta(seconds=30)) < timedelta(seconds=2)
    finally:
        leases.close()


def test_recording_clears_only_the_holder_s_own_lease(database: Database, queues: Queues) -> None:
    one, two = Leases(database, "host-a:1:aa"), Leases(database, "host-b:2:bb")
    try:
        (mine,) = one.claim(queues.in_order(), 1)
        (theirs,) = two.claim(queues.in_order(), 1)
        with database.session() as session:
            for doc in session.scalars(select(Document).where(Document.id.in_([mine, theirs]))):
                one.settle(doc)
        holders = _holders(database)
        assert holders[mine] is None
        assert holders[theirs] == "host-b:2:bb"
    finally:
        one.close()
        two.close()


def test_a_closing_holder_hands_back_what_it_held(database: Database, queues: Queues) -> None:
    leaving, staying = Leases(database, "host-a:1:aa"), Leases(database, "host-b:2:bb")
    try:
        taken = leaving.claim(queues.in_order(), 3)
        leaving.close()
        assert {_holders(database)[i] for i in taken} == {None}
        assert set(taken) <= set(staying.claim(queues.in_order(), COUNT))
    finally:
        staying.close()


def test_a_lease_must_last(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'docshelf.db'}")
    with pytest.raises(ValueError, match=r"^a conversion lease must last more than 0 s, not 0$"):
        Leases(database, "host-a:1:aa", lease_s=0)
    database.dispose()


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_skips_locked_documents_without_waiting(
    database: Database, queues: Queues
) -> None:
    """A claim in progress elsewhere (rows locked, not yet leased) is skipped, not waited for."""
    ids = _ids(database)
    leases = Leases(database, "host-b:2:bb")
    with database.engine.connect() as other:
        other.execute(text("SELECT id FROM documents WHERE id = :id FOR UPDATE"), {"id": ids[0]})
        try:
            started = time.monotonic()
            taken = leases.claim(queues.in_order(), 2)
            assert time.monotonic() - started < 2
            assert sorted(taken) == ids[1:3]
        finally:
            other.rollback()
            leases.close()


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_postgresql_many_concurrent_claims_never_take_a_document_twice(
    database: Database, queues: Queues
) -> None:
    holders = [Leases(database, f"host-{n}:{n}:00") for n in range(6)]
    taken: list[list[int]] = [[] for _ in holders]
    start = threading.Barrier(len(holders))

    def run(number: int) -> None:
        start.wait()
        while claimed := holders[number].claim(queues.in_order(), 1):
            taken[number].extend(claimed)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(holders))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    for leases in holders:
        leases.close()
    every = [i for batch in taken for i in batch]
    assert sorted(every) == _ids(database)  # each document once, none left out
