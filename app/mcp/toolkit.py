"""What every tool shares: its arguments checked with messages a model can act on, its
errors as results, and its answer in the shape the client negotiated.

server/tools "Error Handling": "Tool Execution Errors ... contain actionable feedback
that language models can use to self-correct", so a wrong argument is a result with
``isError: true`` whose text says what to send instead, never a protocol error.

The content negotiation SEP, "Tool Results": an ``agent`` or ``format=json`` client
gets the structured result first, serialized as JSON text; a ``human`` client (and
one that declared nothing) a Markdown text first. ``structuredContent`` is always
there: every tool with results declares an ``outputSchema`` (server/tools "Output
Schema": "Servers MUST provide structured results that conform to this schema").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docshelf.app.negotiation import ToolResultStyle


class ToolInputError(ValueError):
    """An argument the model got wrong; the message says how to get it right."""


@dataclass(frozen=True, slots=True)
class Arguments:
    """A ``tools/call``'s arguments, read one by one against what the tool takes."""

    values: Mapping[str, Any]
    allowed: frozenset[str]

    def check(self) -> None:
        unknown = sorted(set(self.values) - self.allowed)
        if unknown:
            raise ToolInputError(
                f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                f"this tool takes {', '.join(sorted(self.allowed))}"
            )

    def string(self, name: str, *, required: bool = False) -> str | None:
        value = self.values.get(name)
        if value is None:
            if required:
                raise ToolInputError(f"{name} is required")
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            raise ToolInputError(f"{name} must be a non-empty string")
        if not storable(value):
            raise ToolInputError(
                f"{name} holds a character no document name or text can: NUL or an unpaired "
                "surrogate"
            )
        return value

    def integer(self, name: str, default: int, low: int, high: int) -> int:
        value = self.values.get(name, default)
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON Schema: 2.0 is an integer
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ToolInputError(f"{name} must be an integer from {low} to {high}")
        return value

    def shelf(self, shelves: Collection[str]) -> str | None:
        """The ``shelf`` argument, one of ``shelves``, or None when not given."""
        shelf = self.string("shelf")
        if shelf is not None and shelf not in shelves:
            known = ", ".join(sorted(shelves))
            raise ToolInputError(f"there is no shelf {shelf!r}; the shelves are: {known}")
        return shelf

    def choice(self, name: str, choices: Sequence[str], default: str) -> str:
        value = self.values.get(name, default)
        if value not in choices:
            raise ToolInputError(f"{name} must be one of {', '.join(choices)}")
        return str(value)


def storable(value: str) -> bool:
    """Whether both databases can compare ``value``: PostgreSQL holds no NUL, and no UTF-8
    (so no SQLite) an unpaired surrogate, which JSON text may still escape."""
    if "\x00" in value:
        return False
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def tool_error(message: str) -> dict[str, Any]:
    """A tool execution error: the message as the one text block."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def negotiated_result(
    style: ToolResultStyle,
    structured: Mapping[str, Any],
    markdown: Callable[[], str],
    blocks: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """A successful result: the text block in the negotiated shape (the structured result
    as JSON, or ``markdown()``), then ``blocks`` (resource links), with the structured
    result beside them."""
    text = json.dumps(structured, ensure_ascii=False) if style.structured_first else markdown()
    return {
        "content": [{"type": "text", "text": text}, *blocks],
        "structuredContent": structured,
        "isError": False,
    }
