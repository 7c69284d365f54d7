"""An environment with extra distributions on ``sys.path`` for one test: the plugin registry looks
again on entry and on exit, and the test's packages leave ``sys.modules`` with it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from store import plugins


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    """``installed(site)`` puts ``site`` on sys.path as an installed location and makes the registry look again."""
    monkeypatch.setenv(plugins.CACHE_ENV, str(tmp_path / "plugin-cache.json"))
    before = set(sys.modules)

    def install(site: Path) -> None:
        monkeypatch.syspath_prepend(str(site))
        plugins.forget()

    yield install
    monkeypatch.undo()
    for name in set(sys.modules) - before:
        if name.startswith(("toybench", "brokenbench", "clashbench")):
            del sys.modules[name]
    plugins.forget()
