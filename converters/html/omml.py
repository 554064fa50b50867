# ruff: noqa: RUF001 - math symbols, look-alikes of letters, are what this module maps
"""Office Math (OMML, Word's ``m:oMath``) as LaTeX.

Word keeps a formula as a tree of math objects (ECMA-376 part 1, §22.1): runs of
text, fractions, scripts, radicals, n-ary operators, delimiters, functions,
accents, bars, limits, matrices and equation arrays. Each object has one LaTeX
spelling, written here from its children's; property elements (``…Pr``) only
choose among spellings. Text is written symbol by symbol: operators by their
LaTeX names, LaTeX's special characters escaped, letters (Greek too) as they
are (:data:`SYMBOLS` says why). Unknown
objects are read as their children, so a formula loses structure, never text.

Nesting deeper than :data:`MAX_DEPTH` is written as its text alone: LaTeX would
not render it either, and the translation recurses.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from xml.etree.ElementTree import Element

from docshelf.converters.safexml import local_name, namespace

MATH_NAMESPACE = "http://schemas.openxmlformats.org/officeDocument/2006/math"
MAX_DEPTH = 60

_M = f"{{{MATH_NAMESPACE}}}"
_VAL = f"{_M}val"

#: Operators and signs with a LaTeX command of their own (as written in math mode).
#: Letters are not here: Greek and other letters stay the characters Word stored
#: (``θ``, not ``\\theta``), which MathJax and KaTeX, the renderers of Markdown
#: math, read as they are, and which a reader searches the text for.
SYMBOLS = {
    "×": "\\times",
    "·": "\\cdot",
    "⋅": "\\cdot",
    "÷": "\\div",
    "±": "\\pm",
    "∓": "\\mp",
    "−": "-",
    "∗": "\\ast",
    "*": "\\ast",  # a Markdown emphasis marker otherwise
    "∘": "\\circ",
    "∙": "\\bullet",
    "≤": "\\leq",
    "≥": "\\geq",
    "≠": "\\neq",
    "≈": "\\approx",
    "≡": "\\equiv",
    "≅": "\\cong",
    "∼": "\\sim",
    "≃": "\\simeq",
    "∝": "\\propto",
    "≪": "\\ll",
    "≫": "\\gg",
    "∞": "\\infty",
    "∂": "\\partial",
    "∇": "\\nabla",
    "→": "\\rightarrow",
    "←": "\\leftarrow",
    "↔": "\\leftrightarrow",
    "⇒": "\\Rightarrow",
    "⇐": "\\Leftarrow",
    "⇔": "\\Leftrightarrow",
    "↦": "\\mapsto",
    "∈": "\\in",
    "∉": "\\notin",
    "∋": "\\ni",
    "⊂": "\\subset",
    "⊆": "\\subseteq",
    "⊃": "\\supset",
    "⊇": "\\supseteq",
    "∪": "\\cup",
    "∩": "\\cap",
    "∖": "\\setminus",
    "∀": "\\forall",
    "∃": "\\exists",
    "∄": "\\nexists",
    "¬": "\\neg",
    "∧": "\\wedge",
    "∨": "\\vee",
    "⊕": "\\oplus",
    "⊗": "\\otimes",
    "⊥": "\\perp",
    "∥": "\\parallel",
    "∠": "\\angle",
    "∅": "\\emptyset",
    "ℏ": "\\hbar",
    "ℓ": "\\ell",
    "ℜ": "\\Re",
    "ℑ": "\\Im",
    "ℵ": "\\aleph",
    "ℝ": "\\mathbb{R}",
    "ℕ": "\\mathbb{N}",
    "ℤ": "\\mathbb{Z}",
    "ℚ": "\\mathbb{Q}",
    "ℂ": "\\mathbb{C}",
    "…": "\\ldots",
    "⋯": "\\cdots",
    "⋮": "\\vdots",
    "⋱": "\\ddots",
    "′": "'",
    "″": "''",
    "°": "^{\\circ}",
    "⟨": "\\langle",
    "⟩": "\\rangle",
    "∑": "\\sum",
    "∏": "\\prod",
    "∫": "\\int",
    "√": "\\surd",
    # LaTeX's own special characters.
    "{": "\\{",
    "}": "\\}",
    "#": "\\#",
    "%": "\\%",
    "&": "\\&",
    "$": "\\$",
    "_": "\\_",
    "\\": "\\backslash",
    "~": "\\sim",
    "^": "\\hat{}",
}
#: Invisible operators (function application, invisible times, separator, plus).
INVISIBLE = frozenset("\u2061\u2062\u2063\u2064\u200b")
#: n-ary operators: the character Word shows, its LaTeX command (an integral when unnamed).
NARY = {
    "∑": "\\sum",
    "∏": "\\prod",
    "∐": "\\coprod",
    "∫": "\\int",
    "∬": "\\iint",
    "∭": "\\iiint",
    "∮": "\\oint",
    "∯": "\\oiint",
    "⋃": "\\bigcup",
    "⋂": "\\bigcap",
    "⋁": "\\bigvee",
    "⋀": "\\bigwedge",
    "⨁": "\\bigoplus",
    "⨂": "\\bigotimes",
}
#: Delimiter characters (as ``\left``/``\right`` take them; "" is the invisible one).
DELIMITERS = {
    "": ".",
    "{": "\\{",
    "}": "\\}",
    "⟨": "\\langle",
    "⟩": "\\rangle",
    "〈": "\\langle",
    "〉": "\\rangle",
    "‖": "\\|",
    "⌊": "\\lfloor",
    "⌋": "\\rfloor",
    "⌈": "\\lceil",
    "⌉": "\\rceil",
}
#: Accents (combining characters Word stores in ``m:accPr/m:chr``; hat when unnamed).
ACCENTS = {
    "\u0302": "\\hat",
    "\u0303": "\\tilde",
    "\u0304": "\\bar",
    "\u0305": "\\overline",
    "\u0307": "\\dot",
    "\u0308": "\\ddot",
    "\u20db": "\\dddot",
    "\u0301": "\\acute",
    "\u0300": "\\grave",
    "\u0306": "\\breve",
    "\u030c": "\\check",
    "\u20d7": "\\vec",
    "\u20d6": "\\overleftarrow",
    "\u20e1": "\\overleftrightarrow",
}
#: Function names LaTeX has a command for (others are ``\operatorname``).
FUNCTIONS = frozenset(
    {
        *("sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan"),
        *("sinh", "cosh", "tanh", "coth", "log", "ln", "lg", "exp", "lim", "liminf"),
        *("limsup", "max", "min", "sup", "inf", "det", "dim", "ker", "deg", "gcd"),
        *("arg", "hom", "Pr"),
    }
)
#: Functions whose limits go beneath them (``\lim_{x\to 0}``), as Word's ``m:limLow`` shows.
LIMIT_FUNCTIONS = frozenset(
    {"lim", "liminf", "limsup", "max", "min", "sup", "inf", "det", "gcd", "Pr"}
)

_ROW_BREAK = " \\\\ "
_COMMAND_END = re.compile(r"\\[A-Za-z]+$")
_SIMPLE_BASE = re.compile(r"^(?:[A-Za-z0-9.]+|\\[A-Za-z]+)$")
_WORD = re.compile(r"[A-Za-z]+")


def omml_to_latex(element: Element) -> str:
    """The LaTeX of an ``m:oMath`` or ``m:oMathPara`` element (lines of the latter: ``\\\\``)."""
    if local_name(element) == "oMathPara":
        lines = [_Translator().of(child) for child in element if local_name(child) == "oMath"]
        return _ROW_BREAK.join(line for line in lines if line)
    return _Translator().of(element).strip()


class _Translator:
    """One formula; :meth:`of` is called on each object, the depth counted."""

    def __init__(self) -> None:
        self._depth = 0

    def of(self, element: Element) -> str:
        if self._depth >= MAX_DEPTH:
            return _text(element)
        self._depth += 1
        try:
            return self._object(element)
        finally:
            self._depth -= 1

    def children(self, element: Element | None) -> str:
        """The objects inside ``element`` (an argument: ``m:e``, ``m:num``...), joined."""
        if element is None:
            return ""
        return _join(self.of(child) for child in element if not _is_properties(child))

    def _object(self, element: Element) -> str:
        if namespace(element) != MATH_NAMESPACE:
            return ""  # Word's own markup inside a formula: bookmarks, proofing marks
        name = local_name(element)
        writer = _WRITERS.get(name)
        return writer(self, element) if writer else self.children(element)

    def argument(self, element: Element, name: str) -> str:
        return self.children(element.find(f"{_M}{name}"))

    def run(self, element: Element) -> str:
        text = "".join(child.text or "" for child in element.iter() if local_name(child) == "t")
        properties = element.find(f"{_M}rPr")
        if properties is not None and properties.find(f"{_M}nor") is not None:
            return f"\\text{{{_text_mode(text)}}}" if text.strip() else "\\ "
        upright = properties is not None and _value(properties, "sty") == "p"
        return _symbols(text, upright)

    def fraction(self, element: Element) -> str:
        kind = _value(element.find(f"{_M}fPr"), "type") or "bar"
        numerator, denominator = self.argument(element, "num"), self.argument(element, "den")
        if kind == "lin":
            return f"{_grouped(numerator)}/{_grouped(denominator)}"
        if kind == "noBar":
            return f"\\genfrac{{}}{{}}{{0pt}}{{}}{{{numerator}}}{{{denominator}}}"
        return f"\\frac{{{numerator}}}{{{denominator}}}"

    def scripts(self, element: Element) -> str:
        name = local_name(element)
        base = _grouped(self.argument(element, "e"))
        sub = self.argument(element, "sub")
        sup = self.argument(element, "sup")
        if name == "sPre":
            return f"{{}}_{{{sub}}}^{{{sup}}}{base}"
        return (
            base
            + (f"_{{{sub}}}" if name != "sSup" else "")
            + (f"^{{{sup}}}" if name != "sSub" else "")
        )

    def radical(self, element: Element) -> str:
        degree = self.argument(element, "deg")
        hidden = _on(element.find(f"{_M}radPr"), "degHide")
        body = self.argument(element, "e")
        return f"\\sqrt[{degree}]{{{body}}}" if degree and not hidden else f"\\sqrt{{{body}}}"

    def nary(self, element: Element) -> str:
        properties = element.find(f"{_M}naryPr")
        character = _value(properties, "chr") or "∫"
        operator = NARY.get(character) or _symbols(character, upright=True)
        sub = "" if _on(properties, "subHide") else self.argument(element, "sub")
        sup = "" if _on(properties, "supHide") else self.argument(element, "sup")
        limits = (f"_{{{sub}}}" if sub else "") + (f"^{{{sup}}}" if sup else "")
        return f"{operator}{limits}{{{self.argument(element, 'e')}}}"

    def delimiter(self, element: Element) -> str:
        properties = element.find(f"{_M}dPr")
        begin = _value(properties, "begChr", default="(")
        end = _value(properties, "endChr", default=")")
        separator = _value(properties, "sepChr", default="|")
        parts = [self.children(child) for child in element if local_name(child) == "e"]
        inner = f" {_delimiter(separator)} ".join(parts)
        return f"\\left{_delimiter(begin)}{inner}\\right{_delimiter(end)}"

    def function(self, element: Element) -> str:
        name = self.argument(element, "fName")
        return f"{name}{{{self.argument(element, 'e')}}}"

    def accent(self, element: Element) -> str:
        character = _value(element.find(f"{_M}accPr"), "chr") or "\u0302"
        command = ACCENTS.get(character, "\\hat")
        return f"{command}{{{self.argument(element, 'e')}}}"

    def bar(self, element: Element) -> str:
        top = _value(element.find(f"{_M}barPr"), "pos") == "top"
        return f"\\{'overline' if top else 'underline'}{{{self.argument(element, 'e')}}}"

    def group_character(self, element: Element) -> str:
        properties = element.find(f"{_M}groupChrPr")
        above = (_value(properties, "chr") or "\u23df") in ("\u23de", "\u23b4", "\u0302")
        return f"\\{'overbrace' if above else 'underbrace'}{{{self.argument(element, 'e')}}}"

    def limit(self, element: Element) -> str:
        base = self.argument(element, "e")
        limit = self.argument(element, "lim")
        lower = local_name(element) == "limLow"
        if lower and base.lstrip("\\") in LIMIT_FUNCTIONS:
            return f"{base}_{{{limit}}}"
        return f"\\{'underset' if lower else 'overset'}{{{limit}}}{{{base}}}"

    def box(self, element: Element) -> str:
        body = self.argument(element, "e")
        return f"\\boxed{{{body}}}" if local_name(element) == "borderBox" else body

    def matrix(self, element: Element) -> str:
        rows = [
            " & ".join(self.children(cell) for cell in row if local_name(cell) == "e")
            for row in element
            if local_name(row) == "mr"
        ]
        return "\\begin{matrix}" + _ROW_BREAK.join(rows) + "\\end{matrix}"

    def equation_array(self, element: Element) -> str:
        rows = [self.children(row) for row in element if local_name(row) == "e"]
        return "\\begin{aligned}" + _ROW_BREAK.join(rows) + "\\end{aligned}"


_WRITERS = {
    "r": _Translator.run,
    "f": _Translator.fraction,
    "sSup": _Translator.scripts,
    "sSub": _Translator.scripts,
    "sSubSup": _Translator.scripts,
    "sPre": _Translator.scripts,
    "rad": _Translator.radical,
    "nary": _Translator.nary,
    "d": _Translator.delimiter,
    "func": _Translator.function,
    "acc": _Translator.accent,
    "bar": _Translator.bar,
    "groupChr": _Translator.group_character,
    "limLow": _Translator.limit,
    "limUpp": _Translator.limit,
    "box": _Translator.box,
    "borderBox": _Translator.box,
    "m": _Translator.matrix,
    "eqArr": _Translator.equation_array,
}


def _is_properties(element: Element) -> bool:
    return local_name(element).endswith("Pr")


def _value(properties: Element | None, name: str, default: str | None = None) -> str | None:
    """``m:val`` of the property ``name`` (``default`` when the property is absent)."""
    found = properties.find(f"{_M}{name}") if properties is not None else None
    if found is None:
        return default
    return found.get(_VAL, default)


def _on(properties: Element | None, name: str) -> bool:
    """Whether the on/off property ``name`` is on (present without ``m:val``, or "1", "on")."""
    found = properties.find(f"{_M}{name}") if properties is not None else None
    return found is not None and found.get(_VAL, "1").lower() in ("1", "on", "true")


def _text(element: Element) -> str:
    """The text of a subtree, symbols named: what is left of structure nested too deep."""
    return _symbols("".join(t.text or "" for t in element.iter() if local_name(t) == "t"), False)


def _symbols(text: str, upright: bool) -> str:
    """A math run's text in LaTeX. In upright runs (Word's ``sty p``, how it sets function
    names and units) a known function is its command (``\\sin``) and other words
    ``\\mathrm``; a function name followed by U+2061 (function application) is one anywhere."""
    parts: list[str] = []
    position = 0
    for match in _WORD.finditer(text):
        parts.extend(_characters(text[position : match.start()]))
        word = match.group()
        applied = text[match.end() : match.end() + 1] == "\u2061"
        if word in FUNCTIONS and (upright or applied):
            parts.append(f"\\{word}")
        elif upright and len(word) > 1:
            parts.append(f"\\mathrm{{{word}}}")
        else:
            parts.append(word)
        position = match.end()
    parts.extend(_characters(text[position:]))
    return _join(parts)


def _characters(text: str) -> Iterable[str]:
    for character in text:
        if character in INVISIBLE:
            continue
        if character in SYMBOLS:
            yield SYMBOLS[character]
        elif 0x1D400 <= ord(character) <= 0x1D7FF:  # mathematical italic, bold... letters
            yield unicodedata.normalize("NFKC", character)
        else:
            yield character


def _text_mode(text: str) -> str:
    """Text for ``\\text{…}``: only LaTeX's special characters escaped."""
    special = {"{", "}", "#", "%", "&", "$", "_", "\\", "~", "^"}
    return "".join(SYMBOLS[c] if c in special else c for c in text)


def _join(parts: Iterable[str]) -> str:
    """Fragments of LaTeX, a space kept after a command that a letter would extend."""
    out = ""
    for part in parts:
        if not part:
            continue
        if (part[0].isalnum() or part[0] == "\\") and _COMMAND_END.search(out):
            out += " "
        out += part
    return out


def _grouped(base: str) -> str:
    """``base`` ready to carry a script or a slash: braced unless it is one token."""
    return base if _SIMPLE_BASE.match(base) else f"{{{base}}}"


def _delimiter(character: str | None) -> str:
    if character is None:
        return "."
    return DELIMITERS.get(character, character)
