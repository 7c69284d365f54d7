"""The plugin registry (``store.plugins``): chainmark's own benchmarks are plugins whose descriptors agree
with the modules they name; a broken or clashing plugin is refused with a reason and never stops the
rest; the entry points are read from a cache until a ``sys.path`` folder changes."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from store import plugins
from store.plugins import BenchmarkPlugin, PluginError

ROOT = Path(__file__).resolve().parents[2]


def _dist(site: Path, name: str, entry_points: str, files: dict[str, str]) -> Path:
    """A distribution ``name`` in ``site``: its files and a ``.dist-info`` declaring ``entry_points``."""
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text, encoding="utf-8")
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[chainmark.benchmarks]\n{entry_points}\n", encoding="utf-8")
    return site


def test_chainmarks_own_benchmarks_are_plugins_in_listing_order() -> None:
    plugins.forget()
    assert plugins.plugin_names() == ["chainmark", "gta", "agentic-mme", "vtc", "isg", "atp"]
    assert plugins.plugin_problems() == []


@pytest.mark.parametrize("name", ["gta", "agentic-mme", "vtc", "isg", "atp"])
def test_a_seed_descriptor_agrees_with_the_modules_it_names(name: str) -> None:
    from evaluation.judges.templates import load_template
    from evaluation.tools import get_tool_set

    plugin = plugins.find_plugin(name)
    assert plugin is not None and plugin.profile and plugin.format_module
    profile = plugins.resolve(plugin.profile)
    assert (profile.name, tuple(profile.formats)) == (plugin.name, plugin.formats)
    for judge in profile.judges:
        assert load_template(judge).judge == judge
    fmt = importlib.import_module(plugin.format_module)
    assert (fmt.name, fmt.source_format, fmt.tool_set) == (plugin.formats[0], plugin.formats[0], plugin.tool_set)
    if plugin.tool_set_builder:
        assert get_tool_set(str(plugin.tool_set)).name == plugin.tool_set
    assert callable(plugins.resolve(str(plugin.demo)))
    assert plugin.guidelines and plugins.resource_path(plugin.guidelines).is_file()
    if plugin.conformance:
        assert callable(plugins.resolve(plugin.conformance).reference_conformance)


def test_profiles_corrections_and_lookups_come_from_the_plugins() -> None:
    from evaluation.benchmarks import UnknownProfile, all_corrections, all_profiles, get_profile

    assert [p.name for p in all_profiles()] == ["chainmark", "gta", "agentic-mme", "vtc", "isg", "atp"]
    assert get_profile("AMME").name == get_profile("agentic_mme").name == "agentic-mme"
    assert get_profile("chainmark").name == "chainmark"  # the native format scores too
    assert set(all_corrections()) == {"chainmark", "gta", "agentic-mme", "vtc", "isg", "atp"}
    assert all_corrections()["chainmark"] == {}  # no reference evaluator: nothing to correct
    with pytest.raises(UnknownProfile, match="no scoring profile for benchmark format 'nope'"):
        get_profile("nope")


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"name": "Bad Name"}, "lowercase letters"),
        ({"summary": " "}, "summary is required"),
        ({"metrics": ("a",), "category_metric": "b"}, "category_metric 'b' is not one of its metrics"),
        ({"tool_set_builder": "x.y:build"}, "tool_set_builder needs tool_set"),
        ({"profile": "not a path"}, "profile 'not a path' is not a dotted path"),
        ({"guidelines": "no-package.md"}, "guidelines 'no-package.md' is not a resource path"),
        ({"formats": (), "format_module": "x.fmt"}, "needs at least one format name"),
    ],
)
def test_a_descriptor_says_what_is_wrong_with_it(fields: dict, problem: str) -> None:
    given = {"name": "ok", "summary": "fine", "formats": ("ok",), **fields}
    with pytest.raises(PluginError, match=problem):
        BenchmarkPlugin(**given)


def test_broken_wrong_and_clashing_plugins_are_refused_and_the_rest_works(
    tmp_path: Path, installed: Callable[[Path], None]
) -> None:
    site = tmp_path / "site"
    _dist(site, "brokenbench", "broken = brokenbench.plugin:BENCHMARK", {"brokenbench/plugin.py": "import nowhere\n"})
    _dist(
        site,
        "wrongbench",
        "wrong = brokenbench.plugin_value:BENCHMARK",
        {"brokenbench/plugin_value.py": "BENCHMARK = 3\n"},
    )
    clash = (
        "from store.plugins import BenchmarkPlugin\n"
        "GTA = BenchmarkPlugin(name='gta', summary='an impostor', formats=('gta',), format_module='clashbench.x')\n"
        "FMT = BenchmarkPlugin(name='other', summary='claims vtc', formats=('vtc',))\n"
        "SETS = BenchmarkPlugin(name='sets', summary='redefines a set', tool_set='atp', tool_set_builder='clashbench.x:b')\n"
    )
    _dist(
        site,
        "clashbench",
        "gta = clashbench.plugin:GTA\nother = clashbench.plugin:FMT\nsets = clashbench.plugin:SETS",
        {"clashbench/__init__.py": "", "clashbench/plugin.py": clash},
    )
    installed(site)
    from annotation.formats.registry import format_names, get_format

    assert plugins.plugin_names() == ["chainmark", "gta", "agentic-mme", "vtc", "isg", "atp"]
    problems = "\n".join(plugins.plugin_problems())
    assert "broken (from brokenbench) could not be loaded: ModuleNotFoundError" in problems
    assert "wrong (from wrongbench): brokenbench.plugin_value:BENCHMARK is a int, not a BenchmarkPlugin" in problems
    assert "gta (from clashbench) ignored: the name is taken by the plugin from chainmark" in problems
    assert "other (from clashbench) ignored: format 'vtc' belongs to vtc" in problems
    assert "sets (from clashbench) ignored: tool set 'atp' is defined by atp" in problems
    assert format_names() == ("chainmark", "gta", "agentic-mme", "vtc", "isg", "atp", "hf")
    assert get_format("gta").__name__ == "annotation.formats.gta"


CACHED = """
import json, sys
from store.plugins import benchmark_plugins
names = [p.name for p in benchmark_plugins()]
print(json.dumps({"names": names, "scanned": "importlib.metadata" in sys.modules}))
"""


def test_entry_points_are_read_from_the_cache_until_an_installed_location_changes(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHAINMARK_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    env[plugins.CACHE_ENV] = str(tmp_path / "cache.json")

    def look() -> dict:
        out = subprocess.run([sys.executable, "-c", CACHED], env=env, capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    first, second = look(), look()
    assert first == {"names": ["chainmark", "gta", "agentic-mme", "vtc", "isg", "atp"], "scanned": True}
    assert second == {**first, "scanned": False}  # a few stat calls, no distribution scan
    descriptor = "from store.plugins import BenchmarkPlugin\nB = BenchmarkPlugin(name='later', summary='added')\n"
    _dist(site, "laterbench", "later = laterbench:B", {"laterbench/__init__.py": descriptor})
    third = look()  # installing into a sys.path folder changed its modification time
    assert third == {"names": [*first["names"], "later"], "scanned": True}
