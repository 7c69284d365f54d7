"""Calculator: computes what GTA's chains need, refuses everything that could escape or hang."""

from __future__ import annotations

import time

import pytest

from evaluation.tools import ToolContext, execute


def calc(expression: str):  # type: ignore[no-untyped-def]
    return execute("gta", "Calculator", {"expression": expression}, ToolContext())


@pytest.mark.parametrize(
    "expression,expected",
    [
        ("290 / 5", "58"),
        ("2 ** 10", "1024"),
        ("sqrt(16) + math.floor(2.7)", "6"),
        ("round(10 / 3, 2)", "3.33"),
        ("max(3, 9, 4) - min([1, 2])", "8"),
        ("factorial(5) % 7", "1"),
        ("-(3 - 5) * pi / pi", "2"),
        ("1 < 2 < 3", "True"),
        ("log(e)", "1"),
        ("0.1 + 0.2", "0.30000000000000004"),
        ("1.5e3 // 7", "214"),
    ],
)
def test_computes(expression: str, expected: str) -> None:
    r = calc(expression)
    assert r.ok, r.error
    assert r.text == expected


@pytest.mark.parametrize(
    "expression,reason",
    [
        ("__import__('os').system('echo hi')", "attribute access is not allowed"),
        ("__import__('os')", "unknown name '__import__'"),
        ("().__class__.__bases__[0].__subclasses__()", "attribute access is not allowed"),
        ("math.__dict__", "attribute access is not allowed"),
        ("(lambda: 1)()", "Lambda is not allowed"),
        ("open('/etc/passwd').read()", "attribute access is not allowed"),
        ("open('/etc/passwd')", "unknown name 'open'"),
        ("'a' * 10", "only numbers are allowed"),
        ("[1] * 10**9", "arithmetic is only allowed on numbers"),
        ("9 ** 9 ** 9", "exponent 387420489 is too large"),
        ("pow(10, 10**6)", "exponent 1000000 is too large"),
        ("(10**5000) ** 5000", "too large"),
        ("factorial(10**6)", "too large"),
        ("comb(10**9, 10**8)", "too large"),
        ("round(1, -10**9)", "ndigits"),
        ("[x for x in range(10)]", "ListComp is not allowed"),
        ("x = 1", "not a single Python expression"),
        ("1 / 0", "ZeroDivisionError"),
    ],
)
def test_refuses(expression: str, reason: str) -> None:
    start = time.monotonic()
    r = calc(expression)
    assert not r.ok and reason in r.error
    assert time.monotonic() - start < 1.0
