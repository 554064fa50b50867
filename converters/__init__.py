"""docshelf converters: bytes in, facts and derived representations out.

Pure functions of their input: no database, network, clock or filesystem
(except the PDF renderer reading font files). See :mod:`converters.base` for
the contract and :mod:`converters.registry` for the entry points.
"""

from docshelf.converters.base import (
    APPLICATION_JSON,
    APPLICATION_PDF,
    TEXT_MARKDOWN,
    TEXT_PLAIN,
    ConversionError,
    ConversionResult,
    Converter,
    Facts,
    FailureReason,
    OutlineEntry,
    Representation,
    Source,
)
from docshelf.converters.formats import DERIVED_MIME_TYPES
from docshelf.converters.registry import CONVERTERS, convert, find_converter, offered_formats
from docshelf.converters.schema import DOCUMENT_SCHEMA_ID, DOCUMENT_SCHEMA_NAME, document_schema

__all__ = [
    "APPLICATION_JSON",
    "APPLICATION_PDF",
    "CONVERTERS",
    "DERIVED_MIME_TYPES",
    "DOCUMENT_SCHEMA_ID",
    "DOCUMENT_SCHEMA_NAME",
    "TEXT_MARKDOWN",
    "TEXT_PLAIN",
    "ConversionError",
    "ConversionResult",
    "Converter",
    "Facts",
    "FailureReason",
    "OutlineEntry",
    "Representation",
    "Source",
    "convert",
    "document_schema",
    "find_converter",
    "offered_formats",
]
