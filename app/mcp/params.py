"""The params of each method, checked once at the door and handed to handlers typed.

One model per shape of ``params``; the method table (:mod:`app.mcp.kernel`)
names the model of each method. A wrong type is -32602 (JSON-RPC 2.0 "Invalid
params") with a message that says which field and what it must be. Fields the
model does not name are ignored, as the schema allows (``_meta`` among them:
the kernel reads it before the model does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Self

from docshelf.app.mcp import wire


class Params(Protocol):
    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> Self: ...


def _invalid(message: str) -> wire.McpError:
    return wire.McpError(wire.INVALID_PARAMS, message)


def _text(value: str, field: str) -> str:
    """``value``, if it is Unicode text; -32602 naming ``field`` if not.

    JSON text may escape a lone surrogate (``"\\ud800"``) that no UTF-8 — and so no
    database — can hold: bound into a query, it fails deep inside the driver
    (``UnicodeEncodeError``, -32603). No document, path or slug holds one, so it is a
    mistake in the request, said as one.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _invalid(
            f"{field} is not valid Unicode text (a lone surrogate at index {exc.start})"
        ) from None
    return value


@dataclass(frozen=True, slots=True)
class NoParams:
    """Methods that read nothing from ``params`` (``ping``, ``server/discover``)."""

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> NoParams:
        return _NO_PARAMS


_NO_PARAMS = NoParams()


@dataclass(frozen=True, slots=True)
class UriParams:
    """``resources/read``, ``resources/metadata``, ``resources/subscribe``."""

    uri: str

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> UriParams:
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri:
            raise _invalid("params.uri must be a non-empty string")
        return cls(uri)


@dataclass(frozen=True, slots=True)
class UnsubscribeParams:
    """``resources/unsubscribe``: any string, even one never subscribed (or not a URI we
    serve: the document may be gone)."""

    uri: str

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> UnsubscribeParams:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise _invalid("params.uri must be a string")
        return cls(_text(uri, "params.uri"))


@dataclass(frozen=True, slots=True)
class PageParams:
    """Paginated lists (basic/utilities/pagination): an opaque ``cursor``, if any."""

    cursor: str | None

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> PageParams:
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise _invalid("Invalid cursor: params.cursor must be a string")
        return cls(cursor)


@dataclass(frozen=True, slots=True)
class ListResourcesParams:
    """``resources/list``: a cursor, and SEP-2093's optional ``uri`` of the listable
    resource whose direct children to list ("If omitted, the server returns its default
    resource list")."""

    cursor: str | None
    uri: str | None

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> ListResourcesParams:
        cursor = PageParams.parse(method, params).cursor
        uri = params.get("uri")
        if uri is not None and (not isinstance(uri, str) or not uri):
            raise _invalid(
                "resources/list: params.uri must be the non-empty URI of a folder to list "
                '(one ending in "/", such as docshelf://SHELF/), or left out'
            )
        return cls(cursor, None if uri is None else _text(uri, "params.uri"))


@dataclass(frozen=True, slots=True)
class InitializeParams:
    """2025-11-25 basic/lifecycle "Initialization"."""

    protocol_version: str
    capabilities: dict[str, Any]
    client_info: dict[str, Any] | None

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> InitializeParams:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise _invalid("initialize: protocolVersion must be a string")
        capabilities = params.get("capabilities", {})
        if not isinstance(capabilities, dict):
            raise _invalid("initialize: capabilities must be an object")
        info = params.get("clientInfo")
        return cls(requested, capabilities, info if isinstance(info, dict) else None)


@dataclass(frozen=True, slots=True)
class ListenParams:
    """2026-07-28 ``subscriptions/listen``: the part of its filter this server honours."""

    MAX_URIS: ClassVar[int] = 1000  # a stream holds its URIs as long as it is open

    resources_list_changed: bool
    resource_subscriptions: tuple[str, ...]

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> ListenParams:
        requested = params.get("notifications")
        if not isinstance(requested, dict):
            raise _invalid("subscriptions/listen: params.notifications must be an object")
        uris = requested.get("resourceSubscriptions", [])
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise _invalid("subscriptions/listen: resourceSubscriptions must be an array of URIs")
        if len(uris) > cls.MAX_URIS:
            raise _invalid(
                f"subscriptions/listen: at most {cls.MAX_URIS} resourceSubscriptions per "
                f"stream, got {len(uris)}; split them over several streams"
            )
        return cls(requested.get("resourcesListChanged") is True, tuple(dict.fromkeys(uris)))

    def honored(self) -> dict[str, Any]:
        """The acknowledged filter: tools/prompts are omitted (we serve neither)."""
        honored: dict[str, Any] = {}
        if self.resources_list_changed:
            honored["resourcesListChanged"] = True
        if self.resource_subscriptions:
            honored["resourceSubscriptions"] = list(self.resource_subscriptions)
        return honored


@dataclass(frozen=True, slots=True)
class CallToolParams:
    """``tools/call`` (server/tools "Calling Tools"): the tool's name and its arguments.
    The arguments are checked by the tool itself: a wrong one is a tool error the model
    can read (``isError``), not a protocol error."""

    name: str
    arguments: dict[str, Any]

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> CallToolParams:
        name = params.get("name")
        if not isinstance(name, str) or not name:
            raise _invalid("tools/call: params.name must be a non-empty string")
        arguments = params.get("arguments", {})
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise _invalid("tools/call: params.arguments must be an object")
        return cls(name, arguments)


@dataclass(frozen=True, slots=True)
class CompleteParams:
    """``completion/complete`` (server/utilities/completion) for a resource template."""

    template: str
    argument: str
    value: str
    context: dict[str, str]

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> CompleteParams:
        """Per the schema's ``CompleteRequestParams``: ``context.arguments`` is optional, and
        if present an object of strings (the values already chosen)."""
        ref = params.get("ref")
        if not isinstance(ref, dict) or not isinstance(ref.get("type"), str):
            raise _invalid("completion/complete: params.ref must be an object with a type")
        if ref["type"] != "ref/resource":
            raise _invalid(
                f"completion/complete: this server has no prompts; ref type {ref['type']!r} "
                "cannot be completed (use ref/resource with a resource template URI)"
            )
        template = ref.get("uri")
        if not isinstance(template, str):
            raise _invalid("completion/complete: params.ref.uri must be a string")
        argument = params.get("argument")
        if (
            not isinstance(argument, dict)
            or not isinstance(argument.get("name"), str)
            or not isinstance(argument.get("value"), str)
        ):
            raise _invalid("completion/complete: params.argument must have a string name and value")
        value = _text(argument["value"], "completion/complete: params.argument.value")
        return cls(template, argument["name"], value, _context_arguments(params.get("context")))


def _context_arguments(context: object) -> dict[str, str]:
    """``completion/complete``'s ``context.arguments``; {} when absent."""
    if context is None:
        return {}
    if not isinstance(context, dict):
        raise _invalid("completion/complete: params.context must be an object")
    arguments = context.get("arguments")
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise _invalid(
            "completion/complete: params.context.arguments must be an object of the values "
            'already chosen, e.g. {"path": "guides/intro.md"}'
        )
    for name, chosen in arguments.items():
        if not isinstance(chosen, str):
            raise _invalid(
                "completion/complete: params.context.arguments must map names to strings; "
                f"the value of {name!r} is not a string"
            )
        _text(chosen, f"completion/complete: params.context.arguments.{name}")
    return arguments
