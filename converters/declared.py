"""What a document declares about itself, made fit to show: titles and descriptions.

Metadata in the wild is often a tool's placeholder, not the author's words:
"(anonymous)", "untitled", "unspecified", an empty string, Word's print-job name
"Microsoft Word - report.docx", and sometimes a title that ends in a NUL byte.
Shown as a document's title in ``resources/list`` such a value says nothing, and a
control character can break a client. So converters read declared titles and
descriptions through :func:`declared_title` and :func:`declared_text` (a placeholder
is missing, and the document's own largest text, its heading or its file name names
it instead), and every :class:`Facts` a converter hands back passes through
:func:`clean_facts` on its way out (``converters.assemble``, the JSON view), so that
no control character reaches the index whatever the family.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from docshelf.converters.base import Facts, OutlineEntry
from docshelf.converters.textutil import clean_text, collapse_whitespace

#: C0 and C1 controls, DEL, the byte-order mark and the noncharacters U+FFFE/U+FFFF.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ufeff\ufffe\uffff]")
#: Values tools write where the author wrote nothing, as whole values, case aside.
_PLACEHOLDER = re.compile(
    r"[(\[<]?(?:anonymous|untitled(?:\s+document)?|unspecified|unknown|undefined|none|null"
    r"|n/?a|no\s+title|title|subject|default)[)\]>]?"
    # A new file's default name: "Untitled-1", "Document1", "Book1", "Presentation 2".
    r"|(?:untitled|document|presentation|book)[\s_-]*\d*(?:\.[a-z]{3,4})?",
    re.IGNORECASE,
)
#: The title Windows' print drivers give a PDF printed from Office: the job's name,
#: "Microsoft Word - report_v3.docx", which is the file's name, not the document's.
_PRINT_JOB = re.compile(r"microsoft\s+(?:office\s+)?(?:word|excel|powerpoint)\s+-\s", re.IGNORECASE)
#: A section number opening a heading that cannot be a name's first word: "2.3 ",
#: "1. ", "IV. ". Letters ("A ") are left alone: they are words as often as numbers.
_SECTION_NUMBER = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})+\.?|\d{1,2}\.|[IVX]{1,4}\.)\s+(?=\w)")
#: A bare number opening a heading ("1 Introduction"): a section number only where the
#: document numbers its headings; else it may be the name's ("7 Habits", "2 Guns").
_BARE_NUMBER = re.compile(r"^\d{1,2}\s+(?=\w)")


def visible_text(value: str) -> str:
    """``value`` without control characters, its whitespace collapsed."""
    return collapse_whitespace(_CONTROL.sub(" ", value))


def declared_text(value: str | None) -> str | None:
    """A declared description (or any declared value) people can read, else None:
    control characters dropped, placeholders and values without a letter or digit
    treated as missing."""
    if value is None:
        return None
    text = visible_text(value)
    if not any(char.isalnum() for char in text) or _PLACEHOLDER.fullmatch(text):
        return None
    return text


def declared_title(value: str | None) -> str | None:
    """A declared title worth showing, else None (see :func:`declared_text`; a print
    job's name is no title either)."""
    text = declared_text(value)
    if text is None or _PRINT_JOB.match(text):
        return None
    return text


def heading_title(heading: str, *, numbered: bool = False) -> str:
    """A title taken from a heading, without its section number ("2.1 Scope", "1. Scope"
    → "Scope"; "1 Scope" too when the document's headings are ``numbered``): the
    document is not called by its first section's number."""
    pattern = _BARE_NUMBER if numbered and _BARE_NUMBER.match(heading) else _SECTION_NUMBER
    stripped = pattern.sub("", heading, count=1)
    return stripped if any(char.isalpha() for char in stripped) else heading


def is_numbered(headings: Iterable[str]) -> bool:
    """Whether at least two of ``headings`` open with a number: the document numbers them."""
    return (
        sum(
            1
            for heading in headings
            if _BARE_NUMBER.match(heading) or _SECTION_NUMBER.match(heading)
        )
        >= 2
    )


def clean_facts(facts: Facts) -> Facts:
    """``facts`` with a placeholder title (unless it is one of its headings) or description
    dropped and control characters gone from the title, the description, the outline and
    the metadata values (which keep their line breaks and tabs, and their placeholders:
    they are what was declared)."""
    # A title that is one of the document's own headings is the author's word, whatever
    # it says (a reStructuredText document titled "Title"); a declared one may be a tool's.
    own = facts.title is not None and any(e.title == facts.title for e in facts.outline)
    title = (
        (visible_text(facts.title) or None) if own and facts.title else declared_title(facts.title)
    )
    description = declared_text(facts.description)
    metadata = {key: clean_text(value) for key, value in facts.metadata.items()}
    outline = tuple(
        entry if not _CONTROL.search(entry.title) else _outline_entry(entry)
        for entry in facts.outline
    )
    if (
        title == facts.title
        and description == facts.description
        and metadata == dict(facts.metadata)
        and all(new is old for new, old in zip(outline, facts.outline, strict=True))
    ):
        return facts
    return replace(
        facts,
        title=title,
        description=description,
        metadata=metadata,
        outline=outline,
    )


def _outline_entry(entry: OutlineEntry) -> OutlineEntry:
    return replace(entry, title=visible_text(entry.title))
