"""Keep a serving process's heap from creeping: few malloc arenas, freed pages handed back.

A serving process allocates on many threads (anyio's workers come and go), and glibc's
malloc gives threads their own arenas (up to 8 per core) and keeps what they free there for
reuse rather than returning it. Under churn that kept memory crept up by 3-5 MB per 10
minutes per process while the memory in use stayed flat (issue 24, item 17;
``python -m bench soak --trace``). Two arenas, a fixed threshold above which a block gets
its own mapping, and ``malloc_trim(0)`` every minute to return the free pages of each, hold
it level (figures in bench/README.md, "Soak benchmark"). On other C libraries this module
does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from collections.abc import Callable
from typing import Any

from docshelf.storage.periodic import Periodic

# mallopt's parameter numbers (glibc's malloc.h).
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library, looked up once (``find_library`` runs ``ldconfig -p`` each time)."""
    library = ctypes.util.find_library("c")
    if library is None:
        return None
    try:
        return ctypes.CDLL(library)
    except OSError:
        return None


def _glibc_function(name: str) -> Any:
    """A function of glibc's malloc, or None where the C library has none (macOS, musl)."""
    return getattr(_libc(), name, None)


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)``, or None where the C library has none."""
    trim = _glibc_function("malloc_trim")
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


def _mallopt(parameter: int, value: int, operator_variable: str) -> bool:
    """Set one of malloc's parameters, unless ``value`` is 0 or the operator set its
    environment variable (theirs wins). Returns whether it was set."""
    if value <= 0 or operator_variable in os.environ:
        return False
    mallopt = _glibc_function("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(parameter, value))


def limit_arenas(count: int) -> bool:
    """Let threads share at most ``count`` malloc arenas from now on (0: glibc's default).

    Call it before the process starts threads: arenas made earlier stay. An operator's own
    ``MALLOC_ARENA_MAX`` wins. Returns whether the cap was set.
    """
    return _mallopt(M_ARENA_MAX, count, "MALLOC_ARENA_MAX")


def fix_mmap_threshold(size: int) -> bool:
    """Give every allocation of ``size`` bytes or more its own mapping, returned to the
    system when freed (0: glibc's default, a threshold that rises to the largest block
    freed so far, up to 32 MiB).

    A serving process handles payloads of megabytes (a PDF, its base64, a JSON page list).
    With the rising threshold, once one such block was freed the next ones came from the
    heap, where the small long-lived objects allocated between them kept the pages from
    going back: under churn RSS still crept by up to 1 MB per 10 minutes and sat 12 MB
    higher than with a fixed 256 KiB threshold (issue 24, item 17; bench/README.md, "Soak
    benchmark"). An operator's own ``MALLOC_MMAP_THRESHOLD_`` wins.
    """
    return _mallopt(M_MMAP_THRESHOLD, size, "MALLOC_MMAP_THRESHOLD_")


class HeapTrimmer(Periodic):
    """A daemon thread that trims the heap every ``interval`` seconds (0: never; nor where
    the C library has no ``malloc_trim``)."""

    def __init__(self, interval: float) -> None:
        super().__init__("heap-trim", interval, self.trim, failure="could not trim the heap")
        self._trim = _malloc_trim() if interval > 0 else None

    @property
    def active(self) -> bool:
        return self._trim is not None

    def start(self) -> None:
        if self.active:
            super().start()

    def trim(self) -> None:
        """Return free heap pages now (a few milliseconds on a few hundred MB)."""
        if self._trim is not None:
            self._trim()
