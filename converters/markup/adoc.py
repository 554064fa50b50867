"""AsciiDoc, read line by line: the common subset, written as Markdown.

No permissively licensed, maintained AsciiDoc parser exists for Python
(``asciidoc`` is GPL), so this reader covers what most documents use: the
header (``= Title``, author and revision lines, ``:name: value`` attributes,
substituted as ``{name}``), ``==`` sections (and ``#`` ones), ``----`` listing
blocks with ``[source,lang]``, ``....`` literal, ``____`` quote, ``====``
example, ``****`` sidebar and ``--`` open blocks, ``|===`` tables, ``*``/``-``/``.``
lists with nesting, ``term::`` lists, ``NOTE:``/``TIP:``... admonitions,
``.Titles``, ``image::``, and inline ``*bold*`` ``_italic_`` ```mono```,
``link:url[text]``, ``https://...[text]`` and ``<<id,text>>``.

``include::`` is never followed (a document must not read other files), and
``++++`` passthrough blocks (raw HTML) are dropped, as are comments and
``ifdef::``/``endif::`` lines (both branches' text is kept). A ``+`` list
continuation ends the list: the attached block follows it.

Title: ``= Title``, else the first heading. Description: the ``:description:``
attribute, else the first prose. Metadata: author, email, revision and date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from docshelf.converters.base import ConversionError, ConversionResult, FailureReason, Source
from docshelf.converters.markup.common import (
    MAX_NESTING,
    admonition,
    join_blocks,
    list_item,
    markup_result,
    quote,
    read_markup,
    scan_inline,
    table,
    too_deep,
)
from docshelf.converters.textutil import (
    code_fence,
    code_span,
    collapse_whitespace,
    escape_markdown_inline,
    markdown_heading,
    markdown_link,
)

ADOC_MIME_TYPES = frozenset({"text/asciidoc", "text/x-asciidoc"})
ADOC_EXTENSIONS = frozenset({".adoc", ".asciidoc", ".asc"})

#: Attribute substitutions may not grow the text by more than this many characters.
MAX_EXPANSION = 4 * 1024 * 1024

_BUILTIN_ATTRIBUTES = {
    **{"nbsp": "\u00a0", "zwsp": "\u200b", "sp": " ", "empty": "", "blank": ""},
    **{"amp": "&", "lt": "<", "gt": ">", "plus": "+", "vbar": "|", "caret": "^"},
    **{"startsb": "[", "endsb": "]", "asterisk": "*", "tilde": "~", "backslash": "\\"},
    **{"two-colons": "::", "two-semicolons": ";;", "cpp": "C++", "apos": "'", "quot": '"'},
}

_ATTRIBUTE_ENTRY = re.compile(r"^:(?P<name>!?[\w][\w-]*!?):(?:\s+(?P<value>.*))?$")
_ATTRIBUTE_REF = re.compile(r"\{(?P<name>[\w][\w-]*)\}")
_SECTION = re.compile(r"^(?P<marks>={1,6}|#{1,6})\s+(?P<title>\S.*?)(?:\s+(?P=marks))?$")
_DELIMITER = re.compile(r"^(?P<fence>-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|/{4,}|\+{4,}|--)\s*$")
_TABLE_DELIMITER = re.compile(r"^(?P<sep>[|!,:])={3,}\s*$")
_BLOCK_ATTRIBUTES = re.compile(r"^\[(?P<body>[^\[\]].*)\]$|^\[\[(?P<anchor>[^\]]+)\]\]$")
#: The comma-separated entries of a block attribute list, quoted values kept whole.
_ATTRIBUTE_LIST = re.compile(r'(?:"[^"]*"|[^,"])+')
_BLOCK_TITLE = re.compile(r"^\.(?P<title>[^.\s].*)$")
_ADMONITION = re.compile(r"^(?P<label>NOTE|TIP|IMPORTANT|WARNING|CAUTION):\s+(?P<text>.*)$")
_LIST_ITEM = re.compile(r"^\s*(?P<marker>\*{1,5}|-|\.{1,5}|\d{1,9}\.)\s+(?P<text>\S.*)$")
_TERM_ITEM = re.compile(r"^\s*(?P<term>\S.*?)(?P<marks>:{2,4}|;;)(?:\s+(?P<text>.*))?$")
_CHECKBOX = re.compile(r"^\[(?P<state>[ xX*])\]\s+")
_DIRECTIVE = re.compile(r"^(?:include|ifdef|ifndef|ifeval|endif|toc)::")
_BLOCK_MACRO = re.compile(r"^(?P<kind>image|video|audio)::(?P<target>[^\[\s]*)\[(?P<attrs>.*)\]$")
_AUTHOR = re.compile(r"^(?P<name>[^<:;\[]+?)(?:\s+<(?P<email>[^>]+)>)?$")
_REVISION = re.compile(r"^v?(?P<number>[\d.]+\w*)?(?:,\s*(?P<date>[^:]+))?(?::\s*(?P<remark>.*))?$")
_INLINE = re.compile(
    r"""(?P<image>image:(?P<src>[^\s\[]+)\[(?P<alt>[^\]]*)\])
    | link:(?P<target>[^\s\[]+)\[(?P<text>[^\]]*)\]
    | xref:(?P<xref>[^\s\[]+)\[(?P<xtext>[^\]]*)\]
    | (?P<url>\b(?:https?|ftp|irc|mailto):[^\s\[\]<>]*[^\s\[\]<>.,;:!?'")])
      (?:\[(?P<utext>[^\]]*)\])?
    | <<(?P<ref>[^,>]+)(?:,\s*(?P<reftext>[^>]+))?>>
    | (?<![\w`])`(?P<mono>[^`]+?)`(?![\w`])
    | \*\*(?P<ubold>.+?)\*\*
    | (?<![\w*\\])\*(?P<bold>\S(?:.*?\S)?)\*(?![\w*])
    | __(?P<uital>.+?)__
    | (?<![\w_\\])_(?P<ital>\S(?:.*?\S)?)_(?![\w_])
    | (?<![\w+])\+(?P<pass>[^+\s](?:[^+]*?[^+\s])?)\+(?![\w+])
    | (?<![\w#])\#(?P<mark>\S(?:.*?\S)?)\#(?![\w#])""",
    re.VERBOSE,
)


class AsciidocConverter:
    """Converts AsciiDoc with docshelf's own reader."""

    name = "asciidoc"
    version = "1"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in ADOC_MIME_TYPES or source.extension in ADOC_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        decoded = read_markup(source)
        reader = _Reader(decoded.text)
        markdown = join_blocks(reader.document()) + "\n"
        attributes = reader.attributes
        metadata = {
            "author": attributes.get("author", ""),
            "email": attributes.get("email", ""),
            "revision": attributes.get("revnumber", ""),
            "date": attributes.get("revdate", ""),
            "keywords": attributes.get("keywords", ""),
        }
        declared = {k: v for k, v in attributes.items() if k not in _BUILTIN_ATTRIBUTES}
        return markup_result(
            source,
            markdown,
            title=reader.title,
            description=attributes.get("description"),
            metadata=metadata,
            language=attributes.get("lang"),
            data={"attributes": declared} if declared else None,
            decoded=decoded,
        )


@dataclass
class _Pending:
    """Block attributes and title waiting for the block they belong to."""

    attributes: list[str] = field(default_factory=list)
    title: str | None = None

    @property
    def style(self) -> str:
        return self.attributes[0].strip().lower() if self.attributes else ""


class _Reader:
    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.attributes: dict[str, str] = {}
        self.title: str | None = None
        self.expanded = 0

    def document(self) -> list[str]:
        blocks: list[str] = []
        start = self._header(blocks)
        blocks.extend(self.blocks(self.lines[start:], 0))
        return blocks

    def _header(self, blocks: list[str]) -> int:
        """Read ``= Title``, its author and revision lines and attributes; the index after."""
        index = 0
        while index < len(self.lines) and (
            not self.lines[index].strip() or self._comment_or_entry(self.lines[index])
        ):
            index += 1
        if index >= len(self.lines) or not self.lines[index].startswith("= "):
            return 0
        raw_title = self.lines[index][2:]
        index += 1
        for kind in ("author", "revision"):
            if index >= len(self.lines):
                break
            line = self.lines[index].strip()
            if not line or line.startswith((":", "//")):
                break
            self._header_line(kind, line)
            index += 1
        while index < len(self.lines) and self.lines[index].strip():
            if not self._comment_or_entry(self.lines[index]):
                break
            index += 1
        # The title may use attributes its header goes on to define.
        self.title = collapse_whitespace(self.substitute(raw_title))
        blocks.append(markdown_heading(1, self.title))
        return index

    def _header_line(self, kind: str, line: str) -> None:
        if kind == "author":
            names, emails = [], []
            for author in line.split(";"):
                match = _AUTHOR.match(author.strip())
                if match:
                    names.append(match["name"].strip())
                    emails.append(match["email"] or "")
            self.attributes.setdefault("author", "; ".join(names))
            self.attributes.setdefault("email", "; ".join(e for e in emails if e))
        else:
            match = _REVISION.match(line)
            if match:
                self.attributes.setdefault("revnumber", match["number"] or "")
                self.attributes.setdefault("revdate", (match["date"] or "").strip())

    def _comment_or_entry(self, line: str) -> bool:
        """Whether ``line`` is a comment or an attribute entry (which it then records)."""
        if line.startswith("//") and not line.startswith("////"):
            return True
        entry = _ATTRIBUTE_ENTRY.match(line)
        if not entry:
            return False
        name = entry["name"]
        if name.startswith("!") or name.endswith("!"):
            self.attributes.pop(name.strip("!"), None)
        else:
            self.attributes[name] = self.substitute((entry["value"] or "").strip())
        return True

    def substitute(self, text: str) -> str:
        """``{name}`` references replaced by attribute values (once: values are not re-read)."""
        if "{" not in text:
            return text

        def value(match: re.Match[str]) -> str:
            name = match["name"]
            found = self.attributes.get(name, _BUILTIN_ATTRIBUTES.get(name))
            if found is None:
                return match[0]
            self.expanded += len(found)
            if self.expanded > MAX_EXPANSION:
                raise ConversionError(
                    FailureReason.TOO_LARGE,
                    f"attribute references expand to over {MAX_EXPANSION} characters",
                )
            return found

        return _ATTRIBUTE_REF.sub(value, text)

    def blocks(self, lines: list[str], depth: int) -> list[str]:
        """The Markdown blocks of ``lines`` (the body, or a delimited block's content)."""
        if depth > MAX_NESTING:
            raise too_deep("AsciiDoc blocks")
        blocks: list[str] = []
        pending = _Pending()
        paragraph: list[str] = []
        index = 0

        def flush() -> None:
            if paragraph:
                blocks.extend(self._paragraph(paragraph, pending))
                paragraph.clear()

        while index < len(lines):
            line = lines[index].rstrip()
            stripped = line.strip()
            delimiter = _DELIMITER.match(line)
            table_start = _TABLE_DELIMITER.match(line)
            if not stripped or stripped == "+":
                flush()
                index += 1
                continue
            if paragraph and not (delimiter or table_start or _LIST_ITEM.match(line)):
                if _DIRECTIVE.match(line) or (line.startswith("//") and not delimiter):
                    index += 1
                    continue
                paragraph.append(line)
                index += 1
                continue
            if delimiter or table_start:
                flush()
                fence = line.strip()
                end = index + 1
                while end < len(lines) and lines[end].rstrip() != fence:
                    end += 1
                inner = lines[index + 1 : end]
                if table_start:
                    blocks.extend(self._table(inner, table_start["sep"], pending))
                else:
                    blocks.extend(self._delimited(fence, inner, pending, depth))
                pending = _Pending()
                index = end + 1
            elif line.startswith("//") or _DIRECTIVE.match(line) or self._comment_or_entry(line):
                index += 1
            elif section := _SECTION.match(line):
                flush()
                level = min(len(section["marks"]), 6)
                title = self._inline(section["title"])
                blocks.append(markdown_heading(level, title, escaped=True))
                pending = _Pending()
                index += 1
            elif attributes := _BLOCK_ATTRIBUTES.match(stripped):
                if attributes["body"] is not None:
                    pending.attributes = [
                        a.strip() for a in _ATTRIBUTE_LIST.findall(attributes["body"])
                    ]
                index += 1
            elif (caption := _BLOCK_TITLE.match(stripped)) and not _LIST_ITEM.match(line):
                pending.title = caption["title"]
                index += 1
            elif macro := _BLOCK_MACRO.match(stripped):
                if macro["kind"] == "image":
                    alt = macro["attrs"].split(",")[0].strip().strip('"')
                    image = markdown_link(escape_markdown_inline(alt), macro["target"])
                    blocks.append(f"!{image}")
                index += 1
            elif _LIST_ITEM.match(line) or _is_term(line):
                flush()
                end = index
                while end < len(lines) and (
                    _LIST_ITEM.match(lines[end]) or _is_term(lines[end]) or _continues(lines, end)
                ):
                    end += 1
                blocks.extend(self._caption(pending))
                blocks.append(self._list(lines[index:end]))
                pending = _Pending()
                index = end
            elif stripped in ("'''", "---", "***"):
                blocks.append("---")
                index += 1
            elif stripped == "<<<":
                index += 1
            elif line.startswith((" ", "\t")):
                end = index
                while end < len(lines) and lines[end].strip():
                    end += 1
                literal = _dedent(lines[index:end])
                blocks.append(code_fence("\n".join(literal)).rstrip("\n"))
                index = end
            else:
                paragraph.append(line)
                index += 1
        flush()
        return blocks

    def _caption(self, pending: _Pending) -> list[str]:
        return [f"**{self._inline(pending.title)}**"] if pending.title else []

    def _paragraph(self, lines: list[str], pending: _Pending) -> list[str]:
        text = "\n".join(self._line(line) for line in lines)
        admonition_match = _ADMONITION.match(lines[0])
        caption = self._caption(pending)
        if admonition_match:
            first = self._line(admonition_match["text"])
            rest = [self._line(line) for line in lines[1:]]
            return [admonition(admonition_match["label"], ["\n".join([first, *rest])])]
        if pending.style in _ADMONITION_STYLES:
            return [admonition(pending.style, [*caption, text])]
        if pending.style == "quote":
            return [quote([*caption, text, *self._attribution(pending)])]
        if pending.style in ("source", "listing", "literal"):
            return [*caption, code_fence("\n".join(lines), self._language(pending)).rstrip()]
        return [*caption, text]

    def _line(self, line: str) -> str:
        """One line of a paragraph: inline markup, and `` +`` at its end a hard break."""
        hard = line.endswith(" +")
        text = self._inline(line[:-2] if hard else line.strip())
        return text + ("\\" if hard else "")

    def _inline(self, text: str, depth: int = 0) -> str:
        return inline(self.substitute(text), depth)

    def _language(self, pending: _Pending) -> str:
        if pending.style == "source" and len(pending.attributes) > 1:
            return pending.attributes[1].strip()
        return self.attributes.get("source-language", "") if pending.style == "source" else ""

    def _attribution(self, pending: _Pending) -> list[str]:
        cite = [a.strip().strip('"') for a in pending.attributes[1:3] if a.strip()]
        return [f"— {escape_markdown_inline(', '.join(cite))}"] if cite else []

    def _delimited(self, fence: str, inner: list[str], pending: _Pending, depth: int) -> list[str]:
        caption = self._caption(pending)
        kind = fence[0]
        if kind in "/+":  # comments; raw passthrough never passes through
            return []
        if kind in "-." and fence != "--" and pending.style not in _BLOCK_STYLES:
            language = self._language(pending) if kind == "-" else ""
            return [*caption, code_fence("\n".join(inner), language).rstrip()]
        body = self.blocks(inner, depth + 1)
        if pending.style in _ADMONITION_STYLES:
            return [admonition(pending.style, [*caption, *body])]
        if kind == "_" or pending.style in ("quote", "verse"):
            return [quote([*caption, *body, *self._attribution(pending)])]
        return [*caption, *body]

    def _table(self, inner: list[str], separator: str, pending: _Pending) -> list[str]:
        rows_text = [line for line in inner if line.strip()]
        columns = _column_count(pending, rows_text, separator)
        header = "header" in " ".join(pending.attributes) or (
            len(inner) > 1 and inner[0].strip() != "" and inner[1].strip() == ""
        )
        cells: list[str] = []
        for line in rows_text:
            if separator in "|!":
                parts = re.split(rf"(?<!\\)\{separator}", line)
                # A specifier ("2+", "a") written before a "|" belongs to the next cell.
                parts = [_CELL_SPEC.sub("", part) for part in parts[:-1]] + parts[-1:]
                if parts[0].strip() and cells:  # a cell's text continued on this line
                    cells[-1] += " " + parts[0].strip()
                cells.extend(part.strip() for part in parts[1:])
            else:
                cells.extend(part.strip() for part in line.split(separator))
        columns = max(columns, 1)
        rows = [
            [self._inline(cell) for cell in cells[i : i + columns]]
            for i in range(0, len(cells), columns)
        ]
        if not header and rows:
            rows = [[""] * columns, *rows]
        return [*self._caption(pending), table(rows)] if rows else []

    def _list(self, lines: list[str]) -> str:
        items: list[tuple[str, str]] = []  # (marker, text)
        for line in lines:
            item = _LIST_ITEM.match(line)
            if item:
                items.append((item["marker"], item["text"]))
                continue
            term = _TERM_ITEM.match(line)
            if term and _is_term(line):
                items.append((term["marks"], f"\0{term['term']}\0{term['text'] or ''}"))
            elif items:
                marker, text = items[-1]
                items[-1] = (marker, f"{text} {line.strip()}")
        out: list[str] = []
        kinds: list[str] = []  # the marker of each open level
        for marker, text in items:
            kind = "1." if marker[0].isdigit() else marker
            if kind in kinds:
                del kinds[kinds.index(kind) + 1 :]
            else:
                if len(kinds) >= MAX_NESTING:
                    raise too_deep("AsciiDoc lists")
                kinds.append(kind)
            ordered = kind[0] in ".1"
            out.append(
                "   " * (len(kinds) - 1) + list_item("1." if ordered else "-", [self._item(text)])
            )
        return "\n".join(out)

    def _item(self, text: str) -> str:
        if text.startswith("\0"):
            _, term, definition = text.split("\0", 2)
            rest = f": {self._inline(definition)}" if definition.strip() else ""
            return f"**{self._inline(term)}**{rest}"
        box = _CHECKBOX.match(text)
        if box:
            mark = "☐ " if box["state"] == " " else "☑ "
            return mark + self._inline(text[box.end() :])
        return self._inline(text)


_ADMONITION_STYLES = frozenset({"note", "tip", "important", "warning", "caution"})
#: Styles that make a ``----`` or ``....`` block hold blocks rather than verbatim text.
_BLOCK_STYLES = frozenset({"quote", "verse", *_ADMONITION_STYLES})


def inline(text: str, depth: int = 0) -> str:
    """AsciiDoc inline markup as Markdown (attributes already substituted)."""

    def render(match: re.Match[str]) -> str:
        def nested(body: str) -> str:
            return inline(body, depth + 1) if depth < MAX_NESTING else escape_markdown_inline(body)

        if match["image"]:
            alt = escape_markdown_inline(match["alt"].split(",")[0].strip('"'))
            return "!" + markdown_link(alt, match["src"])
        if match["target"]:
            return markdown_link(_link_text(match["text"], match["target"]), match["target"])
        if match["xref"]:
            href = match["xref"]
            return markdown_link(_link_text(match["xtext"], href), href)
        if match["url"]:
            url = match["url"]
            return markdown_link(_link_text(match["utext"] or "", url), url)
        if match["ref"]:
            ref = match["ref"].strip()
            return markdown_link(nested(match["reftext"] or ref), f"#{ref}")
        if match["mono"] is not None:
            body = match["mono"]
            if len(body) > 1 and body.startswith("+") and body.endswith("+"):
                body = body[1:-1]
            return code_span(body)
        for name, wrap in (("ubold", "**"), ("bold", "**"), ("uital", "*"), ("ital", "*")):
            if match[name] is not None:
                return f"{wrap}{nested(match[name])}{wrap}"
        if match["pass"] is not None:
            return escape_markdown_inline(match["pass"])
        return nested(match["mark"])

    return scan_inline(text, _INLINE, render)


def _link_text(text: str, href: str) -> str:
    label = text.split(",")[0].strip().strip('"') if text else ""
    if label.endswith("^"):
        label = label[:-1]
    return inline(label) if label else escape_markdown_inline(href)


def _is_term(line: str) -> bool:
    term = _TERM_ITEM.match(line)
    return (
        bool(term)
        and not line.lstrip().startswith(("//", "[", "."))
        and "://" not in (term["term"] if term else "")
    )


def _continues(lines: list[str], index: int) -> bool:
    """Whether ``lines[index]`` continues the list item above it (a wrapped line)."""
    line = lines[index]
    return (
        bool(line.strip())
        and line.strip() != "+"
        and not (
            _DELIMITER.match(line) or _TABLE_DELIMITER.match(line) or _BLOCK_ATTRIBUTES.match(line)
        )
    )


def _dedent(lines: list[str]) -> list[str]:
    margin = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return [line[margin:] for line in lines]


def _column_count(pending: _Pending, rows: list[str], separator: str) -> int:
    for attribute in pending.attributes:
        name, _, value = attribute.partition("=")
        if name.strip() == "cols":
            value = value.strip().strip('"')
            if value.isdigit():
                return int(value)
            multiplied = re.fullmatch(r"(\d+)\*.*", value)
            if multiplied:
                return int(multiplied[1])
            return len([spec for spec in re.split(r"[,;]", value) if spec.strip()])
    if not rows:
        return 1
    if separator in "|!":
        return max(1, len(re.split(rf"(?<!\\)\{separator}", rows[0])) - 1)
    return len(rows[0].split(separator))


#: A cell specifier right before a ``|``: span, duplication, alignment, style (``2+``, ``a``).
_CELL_SPEC = re.compile(r"(?:^|(?<=\s))(?:\d*(?:\.\d+)?[+*])?(?:[<^>]|\.[<^>])*[adehlmsv]?$")
