"""OCR: reading the text of pages that carry only pictures of it.

OCR is slow (about a second a page), so it is a second pass: a conversion without
:attr:`~docshelf.converters.base.Source.ocr` lists the pages that need it in
:attr:`~docshelf.converters.base.Facts.ocr_pages`, and the builder converts the
document again with ``ocr`` set when :func:`ocr_enabled` and not
:func:`ocr_unavailable`. The engine is RapidOCR (PP-OCR models run by ONNX Runtime,
shipped inside its wheel: nothing is downloaded); ``docs/ocr.md`` says why, with
the measurements.

Settings, read from the environment by every process alike (the server and its
conversion workers): ``DOCSHELF_OCR`` (on/off, default on),
``DOCSHELF_OCR_LANGUAGES`` (comma-separated, default ``en``) and
``DOCSHELF_OCR_PAGE_TIMEOUT`` (seconds one page may take, default 30).
"""

from __future__ import annotations

import os
from functools import cache

#: The settings, as the server documents them (docs/configuration.md).
ENABLED_SETTING = "DOCSHELF_OCR"
LANGUAGES_SETTING = "DOCSHELF_OCR_LANGUAGES"
PAGE_TIMEOUT_SETTING = "DOCSHELF_OCR_PAGE_TIMEOUT"
DEFAULT_LANGUAGES = ("en",)
DEFAULT_PAGE_TIMEOUT = 30.0
#: The languages the bundled PP-OCR models read: one Chinese model, which reads
#: Latin letters and digits too.
SUPPORTED_LANGUAGES = frozenset({"en", "zh"})
#: What to install when the engine is missing.
INSTALL_HINT = "pip install 'docshelf[ocr]'"

# What pydantic reads as false for a bool setting; anything else (and unset) is on.
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


def ocr_enabled() -> bool:
    """Whether the operator lets OCR run (``DOCSHELF_OCR``; on unless set to a false value)."""
    return os.environ.get(ENABLED_SETTING, "").strip().lower() not in _FALSE


def ocr_languages() -> tuple[str, ...]:
    """The languages asked for (``DOCSHELF_OCR_LANGUAGES``), lowercased, in order, once each."""
    raw = os.environ.get(LANGUAGES_SETTING, "")
    asked = [part.strip().lower() for part in raw.split(",") if part.strip()]
    return tuple(dict.fromkeys(asked)) or DEFAULT_LANGUAGES


def ocr_page_timeout() -> float:
    """Seconds OCR may spend on one page (``DOCSHELF_OCR_PAGE_TIMEOUT``); a bad value is the
    default (the server validates the setting at start, so a bad one never gets this far)."""
    try:
        seconds = float(os.environ.get(PAGE_TIMEOUT_SETTING, "") or DEFAULT_PAGE_TIMEOUT)
    except ValueError:
        return DEFAULT_PAGE_TIMEOUT
    return seconds if seconds > 0 else DEFAULT_PAGE_TIMEOUT


def ocr_unavailable() -> str | None:
    """None when OCR can run here; else why not, for a person (listed beside the file)."""
    missing = _missing_engine()
    if missing:
        return missing
    unknown = [language for language in ocr_languages() if language not in SUPPORTED_LANGUAGES]
    if unknown:
        return (
            f"OCR cannot read {', '.join(unknown)} ({LANGUAGES_SETTING}); "
            f"its models read {', '.join(sorted(SUPPORTED_LANGUAGES))}"
        )
    return None


def ocr_identity() -> str:
    """Engine, its version and the languages: changes whenever OCR output would.

    Appended to the converter version of an OCR pass ("pdf:5+ocr-rapidocr-1.4.4-en").
    """
    return f"rapidocr-{_engine_version()}-{'+'.join(ocr_languages())}"


@cache
def _missing_engine() -> str | None:
    """Why the engine cannot be imported here, or None. Importing it is the only honest
    check: OpenCV's wheel loads system libraries (libGL) that may be absent."""
    try:
        import onnxruntime  # noqa: F401
        import rapidocr_onnxruntime  # noqa: F401
    except ImportError as exc:
        return f"OCR needs the ocr extra: {INSTALL_HINT} ({exc})"
    except OSError as exc:  # pragma: no cover - a shared library the wheel needs is missing
        return f"OCR engine cannot load: {exc}"
    return None


@cache
def _engine_version() -> str:
    """The installed engine's version, or "none" (the identity of a pass that cannot OCR)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rapidocr-onnxruntime")
    except PackageNotFoundError:
        return "none"
