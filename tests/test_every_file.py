"""A shelf of everything people keep, on real processes (issue 25).

Slides, sheets and mail are read; a file nothing reads is ``unsupported`` with a
reason, counted by ``docshelf index``, ``/admin/status``, ``/metrics`` and the
resource's ``_meta``, and still served as its original; a bomb in each ZIP
container kind (a .zip, OOXML, ODF, EPUB) is refused alone with a bounded reason
while the rest of the shelf is served.
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
from email.message import EmailMessage
from pathlib import Path

import httpx
import pytest

from tests.support.schema import validate_response
from tests.support.servers import MODERN, RawClient, child_env, run_docshelf, serve

TOKEN = "every-file-admin-token"
#: One ZIP whose only member is 8 MiB of zeros (about 1000 to 1 compressed): a bomb
#: to the ratio check, whatever container it is named as.
BOMB_NAMES = ("bomb.zip", "bomb.pptx", "bomb.odt", "bomb.epub")
RANDOM = bytes((i * 7919 + 13) % 256 for i in range(4096))
LEGACY_WORD = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)


def _bomb() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("content.bin", bytes(8 * 1024 * 1024))
    return out.getvalue()


def _deck() -> bytes:
    from pptx import Presentation

    deck = Presentation()
    for title, bullet in (("Roadmap", "Ship the reader"), ("Budget", "Twelve thousand")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = bullet
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _workbook() -> bytes:
    import xlsxwriter

    out = io.BytesIO()
    book = xlsxwriter.Workbook(out, {"in_memory": True})
    sheet = book.add_worksheet("Totals")
    for row, values in enumerate((("Region", "Total"), ("North", 12), ("South", 7))):
        sheet.write_row(row, 0, values)
    book.close()
    return out.getvalue()


def _mail() -> bytes:
    message = EmailMessage()
    message["Subject"] = "Quarterly figures"
    message["From"] = "Ann Smith <ann@example.com>"
    message["To"] = "bob@example.com"
    message.set_content("The figures are attached.")
    return message.as_bytes()


@pytest.fixture(scope="module")
def kept_shelf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    shelf = tmp_path_factory.mktemp("every") / "kept"
    shelf.mkdir()
    (shelf / "deck.pptx").write_bytes(_deck())
    (shelf / "totals.xlsx").write_bytes(_workbook())
    (shelf / "figures.eml").write_bytes(_mail())
    (shelf / "random.bin").write_bytes(RANDOM)
    (shelf / "legacy.doc").write_bytes(LEGACY_WORD)
    bomb = _bomb()
    for name in BOMB_NAMES:
        (shelf / name).write_bytes(bomb)
    return shelf


def test_index_counts_unsupported_files_apart_and_refuses_each_bomb_alone(
    kept_shelf: Path, tmp_path: Path
) -> None:
    done = run_docshelf(
        "index", "--json", "--root", str(kept_shelf), "--data-dir", str(tmp_path / "d")
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["counts"]["seen"] == 9
    assert report["counts"]["unsupported"] == 2  # random.bin, legacy.doc
    assert report["counts"]["failed"] == len(BOMB_NAMES)
    reasons = {entry["path"]: (entry["reason"], entry["message"]) for entry in report["failed"]}
    assert set(reasons) == set(BOMB_NAMES)
    for name, (reason, message) in reasons.items():
        assert reason == "too_large", (name, message)
        assert "expands" in message and "over 250 to 1" in message, (name, message)

    text = run_docshelf(
        "index", "--root", str(kept_shelf), "--data-dir", str(tmp_path / "d")
    ).stdout
    assert f"{len(BOMB_NAMES)} failed, 2 unsupported" in text


def test_the_shelf_is_served_with_unsupported_files_said_so(
    kept_shelf: Path, tmp_path: Path
) -> None:
    env = child_env(DOCSHELF_ADMIN_TOKEN=TOKEN)
    with serve(kept_shelf, tmp_path / "data", env=env) as server:
        client = RawClient(server.url)
        try:
            # Slides are pages (issue 25.1): ?pages=2 is the second slide.
            response = client.modern(
                "resources/read", {"uri": "docshelf://kept/deck.pptx?pages=2"}
            ).json()
            validate_response(MODERN, "ReadResourceResult", response)
            markdown = next(
                c["text"]
                for c in response["result"]["contents"]
                if c["mimeType"] == "text/markdown"
            )
            assert "Budget" in markdown and "Twelve thousand" in markdown
            assert "Roadmap" not in markdown

            sheet = client.modern(
                "resources/read", {"uri": "docshelf://kept/totals.xlsx?section=totals"}
            ).json()
            validate_response(MODERN, "ReadResourceResult", sheet)
            texts = [c.get("text", "") for c in sheet["result"]["contents"]]
            assert any("| Region | Total |" in t and "| North | 12 |" in t for t in texts)

            listed = client.modern("resources/list").json()
            validate_response(MODERN, "ListResourcesResult", listed)
            by_uri = {r["uri"]: r for r in listed["result"]["resources"]}
            assert by_uri["docshelf://kept/figures.eml"]["title"] == "Quarterly figures"
            meta = by_uri["docshelf://kept/random.bin"]["_meta"]["dev.docshelf/document"]
            assert meta["state"] == "unsupported"
            assert meta["error"] == {
                "reason": "unsupported",
                "message": "no converter for application/octet-stream",
            }
            legacy = by_uri["docshelf://kept/legacy.doc"]["_meta"]["dev.docshelf/document"]
            assert legacy["error"]["message"].startswith("a legacy Word 97-2003 document (.doc)")

            # Unsupported, yet its original is served, byte for byte.
            original = client.modern("resources/read", {"uri": "docshelf://kept/random.bin"})
            blob = original.json()["result"]["contents"][0]["blob"]
            assert base64.b64decode(blob) == RANDOM
        finally:
            client.close()

        status = httpx.get(
            f"{server.base}/admin/status", headers={"Authorization": f"Bearer {TOKEN}"}
        ).json()
        assert status["documents"]["by_state"]["unsupported"] == 2
        metrics = httpx.get(f"{server.base}/metrics").text
        assert 'docshelf_indexed_files_total{result="unsupported"} 2.0' in metrics
