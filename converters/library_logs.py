"""How loud the converters' libraries may be, set once when a process starts.

pypdf logs a warning for every oddity of a damaged file and for each font it cannot
decode; fpdf2 logs layout notes (unmatched tags, ignored attributes) per document, and
fontTools, which fpdf2 subsets every embedded font through, about twenty INFO lines per
font of every rendered PDF (tables pruned, glyph ids kept). For a server converting
other people's files that is noise, not news, and the operator can act on none of it:
errors still get through. Called by the CLI's logging setup and by each
conversion worker, never at import time, so a program that imports the converters keeps
its own logging configuration.
"""

import logging

LIBRARY_LOG_LEVELS = {"pypdf": logging.ERROR, "fpdf": logging.ERROR, "fontTools": logging.ERROR}


def quiet_libraries() -> None:
    """Raise the third-party loggers the converters use to the levels above."""
    for name, level in LIBRARY_LOG_LEVELS.items():
        logging.getLogger(name).setLevel(level)
