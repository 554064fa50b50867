"""Read the YAML-ish front matter of Markdown files as flat string metadata.

Why not PyYAML: docshelf only needs ``key: value`` strings (title, description,
author, lang ...), front matter in the wild is mostly exactly that, and a full
YAML loader brings anchors/aliases (a memory bomb in untrusted input), typed
values we would have to turn back into strings, and a C-extension dependency.
This reader takes the common subset: scalars (plain or quoted), ``|``/``>``
block scalars, and lists (inline ``[a, b]`` or ``- item`` lines, joined with
", "). Nested mappings are flattened to ``parent.child`` keys. Anything it does
not understand is skipped, never an error.
"""

from __future__ import annotations

import re

_KEY_LINE = re.compile(
    r"^(?P<indent>[ ]*)(?P<key>[A-Za-z0-9_][\w\-. ]*?)\s*:(?:\s+(?P<value>.*))?$"
)
_LIST_ITEM = re.compile(r"^(?P<indent>[ ]*)-\s+(?P<value>.*)$")
_COMMENT = re.compile(r"\s+#.*$")
_DOUBLE_QUOTED_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/"}


def parse_front_matter(text: str) -> dict[str, str]:
    """Flat ``{key: value}`` strings from the front matter block's content."""
    result: dict[str, str] = {}
    lines = text.split("\n")
    parents: list[tuple[int, str]] = []  # (indent, key) of enclosing mappings
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY_LINE.match(line)
        if match is None:
            continue
        indent = len(match["indent"])
        while parents and parents[-1][0] >= indent:
            parents.pop()
        key = ".".join([*(name for _, name in parents), match["key"].strip()])
        raw = (match["value"] or "").strip()
        if raw in ("|", "|-", "|+", ">", ">-", ">+"):
            block, index = _block_lines(lines, index, indent)
            result[key] = "\n".join(block) if raw.startswith("|") else " ".join(block)
        elif raw:
            value = _scalar(raw)
            if value:
                result[key] = value
        else:
            items, after = _list_items(lines, index, indent)
            if items:
                result[key] = ", ".join(items)
                index = after
            else:
                parents.append((indent, match["key"].strip()))
    return result


def _block_lines(lines: list[str], index: int, indent: int) -> tuple[list[str], int]:
    """The lines of a ``|``/``>`` block scalar, dedented; and where it ends."""
    block: list[str] = []
    while index < len(lines):
        line = lines[index]
        if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
            break
        block.append(line.strip())
        index += 1
    while block and not block[-1]:
        block.pop()
    return block, index


def _list_items(lines: list[str], index: int, indent: int) -> tuple[list[str], int]:
    """``- item`` lines following a bare ``key:``; and where they end."""
    items: list[str] = []
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
            continue
        match = _LIST_ITEM.match(line)
        if match is None or len(match["indent"]) < indent:
            break
        value = _scalar(match["value"].strip())
        if value:
            items.append(value)
        index += 1
    return items, index


def _scalar(raw: str) -> str:
    """A plain, quoted or inline-list scalar as a string."""
    if raw.startswith('"'):
        end = _closing_double_quote(raw)
        return _unescape_double(raw[1:end])
    if raw.startswith("'"):
        body = raw[1:]
        end = body.find("'")
        while end != -1 and body[end + 1 : end + 2] == "'":
            end = body.find("'", end + 2)
        return (body if end == -1 else body[:end]).replace("''", "'")
    raw = _COMMENT.sub("", raw).strip()
    if raw.startswith("[") and raw.endswith("]"):
        return ", ".join(_scalar(part.strip()) for part in raw[1:-1].split(",") if part.strip())
    return raw


def _closing_double_quote(raw: str) -> int:
    index = 1
    while index < len(raw):
        if raw[index] == "\\":
            index += 2
            continue
        if raw[index] == '"':
            return index
        index += 1
    return len(raw)


def _unescape_double(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: _DOUBLE_QUOTED_ESCAPES.get(m[1], m[1]), body)
