"""The number-format renderer on its own: exact cases, and properties over many values."""

from __future__ import annotations

import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.converters.sheets.numfmt import BUILTIN_FORMATS, is_date_format, render


@pytest.mark.parametrize(
    ("value", "code", "shown"),
    [
        (0.256, "0.0%", "25.6%"),
        (1234.5, "#,##0.00", "1,234.50"),
        (1234.5, "€#,##0.00", "€1,234.50"),
        (1234.5, "[$$-409]#,##0.00", "$1,234.50"),
        (1234.5, "#,##0.00 [$€-407]", "1,234.50 €"),
        (1234.5, "0.0E+00", "1.2E+03"),
        (0.000123, "0.00E+00", "1.23E-04"),
        (12345.678, "##0.0E+0", "12.3E+3"),
        (-1234.5, "0.00;(0.00)", "(1234.50)"),
        (-1234.5, "[Red]0.00;[Blue]-0.00", "-1234.50"),
        (0, '0.00;(0.00);"-"', "-"),
        (72.25, '0.0 "kg"', "72.3 kg"),
        (5, "\\#0", "#5"),
        (1.005, "0.00", "1.01"),
        (-2.5, "0", "-3"),
        (1234567, "#,##0,", "1,235"),
        (1234567, '0.0,,"M"', "1.2M"),
        (5, "000-00", "000-05"),
        (0.5, "#.##", ".5"),
        (3, "0.0#", "3.0"),
        (-1.5, "General;(General)", "(1.5)"),
        ("abc", '0;-0;0;"text: "@', "text: abc"),
        (1234.5, '_(* #,##0.00_);_(* (#,##0.00);_(* "-"??_);_(@_)', "1,234.50"),
        (-1234.5, '_(* #,##0.00_);_(* (#,##0.00);_(* "-"??_);_(@_)', "(1,234.50)"),
        (0, '_(* #,##0.00_);_(* (#,##0.00);_(* "-"??_);_(@_)', "-"),
        (datetime.date(2024, 3, 14), "dd/mm/yyyy", "14/03/2024"),
        (45365.5, "yyyy-mm-dd hh:mm:ss", "2024-03-14 12:00:00"),
        (45365.5, "mmm d, yyyy", "Mar 14, 2024"),
        (45365, "dddd d mmmm yy", "Thursday 14 March 24"),
        (datetime.datetime(1900, 1, 1, 13, 30), "hh:mm AM/PM", "01:30 PM"),
        (datetime.time(0, 5), "h:mm A/P", "12:05 A"),
        (datetime.timedelta(days=1, hours=13, minutes=30), "[h]:mm", "37:30"),
        (0.5 + 0.4 / 86400, "h:mm:ss", "12:00:00"),
        (0.5 + 0.6 / 86400, "h:mm:ss", "12:00:01"),
        (0.5 + 0.25 / 86400, "mm:ss.00", "00:00.25"),
    ],
)
def test_rendered(value: Any, code: str, shown: str) -> None:
    assert render(value, code) == shown


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (1.5, "General"),
        (1.5, "# ?/?"),  # fractions: the value is shown instead
        (150, "[>100]0"),  # conditions
        (45365, "[$-F800]dddd, mmmm dd, yyyy"),  # the system's long date
        (30, "yyyy-mm-dd"),  # before 1900-03-01: Excel's phantom leap day
        (-1, "yyyy-mm-dd"),
        (1.5, "0 x"),  # a letter no format defines
        (True, "0.00"),
        ("abc", "0.00"),
        (float("nan"), "0.00"),
    ],
)
def test_falls_back(value: Any, code: str) -> None:
    assert render(value, code) is None


def test_builtins_render_and_dates_are_known() -> None:
    assert render(0.5, BUILTIN_FORMATS[10]) == "50.00%"
    assert render(-1234, BUILTIN_FORMATS[38]) == "(1,234)"
    assert is_date_format(BUILTIN_FORMATS[14]) and is_date_format(BUILTIN_FORMATS[46])
    assert not is_date_format(BUILTIN_FORMATS[4]) and not is_date_format("# ?/?")


_NUMBERS = st.floats(-1e12, 1e12, allow_nan=False).map(lambda v: float(f"{v:.10g}"))


@given(_NUMBERS, st.integers(0, 6))
def test_fixed_decimals_round_half_away_from_zero(value: float, decimals: int) -> None:
    code = "0." + "0" * decimals if decimals else "0"
    expected = Decimal(f"{value:.15g}").quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    shown = render(value, code)
    assert shown is not None and Decimal(shown) == expected


@given(_NUMBERS, st.integers(0, 4))
def test_thousands_separators_never_change_the_number(value: float, decimals: int) -> None:
    plain = render(value, "0." + "0" * decimals if decimals else "0")
    grouped = render(value, "#,##0." + "0" * decimals if decimals else "#,##0")
    assert grouped is not None and grouped.replace(",", "") == plain


@given(_NUMBERS)
def test_percent_is_a_hundred_times_the_value(value: float) -> None:
    shown = render(value, "0.00%")
    expected = Decimal(f"{value * 100:.15g}").quantize(Decimal("0.01"), ROUND_HALF_UP)
    assert shown is not None and shown.endswith("%") and Decimal(shown[:-1]) == expected


@given(st.floats(1e-300, 1e300))
def test_scientific_reads_back_close(value: float) -> None:
    shown = render(value, "0.000E+00")
    assert shown is not None
    mantissa = shown.partition("E")[0]
    assert 1 <= Decimal(mantissa) < 10
    assert abs(float(shown) - value) <= value * 5e-4


@given(st.text(max_size=30), st.one_of(st.floats(), st.integers(-(10**20), 10**20), st.text()))
def test_never_crashes(code: str, value: Any) -> None:
    shown = render(value, code)
    assert shown is None or isinstance(shown, str)
