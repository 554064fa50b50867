"""Every document in every format (DESIGN D4, SEP "Resource Contents Metadata and Multi-Format
Semantics"), and what happens to the ones that cannot be converted."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from sqlalchemy import update

from docshelf.app.runtime import Runtime
from docshelf.converters import document_schema
from docshelf.storage.models import Document, DocumentState
from tests.support.paths import CORPUS_PDF, NEEDS_SHARED
from tests.support.runtimes import open_runtime
from tests.support.schema import validate
from tests.support.sdk import RichContents, http_client
from tests.support.servers import MODERN, RawClient, RunningServer, serve

pytestmark = pytest.mark.anyio

ERAS = [MODERN, "2025-11-25"]
DERIVED = {"text/plain", "text/markdown", "application/json", "application/pdf"}


def decoded(entry: RichContents) -> bytes:
    return base64.b64decode(entry.blob) if entry.blob is not None else (entry.text or "").encode()


async def rich_read(client, uri: str):  # type: ignore[no-untyped-def]
    import mcp_types as types

    from tests.support.sdk import RichReadResult

    request = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri))
    return await client.session.send_request(request, RichReadResult)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("path", "original"),
    [
        ("papers/pdflatex-4-pages.pdf", "application/pdf"),
        ("guides/field-guide.md", "text/markdown"),
        ("page.html", "text/html"),
        ("table.csv", "text/csv"),
    ],
)
async def test_read_returns_every_format_under_one_uri(
    shelf_server: RunningServer, era: str, path: str, original: str
) -> None:
    """SEP §3: all elements the same URI, a different mimeType each, ``size`` of that
    representation; the original first by default (DESIGN D5)."""
    uri = f"docshelf://shelf/{path}"
    async with http_client(shelf_server.url, era) as client:
        result = await rich_read(client, uri)
    validate(era, "ReadResourceResult", result.model_dump(by_alias=True, exclude_none=True))
    mime_types = [entry.mime_type for entry in result.contents]
    assert mime_types[0] == original
    assert set(mime_types) == DERIVED | {original}
    assert len(mime_types) == len(set(mime_types)) == len(DERIVED | {original})
    titles = {entry.title for entry in result.contents}
    assert len(titles) == 1  # SEP §3.3: metadata consistent across elements
    for entry in result.contents:
        assert entry.uri == uri
        assert entry.size == len(decoded(entry))
        assert entry.annotations is not None and entry.annotations.last_modified
    by_type = {entry.mime_type: entry for entry in result.contents}
    assert decoded(by_type["application/pdf"]).startswith(b"%PDF-")
    document = json.loads(by_type["application/json"].text or "")
    jsonschema.validate(document, document_schema())
    assert document["schema"] == "docshelf.document/v1"


async def test_pdf_text_and_markdown_carry_the_documents_words(shelf_server: RunningServer) -> None:
    async with http_client(shelf_server.url, MODERN) as client:
        result = await rich_read(client, "docshelf://shelf/guides/field-guide.md")
    by_type = {entry.mime_type: entry for entry in result.contents}
    assert "Notes are filed by week" in (by_type["text/plain"].text or "")
    from io import BytesIO

    from pypdf import PdfReader

    rendered = PdfReader(BytesIO(decoded(by_type["application/pdf"])))
    assert "Field guide" in "".join(page.extract_text() for page in rendered.pages)


@pytest.mark.parametrize("era", ERAS)
async def test_a_document_that_failed_to_convert_is_its_original_with_the_reason(
    shelf_server: RunningServer, era: str
) -> None:
    uri = "docshelf://shelf/papers/libreoffice-writer-password.pdf"
    async with http_client(shelf_server.url, era) as client:
        result = await rich_read(client, uri)
    assert [entry.mime_type for entry in result.contents] == ["application/pdf"]
    entry = result.contents[0]
    assert (
        decoded(entry)
        == (shelf_server.shelf / "papers/libreoffice-writer-password.pdf").read_bytes()
    )
    document = (entry.meta or {})["dev.docshelf/document"]
    assert document["state"] == "failed"
    assert document["error"]["reason"] == "encrypted"
    assert "password" in document["error"]["message"]


@NEEDS_SHARED
def test_metadata_reports_every_corpus_pdf_and_its_size(tmp_path: Path) -> None:
    """The shared corpus indexes without a crash; resources/metadata reports each PDF's size
    (and page count) from the index; the encrypted PDF is listed."""
    shelf = tmp_path / "corpus"
    shutil.copytree(CORPUS_PDF, shelf)
    expected = {
        Path(e["path"]).name: e["pages"]
        for e in json.loads((CORPUS_PDF / "files.json").read_text())["data"]
    }
    with serve(shelf, tmp_path / "data", "--page-size", "1000") as server:
        raw = RawClient(server.url)
        listed = raw.modern("resources/list").json()["result"]["resources"]
        assert {r["name"] for r in listed} >= {p.name for p in shelf.glob("*.pdf")}
        for pdf in sorted(shelf.glob("*.pdf")):
            body = raw.modern("resources/metadata", {"uri": f"docshelf://corpus/{pdf.name}"}).json()
            metadata = body["result"]["metadata"]
            validate(MODERN, "Resource", metadata[0])
            assert metadata[0]["mimeType"] == "application/pdf"
            assert metadata[0]["size"] == pdf.stat().st_size, pdf.name
            document = metadata[0]["_meta"]["dev.docshelf/document"]
            if pdf.name == "libreoffice-writer-password.pdf":
                assert document["error"]["reason"] == "encrypted" and len(metadata) == 1
            else:
                assert document["pageCount"] == expected[pdf.name], pdf.name
                assert {m["mimeType"] for m in metadata} == DERIVED
        raw.close()


# -- conversion limits, on a real pool and a real SQLite file -------------------------------


#: The start of a Linux program: a type no converter handles.
PROGRAM = b"\x7fELF\x02\x01\x01\x00" + bytes(8) + b"\x02\x00\x3e\x00" + bytes(200)


@pytest.fixture
def limited_shelf(tmp_path: Path) -> Path:
    shelf = tmp_path / "limits"
    shelf.mkdir()
    shutil.copy(CORPUS_PDF / "GeoTopo-komprimiert.pdf", shelf / "big.pdf")
    (shelf / "small.txt").write_text("small and quick\n")
    (shelf / "tool").write_bytes(PROGRAM)
    return shelf


@pytest.fixture
def timeout_runtime(limited_shelf: Path, tmp_path: Path) -> Iterator[Runtime]:
    # PDFium reads GeoTopo's 117 pages in about 0.4 s; the little files take milliseconds.
    runtime = open_runtime(limited_shelf, tmp_path / "data", convert_timeout=0.2)
    yield runtime
    runtime.close()


@NEEDS_SHARED
def test_a_conversion_that_times_out_keeps_the_original_and_blocks_nothing(
    timeout_runtime: Runtime,
) -> None:
    # GeoTopo (117 pages) takes longer than the 0.2 s cap: its worker is replaced, the rest goes on.
    report = timeout_runtime.index()
    assert {e.path: e.reason for e in report.errors} == {"big.pdf": "timeout"}
    big = timeout_runtime.catalog.get("docshelf://limits/big.pdf")
    assert big is not None and big.state == DocumentState.FAILED and big.derived == ()
    assert "0.2 s" in (big.error_message or "")
    small = timeout_runtime.catalog.get("docshelf://limits/small.txt")
    assert small is not None and small.state == DocumentState.READY
    assert {v.mime_type for v in small.derived} == {
        "text/markdown",
        "application/json",
        "application/pdf",
    }


@NEEDS_SHARED
def test_files_over_the_size_cap_are_not_converted(limited_shelf: Path, tmp_path: Path) -> None:
    runtime = open_runtime(limited_shelf, tmp_path / "data", max_convert_mb=1.0)
    try:
        report = runtime.index()
        assert {e.path: e.reason for e in report.errors} == {"big.pdf": "too_large"}
        big = runtime.catalog.get("docshelf://limits/big.pdf")
        assert big is not None and big.size == (limited_shelf / "big.pdf").stat().st_size
    finally:
        runtime.close()


@NEEDS_SHARED
def test_a_type_no_converter_handles_is_served_as_its_original(
    limited_shelf: Path, tmp_path: Path
) -> None:
    runtime = open_runtime(limited_shelf, tmp_path / "data", max_convert_mb=1.0)
    try:
        runtime.index()
        tool = runtime.catalog.get("docshelf://limits/tool")
        assert tool is not None
        assert tool.mime_type == "application/x-executable"
        # Issue 25: unsupported is a state with a reason, not silence.
        assert tool.state == DocumentState.UNSUPPORTED and tool.derived == ()
        assert (tool.error_reason, tool.error_message) == (
            "unsupported",
            "no converter for application/x-executable",
        )
    finally:
        runtime.close()


@NEEDS_SHARED
def test_a_converter_version_bump_reconverts_on_the_next_pass(
    limited_shelf: Path, tmp_path: Path
) -> None:
    runtime = open_runtime(limited_shelf, tmp_path / "data", max_convert_mb=1.0)
    try:
        runtime.index()
        before = runtime.catalog.get("docshelf://limits/small.txt")
        assert before is not None
        with runtime.database.session() as session:  # as if made by an older converter
            session.execute(
                update(Document).where(Document.path == "small.txt").values(converter="text:0")
            )
        report = runtime.index()
        assert report.changed == 1 and report.changes.changed == {"docshelf://limits/small.txt"}
        after = runtime.catalog.get("docshelf://limits/small.txt")
        assert after is not None and [v.sha256 for v in after.derived] == [
            v.sha256 for v in before.derived
        ]
        assert runtime.index().unchanged == 3  # and then it is current again
    finally:
        runtime.close()
