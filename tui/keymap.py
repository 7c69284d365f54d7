"""Every key binding of the TUI by id, so ``[keymap]`` in ``chainmark.toml`` can remap any of them.

Textual applies an app-wide keymap (binding id → keys) to every binding that carries that id; this
module lists the bindings chainmark defines (reading each class's own ``BINDINGS``), checks a keymap
against them, and is what ``chainmark config keys`` prints.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

from textual.binding import Binding
from textual.dom import DOMNode


@dataclass(frozen=True)
class BindingRow:
    id: str | None
    key: str
    action: str
    description: str
    owner: str  # module.Class that declares it


def _load_every_module() -> None:
    """Import every module under ``tui`` that may declare widgets or screens (not the CLI commands)."""
    import tui

    for info in pkgutil.walk_packages(tui.__path__, "tui."):
        if info.name.startswith("tui.commands"):
            continue
        importlib.import_module(info.name)


def _subclasses(cls: type) -> list[type]:
    seen: list[type] = []
    todo: list[type] = [cls]
    while todo:
        subs: list[type] = todo.pop().__subclasses__()
        for sub in subs:
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return seen


def chainmark_bindings() -> list[BindingRow]:
    """Each binding declared by a chainmark class (inherited ones are listed once, at their declarer)."""
    _load_every_module()
    rows = []
    for cls in _subclasses(DOMNode):
        if not cls.__module__.startswith("tui."):
            continue
        for item in cls.__dict__.get("BINDINGS", []):
            binding = item if isinstance(item, Binding) else Binding(*item)
            rows.append(
                BindingRow(
                    binding.id, binding.key, binding.action, binding.description, f"{cls.__module__}.{cls.__qualname__}"
                )
            )
    return sorted(rows, key=lambda r: (r.id or "", r.owner, r.key))


def unknown_ids(keymap: dict[str, str]) -> list[str]:
    """Ids in a keymap that no chainmark binding has (a typo would otherwise be silently ignored)."""
    known = {row.id for row in chainmark_bindings() if row.id}
    return sorted(set(keymap) - known)


def keys_in_force(app: object, binding: Binding) -> str:
    """The keys that run ``binding`` now: the project's ``[keymap]`` entry for its id, else its own.
    What the help screen and the command palette print (they read the classes' ``BINDINGS``, which a
    keymap does not change, and named keys the remap had taken away)."""
    keymap: dict[str, str] = getattr(app, "keymap", None) or {}
    return keymap.get(binding.id or "", binding.key)
