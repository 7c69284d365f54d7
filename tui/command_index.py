"""Which module in ``tui/commands/`` defines which top-level command, read from the source files
without importing them.

Importing every command module costs over a second of CPU (the harness, the scorers, SQLModel's
tables), which ``chainmark --help`` would pay only to print one line per command. This reads each
module's syntax tree instead: a top-level function decorated with ``@click.command("name")`` or
``@click.group("name")`` and mentioned in the module's ``register`` is a top-level command, its
docstring the help. A module whose ``register`` adds anything this cannot see is "opaque": the CLI
imports it whenever it needs the full list, so nothing is ever missing, only slower.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

CACHE_NAME = "command-index.json"  # in the package's __pycache__, beside its bytecode
_CACHE_FORMAT = 1


@dataclass(frozen=True)
class IndexedCommand:
    name: str
    module: str  # e.g. "tui.commands.tasks"
    help: str  # the docstring (or help=/short_help= given to the decorator), for the command list


@dataclass
class CommandIndex:
    commands: dict[str, IndexedCommand] = field(default_factory=dict)
    opaque_modules: list[str] = field(default_factory=list)


def build_index(package_dir: Path, package: str) -> CommandIndex:
    """Index every public module of the command package at ``package_dir``."""
    index = CommandIndex()
    for path in sorted(package_dir.glob("*.py")):
        if path.name.startswith("_"):
            continue
        module = f"{package}.{path.stem}"
        found, opaque = _read_module(path)
        if opaque:
            index.opaque_modules.append(module)
        for name, text in found:
            index.commands.setdefault(name, IndexedCommand(name, module, text))
    return index


def cached_index(package_dir: Path, package: str) -> CommandIndex:
    """``build_index``, kept in the package's ``__pycache__`` and reused while every module there has
    the same size and modification time: reading it is a millisecond, parsing the modules 30-80 ms
    of every command's start-up. A cache that cannot be read or written is rebuilt or skipped."""
    from store.speedups import enabled

    if not enabled("command_index_cache"):
        return build_index(package_dir, package)
    sources = [*sorted(package_dir.glob("*.py")), Path(__file__)]  # this reader too: its rules may change
    stamp = [[str(p), st.st_mtime_ns, st.st_size] for p in sources for st in [p.stat()]]
    path = package_dir / "__pycache__" / CACHE_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["format"] == _CACHE_FORMAT and data["package"] == package and data["stamp"] == stamp:
            return CommandIndex(
                {name: IndexedCommand(name, module, text) for name, module, text in data["commands"]},
                list(data["opaque"]),
            )
    except (OSError, ValueError, KeyError, TypeError):
        pass
    index = build_index(package_dir, package)
    data = {
        "format": _CACHE_FORMAT,
        "package": package,
        "stamp": stamp,
        "commands": [[c.name, c.module, c.help] for c in index.commands.values()],
        "opaque": index.opaque_modules,
    }
    temp = path.with_name(f"{CACHE_NAME}.{os.getpid()}.tmp")
    try:  # written whole, then renamed: a process reading it meanwhile sees the old file or the new
        path.parent.mkdir(exist_ok=True)
        temp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temp, path)
    except OSError:  # a read-only install: parse every time
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
    return index


def _read_module(path: Path) -> tuple[list[tuple[str, str]], bool]:
    """([(command name, help)], opaque?) for one module."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return [], True
    return _read_source(text, path)


def _read_source(text: str, path: Path) -> tuple[list[tuple[str, str]], bool]:
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError:
        return [], True
    decorated: dict[str, tuple[str, str]] = {}  # function name → (command name, help)
    register: ast.FunctionDef | None = None
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        if node.name == "register":
            register = node
            continue
        for deco in node.decorator_list:
            command = _click_command(deco, node)
            if command is not None:
                decorated[node.name] = command
    if register is None:
        return [], False  # registers nothing
    names = [n.id for stmt in register.body for n in ast.walk(stmt) if isinstance(n, ast.Name)]
    mentioned = {name for name in names if name in decorated}
    # The names register's body uses besides its parameters and the indexed functions: anything
    # else (a helper, an imported command) may add commands the index cannot see.
    params = {a.arg for a in register.args.args}
    others = {
        name for name in names if name not in decorated and name not in params and not _is_loop_variable(register, name)
    }
    return [decorated[f] for f in sorted(mentioned)], bool(others)


def _click_command(deco: ast.expr, fn: ast.FunctionDef) -> tuple[str, str] | None:
    """(name, help) if ``deco`` is ``click.command("name", …)`` or ``click.group("name", …)``."""
    if not (
        isinstance(deco, ast.Call)
        and isinstance(deco.func, ast.Attribute)
        and isinstance(deco.func.value, ast.Name)
        and deco.func.value.id == "click"
        and deco.func.attr in ("command", "group")
    ):
        return None
    if not deco.args or not isinstance(deco.args[0], ast.Constant) or not isinstance(deco.args[0].value, str):
        return None
    keywords = {k.arg: k.value for k in deco.keywords}
    for key in ("short_help", "help"):
        value = keywords.get(key)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return deco.args[0].value, value.value
    return deco.args[0].value, ast.get_docstring(fn) or ""


def _is_loop_variable(fn: ast.FunctionDef, name: str) -> bool:
    return any(isinstance(n, ast.For) and isinstance(n.target, ast.Name) and n.target.id == name for n in ast.walk(fn))
