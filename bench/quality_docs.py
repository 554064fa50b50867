# ruff: noqa: RUF001  (the documents are full of deliberate look-alike characters)
"""Documents the quality benchmark builds, each with the truth it was built from.

Everything here is deterministic and offline: PDFs drawn with fpdf2 (a docshelf
dependency), HTML and Markdown written as strings, a DOCX zipped from its XML
parts. Each :class:`BuiltDocument` carries a :class:`Truth`: the headings, table
cells, link targets, code, list items and title a faithful conversion keeps, the
visible text (for word and symbol recall) and the strings that must not appear.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from xml.sax.saxutils import escape

from fpdf import FPDF

from bench.quality_measures import Truth

FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"))
FIXED_DATE = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


@dataclass(frozen=True)
class BuiltDocument:
    name: str
    mime_type: str
    data: bytes
    truth: Truth = field(default_factory=Truth)


LEAKS = (("\N{PILCROW SIGN}", 0), ("\ufffd", 0), ("/Bullet", 0))


@cache
def find_font(filename: str) -> Path | None:
    """A system font file by name (DejaVu ships with Debian's fonts-dejavu-core)."""
    for directory in FONT_DIRS:
        if directory.is_dir():
            for path in sorted(directory.rglob(filename)):
                return path
    return None


# ---------------------------------------------------------------- PDF (fpdf2)

RUNNING_HEAD = "ACME Interchange Specification Draft 3"
PDF_TITLE = "Interchange Format Specification"
ASN1_CODE = """\
Record DEFINITIONS ::= BEGIN
    Entry ::= SEQUENCE {
        id      INTEGER,
        name    UTF8String
    }
END"""
XML_CODE = """\
<mime-types>
  <mime-type type="text/x-diff">
    <glob pattern="*.diff"/>
  </mime-type>
</mime-types>"""
RULED_TABLE = (
    ("Format", "Extension", "Engine"),
    ("Portable", ".pdf", "pdfium"),
    ("Hypertext", ".html", "htmlmd"),
    ("Wordprocessing", ".docx", "mammoth"),
)
BORDERLESS_TABLE = (
    ("Measure", "Unit", "Target"),
    ("Latency", "milliseconds", "250"),
    ("Throughput", "pages/second", "300"),
    ("Footprint", "megabytes", "512"),
)
PDF_LINKS = (
    ("the project home page", "https://docshelf.dev/quality"),
    ("the document schema", "https://docshelf.dev/schema/document/v1.json"),
)
MATH_LINE = "Γ(n) = (n − 1)! for n ≥ 1, ∑ k ≤ n² and x ∈ ℝ ⇒ |x| < ∞ ± ε"


class _SpecPDF(FPDF):
    def header(self) -> None:
        self.set_font("Helvetica", "I", 8)
        self.cell(0, 6, RUNNING_HEAD, align="C", new_x="LMARGIN", new_y="NEXT")
        self.ln(4)

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("Helvetica", "", 8)
        self.cell(0, 6, str(self.page_no()), align="C")


def build_spec_pdf() -> BuiltDocument:
    """Numbered headings with bookmarks, two tables, links, code, footnote, math, bullets."""
    sans = find_font("DejaVuSans.ttf")
    bold = find_font("DejaVuSans-Bold.ttf")
    pdf = _SpecPDF(format="A4")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title(PDF_TITLE)
    pdf.set_author("ACME Standards Group")
    body = "DejaVu" if sans and bold else "Helvetica"
    if sans and bold:
        pdf.add_font("DejaVu", "", str(sans))
        pdf.add_font("DejaVu", "B", str(bold))
    visible: list[str] = [RUNNING_HEAD]
    headings: list[str] = []

    def heading(text: str, level: int) -> None:
        pdf.ln(3)
        pdf.set_font(body, "B", 16 if level == 0 else 13)
        pdf.start_section(text, level)
        pdf.cell(0, 9, text, new_x="LMARGIN", new_y="NEXT")
        headings.append(text)
        visible.append(text)

    def para(text: str) -> None:
        pdf.set_font(body, "", 11)
        pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
        visible.append(text)

    def code(block: str) -> None:
        pdf.set_font("Courier", "", 10)
        for line in block.splitlines():
            pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
        visible.append(block)
        pdf.ln(2)

    def table(rows: tuple[tuple[str, ...], ...], ruled: bool) -> None:
        pdf.set_font(body, "", 10)
        layout = "ALL" if ruled else "NONE"
        with pdf.table(borders_layout=layout, width=150, line_height=7) as drawn:
            for cells in rows:
                drawn.row(cells)
        visible.extend(" ".join(cells) for cells in rows)
        pdf.ln(3)

    pdf.add_page()
    pdf.set_font(body, "B", 22)
    pdf.cell(0, 14, PDF_TITLE, new_x="LMARGIN", new_y="NEXT")
    visible.append(PDF_TITLE)
    heading("1 Introduction", 0)
    para(
        "This specification describes how documents are exchanged between archives "
        "and readers.\N{SUPERSCRIPT ONE} Conforming readers keep headings, tables and links."
    )
    bullets = ("Readers keep every heading.", "Writers embed their fonts.")
    pdf.set_font(body, "", 11)
    for item in bullets:
        pdf.cell(
            0,
            6,
            ("\N{BULLET} " if body == "DejaVu" else "- ") + item,
            new_x="LMARGIN",
            new_y="NEXT",
        )
    visible.extend(bullets)
    pdf.set_y(-30)
    pdf.set_font(body, "", 8)
    footnote = "\N{SUPERSCRIPT ONE} Archives older than version 2 are out of scope."
    pdf.cell(0, 5, footnote)
    visible.append(footnote)

    pdf.add_page()
    heading("2 Syntax", 0)
    para("Records are written in ASN.1 and registered in the shared MIME database.")
    heading("2.1 ASN.1 syntax", 1)
    code(ASN1_CODE)
    heading("2.2 XML registration", 1)
    code(XML_CODE)
    heading("3 Tables", 0)
    para("The engines per format, in a ruled table:")
    table(RULED_TABLE, ruled=True)
    para("The targets, in a table without rules:")
    table(BORDERLESS_TABLE, ruled=False)

    pdf.add_page()
    heading("4 References", 0)
    pdf.set_font(body, "", 11)
    pdf.write(6, "Read ")
    pdf.write(6, PDF_LINKS[0][0], link=PDF_LINKS[0][1])
    pdf.write(6, " and ")
    pdf.write(6, PDF_LINKS[1][0], link=PDF_LINKS[1][1])
    pdf.write(6, ".")
    pdf.ln(8)
    visible.append(f"Read {PDF_LINKS[0][0]} and {PDF_LINKS[1][0]}.")
    heading("5 Mathematics", 0)
    symbols = MATH_LINE if body == "DejaVu" else "Gamma(n) = (n - 1)! for n >= 1"
    para(symbols)
    truth = Truth(
        headings=tuple(headings),
        tables=(RULED_TABLE, BORDERLESS_TABLE),
        links=tuple(href for _, href in PDF_LINKS),
        code=(ASN1_CODE, XML_CODE),
        lists=tuple((item, 0) for item in bullets),
        titles=(PDF_TITLE,),
        text="\n".join(visible),
        forbidden=(*LEAKS, (RUNNING_HEAD, 1)),
    )
    return BuiltDocument("built/spec.pdf", "application/pdf", bytes(pdf.output()), truth)


# ---------------------------------------------------------------------- HTML

SPHINX_CODE = 'project = "docshelf"\nextensions = [\n    "sphinx.ext.autodoc",\n]'
SPHINX_TABLE = (
    ("Option", "Default", "Meaning"),
    ("language", "en", "the language"),
    ("nitpicky", "False", "warn on every missing reference"),
)


def build_sphinx_html() -> BuiltDocument:
    """A Sphinx page: ¶ header links, a highlighted code block, a docutils table."""
    rows = "".join(
        "<tr>" + "".join(f"<td><p>{escape(c)}</p></td>" for c in row) + "</tr>"
        for row in SPHINX_TABLE[1:]
    )
    head = "".join(f'<th class="head"><p>{escape(c)}</p></th>' for c in SPHINX_TABLE[0])
    code = "\n".join(f'<span class="n">{escape(line)}</span>' for line in SPHINX_CODE.split("\n"))
    html = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Configuration &#8212; Demo 1.0 documentation</title></head>
<body><div class="document"><div class="body" role="main">
<section id="configuration">
<h1>Configuration<a class="headerlink" href="#configuration" title="Link to this heading">¶</a></h1>
<p>The file <code class="docutils literal notranslate"><span class="pre">conf.py</span></code>
holds the settings of <a class="reference external" href="https://www.sphinx-doc.org/en/master/">Sphinx</a>;
see <a class="reference internal" href="#options"><span class="std std-ref">General
options</span></a>.</p>
<section id="options">
<h2>General options<a class="headerlink" href="#options" title="Link to this heading">¶</a></h2>
<div class="highlight-python notranslate"><div class="highlight"><pre><span></span>{code}
</pre></div></div>
<table class="docutils align-default"><thead><tr class="row-odd">{head}</tr></thead>
<tbody>{rows}</tbody></table>
</section>
<section id="extensions">
<h2>Extensions<a class="headerlink" href="#extensions" title="Link to this heading">¶</a></h2>
<p>Extensions live on <a class="reference external" href="https://pypi.org/search/?q=sphinxcontrib">PyPI</a>
&#8212; most need nothing else.</p>
</section></section></div></div>
<div class="footer">&#169;2024, Demo authors.</div></body></html>"""
    text = "\n".join(
        [
            "Configuration",
            "The file conf.py holds the settings of Sphinx; see General options.",
            "General options",
            SPHINX_CODE,
            *(" ".join(r) for r in SPHINX_TABLE),
            "Extensions",
            "Extensions live on PyPI — most need nothing else.",
            "©2024, Demo authors.",
        ]
    )
    truth = Truth(
        headings=("Configuration", "General options", "Extensions"),
        tables=(SPHINX_TABLE,),
        links=("https://www.sphinx-doc.org/en/master/", "https://pypi.org/search/?q=sphinxcontrib"),
        code=(SPHINX_CODE,),
        titles=("Configuration", "Configuration — Demo 1.0 documentation"),
        text=text,
        forbidden=LEAKS,
    )
    return BuiltDocument("built/sphinx.html", "text/html", html.encode(), truth)


TEXINFO_CODE = "grep -i 'hello.*world' menu.h main.c"
TEXINFO_OPTIONS = (
    ("-i", "--ignore-case", "Ignore case distinctions in patterns and input data."),
    ("-v", "--invert-match", "Invert the sense of matching, to select non-matching lines."),
)


def build_texinfo_html() -> BuiltDocument:
    """GNU texinfo output: numbered chapter headings, a <dl> of options, an example."""
    items = "".join(
        f'<dt><samp class="option">{short}</samp></dt>\n'
        f'<dt><samp class="option">{long}</samp></dt>\n'
        f"<dd><p>{escape(meaning)}</p></dd>\n"
        for short, long, meaning in TEXINFO_OPTIONS
    )
    html = f"""<!DOCTYPE html>
<html><head><title>Invoking grep (GNU Grep 3.11)</title>
<meta name="description" content="Invoking grep (GNU Grep 3.11)"></head><body lang="en">
<div class="chapter-level-extent" id="Invoking">
<div class="nav-panel"><p>Next: <a href="#Regular-Expressions" accesskey="n"
rel="next">Regular Expressions</a>,
Up: <a href="#index-top" accesskey="u" rel="up">GNU Grep</a></p></div><hr>
<h2 class="chapter" id="Invoking-grep">2 Invoking <code class="command">grep</code></h2>
<p>The general synopsis of the command line is described in the
<a class="uref" href="https://www.gnu.org/software/grep/manual/">online manual</a>.</p>
<div class="section-level-extent" id="Command_002dline-Options">
<h3 class="section">2.1 Command-line Options</h3>
<dl class="table">
{items}</dl>
<div class="example"><pre class="example-preformatted">{escape(TEXINFO_CODE)}
</pre></div>
</div></div></body></html>"""
    text = "\n".join(
        [
            "Next: Regular Expressions, Up: GNU Grep",
            "2 Invoking grep",
            "The general synopsis of the command line is described in the online manual.",
            "2.1 Command-line Options",
            *(" ".join(o) for o in TEXINFO_OPTIONS),
            TEXINFO_CODE,
        ]
    )
    truth = Truth(
        headings=("2 Invoking grep", "2.1 Command-line Options"),
        links=("https://www.gnu.org/software/grep/manual/",),
        code=(TEXINFO_CODE,),
        titles=("Invoking grep (GNU Grep 3.11)", "2 Invoking grep", "Invoking grep"),
        text=text,
        forbidden=LEAKS,
    )
    return BuiltDocument("built/texinfo.html", "text/html", html.encode(), truth)


DATA_TABLE = (
    ("Quarter", "Revenue", "Growth"),
    ("Q1 2024", "€1.2 million", "+4 %"),
    ("Q2 2024", "€1.5 million", "+25 %"),
)


def build_layout_html() -> BuiltDocument:
    """An old-style page laid out with nested tables around one real data table."""
    head = "".join(f"<th>{escape(c)}</th>" for c in DATA_TABLE[0])
    rows = "".join(
        "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in DATA_TABLE[1:]
    )
    html = f"""<html><head><title>Quarterly Report</title></head><body>
<table width="100%" border="0" cellpadding="0"><tr>
<td width="160" valign="top"><table border="0">
<tr><td><a href="https://example.com/">Home</a></td></tr>
<tr><td><a href="https://example.com/reports/">Reports</a></td></tr></table></td>
<td valign="top"><h1>Quarterly Report</h1>
<p>Revenue grew in both quarters; details are in the
<a href="https://example.com/reports/2024-q2.pdf">full report</a>.</p>
<table border="1"><tr>{head}</tr>{rows}</table>
<h2>Outlook</h2><p>The third quarter starts slower.</p>
</td></tr></table></body></html>"""
    text = "\n".join(
        [
            "Home",
            "Reports",
            "Quarterly Report",
            "Revenue grew in both quarters; details are in the full report.",
            *(" ".join(r) for r in DATA_TABLE),
            "Outlook",
            "The third quarter starts slower.",
        ]
    )
    truth = Truth(
        headings=("Quarterly Report", "Outlook"),
        tables=(DATA_TABLE,),
        links=(
            "https://example.com/",
            "https://example.com/reports/",
            "https://example.com/reports/2024-q2.pdf",
        ),
        titles=("Quarterly Report",),
        text=text,
        forbidden=LEAKS,
    )
    return BuiltDocument("built/layout.html", "text/html", html.encode(), truth)


# ---------------------------------------------------------------------- DOCX

DOCX_TITLE = "Annual Widget Report"
DOCX_TABLE = (("Region", "Units", "Change"), ("North", "1,200", "+8 %"), ("South", "950", "−3 %"))
DOCX_LIST = (
    ("Widgets shipped on time", 0),
    ("Blue widgets", 1),
    ("Red widgets", 1),
    ("Returns fell", 0),
)
_W = (
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
)


def _run(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r>'


def _para(text: str, style: str | None = None, numbering: tuple[int, int] | None = None) -> str:
    props = f'<w:pStyle w:val="{style}"/>' if style else ""
    if numbering:
        props += (
            f'<w:numPr><w:ilvl w:val="{numbering[0]}"/><w:numId w:val="{numbering[1]}"/></w:numPr>'
        )
    return f"<w:p><w:pPr>{props}</w:pPr>{_run(text)}</w:p>"


def build_docx() -> BuiltDocument:
    """A Word document from its XML parts: Title, headings, table, hyperlink, nested bullets."""
    cells = "".join(
        "<w:tr>" + "".join(f"<w:tc>{_para(c)}</w:tc>" for c in row) + "</w:tr>"
        for row in DOCX_TABLE
    )
    body = "".join(
        [
            _para(DOCX_TITLE, "Title"),
            _para("1 Summary", "Heading1"),
            _para("Sales rose in every region but one."),
            f'<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/></w:tblPr>{cells}</w:tbl>',
            _para("1.1 Highlights", "Heading2"),
            *(_para(t, "ListBullet" if d == 0 else "ListBullet2", (d, 1)) for t, d in DOCX_LIST),
            _para("2 Sources", "Heading1"),
            '<w:p><w:r><w:t xml:space="preserve">Figures come from </w:t></w:r>'
            '<w:hyperlink r:id="rId9"><w:r><w:rPr><w:rStyle w:val="Hyperlink"/></w:rPr>'
            "<w:t>the sales ledger</w:t></w:r></w:hyperlink><w:r><w:t>.</w:t></w:r></w:p>",
        ]
    )
    document = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        f"<w:document {_W}><w:body>{body}<w:sectPr/></w:body></w:document>"
    )

    def style(sid: str, name: str, based: str = "Normal") -> str:
        return (
            f'<w:style w:type="paragraph" w:styleId="{sid}"><w:name w:val="{name}"/>'
            f'<w:basedOn w:val="{based}"/></w:style>'
        )

    styles = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:styles {_W}>'
        '<w:style w:type="paragraph" w:default="1" w:styleId="Normal">'
        '<w:name w:val="Normal"/></w:style>'
        + style("Title", "Title")
        + style("Heading1", "heading 1")
        + style("Heading2", "heading 2")
        + style("ListBullet", "List Bullet")
        + style("ListBullet2", "List Bullet 2")
        + '<w:style w:type="character" w:styleId="Hyperlink"><w:name w:val="Hyperlink"/></w:style>'
        "</w:styles>"
    )
    levels = "".join(
        f'<w:lvl w:ilvl="{i}"><w:start w:val="1"/><w:numFmt w:val="bullet"/>'
        f'<w:lvlText w:val="{b}"/><w:pPr><w:ind w:left="{720 * (i + 1)}" w:hanging="360"/>'
        "</w:pPr></w:lvl>"
        for i, b in enumerate("•◦")
    )
    numbering = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:numbering {_W}>'
        f'<w:abstractNum w:abstractNumId="0">{levels}</w:abstractNum>'
        '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>'
    )
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006"
    parts = {
        "[Content_Types].xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="{pkg}/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.wordprocessingml.document.main+xml"/>'
            '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.wordprocessingml.styles+xml"/>'
            '<Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.wordprocessingml.numbering+xml"/>'
            '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-'
            'package.core-properties+xml"/></Types>'
        ),
        "_rels/.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{pkg}/relationships">'
            f'<Relationship Id="rId1" Type="{rel}/officeDocument" Target="word/document.xml"/>'
            f'<Relationship Id="rId2" Type="{pkg}/relationships/metadata/core-properties" '
            'Target="docProps/core.xml"/></Relationships>'
        ),
        "word/_rels/document.xml.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{pkg}/relationships">'
            f'<Relationship Id="rId1" Type="{rel}/styles" Target="styles.xml"/>'
            f'<Relationship Id="rId2" Type="{rel}/numbering" Target="numbering.xml"/>'
            f'<Relationship Id="rId9" Type="{rel}/hyperlink" '
            'Target="https://ledger.example.com/2024" TargetMode="External"/></Relationships>'
        ),
        "word/document.xml": document,
        "word/styles.xml": styles,
        "word/numbering.xml": numbering,
        "docProps/core.xml": (
            '<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.'
            'openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/'
            'dc/elements/1.1/"><dc:subject>Widget sales</dc:subject><dc:creator>ACME</dc:creator>'
            "<dc:description>Figures for the board</dc:description></cp:coreProperties>"
        ),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in parts.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 2, 3, 4, 6))
            archive.writestr(info, content.encode(), zipfile.ZIP_DEFLATED)
    text = "\n".join(
        [
            DOCX_TITLE,
            "1 Summary",
            "Sales rose in every region but one.",
            *(" ".join(r) for r in DOCX_TABLE),
            "1.1 Highlights",
            *(t for t, _ in DOCX_LIST),
            "2 Sources",
            "Figures come from the sales ledger.",
        ]
    )
    truth = Truth(
        headings=("1 Summary", "1.1 Highlights", "2 Sources"),
        tables=(DOCX_TABLE,),
        links=("https://ledger.example.com/2024",),
        lists=DOCX_LIST,
        titles=(DOCX_TITLE,),
        text=text,
        forbidden=LEAKS,
    )
    mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    return BuiltDocument("built/report.docx", mime, buffer.getvalue(), truth)


# ------------------------------------------------------------------ Markdown

ZSTD_TABLE = (
    ("Compressor name", "Ratio", "Compression", "Decompress."),
    ("zstd 1.5.6 -1", "2.887", "510 MB/s", "1580 MB/s"),
    ("zlib 1.2.13 -1", "2.743", "95 MB/s", "400 MB/s"),
)
ZSTD_README = """\
<p align="center"><img src="doc/images/zstd_logo86.png" alt="Zstandard"></p>

__Zstandard__, or `zstd` as short version, is a fast lossless compression algorithm,
targeting real-time compression scenarios at zlib-level and better compression ratios.
It's backed by a very fast entropy stage, provided by [Huff0 and FSE library](https://github.com/Cyan4973/FiniteStateEntropy).

## Benchmarks

| Compressor name | Ratio | Compression | Decompress. |
| --------------- | ----- | ----------- | ----------- |
| **zstd 1.5.6 -1** | 2.887 | 510 MB/s | 1580 MB/s |
| zlib 1.2.13 -1 | 2.743 | 95 MB/s | 400 MB/s |

## Build instructions

```sh
make
make install
```

## License

Zstandard is dual-licensed under [BSD](LICENSE) and [GPLv2](COPYING).
"""


def build_zstd_readme() -> BuiltDocument:
    text = "\n".join(
        [
            "Zstandard, or zstd as short version, is a fast lossless compression algorithm, "
            "targeting real-time compression scenarios at zlib-level and better "
            "compression ratios.",
            "It's backed by a very fast entropy stage, provided by Huff0 and FSE library.",
            "Benchmarks",
            *(" ".join(r) for r in ZSTD_TABLE),
            "Build instructions",
            "make\nmake install",
            "License",
            "Zstandard is dual-licensed under BSD and GPLv2.",
        ]
    )
    truth = Truth(
        headings=("Benchmarks", "Build instructions", "License"),
        tables=(ZSTD_TABLE,),
        links=("https://github.com/Cyan4973/FiniteStateEntropy", "LICENSE", "COPYING"),
        code=("make\nmake install",),
        titles=("Zstandard",),
        text=text,
        forbidden=LEAKS,
    )
    return BuiltDocument("built/README.md", "text/markdown", ZSTD_README.encode(), truth)


MIXED_LINES = (
    "English text with “quotes” — and a dash.",
    "日本語のテキスト（全角括弧）、中文：你好，世界。",
    "العربية: مرحبا بالعالم ، ١٢٣ ؟",
    "∀x ∈ ℝ: x² ≥ 0; ∑ aₖ ≤ ∞; ½ ± ∆ ≠ √2 → §3 ‰",
)


def build_mixed_markdown() -> BuiltDocument:
    source = "# Mixed scripts\n\n" + "\n\n".join(MIXED_LINES) + "\n\n## Notes\n\nEnd of file.\n"
    truth = Truth(
        headings=("Mixed scripts", "Notes"),
        titles=("Mixed scripts",),
        text="\n".join(["Mixed scripts", *MIXED_LINES, "Notes", "End of file."]),
        forbidden=LEAKS,
    )
    return BuiltDocument("built/mixed.md", "text/markdown", source.encode(), truth)


def build_all() -> list[BuiltDocument]:
    """Every built document, in a fixed order."""
    return [
        build_spec_pdf(),
        build_sphinx_html(),
        build_texinfo_html(),
        build_layout_html(),
        build_docx(),
        build_zstd_readme(),
        build_mixed_markdown(),
    ]
