"""What VTC-Bench's reference pipeline does to every cell before it scores: TSV → pandas → xlsx → pandas.

Why: the reference reads the task table with ``pandas.read_csv``, fills in the predictions, writes
an xlsx with XlsxWriter and scores what ``pandas.read_excel`` gives back. That trip changes values,
and faithful scoring must see the same values (issue 15, item 6). Reproduced here by behaviour:

- cells equal to a pandas NA string (``""``, ``"NA"``, ``"None"``, ``"nan"``, ``"null"``, …) become missing,
  and a missing value reads as the text ``"nan"`` (the reference calls ``str()`` on every cell);
- a column whose every present value is a number becomes numeric (``"3.50"`` → ``3.5``; with a
  missing cell, integers become floats: ``"12"`` → ``"12.0"``);
- a text starting with ``=`` (or ``{=…}``) is written as a formula and read back as ``0``;
- a text that looks like a link (``http://``, ``mailto:``, ``internal:``, ``external:``, ``file://``)
  becomes a hyperlink whose display text is read back; a link over 2,079 characters is dropped;
- texts longer than 32,767 UTF-16 units are cut there; control characters come back as ``_xHHHH_``;
- numbers keep their value (``3.0`` comes back as ``3``), booleans stay booleans.

Checked against pandas 2.x + XlsxWriter 3.x + openpyxl 3.1 (the reference's requirements).
"""

from __future__ import annotations

import math
import re
from typing import Any

# pandas' default NA strings (read_csv and read_excel alike).
NA_STRINGS = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)
MISSING = None  # a NaN cell

_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
_INT = re.compile(r"^[+-]?\d+$")
_URL_PREFIX = re.compile(r"(?:(?:ftp|http)s?://|mailto:|(?:in|ex)ternal:|file://)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")
STRING_MAX_UTF16 = 32767
URL_MAX_UTF16 = 2079


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _utf16_cut(text: str, limit: int) -> str:
    if len(text) * 2 <= limit or _utf16_len(text) <= limit:  # a character is at most two UTF-16 units
        return text
    units = text.encode("utf-16-le", "surrogatepass")[: limit * 2]
    return units.decode("utf-16-le", "ignore")  # a pair cut in half is dropped


def _na(value: Any) -> Any:
    if isinstance(value, str) and value in NA_STRINGS:
        return MISSING
    if isinstance(value, float) and math.isnan(value):
        return MISSING
    return value


def infer_column(values: list[Any]) -> list[Any]:
    """pandas' per-column type inference: all-number columns become int (no gaps) or float."""
    present = [v for v in values if v is not MISSING]
    if not present:
        return list(values)
    if all(isinstance(v, bool) for v in present):
        return list(values)
    numeric = all(
        (isinstance(v, (int, float)) and not isinstance(v, bool)) or (isinstance(v, str) and _NUMBER.match(v))
        for v in present
    )
    if not numeric:
        return list(values)
    ints = len(present) == len(values) and all(
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, str) and _INT.match(v))
        or (isinstance(v, float) and v.is_integer())
        for v in present
    )
    if ints:
        return [int(v) if isinstance(v, str) else int(v) for v in values]
    return [MISSING if v is MISSING else float(v) for v in values]


def read_tsv_column(cells: list[str | None]) -> list[Any]:
    """The values ``pandas.read_csv`` gives for one column's raw cells (None: the row lacks the column)."""
    return infer_column([MISSING if c is None else _na(c) for c in cells])


def xlsx_cell(value: Any) -> Any:
    """The value ``read_excel`` returns for one cell pandas wrote with XlsxWriter (before NA strings)."""
    if value is MISSING or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return int(value) if isinstance(value, float) and value.is_integer() else value
    text = str(value)
    if text == "":
        return MISSING
    if text.startswith("=") or (text.startswith("{=") and text.endswith("}")):
        return 0  # a formula nobody calculated: its cached value
    if ":" in text and _URL_PREFIX.match(text):
        text = _link_text(text)
        if text is None:
            return MISSING
    text = _utf16_cut(text, STRING_MAX_UTF16)
    return _CONTROL.sub(lambda m: f"_x{ord(m.group()):04X}_", text)


def _link_text(url: str) -> str | None:
    """The display text XlsxWriter writes for a link, or None when the link is not written at all."""
    link, _, anchor = url.partition("#")
    if _utf16_len(link) > URL_MAX_UTF16 or _utf16_len(anchor) > URL_MAX_UTF16:
        return None
    if url.startswith("mailto:"):
        return url.replace("mailto:", "", 1)
    if url.startswith("internal:"):
        return url.replace("internal:", "", 1)
    if url.startswith("file://") or url.startswith("external:"):
        path = url.replace("external:", "file:///", 1).replace("file:///", "", 1).replace("file://", "", 1)
        return path.replace("/", "\\")
    return url


def read_xlsx_column(values: list[Any]) -> list[Any]:
    """One column after the xlsx round trip: written, read back, NA strings dropped, type inferred."""
    return infer_column([_na(xlsx_cell(v)) for v in values])


def as_text(value: Any) -> str:
    """``str()`` of a pandas cell value, as the reference applies it (a missing cell reads ``"nan"``)."""
    if value is MISSING:
        return "nan"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def round_trip(columns: dict[str, list[Any]], tsv_columns: set[str]) -> dict[str, list[Any]]:
    """Every column of the reference's evaluation sheet as the scorer reads it.

    ``columns`` maps a column name to its cells in row order; the ones in ``tsv_columns`` are raw TSV
    text (None when the row lacks it) and go through ``read_csv`` first; the others (the predictions)
    are the values the predictions file held.
    """
    out = {}
    for name, cells in columns.items():
        values = (
            read_tsv_column(cells) if name in tsv_columns else [_na(c) if isinstance(c, float) else c for c in cells]
        )
        out[name] = read_xlsx_column(values)
    return out
