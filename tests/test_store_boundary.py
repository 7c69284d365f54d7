"""Only the store reaches the database below SQLAlchemy or asks which database it is: annotation,
evaluation and tui import no driver or dialect module, call no DBAPI, and test no dialect name (they
ask ``store.dialects``, ``store.plain_rows``, ``store.plain_select``, ``store.sqlite_read``). The
import-linter contract in pyproject.toml forbids the driver imports too; this test also sees calls."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ABOVE_THE_STORE = ("annotation", "evaluation", "tui")
DRIVER_MODULES = ("sqlite3", "psycopg", "psycopg2", "sqlalchemy.dialects")
DBAPI_ATTRIBUTES = {"exec_driver_sql", "driver_connection", "dbapi_connection"}
DIALECT_NAMES = {"sqlite", "postgresql"}


def _is_driver_module(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in DRIVER_MODULES)


def _dialect_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in DIALECT_NAMES


def crossings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, what) for every reach past the store in one module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, f"import {a.name}") for a in node.names if _is_driver_module(a.name))
        elif isinstance(node, ast.ImportFrom) and node.module and _is_driver_module(node.module):
            yield node.lineno, f"from {node.module} import"
        elif isinstance(node, ast.Attribute):
            if node.attr in DBAPI_ATTRIBUTES:
                yield node.lineno, f".{node.attr}"
            elif isinstance(node.value, ast.Attribute) and node.value.attr == "connection":
                yield node.lineno, f".connection.{node.attr}"
            elif node.attr == "name" and isinstance(node.value, ast.Attribute) and node.value.attr == "dialect":
                yield node.lineno, ".dialect.name"
        elif isinstance(node, ast.Compare) and any(map(_dialect_literal, [node.left, *node.comparators])):
            yield node.lineno, "a comparison with a dialect's name"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "startswith"
            and any(isinstance(a, ast.Constant) and str(a.value).startswith(tuple(DIALECT_NAMES)) for a in node.args)
        ):
            yield node.lineno, "a URL tested for a dialect's name"


def all_crossings(root: Path) -> list[str]:
    found = []
    for package in ABOVE_THE_STORE:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            found += [f"{path.relative_to(root)}:{line}: {what}" for line, what in crossings(tree)]
    return found


def test_nothing_above_the_store_reaches_the_driver_or_tests_the_dialect() -> None:
    assert all_crossings(ROOT) == []


def test_the_scan_sees_each_kind_of_crossing() -> None:
    source = """
import sqlite3
from sqlalchemy.dialects.postgresql import insert
conn.exec_driver_sql("SELECT 1")
conn.connection.cursor()
if engine.dialect.name == "sqlite": pass
if name != "postgresql": pass
if url.startswith("postgresql+psycopg"): pass
"""
    assert sorted(line for line, _ in crossings(ast.parse(source))) == [2, 3, 4, 5, 6, 6, 7, 8]
