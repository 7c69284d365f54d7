"""One settings object: defaults, the user file, the project file and CHAINMARK_* variables, in that
order of precedence, each value validated with an error that says where it came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from store.settings import SettingsError, current, source_of
from tui.cli import cli


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A user config folder and a project folder (the working directory), both empty; no CHAINMARK_* set."""
    import os

    for name in list(os.environ):
        if name.startswith("CHAINMARK_"):
            monkeypatch.delenv(name)
    user = tmp_path / "xdg"
    project = tmp_path / "project"
    (user / "chainmark").mkdir(parents=True)
    project.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user))
    monkeypatch.chdir(project)
    return user / "chainmark" / "chainmark.toml", project / "chainmark.toml"


def test_defaults_without_files_or_variables(places: tuple[Path, Path]) -> None:
    s = current()
    assert (s.db, s.busy_timeout_ms, s.images, s.keymap, s.replay_only) == ("chainmark.db", 30_000, "auto", {}, False)
    assert source_of("db") == "default"


def test_environment_over_project_over_user(places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    user, project = places
    user.write_text('db = "user.db"\nvlm_model = "u-model"\nmax_image_mb = 8\n')
    assert (current().db, current().vlm_model) == ("user.db", "u-model")
    assert source_of("db") == str(user)
    project.write_text('db = "project.db"\n')
    assert (current().db, current().vlm_model, current().max_image_mb) == ("project.db", "u-model", 8)
    assert source_of("db") == str(Path("chainmark.toml"))
    monkeypatch.setenv("CHAINMARK_DB", "env.db")
    assert current().db == "env.db" and source_of("db") == "env CHAINMARK_DB"


def test_chainmark_config_names_another_project_file(
    places: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "team.toml"
    other.write_text("replay_only = true\n")
    monkeypatch.setenv("CHAINMARK_CONFIG", str(other))
    assert current().replay_only is True and source_of("replay_only") == str(other)


def test_a_bad_value_names_the_setting_and_where_it_came_from(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, project = places
    project.write_text('busy_timeout_ms = -1\nimages = "kitty"\ncolour = "red"\n')
    with pytest.raises(SettingsError) as err:
        current()
    text = str(err.value)
    assert "busy_timeout_ms in chainmark.toml: input should be greater than or equal to 0 (got -1)" in text
    assert "images in chainmark.toml" in text and "'kitty'" in text
    assert "colour in chainmark.toml: is not a chainmark setting" in text
    project.write_text("this is not toml = = \n")
    with pytest.raises(SettingsError, match="chainmark.toml"):
        current()
    project.unlink()
    monkeypatch.setenv("CHAINMARK_LEASE_SECONDS", "0.5")
    with pytest.raises(SettingsError, match=r"CHAINMARK_LEASE_SECONDS \(setting lease_seconds\)"):
        current()


def test_settings_are_read_again_when_a_file_changes(places: tuple[Path, Path]) -> None:
    _, project = places
    project.write_text('vlm_model = "one"\n')
    assert current().vlm_model == "one"
    project.write_text('vlm_model = "second"\n')  # a different size, so the change is seen at once
    assert current().vlm_model == "second"


def test_settings_reach_the_code_that_uses_them(places: tuple[Path, Path], tmp_path: Path) -> None:
    """The database, the busy timeout, the import limits and the tool settings all come from the file."""
    from annotation.formats.safe_files import MB, limits
    from evaluation.tools.result import ToolSettings
    from store.db import busy_timeout_ms, resolve_url

    _, project = places
    project.write_text(
        f'db = "{tmp_path / "from-file.db"}"\nbusy_timeout_ms = 1234\nmax_image_mb = 3\n'
        'vlm_base_url = "http://127.0.0.1:9/v1"\nreplay_only = true\n'
    )
    assert resolve_url(None).endswith("from-file.db") and busy_timeout_ms() == 1234
    assert resolve_url(str(tmp_path / "given.db")).endswith("given.db")  # --db wins over the setting
    assert limits().image_bytes == 3 * MB
    tools = ToolSettings.from_env()
    assert (tools.vlm_base_url, tools.replay_only) == ("http://127.0.0.1:9/v1", True)


def test_config_show_lists_every_setting_with_its_source(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, project = places
    project.write_text('vlm_model = "m"\n[keymap]\n"chainmark.help" = "f1"\n')
    monkeypatch.setenv("CHAINMARK_BUSY_TIMEOUT_MS", "500")
    r = CliRunner().invoke(cli, ["config", "show", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    rows = {row["name"]: row for row in doc["settings"]}
    assert rows["vlm_model"]["value"] == "m" and rows["vlm_model"]["source"] == "chainmark.toml"
    assert rows["busy_timeout_ms"] == {
        **rows["busy_timeout_ms"],
        "value": 500,
        "source": "env CHAINMARK_BUSY_TIMEOUT_MS",
    }
    assert rows["keymap"]["value"] == {"chainmark.help": "f1"}
    assert rows["db"]["source"] == "default" and rows["db"]["description"]
    text = CliRunner().invoke(cli, ["config", "show"]).output
    assert "vlm_model" in text and "env CHAINMARK_BUSY_TIMEOUT_MS" in text


def test_every_chainmark_variable_in_the_code_is_in_the_readme_table() -> None:
    """One table in the README names every CHAINMARK_* variable the code reads."""
    import re

    root = Path(__file__).resolve().parents[1]
    used = set()
    for package in ("store", "annotation", "evaluation", "tui"):
        for path in (root / package).rglob("*.py"):
            used |= set(re.findall(r"CHAINMARK_[A-Z0-9_]+", path.read_text(encoding="utf-8")))
    from store.settings import ENV_PREFIX, FIELDS

    used |= {ENV_PREFIX + name.upper() for name in FIELDS}
    readme = (root / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("## Settings") :]
    missing = sorted(name for name in used if f"`{name}`" not in table)
    assert not missing, f"README's settings table lacks {missing}"
