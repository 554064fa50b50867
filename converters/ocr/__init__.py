"""OCR: reading the text of pages that carry only pictures of it.

OCR is slow (about a second a page), so it is a second pass: a conversion without
:attr:`~docshelf.converters.base.Source.ocr` lists the pages that need it in
:attr:`~docshelf.converters.base.Facts.ocr_pages`, and the builder converts the
document again with ``ocr`` set when :func:`ocr_enabled` and not
:func:`ocr_unavailable`. The engine is Tesseract, run as a child process
(:mod:`converters.ocr.tesseract`); ``bench/README.md`` (OCR) says why, with the
measurements. It is a system package (``apt-get install tesseract-ocr``), not a
Python one: nothing is downloaded, and without it OCR is off with that reason.

Settings, read from the environment by every process alike (the server and its
conversion workers): ``DOCSHELF_OCR`` (on/off, default on),
``DOCSHELF_OCR_LANGUAGES`` (Tesseract's language names, ``+`` or comma
separated, default ``eng``) and ``DOCSHELF_OCR_PAGE_TIMEOUT`` (seconds one page
may take, default 30).
"""

from __future__ import annotations

import os
import re

from docshelf.converters.ocr.tesseract import installed

#: The settings, as the server documents them (docs/configuration.md).
ENABLED_SETTING = "DOCSHELF_OCR"
LANGUAGES_SETTING = "DOCSHELF_OCR_LANGUAGES"
PAGE_TIMEOUT_SETTING = "DOCSHELF_OCR_PAGE_TIMEOUT"
DEFAULT_LANGUAGES = ("eng",)
DEFAULT_PAGE_TIMEOUT = 30.0
#: What to install when the engine is missing.
INSTALL_HINT = "apt-get install tesseract-ocr (Debian, Ubuntu; brew install tesseract on macOS)"

# What pydantic reads as false for a bool setting; anything else (and unset) is on.
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


def ocr_enabled() -> bool:
    """Whether the operator lets OCR run (``DOCSHELF_OCR``; on unless set to a false value)."""
    return os.environ.get(ENABLED_SETTING, "").strip().lower() not in _FALSE


def ocr_languages() -> tuple[str, ...]:
    """The languages asked for (``DOCSHELF_OCR_LANGUAGES``), in order, once each."""
    raw = os.environ.get(LANGUAGES_SETTING, "")
    asked = [part.strip() for part in re.split(r"[,+]", raw) if part.strip()]
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
    engine = installed()
    if engine is None:
        return f"OCR needs Tesseract, which is not installed: {INSTALL_HINT}"
    missing = [language for language in ocr_languages() if language not in engine.languages]
    if missing:
        return (
            f"Tesseract has no data for {', '.join(missing)} ({LANGUAGES_SETTING}): install "
            + ", ".join(f"tesseract-ocr-{language.lower()}" for language in missing)
        )
    return None


def ocr_identity() -> str:
    """Engine, its version and the languages: changes whenever OCR output would.

    Appended to the converter version of an OCR pass ("pdf:5+ocr-tesseract-5.3.0-eng").
    """
    engine = installed()
    return f"tesseract-{engine.version if engine else 'none'}-{'+'.join(ocr_languages())}"
