"""The third set of the quality benchmark: documents built per defect class of issue 26.

Nobody tuned docshelf on these: each is built from known content to show one class
of defect found on unseen documents, and carries its truth (:class:`Truth`), so every
figure is computed. The PDFs of items 5-9, 11 and 13 are :mod:`bench.defect_pdfs`;
here are the rest:

- scans (item 1): a page of known text rendered by PDFium (pypdfium2) at 150 and
  200 dpi and wrapped by Pillow in an image-only PDF; docshelf reads them with OCR
  allowed (``Source(ocr=True)``, the second pass a shelf queues);
- a DOCX with Office Math, inline and display (item 10);
- a web page with navigation chrome and tracking redirect links (item 12).
"""

from __future__ import annotations

import base64
import io
import zipfile
from xml.sax.saxutils import escape

from fpdf import FPDF

from bench.defect_pdfs import PDF, PREFIX, build_pdfs
from bench.quality_docs import FIXED_DATE, LEAKS, BuiltDocument, find_font
from bench.quality_measures import Truth

# ------------------------------------------------------------------ item 1: scans

SCAN_TITLE = "Notice of Annual Water Testing"
SCAN_PARAGRAPHS = (
    "Residents of the Eastfield district are advised that the annual testing of the "
    "drinking water supply will take place between 3 and 14 June.",
    "Technicians from the regional laboratory will collect samples at forty points in "
    "the network. Supply will not be interrupted, but pressure may drop briefly while "
    "hydrants are flushed.",
    "Results are published on the council notice board within six weeks. Questions "
    "about the programme may be sent to the water office at the town hall.",
)
SCAN_DPIS = (150, 200)


def _text_page() -> bytes:
    """The page the scans are taken of: a title and three paragraphs, 12 pt."""
    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_DATE)
    sans, bold = find_font("DejaVuSans.ttf"), find_font("DejaVuSans-Bold.ttf")
    family = "Helvetica"
    if sans and bold:
        pdf.add_font("Body", "", str(sans))
        pdf.add_font("Body", "B", str(bold))
        family = "Body"
    pdf.add_page()
    pdf.set_font(family, "B", 18)
    pdf.cell(0, 12, SCAN_TITLE, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_font(family, "", 12)
    for paragraph in SCAN_PARAGRAPHS:
        pdf.multi_cell(0, 7, paragraph, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
    return bytes(pdf.output())


def scanned(dpi: int) -> BuiltDocument:
    """The text page as a scanner delivers it: one greyscale image per page, no text."""
    import pypdfium2

    document = pypdfium2.PdfDocument(_text_page())
    try:
        image = document[0].render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
    finally:
        document.close()
    out = io.BytesIO()
    image.save(out, "PDF", resolution=float(dpi))
    truth = Truth(
        text="\n".join([SCAN_TITLE, *SCAN_PARAGRAPHS]),
        forbidden=(*LEAKS, ("## Page", 0)),
    )
    return BuiltDocument(f"{PREFIX}scan-{dpi}dpi.pdf", PDF, out.getvalue(), truth)


# ----------------------------------------------------------- item 10: Office Math

_W = (
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'
)


#: The run properties Word writes in every math run (the Cambria Math face).
_MATH_FONT = '<w:rPr><w:rFonts w:ascii="Cambria Math" w:hAnsi="Cambria Math"/></w:rPr>'


def _mr(text: str) -> str:
    return f"<m:r>{_MATH_FONT}<m:t>{escape(text)}</m:t></m:r>"


def _sup(base: str, exponent: str) -> str:
    return f"<m:sSup><m:e>{_mr(base)}</m:e><m:sup>{_mr(exponent)}</m:sup></m:sSup>"


def _run(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r>'


#: Inline: x² + y² = 25; display: a over b = 0.5 (words kept apart, so any faithful
#: spelling, LaTeX or not, holds the words of the truth).
INLINE_MATH = "<m:oMath>" + _sup("x", "2") + _mr("+") + _sup("y", "2") + _mr("=25") + "</m:oMath>"
DISPLAY_MATH = (
    "<m:oMathPara><m:oMath><m:f><m:num>"
    + _mr("a")
    + "</m:num><m:den>"
    + _mr("b")
    + "</m:den></m:f>"
    + _mr("=0.5")
    + "</m:oMath></m:oMathPara>"
)


def equations_docx() -> BuiltDocument:
    """Word's Office Math, one equation in a sentence and one on its own."""
    body = (
        f'<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr>{_run("Circle equations")}</w:p>'
        f"<w:p>{_run('Every point on the circle satisfies ')}{INLINE_MATH}{_run(' exactly.')}</w:p>"
        f"<w:p>{_run('The ratio of the two radii is')}</w:p>"
        f"<w:p>{DISPLAY_MATH}</w:p>"
        f"<w:p>{_run('for the outer ring.')}</w:p>"
    )
    document = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        f"<w:document {_W}><w:body>{body}<w:sectPr/></w:body></w:document>"
    )
    pkg = "http://schemas.openxmlformats.org/package/2006"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    main = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    parts = {
        "[Content_Types].xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="{pkg}/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/word/document.xml" ContentType="{main}"/></Types>'
        ),
        "_rels/.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{pkg}/relationships">'
            f'<Relationship Id="rId1" Type="{rel}/officeDocument" Target="word/document.xml"/>'
            "</Relationships>"
        ),
        "word/document.xml": document,
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in parts.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 2, 3, 4, 6)), content)
    text = "\n".join(
        [
            "Circle equations",
            "Every point on the circle satisfies x 2 + y 2 = 25 exactly.",
            "The ratio of the two radii is",
            "a b = 0.5",
            "for the outer ring.",
        ]
    )
    mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    truth = Truth(headings=("Circle equations",), text=text, forbidden=LEAKS)
    return BuiltDocument(PREFIX + "equations.docx", mime, buffer.getvalue(), truth)


# ------------------------------------------------- item 12: a page and its chrome

ARTICLE_LINKS = ("https://example.org/reports/river-survey-2024", "https://example.net/maps/delta")
#: Chrome that must not reach the Markdown: skip link, sidebar button, language menu,
#: cookie banner, footer links, and the redirector's own address.
CHROME = (
    "Skip to content",
    "move to sidebar",
    "Deutsch",
    "Français",
    "We use cookies",
    "Accept all",
    "Privacy policy",
    "Terms of use",
    "bing.com/ck/a",
)


def _tracking(target: str) -> str:
    """A Bing result link: the redirector with the target in ``u=a1<base64url>``."""
    encoded = base64.urlsafe_b64encode(target.encode()).decode().rstrip("=")
    return f"https://www.bing.com/ck/a?!&amp;&amp;p=3f9a0c&amp;u=a1{encoded}&amp;ntb=1"


def chrome_page() -> BuiltDocument:
    """An article inside site navigation, a sidebar, a language menu, a cookie banner
    and a footer of links, its links wrapped in tracking redirects."""
    html = f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>River survey finds cleaner water - Delta News</title></head><body>
<a class="skip-link" href="#main">Skip to content</a>
<div id="cookie-banner" role="dialog"><p>We use cookies to improve the site.</p>
<button>Accept all</button></div>
<header><nav aria-label="Main"><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li>
<li><a href="/sport">Sport</a></li></ul></nav>
<div class="lang-menu"><ul><li><a href="/de/" lang="de">Deutsch</a></li>
<li><a href="/fr/" lang="fr">Français</a></li></ul></div></header>
<aside role="navigation"><button class="vector-pin">move to sidebar</button>
<ul><li><a href="/archive">Archive</a></li><li><a href="/contact">Contact</a></li></ul></aside>
<main id="main"><article>
<h1>River survey finds cleaner water</h1>
<p>The 2024 survey of the delta measured less nitrate at every station than in 2019.
The <a href="{_tracking(ARTICLE_LINKS[0])}">full survey report</a> lists each station.</p>
<h2>Where the samples came from</h2>
<p>Samples were taken at twelve stations shown on the
<a href="{_tracking(ARTICLE_LINKS[1])}">delta map</a>.</p>
</article></main>
<footer><ul><li><a href="/privacy">Privacy policy</a></li><li><a href="/terms">Terms of use</a></li>
</ul></footer></body></html>"""
    text = "\n".join(
        [
            "River survey finds cleaner water",
            "The 2024 survey of the delta measured less nitrate at every station than in 2019.",
            "The full survey report lists each station.",
            "Where the samples came from",
            "Samples were taken at twelve stations shown on the delta map.",
        ]
    )
    truth = Truth(
        headings=("River survey finds cleaner water", "Where the samples came from"),
        links=ARTICLE_LINKS,
        titles=(
            "River survey finds cleaner water",
            "River survey finds cleaner water - Delta News",
        ),
        text=text,
        forbidden=(*LEAKS, *((chrome, 0) for chrome in CHROME)),
    )
    return BuiltDocument(PREFIX + "chrome.html", "text/html", html.encode(), truth)


#: The documents docshelf reads with OCR allowed.
OCR_DOCUMENTS = frozenset(f"{PREFIX}scan-{dpi}dpi.pdf" for dpi in SCAN_DPIS)


def build_defects(notes: list[str]) -> list[BuiltDocument]:
    """Every document of the third set, in a fixed order."""
    return [
        *(scanned(dpi) for dpi in SCAN_DPIS),
        *build_pdfs(notes),
        equations_docx(),
        chrome_page(),
    ]
