"""A cell's value as its number format shows it: ``0.256`` under ``0.0%`` is ``25.6%``.

Pure functions, no I/O: :func:`render` takes a value (a number, or the date, time,
datetime or duration python-calamine returns for date-formatted cells) and an
Excel format code (ECMA-376 Part 1 §18.8.31) and returns the displayed text, or
``None`` when the code is General or uses something this renderer does not do;
the caller then shows the value as :func:`.table.display` does. The rule is to
fall back rather than show a number the spreadsheet would not: a wrong digit is
worse than a missing thousands separator.

Rendered: sections ``positive;negative;zero;text`` (a negative number in a
negative section loses its minus sign, as in Excel), quoted literals and
backslash escapes, ``_x`` (a space) and ``*x`` (dropped: a fill has no width in
a table), colours ``[Red]`` and ``[Color7]`` (ignored), ``[$€-407]`` (the
currency symbol is kept, the locale ignored), digit placeholders ``0 # ?`` with
fixed decimals, the thousands separator, trailing commas scaling by 1000, ``%``,
scientific ``0.00E+00`` (``##0.0E+0`` in steps of three), ``@``, ``General``
inside a section, and dates and times (``yyyy yy mmmmm mmmm mmm mm m dddd ddd
dd d hh h mm ss .0 AM/PM A/P [h] [mm] [ss]``; ``m`` is minutes after an hour or
before seconds, else the month). Decimals round half away from zero, as Excel
does, on the value's 15 significant digits (Excel's precision), so 1.005 under
``0.00`` is ``1.01``, not the binary float's ``1.00``.

Falls back (``None``): conditions (``[>100]``), fractions (``# ?/?``: the
decimal value is shown instead), the system date/time codes ``[$-F800]`` and
``[$-F400]``, the locale's short date (built-in 14 and 22 are read as ISO
``yyyy-mm-dd``, which is what the fallback shows too), DBNum and other
bracketed codes, letters a number format does not define, and dates outside
what Python's ``datetime`` holds or before 1900-03-01 (Excel's phantom
1900-02-29 makes those serials ambiguous).
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

#: Built-in number formats, ECMA-376 Part 1 §18.8.30 (ids 14 and 22 are the locale's short
#: date in Excel; ISO here, like the fallback). Ids 5 to 8 and 41 to 44 are locale-dependent
#: currency and accounting formats that files normally spell out in ``numFmts``.
BUILTIN_FORMATS: dict[int, str] = {
    0: "General",
    1: "0",
    2: "0.00",
    3: "#,##0",
    4: "#,##0.00",
    9: "0%",
    10: "0.00%",
    11: "0.00E+00",
    12: "# ?/?",
    13: "# ??/??",
    14: "yyyy-mm-dd",
    15: "d-mmm-yy",
    16: "d-mmm",
    17: "mmm-yy",
    18: "h:mm AM/PM",
    19: "h:mm:ss AM/PM",
    20: "h:mm",
    21: "h:mm:ss",
    22: "yyyy-mm-dd h:mm",
    37: "#,##0 ;(#,##0)",
    38: "#,##0 ;[Red](#,##0)",
    39: "#,##0.00;(#,##0.00)",
    40: "#,##0.00;[Red](#,##0.00)",
    45: "mm:ss",
    46: "[h]:mm:ss",
    47: "mm:ss.0",
    48: "##0.0E+0",
    49: "@",
}

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_EPOCH_1900 = datetime.datetime(1899, 12, 30)
_EPOCH_1904 = datetime.datetime(1904, 1, 1)
_COLOURS = re.compile(r"(black|blue|cyan|green|magenta|red|white|yellow|color\d{1,2})", re.I)
_DATE_TOKEN = re.compile(r"(?i)\[(h+|m+|s+)\]|AM/PM|A/P|y+|m+|d+|h+|s+|\.0+|e+|b+|g+")


class Unsupported(Exception):
    """A construct the renderer does not do: the caller falls back to the plain value."""


@dataclass(frozen=True)
class Token:
    """One piece of a section: ``kind`` is ``lit``, ``digit``, ``point``, ``comma``,
    ``percent``, ``exp``, ``text``, ``general`` or ``date``; ``text`` is its spelling."""

    kind: str
    text: str


@dataclass(frozen=True)
class Section:
    tokens: tuple[Token, ...]
    is_date: bool


def render(value: Any, code: str, date1904: bool = False) -> str | None:
    """The value as ``code`` shows it, or ``None`` to fall back (see the module's docstring)."""
    try:
        sections = parse(code)
        if sections is None:
            return None
        return _render(value, sections, date1904)
    except (Unsupported, ArithmeticError, ValueError, OverflowError, InvalidOperation):
        return None


def is_date_format(code: str) -> bool:
    """Whether the format shows numbers as dates or times (its first section decides)."""
    try:
        sections = parse(code)
    except Unsupported:
        return False
    return sections is not None and sections[0].is_date


@lru_cache(maxsize=512)
def parse(code: str) -> tuple[Section, ...] | None:
    """The sections of ``code``; ``None`` for General; :class:`Unsupported` when it cannot be
    rendered. Cached: a workbook uses a handful of formats for thousands of cells."""
    if not code or code.strip().lower() == "general":
        return None
    sections = tuple(_section(part) for part in _split(code))
    if len(sections) > 4:
        raise Unsupported("more than four sections")
    return sections


def _split(code: str) -> list[str]:
    """Sections separated by ``;`` outside quotes, brackets and escapes."""
    parts, start, i, quoted, bracket = [], 0, 0, False, False
    while i < len(code):
        char = code[i]
        if quoted:
            quoted = char != '"'
        elif bracket:
            bracket = char != "]"
        elif char == '"':
            quoted = True
        elif char == "[":
            bracket = True
        elif char in "\\_*":
            i += 1
        elif char == ";":
            parts.append(code[start:i])
            start = i + 1
        i += 1
    parts.append(code[start:])
    return parts


def _section(text: str) -> Section:
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == '"':
            end = text.find('"', i + 1)
            end = len(text) if end < 0 else end
            tokens.append(Token("lit", text[i + 1 : end]))
            i = end + 1
        elif char == "\\":
            tokens.append(Token("lit", text[i + 1 : i + 2]))
            i += 2
        elif char == "_":
            tokens.append(Token("lit", " "))
            i += 2
        elif char == "*":
            i += 2
        elif char == "[":
            end = text.find("]", i)
            if end < 0:
                raise Unsupported("unclosed bracket")
            tokens.extend(_bracket(text[i + 1 : end]))
            i = end + 1
        elif char in "0#?":
            tokens.append(Token("digit", char))
            i += 1
        elif char == ".":
            match = re.match(r"\.0+", text[i:])
            # ".0" right after seconds is a fraction of a second, else the decimal point.
            if match and _after_seconds(tokens):
                tokens.append(Token("date", match[0]))
                i += len(match[0])
            else:
                tokens.append(Token("point", "."))
                i += 1
        elif char == ",":
            tokens.append(Token("comma", ","))
            i += 1
        elif char == "%":
            tokens.append(Token("percent", "%"))
            i += 1
        elif char == "/":
            if tokens and tokens[-1].kind == "digit":
                raise Unsupported("fractions")
            tokens.append(Token("lit", "/"))
            i += 1
        elif char in "Ee" and re.match(r"[Ee][+-][0#?]", text[i:]):
            tokens.append(Token("exp", text[i : i + 2]))
            i += 2
        elif char == "@":
            tokens.append(Token("text", "@"))
            i += 1
        elif text[i : i + 7].lower() == "general":
            tokens.append(Token("general", "General"))
            i += 7
        elif char.isascii() and char.isalpha():
            match = _DATE_TOKEN.match(text, i)
            if not match or match[0][0].lower() in "ebg":
                raise Unsupported(f"letter {char!r}")
            tokens.append(Token("date", match[0]))
            i = match.end()
        else:
            tokens.append(Token("lit", char))
            i += 1
    is_date = any(token.kind == "date" for token in tokens)
    if is_date and any(t.kind in ("digit", "exp", "percent", "general") for t in tokens):
        raise Unsupported("digits mixed with a date")
    return Section(tuple(tokens), is_date)


def _after_seconds(tokens: list[Token]) -> bool:
    return (
        bool(tokens) and tokens[-1].kind == "date" and tokens[-1].text.lower().strip("[]")[0] == "s"
    )


def _bracket(inner: str) -> list[Token]:
    """``[Red]`` → nothing, ``[$€-407]`` → ``€``, ``[h]`` → elapsed hours; else unsupported."""
    if _COLOURS.fullmatch(inner):
        return []
    if inner.startswith("$"):
        symbol, _, locale = inner[1:].partition("-")
        if locale.upper().lstrip("0") in ("F800", "F400"):
            raise Unsupported("system date or time format")
        return [Token("lit", symbol)] if symbol else []
    if re.fullmatch(r"(?i)h+|m+|s+", inner):
        return [Token("date", f"[{inner}]")]
    raise Unsupported(f"bracket [{inner}]")


def _render(value: Any, sections: tuple[Section, ...], date1904: bool) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text_section = sections[3] if len(sections) == 4 else sections[0]
        if not any(token.kind == "text" for token in text_section.tokens):
            return None
        return _text(value, text_section).strip()
    if isinstance(value, (datetime.date, datetime.time, datetime.timedelta)):
        if not sections[0].is_date:
            return None
        return _date(value, sections[0], date1904).strip()
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    section, number = sections[0], float(value)
    if len(sections) >= 2 and number < 0:
        section, number = sections[1], -number
    elif len(sections) >= 3 and number == 0:
        section = sections[2]
    if not any(t.kind in ("digit", "general", "date") for t in section.tokens):
        if any(token.kind == "text" for token in section.tokens):
            return None  # a number under a text-only section shows as General
        return _literals(section).strip()
    if section.is_date:
        if number < 0:
            return None
        return _date(number, section, date1904).strip()
    return _number(number, section).strip()


def _literals(section: Section) -> str:
    return "".join(token.text for token in section.tokens if token.kind == "lit")


def _text(value: str, section: Section) -> str:
    if any(token.kind not in ("lit", "text") for token in section.tokens):
        raise Unsupported("digits in a text section")
    return "".join(value if token.kind == "text" else token.text for token in section.tokens)


def _general(number: float) -> str:
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return f"{number:.15g}"


def _number(number: float, section: Section) -> str:
    tokens = list(section.tokens)
    sign = "-" if number < 0 else ""
    number = abs(number)
    if any(token.kind == "general" for token in tokens):
        if any(token.kind == "digit" for token in tokens):
            raise Unsupported("General with digit placeholders")
        body = "".join(_general(number) if t.kind == "general" else t.text for t in tokens)
        return sign + body
    percent, int_slots, frac_slots, exp_slots, point, exp, scale, grouping = _plan(section)
    number *= 100**percent
    number /= 1000**scale
    decimals = len(frac_slots)
    exponent_text = ""
    if exp is not None:
        mantissa, exponent = _scientific(number, int_slots, tokens, decimals)
        shown = f"{abs(exponent):0{max(len(exp_slots), 1)}d}"
        exp_sign = "-" if exponent < 0 else ("+" if tokens[exp].text[1] == "+" else "")
        exponent_text = tokens[exp].text[0] + exp_sign + shown
        rounded = mantissa
    else:
        rounded = _round(number, decimals)
    integer, _, fraction = f"{rounded:f}".partition(".")
    fraction = fraction.ljust(decimals, "0")[:decimals]
    if integer == "0":
        integer = ""
    if grouping and integer:
        integer = f"{int(integer):,}"
    if (
        rounded == 0
        and not any(tokens[i].text == "0" for i in int_slots)
        and not fraction.strip("0")
    ):
        sign = ""
    out = [token.text if token.kind in ("lit", "percent") else "" for token in tokens]
    _fill_integer(out, tokens, int_slots, integer)
    _fill_fraction(out, tokens, frac_slots, fraction)
    if exp is not None:
        out[exp] = exponent_text
        for i in exp_slots:
            out[i] = ""
    if point is not None:
        out[point] = "."
    return sign + "".join(out)


@lru_cache(maxsize=512)
def _plan(
    section: Section,
) -> tuple[int, list[int], list[int], list[int], int | None, int | None, int, bool]:
    """Where a number section's placeholders, point, exponent and commas are: worked out
    once per section, not once per cell."""
    tokens = section.tokens
    percent = sum(token.kind == "percent" for token in tokens)
    digits = [i for i, token in enumerate(tokens) if token.kind == "digit"]
    point = next((i for i, token in enumerate(tokens) if token.kind == "point"), None)
    exp = next((i for i, token in enumerate(tokens) if token.kind == "exp"), None)
    mantissa_end = exp if exp is not None else len(tokens)
    int_end = point if point is not None else mantissa_end
    int_slots = [i for i in digits if i < int_end]
    frac_slots = [i for i in digits if int_end < i < mantissa_end]
    exp_slots = [i for i in digits if exp is not None and i > exp]
    # Commas between integer placeholders ask for thousands separators; commas right
    # after the last placeholder (of either part) or before the point scale by 1000.
    scale, grouping = 0, False
    mantissa_slots = int_slots + frac_slots
    for i, token in enumerate(tokens[:mantissa_end]):
        if token.kind != "comma":
            continue
        if int_slots and int_slots[0] < i < int_slots[-1]:
            grouping = True
        elif (mantissa_slots and i > mantissa_slots[-1]) or (
            int_slots and int_slots[-1] < i < (point or 0)
        ):
            scale += 1
    return percent, int_slots, frac_slots, exp_slots, point, exp, scale, grouping


def _round(number: float, decimals: int) -> Decimal:
    """Half away from zero on Excel's 15 significant digits."""
    exact = Decimal(f"{number:.15g}")
    return exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def _scientific(
    number: float, int_slots: list[int], tokens: list[Token], decimals: int
) -> tuple[Decimal, int]:
    """Mantissa and exponent: one integer digit per ``0`` placeholder, or with ``#``
    placeholders an exponent that is a multiple of their count (engineering notation)."""
    count = max(len(int_slots), 1)
    if number == 0:
        return _round(0.0, decimals), 0
    exponent = math.floor(math.log10(number))
    engineering = any(tokens[i].text == "#" for i in int_slots)
    for _ in range(2):
        shift = exponent - exponent % count if engineering else exponent - (count - 1)
        mantissa = _round(number / 10.0**shift, decimals)
        if mantissa < Decimal(10) ** count:
            return mantissa, shift
        exponent += 1
    return mantissa, shift


def _fill_integer(out: list[str], tokens: list[Token], slots: list[int], digits: str) -> None:
    """Right to left: one digit per placeholder, the rest into the leftmost; a placeholder
    without a digit shows ``0``, a space (``?``) or nothing (``#``)."""
    remaining = digits
    for position, i in enumerate(reversed(slots)):
        last = position == len(slots) - 1
        if last:
            out[i], remaining = remaining, ""
        elif remaining:
            # A thousands separator travels with the digit before it.
            take = 2 if remaining[-1:] == "," else 1
            out[i], remaining = remaining[-take:], remaining[:-take]
        else:
            out[i] = ""
        if not out[i]:
            out[i] = {"0": "0", "?": " "}.get(tokens[i].text, "")


def _fill_fraction(out: list[str], tokens: list[Token], slots: list[int], digits: str) -> None:
    """Left to right; trailing zeros under ``#`` vanish and under ``?`` become spaces."""
    trailing = True
    for i, digit in reversed(list(zip(slots, digits, strict=True))):
        if trailing and digit == "0" and tokens[i].text != "0":
            out[i] = " " if tokens[i].text == "?" else ""
            continue
        trailing = False
        out[i] = digit


def _moment(value: Any, date1904: bool) -> tuple[datetime.datetime, float | None]:
    """The value as a date and time, and as seconds since the epoch (for ``[h]``; ``None``
    when a calamine datetime lies before 1900-03-01, where Excel's phantom leap day
    makes the count uncertain)."""
    epoch = _EPOCH_1904 if date1904 else _EPOCH_1900
    if isinstance(value, datetime.timedelta):
        return _EPOCH_1900 + value, value.total_seconds()
    if isinstance(value, datetime.time):
        moment = datetime.datetime.combine(_EPOCH_1900.date(), value)
        return moment, (moment - _EPOCH_1900).total_seconds()
    if isinstance(value, datetime.date):
        if not isinstance(value, datetime.datetime):
            value = datetime.datetime.combine(value, datetime.time())
        early = not date1904 and value < datetime.datetime(1900, 3, 1)
        return value, None if early else (value - epoch).total_seconds()
    serial = float(value)
    if serial < 0 or (not date1904 and 1 <= serial < 61):
        raise Unsupported("a date before 1900-03-01")
    return epoch + datetime.timedelta(days=serial), serial * 86400


def _date(value: Any, section: Section, date1904: bool) -> str:
    moment, elapsed = _moment(value, date1904)
    tokens = list(section.tokens)
    subsecond = max((len(t.text) - 1 for t in tokens if t.text.startswith(".0")), default=0)
    # Seconds are rounded to what is shown (Excel shows 13:29:59.6 as 13:30:00).
    unit = 10**subsecond
    midnight = datetime.datetime.combine(moment.date(), datetime.time())
    since = round((moment - midnight).total_seconds() * unit) / unit
    moment = midnight + datetime.timedelta(seconds=since)
    if elapsed is not None:
        elapsed = round(elapsed * unit) / unit
    twelve = any(t.text.upper() in ("AM/PM", "A/P") for t in tokens if t.kind == "date")
    dates = [i for i, t in enumerate(tokens) if t.kind == "date"]
    return "".join(
        _date_part(token.text, moment, elapsed, twelve, tokens, dates, i)
        if token.kind == "date"
        else token.text
        for i, token in enumerate(tokens)
    )


def _date_part(
    text: str,
    moment: datetime.datetime,
    elapsed: float | None,
    twelve: bool,
    tokens: list[Token],
    dates: list[int],
    index: int,
) -> str:
    lower = text.lower()
    if lower.startswith("["):
        if elapsed is None:
            raise Unsupported("elapsed time of a date before 1900-03-01")
        seconds = int(elapsed)
        total = {"h": seconds // 3600, "m": seconds // 60, "s": seconds}[lower[1]]
        return f"{total:0{len(lower) - 2}d}"
    if lower == "am/pm":
        return "AM" if moment.hour < 12 else "PM"
    if lower == "a/p":
        return "A" if moment.hour < 12 else "P"
    if lower.startswith(".0"):
        fraction = moment.microsecond / 1_000_000
        return f"{fraction:.{len(lower) - 1}f}"[1:]
    kind, width = lower[0], len(lower)
    if kind == "y":
        return f"{moment.year % 100:02d}" if width <= 2 else f"{moment.year:04d}"
    if kind == "d":
        if width <= 2:
            return f"{moment.day:0{width}d}"
        name = _DAYS[moment.weekday()]
        return name[:3] if width == 3 else name
    if kind == "h":
        hour = moment.hour % 12 or 12 if twelve else moment.hour
        return f"{hour:0{min(width, 2)}d}"
    if kind == "s":
        return f"{moment.second:0{min(width, 2)}d}"
    # "m": minutes after an hour or before seconds, else the month.
    position = dates.index(index)
    before = tokens[dates[position - 1]].text.lower() if position else ""
    after = tokens[dates[position + 1]].text.lower() if position + 1 < len(dates) else ""
    if width <= 2 and (before.strip("[").startswith("h") or after.strip("[").startswith("s")):
        return f"{moment.minute:0{width}d}"
    if width <= 2:
        return f"{moment.month:0{width}d}"
    name = _MONTHS[moment.month - 1]
    return {3: name[:3], 5: name[0]}.get(width, name)
