"""Mail: .eml through the standard library, .msg through olefile and our MAPI reader."""

from __future__ import annotations

from email.message import EmailMessage
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from pathlib import Path

import pytest

from docshelf.converters import ConversionError, ConversionResult, convert, find_converter
from docshelf.converters.mail import attachments
from docshelf.converters.mail.rtfbody import decompress_rtf, encapsulated_html
from tests.support.markitdown_vectors import NEEDS_PEERS, TEST_FILES, markitdown_vectors
from tests.support.paths import DATA
from tests.support.results import data_of as data
from tests.support.results import markdown_of as markdown

MSG = DATA / "mail" / "test_outlook_msg.msg"


def eml(message: EmailMessage | MIMEMultipart | MIMEText) -> ConversionResult:
    return convert(message.as_bytes(), "message/rfc822", "mail.eml")


def simple(subject: str = "Quarterly report") -> EmailMessage:
    message = EmailMessage()
    message["From"] = "Ann Smith <ann@example.com>"
    message["To"] = "bob@example.com, Carol <carol@example.org>"
    message["Cc"] = "dave@example.net"
    message["Subject"] = subject
    message["Date"] = "Tue, 05 Mar 2024 10:30:00 +0100"
    message["Message-ID"] = "<1@example.com>"
    return message


@pytest.mark.parametrize(
    ("mime_type", "filename", "expected"),
    [
        ("message/rfc822", "a.eml", "eml"),
        ("text/plain", "a.eml", "eml"),
        ("application/vnd.ms-outlook", "a.msg", "msg"),
        ("application/x-ole-storage", "a.msg", "msg"),
        ("application/octet-stream", "A.MSG", "msg"),
    ],
)
def test_registry_picks_the_mail_converters(mime_type: str, filename: str, expected: str) -> None:
    converter = find_converter(mime_type, filename)
    assert converter is not None and converter.name == expected


def test_alternative_prefers_plain_text_and_writes_the_header_block() -> None:
    message = simple()
    message.set_content("Hello Bob,\n\nthe numbers are in.\n")
    message.add_alternative("<p>HTML <b>version</b></p>", subtype="html")
    result = eml(message)
    text = markdown(result)
    assert text.startswith("# Quarterly report\n\n**From:** ann@example.com (Ann Smith)\\\n")
    assert "**To:** bob@example.com, carol@example.org (Carol)\\\n" in text
    assert "**Cc:** dave@example.net\\\n**Date:** 2024-03-05 10:30:00+01:00\\\n" in text
    assert (
        "**Subject:** Quarterly report\n\n## Content\n\nHello Bob,\n\nthe numbers are in.\n" in text
    )
    assert "HTML" not in text
    assert result.facts.title == "Quarterly report"
    assert result.facts.description == "Email from Ann Smith, 2024-03-05: Hello Bob,"
    assert result.facts.metadata["author"] == "ann@example.com (Ann Smith)"
    assert data(result) == {
        "subject": "Quarterly report",
        "from": {"name": "Ann Smith", "address": "ann@example.com"},
        "to": [
            {"name": None, "address": "bob@example.com"},
            {"name": "Carol", "address": "carol@example.org"},
        ],
        "cc": [{"name": None, "address": "dave@example.net"}],
        "date": "2024-03-05T10:30:00+01:00",
        "message_id": "<1@example.com>",
        "body_format": "plain",
        "attachments": [],
    }
    assert [s.part for s in result.segments()] == ["section=quarterly-report", "section=content"]


def test_html_only_body_goes_through_the_html_converter() -> None:
    message = simple()
    message.set_content(
        "<h1>Agenda</h1><p>See <a href='https://example.com/x'>the plan</a>.</p>", subtype="html"
    )
    result = eml(message)
    text = markdown(result)
    assert "## Content\n\n### Agenda\n\nSee [the plan](https://example.com/x).\n" in text
    assert data(result)["body_format"] == "html"
    assert [e.title for e in result.facts.outline] == ["Quarterly report", "Content", "Agenda"]


def test_rfc_2047_headers_and_legacy_charsets() -> None:
    raw = (
        b"From: =?iso-2022-jp?b?GyRCOzNFRBsoQg==?= <yamada@example.jp>\r\n"
        b"To: ivan@example.ru\r\n"
        b"Subject: =?windows-1251?b?0O7x8ejo?=\r\n"
        b"MIME-Version: 1.0\r\n"
        b"Content-Type: text/plain; charset=windows-1251\r\n"
        b"Content-Transfer-Encoding: quoted-printable\r\n\r\n"
        b"=CF=F0=E8=E2=E5=F2, =EC=E8=F0!\r\n"
    )
    result = convert(raw, "message/rfc822", "ru.eml")
    assert result.facts.title == "России"
    assert data(result)["from"] == {"name": "山田", "address": "yamada@example.jp"}
    assert "Привет, мир!" in markdown(result)


@pytest.mark.parametrize(
    ("charset", "encoding", "expected"),
    [
        ("iso-2022-jp", "7bit", "日本語のメール"),
        ("utf-16", "base64", "UTF-16 body ✓"),
        ("x-unknown-cs", "8bit", "café"),  # unknown charset: UTF-8, else Windows-1252
    ],
)
def test_body_charsets_and_transfer_encodings(charset: str, encoding: str, expected: str) -> None:
    message = MIMEText("", "plain", "utf-8")
    body = expected.encode("utf-8" if charset == "x-unknown-cs" else charset)
    if encoding == "base64":
        import base64

        body = base64.encodebytes(body)
    message.set_payload(body)
    message.replace_header("Content-Type", f'text/plain; charset="{charset}"')
    message.replace_header("Content-Transfer-Encoding", encoding)
    message["Subject"] = "Charset"
    assert f"## Content\n\n{expected}\n" in markdown(eml(message))


def test_unknown_charset_in_a_header_falls_back() -> None:
    raw = b"From: =?x-unknown?q?J=F6rg?= <j@example.org>\nSubject: hi\n\nbody\n"
    assert data(convert(raw, "message/rfc822", "a.eml"))["from"]["name"] == "Jörg"


def test_a_utf16_file_is_read() -> None:
    message = simple("Ünïcode")
    message.set_content("Saved as UTF-16 by a Windows tool.")
    raw = message.as_string().encode("utf-16")
    result = convert(raw, "application/octet-stream", "saved.eml")
    assert result.facts.title == "Ünïcode"
    assert "Saved as UTF-16 by a Windows tool." in markdown(result)


def with_attachments() -> MIMEMultipart:
    message = MIMEMultipart()
    for key, value in simple().items():
        message[key] = value
    message.attach(MIMEText("See the attached files.", "plain"))
    files: list[tuple[str, bytes, str]] = [
        ("notes.md", b"# Notes\n\nShip it.\n\n## Risks\n\nNone.\n", "text/markdown"),
        ("figures.csv", b"region,total\nnorth,12\nsouth,7\n", "text/csv"),
        ("page.html", b"<title>Page</title><h1>Page</h1><p>From HTML.</p>", "text/html"),
        ("setup.exe", b"MZ" + bytes(range(256)) * 4, "application/octet-stream"),
        ("broken.pdf", b"%PDF-1.7\nnot really", "application/pdf"),
    ]
    for name, body, mime_type in files:
        part = MIMEApplication(body, _subtype=mime_type.split("/")[1])
        part.add_header("Content-Disposition", "attachment", filename=name)
        message.attach(part)
    nested = simple("Forwarded")
    nested.set_content("Inner body.")
    forwarded = MIMEApplication(nested.as_bytes(), _subtype="octet-stream")
    forwarded.replace_header("Content-Type", "message/rfc822")
    del forwarded["Content-Transfer-Encoding"]
    forwarded.set_payload(nested.as_string())
    message.attach(forwarded)
    return message


def test_attachments_become_sections_parts_and_json_entries() -> None:
    result = eml(with_attachments())
    text = markdown(result)
    assert "## Attachments\n\n| Path | Type | Size | Result |\n" in text
    assert "| notes.md | text/markdown | 35 bytes | converted |\n" in text
    assert "## Attachment: notes.md\n\n### Notes\n\nShip it.\n\n#### Risks\n\nNone.\n" in text
    assert "## Attachment: figures.csv\n\n### figures.csv\n\n| region | total |" in text
    assert "## Attachment: page.html\n\n### Page\n\nFrom HTML.\n" in text
    assert "Inner body." not in text
    entries = {entry["path"]: entry for entry in data(result)["attachments"]}
    assert entries["notes.md"] == {
        "path": "notes.md",
        "type": "text/markdown",
        "size": 35,
        "converted": True,
        "title": "Notes",
        "part": "?section=attachment-notesmd",
    }
    assert entries["setup.exe"]["reason"].startswith("no converter for")
    assert entries["broken.pdf"]["reason"].startswith("corrupt: ")
    assert entries["Forwarded.eml"] == {
        "path": "Forwarded.eml",
        "type": "message/rfc822",
        "size": entries["Forwarded.eml"]["size"],
        "converted": False,
        "reason": "attached mail and archives are not opened",
    }
    parts = {segment.part for segment in result.segments()}
    assert {"section=attachment-notesmd", "section=attachment-figurescsv"} <= parts
    assert result.facts.metadata["attachments"] == "6"


def test_attachment_conversions_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(attachments, "MAX_CONVERTED", 1)
    monkeypatch.setattr(attachments, "MAX_LISTED", 4)
    result = eml(with_attachments())
    entries = data(result)["attachments"]
    assert [e["converted"] for e in entries] == [True, False, False, False]
    assert entries[1]["reason"] == "over the limit of 1 converted attachments"
    assert data(result)["attachments_omitted"] == 2
    assert "2 more attachments are not listed." in markdown(result)


def test_garbage_is_not_mail() -> None:
    with pytest.raises(ConversionError) as caught:
        convert(b"\x00\x01\x02garbage\xff\xfe", "message/rfc822", "junk.eml")
    assert (caught.value.reason, caught.value.message) == (
        "corrupt",
        "not an e-mail message: no mail headers",
    )


def test_nesting_is_bounded() -> None:
    raw = b"Subject: deep\nMIME-Version: 1.0\n"
    for depth in range(40):
        raw += f'Content-Type: multipart/mixed; boundary="b{depth}"\n\n--b{depth}\n'.encode()
    with pytest.raises(ConversionError) as caught:
        convert(raw, "message/rfc822", "deep.eml")
    assert caught.value.reason == "too_large"
    assert caught.value.message == "message over 32 levels of nested parts or 2000 parts"


def test_outlook_message() -> None:
    result = convert(MSG.read_bytes(), "application/vnd.ms-outlook", MSG.name)
    text = markdown(result)
    for expected in (
        "**From:** test.sender@example.com",
        "**To:** test.recipient@example.com",
        "**Subject:** Test Email Message",
        "## Content",
        "This is the body of the test email message",
    ):
        assert expected in text
    assert result.facts.title == "Test Email Message"
    found = data(result)
    assert found["from"] == {"name": "M. C. Kurtuluş", "address": "test.sender@example.com"}
    assert found["to"] == [{"name": None, "address": "test.recipient@example.com"}]
    assert (found["date"], found["body_format"]) == ("2024-12-22T08:23:00+00:00", "plain")


def test_outlook_rtf_body_is_de_encapsulated() -> None:
    import olefile

    with olefile.OleFileIO(str(MSG)) as ole:
        compressed = ole.openstream("__substg1.0_10090102").read()
    html = encapsulated_html(decompress_rtf(compressed).decode("latin-1"))
    assert html.strip() == '<div dir="ltr">This is the body of the test email message</div>'


def test_lzfu_decompression() -> None:
    # compressed_rtf.compress(b"{\\rtf1\\ansi\\ansicpg1252\\pard hello hello hello \\u1078?}")
    compressed = (
        b".\x00\x00\x007\x00\x00\x00LZFu\x86|\xe8\x17\x03\x00\n\x00rcpg125\xc22\n\xf3 hel"
        b"\t\x00\x0e\xbb\x81\x0c`1078?}\x10`"
    )
    assert (
        decompress_rtf(compressed)
        == b"{\\rtf1\\ansi\\ansicpg1252\\pard hello hello hello \\u1078?}"
    )
    with pytest.raises(ValueError, match="unknown compressed RTF kind"):
        decompress_rtf(compressed.replace(b"LZFu", b"XXXX"))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"From: someone\n\nnot OLE at all", "not an Outlook message: not an OLE2 compound file"),
        (MSG.read_bytes()[:3000], "unreadable Outlook message: "),
    ],
    ids=["not-ole", "truncated"],
)
def test_bad_outlook_files_are_corrupt(data: bytes, message: str) -> None:
    with pytest.raises(ConversionError) as caught:
        convert(data, "application/vnd.ms-outlook", "bad.msg")
    assert caught.value.reason == "corrupt"
    assert caught.value.message.startswith(message)


@NEEDS_PEERS
def test_markitdown_vectors() -> None:
    for vector in markitdown_vectors():
        if not vector["filename"].endswith((".msg", ".eml", ".rtf")):
            continue
        path: Path = TEST_FILES / vector["filename"]
        text = markdown(convert(path.read_bytes(), vector["mimetype"], path.name))
        missing = [s for s in vector["must_include"] if s not in text and s != "# Email Message"]
        assert not missing
        assert not [s for s in vector["must_not_include"] if s in text]
