"""Validation of every MCP message a test sees against the spec's own ``schema.json``."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from tests.support.paths import MCP_SCHEMAS


@cache
def _schema(version: str) -> dict[str, Any]:
    return json.loads((MCP_SCHEMAS / version / "schema.json").read_text())


@cache
def _validator(version: str, definition: str) -> Draft202012Validator:
    schema = _schema(version)
    if definition not in schema["$defs"]:
        raise KeyError(f"{definition} is not defined in the {version} schema")
    wrapper = {"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(wrapper)


def validate(version: str, definition: str, instance: Any) -> None:
    """Raise AssertionError with the schema's complaint if ``instance`` is not a ``definition``."""
    errors = sorted(_validator(version, definition).iter_errors(instance), key=lambda e: e.path)
    if errors:
        error: ValidationError = errors[0]
        raise AssertionError(
            f"not a valid {version} {definition}: {error.message} at {list(error.absolute_path)}"
        )


def validate_response(version: str, result_definition: str, response: dict[str, Any]) -> None:
    """A JSON-RPC result response whose ``result`` must be a ``result_definition``."""
    validate(version, "JSONRPCResultResponse", response)
    validate(version, result_definition, response["result"])


def validate_error(version: str, response: dict[str, Any]) -> None:
    validate(version, "JSONRPCErrorResponse", response)
