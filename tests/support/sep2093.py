"""SEP-2093 ("Resource Contents Metadata and Resource Capabilities", draft, PR #2093) as
JSON Schema, written from the SEP's own TypeScript, for the fields neither era's
``schema.json`` has; and what a client sends to opt in to docshelf's folders.

The SEP's text, quoted where each schema comes from:

§2 "Add Per-Resource capabilities"::

    export interface ResourceCapabilities {
      list?: boolean;
      subscribe?: boolean;
    }
    export interface Resource extends BaseMetadata, Icons {
      uri: string;          // @format uri
      mimeType?: string;
      size?: number;
      capabilities?: ResourceCapabilities;
      annotations?: Annotations;
    }

§4 "Extend resources/list with URI Scoping"::

    export interface ListResourcesRequestParams extends PaginatedRequestParams {
      uri?: string;         // @format uri
    }
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

EXTENSION = "dev.docshelf/sep-2093"
# A client's capabilities declaring the extension: under ``extensions`` (either era) or
# ``experimental`` (the 2025-11-25 schema's place for what it does not name).
OPTED_IN = {"extensions": {EXTENSION: {}}}
OPTED_IN_EXPERIMENTAL = {"experimental": {EXTENSION: {}}}

RESOURCE_CAPABILITIES = {
    "type": "object",
    "properties": {"list": {"type": "boolean"}, "subscribe": {"type": "boolean"}},
    "additionalProperties": False,
}
# BaseMetadata's ``name`` is required; the SEP's Resource adds the optional fields above.
RESOURCE = {
    "type": "object",
    "required": ["uri", "name"],
    "properties": {
        "uri": {"type": "string", "format": "uri"},
        "name": {"type": "string"},
        "title": {"type": "string"},
        "mimeType": {"type": "string"},
        "size": {"type": "number"},
        "capabilities": RESOURCE_CAPABILITIES,
        "annotations": {"type": "object"},
    },
}
# A resource that docshelf says every client should treat as the SEP says: with capabilities.
RESOURCE_WITH_CAPABILITIES = {"allOf": [RESOURCE, {"required": ["capabilities"]}]}
LIST_PARAMS = {
    "type": "object",
    "properties": {
        "cursor": {"type": "string"},
        "uri": {"type": "string", "format": "uri"},
        "_meta": {"type": "object"},
    },
}

_CHECKER = Draft202012Validator.FORMAT_CHECKER


def validate_sep(schema: dict[str, Any], instance: Any) -> None:
    """Raise AssertionError with the complaint if ``instance`` is not what the SEP says."""
    errors = list(Draft202012Validator(schema, format_checker=_CHECKER).iter_errors(instance))
    if errors:
        raise AssertionError(f"not as SEP-2093 says: {errors[0].message} at {list(errors[0].path)}")
