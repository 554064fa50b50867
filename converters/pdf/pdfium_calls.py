"""How the PDF readers call PDFium: under one lock, and through plain prototypes where hot.

PDFium is not thread-safe: every call into it holds :data:`PDFIUM_LOCK`.
Conversion runs one document at a time per worker process, so the lock is
uncontended there; it makes a stray call from another thread wait, not crash.

The calls made once per character or per page object go through plain ctypes
prototypes that take their handles as addresses, which costs less than
pypdfium2's typed bindings (figures at each prototype).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import pypdfium2.raw as pdfium_c

#: Held around every use of PDFium (see the module docstring).
PDFIUM_LOCK = threading.Lock()


def _address(function: Any) -> int:
    address = ctypes.cast(function, ctypes.c_void_p).value
    if not address:  # pragma: no cover - a loaded library always has its symbols
        raise ImportError(f"PDFium symbol {function!r} has no address")
    return address


# The map-error check is the one call made for every character (~150,000 for
# a 117-page book). Through a plain prototype that takes the text page as an
# address it costs ~0.5 µs a call instead of pypdfium2's ~0.75 µs.
HAS_UNICODE_MAP_ERROR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)(
    _address(pdfium_c.FPDFText_HasUnicodeMapError)
)
# Looking for table borders asks every object on the page its type (~500 on a
# page with a figure); the same plain prototypes halve the cost of that walk.
GET_OBJECT = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)(
    _address(pdfium_c.FPDFPage_GetObject)
)
OBJECT_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(
    _address(pdfium_c.FPDFPageObj_GetType)
)
