"""Background work every so often (storage.periodic): a failing round does not end it."""

from __future__ import annotations

import logging
import threading

import pytest

from docshelf.storage.periodic import Periodic


def test_a_round_that_fails_is_logged_and_the_next_round_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rounds: list[int] = []
    again = threading.Event()

    def work() -> None:
        rounds.append(len(rounds))
        if len(rounds) == 1:
            raise OSError("a passing hiccup")
        again.set()

    ticker = Periodic("docshelf-test-tick", 0.01, work, failure="the test work failed")
    with caplog.at_level(logging.ERROR, logger="docshelf"):
        ticker.start()
        assert again.wait(5)
        ticker.stop()
    assert "docshelf-test-tick" not in {t.name for t in threading.enumerate()}
    assert [r.getMessage() for r in caplog.records] == ["the test work failed"]
    ticker.start()  # once stopped, it stays stopped
    assert "docshelf-test-tick" not in {t.name for t in threading.enumerate()}
