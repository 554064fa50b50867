"""Turn MDX into plain Markdown by unwrapping its JSX components.

MDX pages (the MCP specification's, for one) wrap Markdown in components such
as ``<Note>`` ... ``</Note>`` or a multi-line ``<Card title=... href=...>``. To
CommonMark those lines start an HTML block that swallows the Markdown inside,
so the text would vanish from every derived format. Components are recognised
by their capitalised tag name, outside code fences only; their tag lines are
removed (a ``title`` attribute survives as a bold line, linked when the
component has an ``href``), ESM ``import``/``export`` lines and ``{/* */}``
comments are dropped, and the Markdown inside is left as it is.
"""

from __future__ import annotations

import re

from docshelf.converters.textutil import escape_markdown_inline

_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")
_COMPONENT_START = re.compile(r"^\s*</?[A-Z][\w.]*(?=[\s/>]|$)")
_INLINE_COMPONENT = re.compile(r"</?[A-Z][\w.]*(?:\s[^>]*)?/?>")
_ESM = re.compile(r"^(import|export)\s")
_MDX_COMMENT = re.compile(r"^\s*\{/\*.*\*/\}\s*$")
_ATTRIBUTE = re.compile(
    r"""([A-Za-z_][\w\-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|\{["']([^"']*)["']\})"""
)


def mdx_to_markdown(source: str) -> str:
    """The Markdown content of an MDX document (see the module docstring)."""
    out: list[str] = []
    lines = source.split("\n")
    fence: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if fence is not None:
            out.append(line)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
            out.append(line)
            continue
        if _ESM.match(line) or _MDX_COMMENT.match(line):
            out.append("")
            continue
        if _COMPONENT_START.match(line):
            tag, rest, index = _whole_tag(line, lines, index)
            out.append("")
            title_line = _title_line(tag)
            if title_line:
                out.extend([title_line, ""])
            rest = _INLINE_COMPONENT.sub("", rest).strip()
            if rest:
                out.extend([rest, ""])
            continue
        out.append(line)
    return "\n".join(out)


def _whole_tag(first: str, lines: list[str], index: int) -> tuple[str, str, int]:
    """Collect a component tag that may span lines, up to its closing ``>``.

    Returns the tag, the rest of its last line, and the index after it.
    """
    text = first
    end = _tag_end(text)
    while end < 0 and index < len(lines):
        text = f"{text} {lines[index]}"
        index += 1
        end = _tag_end(text)
    if end < 0:
        return text, "", index
    return text[: end + 1], text[end + 1 :], index


def _tag_end(text: str) -> int:
    """Index of the ``>`` closing the tag that starts ``text``, or -1."""
    quote: str | None = None
    depth = 0
    for position, char in enumerate(text):
        if quote:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == ">" and depth <= 0:
            return position
    return -1


def _title_line(tag: str) -> str | None:
    attributes = {m[1]: m[2] or m[3] or m[4] or "" for m in _ATTRIBUTE.finditer(tag)}
    title = attributes.get("title", "").strip()
    if not title:
        return None
    text = escape_markdown_inline(title)
    href = attributes.get("href", "").strip()
    if href and not any(c in href for c in " <>()"):
        return f"**[{text}]({href})**"
    return f"**{text}**"
