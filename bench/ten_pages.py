"""A realistic ten-page Markdown document, the one the benchmarks render and read.

Prose is what a rendered PDF spends its time on, and fpdf2 lays text out a line
at a time from each paragraph's characters, so the document is mostly
paragraphs of ordinary English (sentences of 6 to 30 words, commas, a bold
phrase, an emphasis, inline code and a link here and there), of mixed lengths:
most of 40 to 160 words, and every section has one long paragraph of 250 to
550 words. Around them: three levels of headings, bulleted and numbered lists,
a table of twelve rows and a code block of thirty lines, some non-ASCII words.
It renders to exactly ten A4 pages with the DejaVu fonts
(:func:`converters.render.pdf.render_markdown_pdf`); the text is pseudo-random
from a fixed seed, so it is the same on every machine and every run.
"""

from __future__ import annotations

import random

#: Common English words, roughly by frequency; the first ones are drawn more often.
_VOCABULARY = (
    "the of and to a in is that for it as with was on be by this are or from at which "
    "an not have has but can its their more one all were when they been there also other "
    "each these data file document server first time new used only some such than into "
    "would may each most many before after between through over under while where both "
    "reader index change format request client process page section table value system "
    "number result record version memory network storage folder catalog update question "
    "answer method program support feature release measure setting library option source "
    "output input report error warning thread worker session content character paragraph "
    "heading layout width height margin column field letter window cache query schema "
    "protocol message stream archive backup restore machine person people reason example "
    "however because therefore usually rarely quickly slowly carefully almost always "
    "never often simply clearly exactly nearly probably certainly actually especially "
    "important different possible available necessary common general particular recent "
    "careful simple complex large small short long early late whole single several "
    "written printed rendered stored opened closed counted measured compared checked "
    "described explained followed replaced removed added changed built found kept "
    "library's editor's writers teachers students engineers operators readers clients "
    "morning evening weekend summer winter spring autumn country village harbour river "
    "mountain garden kitchen station market bridge street corner office meeting"
)
_WORDS = tuple(_VOCABULARY.split())
_NAMES = ("Größe", "café", "naïve", "Zürich", "São Paulo", "Ærø", "Kraków", "déjà vu")
_CODE_WORDS = ("read()", "max_bytes", "--port", "utf-8", "None", "render_limit", "/readyz")
_SEED = 24
_SECTIONS = 10


def ten_page_markdown() -> str:
    """The document (about 8,300 words; ten pages rendered)."""
    rng = random.Random(_SEED)
    parts = ["# Field notes on a document shelf", _paragraph(rng, 90)]
    for number in range(1, _SECTIONS + 1):
        parts.append(f"## {number}. {_title(rng)}")
        parts.append(_paragraph(rng, rng.randint(40, 160)))
        parts.append(_paragraph(rng, rng.randint(250, 550)))
        parts.append(f"### {number}.1 {_title(rng)}")
        parts.append(_paragraph(rng, rng.randint(60, 140)))
        if number % 3 == 1:
            parts.append(_bullets(rng, 5))
        elif number % 3 == 2:
            parts.append(_numbered(rng, 4))
        parts.append(_paragraph(rng, rng.randint(40, 120)))
        if number == 4:
            parts.append(_table(rng, 12))
        if number == 6:
            parts.append(_code_block(30))
    return "\n\n".join(parts) + "\n"


def _title(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS[30:]) for _ in range(rng.randint(2, 5))).capitalize()


def _sentence(rng: random.Random) -> str:
    words: list[str] = []
    for _ in range(rng.randint(6, 30)):
        # Nearly half of running English is its thirty commonest words.
        word = rng.choice(_WORDS[:30] if rng.random() < 0.45 else _WORDS)
        roll = rng.random()
        if roll < 0.012:
            word = f"**{word} {rng.choice(_WORDS)}**"
        elif roll < 0.022:
            word = f"*{word}*"
        elif roll < 0.030:
            word = f"`{rng.choice(_CODE_WORDS)}`"
        elif roll < 0.034:
            word = f"[{word}](https://example.org/{word.strip('*`')})"
        elif roll < 0.040:
            word = rng.choice(_NAMES)
        elif roll < 0.050 and words:
            words[-1] += ","
        words.append(word)
    words[0] = words[0][0].upper() + words[0][1:]
    return " ".join(words) + ("?" if rng.random() < 0.08 else ".")


def _paragraph(rng: random.Random, words: int) -> str:
    sentences: list[str] = []
    count = 0
    while count < words:
        sentence = _sentence(rng)
        sentences.append(sentence)
        count += sentence.count(" ") + 1
    return " ".join(sentences)


def _bullets(rng: random.Random, items: int) -> str:
    return "\n".join(f"- {_sentence(rng)}" for _ in range(items))


def _numbered(rng: random.Random, items: int) -> str:
    return "\n".join(f"{n}. {_sentence(rng)} {_sentence(rng)}" for n in range(1, items + 1))


def _table(rng: random.Random, rows: int) -> str:
    lines = ["| setting | default | unit | what it changes |", "| --- | ---: | --- | --- |"]
    for row in range(rows):
        name = f"{rng.choice(_WORDS[60:])}_{rng.choice(_WORDS[60:])}"
        what = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 10)))
        unit = ("ms", "s", "MB")[row % 3]
        lines.append(f"| `{name}` | {rng.randint(1, 5000)} | {unit} | {what} |")
    return "\n".join(lines)


def _code_block(lines: int) -> str:
    body = ["def build(shelf: Shelf, *, limit: int = 500_000) -> list[Variant]:"]
    body.append('    """Convert every document of the shelf that changed since the last pass."""')
    for n in range(lines - 4):
        body.append(f"    variant_{n} = shelf.read(path_{n % 7}, limit=limit)  # step {n}")
    body.append("    return [variant_0]")
    return "```python\n" + "\n".join(body) + "\n```"
