"""Archives: ZIP and tar files built here, their members as sections, bombs refused."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import random
import struct
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docshelf.converters import ConversionError, ConversionResult, convert, find_converter
from docshelf.converters.archive import ArchiveConverter, ArchiveLimits
from docshelf.converters.base import Source
from docshelf.converters.members import demote_headings
from docshelf.converters.parts import section_markdown
from tests.support.markitdown_vectors import NEEDS_PEERS, TEST_FILES, markitdown_vector
from tests.support.results import data_of
from tests.support.results import markdown_of as markdown

README = b"---\ntitle: Front\n---\n# Guide\n\nRead *this*.\n\nUsage\n-----\n\nRun it.\n"
MEMBERS: dict[str, bytes] = {
    "docs/guide.md": README,
    "data.csv": b"name,size\napple,3\n",
    "page.html": b"<title>Page</title><h1>Welcome</h1><p>Hello <a href='/x'>x</a></p>",
    "notes.txt": b"Plain notes.\n",
}


def zip_of(members: dict[str, bytes], *, comment: bytes = b"") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("docs/", b"")
        for name, data in members.items():
            archive.writestr(name, data)
        archive.comment = comment
    return out.getvalue()


def tar_of(members: dict[str, bytes], mode: str = "w:gz", extra: tuple[Any, ...] = ()) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for info in extra:
            archive.addfile(info)
    return out.getvalue()


def entries(result: ConversionResult) -> dict[str, dict[str, Any]]:
    return {entry["path"]: entry for entry in data_of(result)["members"]}


def refusal(data: bytes, filename: str, limits: ArchiveLimits | None = None) -> ConversionError:
    source = Source.of(filename, "application/octet-stream", data)
    with pytest.raises(ConversionError) as caught:
        ArchiveConverter(limits).convert(source)
    return caught.value


def converted(data: bytes, filename: str, limits: ArchiveLimits | None = None) -> ConversionResult:
    return ArchiveConverter(limits).convert(Source.of(filename, "application/zip", data))


# what an archive becomes


def test_members_become_sections_after_a_member_table() -> None:
    text = markdown(convert(zip_of(MEMBERS), "application/zip", "bundle.zip"))
    assert text.startswith(
        "| Path | Type | Size | Result |\n|---|---|---|---|\n"
        "| docs/guide.md | text/markdown | 65 bytes | converted |\n"
        "| data.csv | text/csv | 18 bytes | converted |\n"
        "| page.html | text/html | 66 bytes | converted |\n"
        "| notes.txt | text/plain | 13 bytes | converted |\n"
    )
    # Front matter dropped, headings demoted (the setext one too), the member's Markdown kept.
    assert "## docs/guide.md\n\n### Guide\n\nRead *this*.\n\n#### Usage\n\nRun it.\n" in text
    assert "title: Front" not in text
    assert "## data.csv\n\n### data.csv\n\n| name | size |" in text
    assert "## page.html\n\n### Welcome\n\nHello [x](/x)" in text
    assert "## notes.txt\n\nPlain notes." in text


def test_a_members_section_is_a_part_of_the_archive() -> None:
    result = convert(zip_of(MEMBERS), "application/zip", "bundle.zip")
    members = entries(result)
    assert members["docs/guide.md"]["part"] == "?section=docsguidemd"
    found = section_markdown(markdown(result), "docsguidemd")
    assert found is not None
    heading, section = found
    assert heading.title == "docs/guide.md"
    assert "Run it." in section and "apple" not in section
    parts = {segment.part for segment in result.segments()}
    assert {"section=docsguidemd", "section=datacsv", "section=pagehtml"} <= parts


def test_json_data_lists_every_member() -> None:
    result = convert(zip_of(MEMBERS), "application/zip", "bundle.zip")
    data = data_of(result)
    assert (data["format"], data["files"], data["unpacked_bytes"]) == ("zip", 4, 162)
    assert data["members"][1] == {
        "path": "data.csv",
        "size": 18,
        "compressed_size": data["members"][1]["compressed_size"],
        "type": "text/csv",
        "converted": True,
        "part": "?section=datacsv",
    }
    assert entries(result)["page.html"]["title"] == "Page"


def test_title_is_left_to_the_file_name_and_description_lists_the_members() -> None:
    facts = convert(zip_of(MEMBERS), "application/zip", "bundle.zip").facts
    assert facts.title is None
    assert facts.description == (
        "ZIP archive, 4 files (162 bytes): docs/guide.md, data.csv, page.html, notes.txt"
    )
    assert facts.metadata == {"format": "zip", "files": "4", "unpacked_bytes": "162"}
    many = {f"f{n}.txt": b"x" for n in range(7)}
    assert convert(zip_of(many), "application/zip", "m.zip").facts.description == (
        "ZIP archive, 7 files (7 bytes): f0.txt, f1.txt, f2.txt, f3.txt, f4.txt, …"
    )


def test_a_comment_that_reads_as_a_title_is_the_title() -> None:
    facts = convert(zip_of(MEMBERS, comment=b"Q3 board pack"), "application/zip", "b.zip").facts
    assert (facts.title, facts.metadata["comment"]) == ("Q3 board pack", "Q3 board pack")


@pytest.mark.parametrize(
    ("mode", "filename", "kind"),
    [
        ("w", "b.tar", "tar"),
        ("w:gz", "b.tar.gz", "tar.gz"),
        ("w:gz", "b.tgz", "tar.gz"),
        ("w:bz2", "b.tar.bz2", "tar.bz2"),
        ("w:xz", "b.tar.xz", "tar.xz"),
    ],
)
def test_tar_archives_plain_and_compressed(mode: str, filename: str, kind: str) -> None:
    result = convert(tar_of(MEMBERS, mode), "application/octet-stream", filename)
    assert result.facts.description == (
        f"{kind} archive, 4 files (162 bytes): docs/guide.md, data.csv, page.html, notes.txt"
    )
    assert "## docs/guide.md\n\n### Guide" in markdown(result)
    assert "compressed_size" not in entries(result)["data.csv"]


def test_a_compressed_file_that_is_no_tar_is_an_archive_of_that_file() -> None:
    result = convert(gzip.compress(b"# Notes\n\nText.\n"), "application/gzip", "notes.md.gz")
    assert result.facts.description == "gzip-compressed file (15 bytes): notes.md"
    assert "## notes.md\n\n### Notes\n\nText." in markdown(result)


def test_registry_routes_archives_but_not_zip_based_documents() -> None:
    for mime_type, filename in [
        ("application/zip", "a.zip"),
        ("application/x-tar", "a.tar"),
        ("application/gzip", "a.tar.gz"),
        ("application/gzip", "log.gz"),
        ("application/x-bzip2", "a.tar.bz2"),
        ("application/x-xz", "a.txz"),
        ("application/zip", "plugin.jar"),
    ]:
        converter = find_converter(mime_type, filename)
        assert converter is not None and converter.name == "archive", filename
    converter = find_converter("application/zip", "report.docx")
    assert converter is not None and converter.name == "docx"
    for filename in ("deck.pptx", "sheet.xlsx", "book.epub", "text.odt"):
        found = find_converter("application/zip", filename)
        assert found is None or found.name != "archive", filename


# members listed, not converted (the others still are)


def test_unsafe_paths_are_listed_and_never_read() -> None:
    data = zip_of(
        {"../evil.md": b"# Evil", "/etc/abs.md": b"# Abs", "C:\\win.md": b"# W"} | MEMBERS
    )
    result = convert(data, "application/zip", "bundle.zip")
    members = entries(result)
    assert members["../evil.md"]["reason"] == "unsafe path (..)"
    assert members["/etc/abs.md"]["reason"] == "unsafe path (absolute)"
    assert members["C:\\win.md"]["reason"] == "unsafe path (absolute)"
    text = markdown(result)
    assert "Evil" not in text.replace("../evil.md", "") and "## docs/guide.md" in text
    assert "| ../evil.md | text/markdown | 6 bytes | listed only: unsafe path (..) |" in text


def test_tar_links_and_devices_are_skipped() -> None:
    link = tarfile.TarInfo("passwd")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    hard = tarfile.TarInfo("hard")
    hard.type, hard.linkname = tarfile.LNKTYPE, "notes.txt"
    device = tarfile.TarInfo("null")
    device.type = tarfile.CHRTYPE
    result = convert(tar_of(MEMBERS, extra=(link, hard, device)), "application/gzip", "b.tgz")
    members = entries(result)
    assert members["passwd"]["reason"] == "symbolic link, not followed"
    assert members["hard"]["reason"] == "hard link, not followed"
    assert members["null"]["reason"] == "device or pipe, skipped"
    assert members["docs/guide.md"]["converted"] is True
    assert "/etc/passwd" not in markdown(result)


def test_encrypted_zip_members_are_listed_as_encrypted() -> None:
    data = bytearray(zip_of({"secret.md": b"ciphertext", "open.md": b"# Open"}))
    # Set the "encrypted" flag of secret.md, as a password-protected member declares it.
    local = data.index(b"secret.md") - 30  # the name follows a 30-byte local header
    central = data.index(b"secret.md", local + 31) - 46  # and a 46-byte central one
    data[local + 6] |= 0x1
    data[central + 8] |= 0x1
    result = convert(bytes(data), "application/zip", "e.zip")
    assert entries(result)["secret.md"]["reason"] == "encrypted (needs a password)"
    assert entries(result)["open.md"]["converted"] is True


def test_large_members_and_a_spent_budget_are_listed_only() -> None:
    limits = ArchiveLimits(max_member_bytes=65, max_converted=2)
    members = entries(converted(zip_of(MEMBERS), "b.zip", limits))
    assert members["page.html"]["reason"] == "over the 65 bytes limit for converting a member"
    assert members["docs/guide.md"]["converted"] and members["data.csv"]["converted"]
    assert members["notes.txt"]["reason"] == "over the limit of 2 members converted per archive"
    assert members["page.html"]["type"] == "text/html"  # typed from its head


def test_a_member_its_converter_refuses_is_listed_with_the_reason() -> None:
    result = convert(zip_of({"broken.docx": b"not a zip"} | MEMBERS), "application/zip", "b.zip")
    assert entries(result)["broken.docx"]["reason"] == (
        "corrupt: not a DOCX (ZIP) package: File is not a zip file"
    )
    assert entries(result)["data.csv"]["converted"] is True


def test_a_member_cannot_swallow_the_sections_after_it() -> None:
    unclosed = {"a.md": b"# A\n\n```\ncode never closed\n", "b.md": b"<!-- open comment\n"}
    result = convert(zip_of(unclosed | {"c.md": b"# C"}), "application/zip", "b.zip")
    assert [e.get("part") for e in data_of(result)["members"]] == [
        "?section=amd",
        "?section=bmd",
        "?section=cmd",
    ]
    # Their plain text stands in for Markdown that would run on.
    assert "## a.md\n\nA\n\ncode never closed\n\n## b.md" in markdown(result)


def test_demoting_caps_at_level_six_and_keeps_quoted_headings_quoted() -> None:
    source = "# One\n\n##### Five\n\n> ## Quoted\n\nSetext\n===\n"
    assert demote_headings(source, 2) == ("### One\n\n###### Five\n\n> #### Quoted\n\n### Setext")


# nesting


def test_an_archive_inside_an_archive_is_converted_two_levels_deep() -> None:
    inner = zip_of({"inner.md": b"# Inner\n\nDeep text."})
    middle = zip_of({"inner.zip": inner, "mid.md": b"Middle."})
    result = convert(zip_of({"middle.zip": middle}), "application/zip", "outer.zip")
    text = markdown(result)
    assert "## middle.zip\n\n| Path | Type | Size | Result |" in text
    assert "#### mid.md\n\nMiddle." in text
    assert entries(result)["middle.zip"]["converted"] is True
    assert (
        f"| inner.zip | application/zip | {len(inner)} bytes | listed only: too\\_large: "
        "an archive inside an archive is read 2 levels deep at most |"
    ) in text
    assert "Deep text" not in text


def test_nested_archives_share_the_conversion_budget() -> None:
    inner = zip_of({f"n{n}.txt": b"x" for n in range(5)})
    limits = ArchiveLimits(max_converted=3)
    result = converted(zip_of({"a.zip": inner, "b.txt": b"y"}), "o.zip", limits)
    assert entries(result)["b.txt"]["reason"] == (
        "over the limit of 3 members converted per archive"
    )
    assert markdown(converted(inner, "again.zip", limits)).count("| converted |") == 3


# refusals: the whole archive, with the limit in the message


def test_zip_bomb_of_zeros_is_refused() -> None:
    data = zip_of({"zeros.bin": bytes(50_000_000), "ok.md": b"# ok"})
    assert len(data) < 60_000
    error = refusal(data, "bomb.zip")
    assert (error.reason, error.message) == (
        "too_large",
        "'zeros.bin' in the ZIP package expands 1029 to 1 (over 250 to 1): a ZIP bomb",
    )


def test_zip_declaring_too_much_is_refused_before_inflating() -> None:
    data = bytearray(zip_of({"a.txt": b"small"}))
    central = data.index(b"PK\x01\x02")
    central = data.index(b"PK\x01\x02", central + 1)  # a.txt, after the folder entry
    struct.pack_into("<I", data, central + 24, 600_000_000)  # declared uncompressed size
    error = refusal(bytes(data), "declared.zip")
    assert (error.reason, error.message) == (
        "too_large",
        "the ZIP package unpacks to 600000000 bytes, over the limit of 536870912",
    )


def test_too_many_members_are_refused() -> None:
    many = {f"{n}.txt": b"" for n in range(11)}
    limits = ArchiveLimits(max_members=10)
    error = refusal(zip_of(many), "many.zip", limits)
    assert error.message == "the ZIP package has 12 members, over the limit of 10"  # a folder too
    error = refusal(tar_of(many), "many.tgz", limits)
    assert (error.reason, error.message) == (
        "too_large",
        "the tar.gz archive has more than 10 members (the limit)",
    )


def test_gzip_bomb_tar_is_refused_while_streaming() -> None:
    error = refusal(tar_of({"zeros.bin": bytes(50_000_000)}), "bomb.tar.gz")
    assert error.reason == "too_large"
    assert error.message.startswith("the tar.gz archive expands ")
    assert error.message.endswith(" to 1 (over 250 to 1): a compression bomb")


def test_tar_header_declaring_too_much_is_refused_before_reading() -> None:
    info = tarfile.TarInfo("huge.bin")
    info.size = 600_000_000
    error = refusal(info.tobuf(format=tarfile.GNU_FORMAT), "huge.tar")
    assert (error.reason, error.message) == (
        "too_large",
        "the tar archive unpacks to at least 600000000 bytes, over the limit of 536870912",
    )


def test_huge_tar_headers_are_refused() -> None:
    info = tarfile.TarInfo("a.txt")
    info.pax_headers = {"comment": "x" * 2_000_000}
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        archive.addfile(info, io.BytesIO(b""))
    error = refusal(out.getvalue(), "pax.tar")
    assert (error.reason, error.message) == (
        "too_large",
        "the tar archive has a header of more than 1048576 bytes (the limit)",
    )


def test_truncated_archives_are_corrupt() -> None:
    error = refusal(zip_of(MEMBERS)[:-30], "cut.zip")
    assert (error.reason, error.message) == (
        "corrupt",
        "not a ZIP (ZIP) package: File is not a zip file",
    )
    damaged = (
        "corrupt",
        "the gzip data is damaged: EOFError: Compressed file ended before the "
        "end-of-stream marker was reached",
    )
    error = refusal(tar_of(MEMBERS)[:-30], "cut.tar.gz")
    assert (error.reason, error.message) == damaged
    big = tar_of(MEMBERS | {"z.bin": random.Random(0).randbytes(50_000)})
    error = refusal(big[: len(big) // 2], "cut.tar.gz")
    assert (error.reason, error.message) == (
        "corrupt",
        "the tar.gz archive is damaged: EOFError: Compressed file ended before the "
        "end-of-stream marker was reached",
    )
    error = refusal(gzip.compress(b"log line\n" * 100)[:-20], "app.log.gz")
    assert (error.reason, error.message) == damaged
    error = refusal(b"not an archive at all" * 30, "plain.tar")
    assert (error.reason, error.message) == (
        "corrupt",
        "not a tar archive: ReadError: invalid header",
    )


# fuzz: only ConversionError comes out


FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SMALL = {"a.md": b"# A\n\nx", "b.csv": b"a,b\n1,2\n", "c.zip": zip_of({"d.txt": b"d"})}
VALID = {"b.zip": zip_of(SMALL), "b.tar.gz": tar_of(SMALL), "b.tar": tar_of(SMALL, "w")}


@FUZZ
@given(data=st.binary(max_size=2048), name=st.sampled_from(sorted(VALID)))
def test_random_bytes_give_a_result_or_a_conversion_error(data: bytes, name: str) -> None:
    with contextlib.suppress(ConversionError):
        ArchiveConverter().convert(Source.of(name, "application/octet-stream", data))


@FUZZ
@given(
    name=st.sampled_from(sorted(VALID)),
    edits=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=8),
    cut=st.integers(min_value=0),
)
def test_mutated_archives_give_a_result_or_a_conversion_error(
    name: str, edits: list[tuple[int, int]], cut: int
) -> None:
    data = bytearray(VALID[name])
    for offset, value in edits:
        data[offset % len(data)] = value
    data = data[: len(data) - cut % 64]
    try:
        result = ArchiveConverter().convert(
            Source.of(name, "application/octet-stream", bytes(data))
        )
        result.produce(["text/plain", "text/markdown", "application/json"])
    except ConversionError:
        pass


# the markitdown yardstick


@NEEDS_PEERS
def test_markitdown_test_files_zip_has_its_docx_and_html_strings() -> None:
    vector = markitdown_vector("test_files.zip")
    path: Path = TEST_FILES / "test_files.zip"
    text = markdown(convert(path.read_bytes(), "application/zip", path.name))
    text = text.replace("(/wiki/Bill_Gates)", '(/wiki/Bill_Gates "Bill Gates")')  # link titles
    missing = [must for must in vector["must_include"] if must not in text]
    # The rest come from test.pptx and test.xlsx, which need their converters.
    assert len(missing) <= 7
    assert all(must not in text for must in vector["must_not_include"])
    assert "## test.docx" in text and "## test\\_wikipedia.html" in text


def test_json_validates(schema_validator: Any) -> None:
    result = convert(zip_of(MEMBERS), "application/zip", "bundle.zip")
    representation = result.get("application/json")
    assert representation is not None
    schema_validator.validate(json.loads(representation.data))
