"""Solver and Plot really run sympy / matplotlib, in a child with limits."""

from __future__ import annotations

import io

from PIL import Image

from evaluation.tools import ToolContext, execute
from evaluation.tools.sandbox import Limits, extract_code, run_code

SOLVER = """```python
from sympy import symbols, Eq, solve
def solution():
    x, y = symbols('x y')
    return str(solve((Eq(x + y, 10), Eq(x - y, 4)), (x, y), dict=True))
```"""

PLOT = """```python
import matplotlib.pyplot as plt
def solution():
    figure = plt.figure(figsize=(4, 3))
    plt.bar(['a', 'b'], [3, 5])
    return figure
```"""


def test_solver_solves_with_sympy() -> None:
    r = execute("gta", "Solver", {"command": SOLVER}, ToolContext())
    assert r.ok, r.error
    assert r.text == "[{x: 7, y: 3}]"


def test_plot_returns_an_image() -> None:
    ctx = ToolContext()
    r = execute("gta", "Plot", {"command": PLOT}, ctx)
    assert r.ok, r.error
    with Image.open(io.BytesIO(r.images[0])) as im:
        assert im.format == "PNG" and im.size == (400, 300)
    assert ctx.images == r.images and r.text == f"[image]({r.image_names[0]})"


def _verdict(r: dict) -> dict:
    return {k: r[k] for k in ("ok", "error") if k in r}


def test_errors_and_limits_are_reported() -> None:
    r = run_code("solver", "x = 1")
    assert _verdict(r) == {"ok": False, "error": "NameError: the code must define a function named 'solution'"}
    assert "pid-namespace" in r["isolation"] and r["sandbox_backend"] == "bwrap"
    r = run_code("solver", "def solution():\n    return 1 / 0")
    assert _verdict(r) == {"ok": False, "error": "ZeroDivisionError: division by zero (line 2)"}
    assert (
        run_code("solver", "def solution():\n    while True:\n        pass", Limits(cpu_seconds=1, wall_seconds=20))[
            "error"
        ]
        == "CPU time limit of 1 s exceeded"
    )
    assert (
        run_code("solver", "def solution():\n    return len(bytearray(4 * 1024**3))")["error"]
        == "memory limit exceeded"
    )
    env = run_code("solver", "import os\ndef solution():\n    return ' '.join(sorted(os.environ))")
    assert env["ok"] and "SERPER_API_KEY" not in env["text"] and "PATH" in env["text"]
    plot = execute("gta", "Plot", {"command": "def solution():\n    return 42"}, ToolContext())
    assert not plot.ok and plot.error == "Plot: TypeError: solution() must return a matplotlib figure, got int"


def test_extract_code_from_markdown() -> None:
    assert extract_code("```python\na = 1\n```\ntext\n```\nb = 2\n```") == "a = 1\n\n\nb = 2\n"
    assert extract_code("def solution(): return 1") == "def solution(): return 1"
