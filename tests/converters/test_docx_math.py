# ruff: noqa: RUF001 - math letters and symbols are the point
"""DOCX equations: Word's Office Math (OMML) as LaTeX, ``$…$`` inline and ``$$…$$`` displayed.

mammoth's HTML drops ``m:oMath`` (issue 26: "For ," and "The angle is ." where the
formulas stood); the documents here are built from their XML parts.
"""

from __future__ import annotations

from pathlib import Path

from docshelf.converters import convert
from docshelf.converters.html.omml import omml_to_latex
from docshelf.converters.safexml import parse_xml
from tests.support.docx import DOCX, W, write_docx
from tests.support.results import markdown_of, text_of

M = "http://schemas.openxmlformats.org/officeDocument/2006/math"


def run(text: str, plain: bool = False) -> str:
    style = '<m:rPr><m:sty m:val="p"/></m:rPr>' if plain else ""
    return f"<m:r>{style}<m:t>{text}</m:t></m:r>"


def math(inner: str) -> str:
    return f'<m:oMath xmlns:m="{M}">{inner}</m:oMath>'


def latex(inner: str) -> str:
    """The LaTeX of one ``m:oMath`` holding ``inner``."""
    return omml_to_latex(parse_xml(f'<m:oMath xmlns:m="{M}" xmlns:w="{W}">{inner}</m:oMath>', "t"))


def convert_body(tmp_path: Path, body: str) -> tuple[str, str]:
    path = write_docx(tmp_path / "math.docx", body)
    result = convert(path.read_bytes(), DOCX, path.name)
    return markdown_of(result), text_of(result, "text/plain")


def test_inline_and_display_equations_become_latex(tmp_path: Path) -> None:
    body = (
        f'<w:p><w:r><w:t xml:space="preserve">For </w:t></w:r>{math(run("m") + run("=1", True))}'
        "<w:r><w:t>, we have</w:t></w:r></w:p>"
        f'<w:p><m:oMathPara xmlns:m="{M}">'
        + math(
            run("E")
            + run("=", True)
            + "<m:f><m:num>"
            + run("mλ")
            + "</m:num><m:den>"
            + run("a")
            + "</m:den></m:f>"
        )
        + "</m:oMathPara></w:p>"
        "<w:p><w:r><w:t>After the formula.</w:t></w:r></w:p>"
    )
    markdown, text = convert_body(tmp_path, body)
    assert "For $m=1$, we have" in markdown
    assert "\n\n$$E=\\frac{mλ}{a}$$\n\n" in markdown
    assert "After the formula." in markdown
    assert "For $m=1$, we have" in text
    assert "$$E=\\frac{mλ}{a}$$" in text


def test_the_rest_of_the_document_is_unchanged(tmp_path: Path) -> None:
    """Only the formulas are added: the text around them is what it was without them."""
    plain = (
        "<w:p><w:r><w:t>Alpha &amp; beta</w:t></w:r></w:p><w:p><w:r><w:t>Gamma</w:t></w:r></w:p>"
    )
    before, _ = convert_body(tmp_path, plain)
    after, _ = convert_body(tmp_path, plain + f"<w:p>{math(run('x'))}</w:p>")
    assert after == before + "\n$x$\n"


def test_structures() -> None:
    def e(inner: str) -> str:
        return f"<m:e>{inner}</m:e>"

    assert latex(f"<m:sSup>{e(run('x'))}<m:sup>{run('2')}</m:sup></m:sSup>") == "x^{2}"
    assert latex(f"<m:sSub>{e(run('a'))}<m:sub>{run('ij')}</m:sub></m:sSub>") == "a_{ij}"
    assert (
        latex(
            f"<m:sSubSup>{e(run('x'))}<m:sub>{run('1')}</m:sub><m:sup>{run('2')}</m:sup></m:sSubSup>"
        )
        == "x_{1}^{2}"
    )
    assert latex(
        f'<m:rad><m:radPr><m:degHide m:val="1"/></m:radPr><m:deg/>{e(run("x"))}</m:rad>'
    ) == ("\\sqrt{x}")
    assert latex(f"<m:rad><m:deg>{run('3')}</m:deg>{e(run('y'))}</m:rad>") == "\\sqrt[3]{y}"
    assert (
        latex(
            '<m:nary><m:naryPr><m:chr m:val="∑"/></m:naryPr>'
            f"<m:sub>{run('i=1')}</m:sub><m:sup>{run('n')}</m:sup>{e(run('i'))}</m:nary>"
        )
        == "\\sum_{i=1}^{n}{i}"
    )
    assert (
        latex(f"<m:nary><m:sub>{run('0')}</m:sub><m:sup>{run('∞')}</m:sup>{e(run('f'))}</m:nary>")
        == "\\int_{0}^{\\infty}{f}"
    )
    assert latex(f"<m:d>{e(run('a+b'))}</m:d>") == "\\left(a+b\\right)"
    assert (
        latex(f'<m:d><m:dPr><m:begChr m:val="{{"/><m:endChr m:val=""/></m:dPr>{e(run("x"))}</m:d>')
        == "\\left\\{x\\right."
    )
    assert (
        latex(f"<m:func><m:fName>{run('sin', True)}</m:fName>{e(run('θ'))}</m:func>") == "\\sin{θ}"
    )
    assert latex(f'<m:acc><m:accPr><m:chr m:val="⃗"/></m:accPr>{e(run("v"))}</m:acc>') == "\\vec{v}"
    assert latex(f'<m:bar><m:barPr><m:pos m:val="top"/></m:barPr>{e(run("z"))}</m:bar>') == (
        "\\overline{z}"
    )
    assert (
        latex("<m:limLow>" + e(run("lim", True)) + f"<m:lim>{run('x→0')}</m:lim></m:limLow>")
        == "\\lim_{x\\rightarrow 0}"
    )
    matrix = (
        f"<m:m><m:mr>{e(run('1'))}{e(run('0'))}</m:mr><m:mr>{e(run('0'))}{e(run('1'))}</m:mr></m:m>"
    )
    assert latex(matrix) == "\\begin{matrix}1 & 0 \\\\ 0 & 1\\end{matrix}"
    assert latex(f"<m:eqArr>{e(run('a=b'))}{e(run('c=d'))}</m:eqArr>") == (
        "\\begin{aligned}a=b \\\\ c=d\\end{aligned}"
    )
    assert latex(run("α≤β×γ→∞")) == "α\\leq β\\times γ\\rightarrow \\infty"
    assert latex(run("sin\u2061", True) + run("x")) == "\\sin x"
    assert latex("<m:r><m:rPr><m:nor/></m:rPr><m:t>if x</m:t></m:r>") == "\\text{if x}"
    assert latex(run("{50%}")) == "\\{50\\%\\}"


def test_deep_nesting_is_bounded() -> None:
    deep = run("x")
    for _ in range(400):
        deep = f"<m:sSup><m:e>{deep}</m:e><m:sup>{run('2')}</m:sup></m:sSup>"
    formula = latex(deep)
    assert "x" in formula and len(formula) < 4000
