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
from typing import Any, ClassVar

from docshelf.app.mcp import wire


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
        """The acknowledged filter: tools and prompts are omitted (neither list changes)."""
        honored: dict[str, Any] = {}
        if self.resources_list_changed:
            honored["resourcesListChanged"] = True
        if self.resource_subscriptions:
            honored["resourceSubscriptions"] = list(self.resource_subscriptions)
        return honored


def _name_and_arguments(
    method: str, params: Mapping[str, Any], shape: str
) -> tuple[str, dict[str, Any]]:
    """What ``tools/call`` and ``prompts/get`` name: a non-empty ``name``, and ``arguments``
    that are ``shape`` (absent or null: none)."""
    name = params.get("name")
    if not isinstance(name, str) or not name:
        raise _invalid(f"{method}: params.name must be a non-empty string")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise _invalid(f"{method}: params.arguments must be {shape}")
    return name, arguments


@dataclass(frozen=True, slots=True)
class CallToolParams:
    """``tools/call`` (server/tools "Calling Tools"): the tool's name and its arguments.
    The arguments are checked by the tool itself: a wrong one is a tool error the model
    can read (``isError``), not a protocol error."""

    name: str
    arguments: dict[str, Any]

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> CallToolParams:
        return cls(*_name_and_arguments("tools/call", params, "an object"))


@dataclass(frozen=True, slots=True)
class GetPromptParams:
    """``prompts/get`` (server/prompts "Getting a Prompt"): the prompt's name and its
    arguments, which the schema's ``GetPromptRequestParams`` makes an object of strings.
    Which arguments a prompt takes is the prompt's to check (app.mcp.prompts)."""

    name: str
    arguments: dict[str, str]

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> GetPromptParams:
        name, arguments = _name_and_arguments(
            "prompts/get",
            params,
            'an object of strings, e.g. {"uri": "docshelf://shelf/guide.md"}',
        )
        for key, value in arguments.items():
            _text(key, "prompts/get: a name in params.arguments")
            if not isinstance(value, str):
                raise _invalid(
                    "prompts/get: params.arguments must map names to strings; "
                    f"the value of {key!r} is not a string"
                )
            _text(value, f"prompts/get: params.arguments[{key!r}]")
        return cls(_text(name, "prompts/get: params.name"), arguments)


#: server/utilities/completion "Reference Types".
REF_PROMPT = "ref/prompt"
REF_RESOURCE = "ref/resource"


@dataclass(frozen=True, slots=True)
class CompleteParams:
    """``completion/complete`` (server/utilities/completion): the argument of a resource
    template (``template``, its URI template) or of a prompt (``prompt``, its name)."""

    template: str | None
    prompt: str | None
    argument: str
    value: str
    context: dict[str, str]

    @classmethod
    def parse(cls, method: str, params: Mapping[str, Any]) -> CompleteParams:
        """Per the schema's ``CompleteRequestParams``: ``ref`` is a ``PromptReference`` or a
        ``ResourceTemplateReference``; ``context.arguments`` is optional, and if present an
        object of strings (the values already chosen)."""
        ref = params.get("ref")
        if not isinstance(ref, dict) or not isinstance(ref.get("type"), str):
            raise _invalid("completion/complete: params.ref must be an object with a type")
        template = prompt = None
        if ref["type"] == REF_RESOURCE:
            template = ref.get("uri")
            if not isinstance(template, str):
                raise _invalid("completion/complete: params.ref.uri must be a string")
        elif ref["type"] == REF_PROMPT:
            prompt = ref.get("name")
            if not isinstance(prompt, str):
                raise _invalid("completion/complete: params.ref.name must be a string")
        else:
            raise _invalid(
                f"completion/complete: ref type {ref['type']!r} cannot be completed; use "
                f"{REF_PROMPT} with a prompt's name or {REF_RESOURCE} with a resource "
                "template's URI"
            )
        argument = params.get("argument")
        if (
            not isinstance(argument, dict)
            or not isinstance(argument.get("name"), str)
            or not isinstance(argument.get("value"), str)
        ):
            raise _invalid("completion/complete: params.argument must have a string name and value")
        value = _text(argument["value"], "completion/complete: params.argument.value")
        context = _context_arguments(params.get("context"))
        return cls(template, prompt, argument["name"], value, context)


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
