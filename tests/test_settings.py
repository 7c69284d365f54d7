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


def test_an_empty_database_setting_is_an_error_naming_it(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``CHAINMARK_DB=`` (a variable cleared by ``VAR= cmd``) made the working folder itself the database:
    every command failed "the database file cannot be opened" without saying why, and the TUI's home waited
    for its data for ever. An empty value is an empty value (as for every setting), and names no database."""
    assert _error(monkeypatch, CHAINMARK_DB="") == (
        "CHAINMARK_DB (setting db): should name a database (a SQLite path or a URL) (got '')"
    )
    result = CliRunner().invoke(cli, ["benchmarks", "list"], env={"CHAINMARK_DB": ""})
    assert result.exit_code == 1 and "CHAINMARK_DB (setting db): should name a database" in result.output


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


def test_every_chainmark_variable_in_the_code_is_in_the_settings_table() -> None:
    """One table in the team admin guide names every CHAINMARK_* variable the code reads."""
    import re

    root = Path(__file__).resolve().parents[1]
    used = set()
    for package in ("store", "annotation", "evaluation", "tui"):
        for path in (root / package).rglob("*.py"):
            used |= set(re.findall(r"CHAINMARK_[A-Z0-9_]+", path.read_text(encoding="utf-8")))
    from store.settings import ENV_PREFIX, FIELDS

    used |= {ENV_PREFIX + name.upper() for name in FIELDS}
    guide = (root / "docs" / "guide" / "team-admin.md").read_text(encoding="utf-8")
    table = guide[guide.index("## Settings") :]
    missing = sorted(name for name in used if f"`{name}`" not in table)
    assert not missing, f"the settings table (docs/guide/team-admin.md) lacks {missing}"


def _error(monkeypatch: pytest.MonkeyPatch, **env: str) -> str:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as err:
        current()
    for name in env:
        monkeypatch.delenv(name)
    return str(err.value)


def test_variables_are_read_with_the_types_the_fields_declare(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Booleans in any case and spelling pydantic-settings took, numbers as text (underscores, spaces,
    ``.0``), an empty string is an empty string, unknown CHAINMARK_* variables are ignored."""
    for text, value in [("true", True), ("FALSE", False), ("1", True), ("0", False), ("Yes", True), ("no", False)]:
        monkeypatch.setenv("CHAINMARK_REPLAY_ONLY", text)
        assert current().replay_only is value, text
    for text, value in [("on", True), ("OFF", False), ("t", True), ("N", False)]:
        monkeypatch.setenv("CHAINMARK_TRACEBACK", text)
        assert current().traceback is value, text
    for text, number in [("1_000", 1000), (" 42 ", 42), ("42.0", 42), ("+7", 7), ("0042", 42)]:
        monkeypatch.setenv("CHAINMARK_BUSY_TIMEOUT_MS", text)
        assert current().busy_timeout_ms == number and type(current().busy_timeout_ms) is int, text
    for text, seconds in [("90", 90.0), ("1.5e2", 150.0), ("inf", float("inf")), (" 2_5.5", None)]:
        monkeypatch.setenv("CHAINMARK_LEASE_SECONDS", text)
        if seconds is None:  # underscores, then spaces: not a number
            with pytest.raises(SettingsError, match="unable to parse string as a number"):
                current()
        else:
            assert current().lease_seconds == seconds and type(current().lease_seconds) is float, text
    monkeypatch.delenv("CHAINMARK_LEASE_SECONDS")
    monkeypatch.setenv("CHAINMARK_SANDBOX_SLOTS", "8")
    monkeypatch.setenv("CHAINMARK_IMAGES", "sixel")
    monkeypatch.setenv("CHAINMARK_USER", "")
    monkeypatch.setenv("CHAINMARK_NOT_A_SETTING", "anything")
    s = current()
    assert (s.sandbox_slots, s.images, s.user) == (8, "sixel", "")


def test_a_bad_variable_names_itself_with_the_reason(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _error(monkeypatch, CHAINMARK_REPLAY_ONLY=" yes ") == (
        "CHAINMARK_REPLAY_ONLY (setting replay_only): input should be a valid boolean, unable to interpret input"
        " (got ' yes ')"
    )
    assert _error(monkeypatch, CHAINMARK_BUSY_TIMEOUT_MS="3600001") == (
        "CHAINMARK_BUSY_TIMEOUT_MS (setting busy_timeout_ms): input should be less than or equal to 3600000"
        " (got '3600001')"
    )
    assert _error(monkeypatch, CHAINMARK_MAX_FILE_MB="1e3") == (
        "CHAINMARK_MAX_FILE_MB (setting max_file_mb): input should be a valid integer, unable to parse string"
        " as an integer (got '1e3')"
    )
    assert _error(monkeypatch, CHAINMARK_SANDBOX_SLOTS="") == (
        "CHAINMARK_SANDBOX_SLOTS (setting sandbox_slots): input should be a valid integer, unable to parse"
        " string as an integer (got '')"
    )
    assert _error(monkeypatch, CHAINMARK_LEASE_SECONDS="0.5") == (
        "CHAINMARK_LEASE_SECONDS (setting lease_seconds): input should be greater than or equal to 1 (got '0.5')"
    )
    assert _error(monkeypatch, CHAINMARK_IMAGES="kitty") == (
        "CHAINMARK_IMAGES (setting images): input should be 'auto', 'tgp', 'sixel', 'halfcell' or 'unicode'"
        " (got 'kitty')"
    )
    both = _error(monkeypatch, CHAINMARK_MAX_IMAGE_MB="0", CHAINMARK_TRACEBACK="2")  # every problem, field order
    assert both == (
        "CHAINMARK_MAX_IMAGE_MB (setting max_image_mb): input should be greater than or equal to 1 (got '0'); "
        "CHAINMARK_TRACEBACK (setting traceback): input should be a valid boolean, unable to interpret input (got '2')"
    )


def test_file_values_of_another_type_are_converted_as_before(places: tuple[Path, Path]) -> None:
    """TOML gives typed values; a number written as text, a whole float or 1/0 for a boolean still pass."""
    _, project = places
    project.write_text(
        'busy_timeout_ms = "500"\nmax_file_mb = 2.0\nreplay_only = 1\ntraceback = "on"\nlease_seconds = 5\n'
    )
    s = current()
    assert (s.busy_timeout_ms, s.max_file_mb, s.replay_only, s.traceback, s.lease_seconds) == (500, 2, True, True, 5.0)
    assert type(s.max_file_mb) is int and type(s.lease_seconds) is float
    project.write_text("max_file_mb = 2.5\ndb = 5\nreplay_only = 2023-01-01\n")
    with pytest.raises(SettingsError) as err:
        current()
    assert str(err.value) == (
        "db in chainmark.toml: input should be a valid string (got 5); "
        "max_file_mb in chainmark.toml: input should be a valid integer, got a number with a fractional part"
        " (got 2.5); "
        "replay_only in chainmark.toml: input should be a valid boolean (got datetime.date(2023, 1, 1))"
    )


def test_keymap_tables_merge_across_files_and_the_variable(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    user, project = places
    user.write_text('[keymap]\n"chainmark.help" = "f1"\n"editor.save" = "ctrl+s"\n')
    project.write_text('[keymap]\n"editor.save" = "f2"\n')
    monkeypatch.setenv("CHAINMARK_KEYMAP", '{"task_editor.submit": "ctrl+enter"}')
    assert current().keymap == {"chainmark.help": "f1", "editor.save": "f2", "task_editor.submit": "ctrl+enter"}
    monkeypatch.setenv("CHAINMARK_KEYMAP", "null")  # JSON null: as if unset
    assert current().keymap == {"chainmark.help": "f1", "editor.save": "f2"}
    monkeypatch.delenv("CHAINMARK_KEYMAP")
    assert _error(monkeypatch, CHAINMARK_KEYMAP="[]") == (
        "CHAINMARK_KEYMAP (setting keymap): input should be a valid dictionary (got [])"
    )
    assert _error(monkeypatch, CHAINMARK_KEYMAP="ctrl+s").startswith(
        "CHAINMARK_KEYMAP (setting keymap): should be a JSON object, not valid JSON: expecting value"
    )
    project.write_text('[keymap]\n"editor.save" = 2\n')
    assert _error(monkeypatch) == "keymap.editor.save in chainmark.toml: input should be a valid string (got 2)"


def test_variable_names_are_matched_in_any_case(places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """As pydantic-settings read them (case-insensitive names on every platform)."""
    monkeypatch.setenv("chainmark_vlm_model", "lower")
    assert current().vlm_model == "lower"


def test_every_setting_has_a_row_with_its_default_and_description() -> None:
    from store.settings import ENV_PREFIX, FIELDS

    readme = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "team-admin.md").read_text(encoding="utf-8")
    for name, spec in FIELDS.items():
        default = "–" if spec.default in (None, {}, "") else f"`{spec.default}`"
        row = f"| `{name}` | `{ENV_PREFIX}{name.upper()}` | {default} | {spec.description} |"
        assert row in readme, row


def test_loading_the_settings_imports_no_validation_library(tmp_path: Path) -> None:
    """Every command reads its settings before its own work: they must not cost pydantic's import (#20)."""
    import os
    import subprocess
    import sys

    (tmp_path / "chainmark.toml").write_text('busy_timeout_ms = "500"\n[keymap]\n"chainmark.help" = "f1"\n')
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("CHAINMARK_")}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "CHAINMARK_REPLAY_ONLY": "yes"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    probe = (
        "import sys, store.settings as s; v = s.current(); "
        "print(v.busy_timeout_ms, v.replay_only, v.keymap); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'pydantic_core', 'pydantic_settings', "
        "'annotated_types', 'typing_inspection'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path, env=env
    )
    assert out.stdout.splitlines() == ["500 True {'chainmark.help': 'f1'}", "[]"]


def test_settings_without_a_file_do_not_import_the_toml_parser(tmp_path: Path) -> None:
    """No settings file (the usual start): tomllib's import and patterns are not paid; with a file it reads."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("CHAINMARK_")}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "CHAINMARK_PLAIN": "gc_pause"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    probe = (
        "import sys, store.speedups as sp; "
        "print(sp.enabled('gc_pause'), sp.enabled('exit_keep'), sp.current().busy_timeout_ms, 'tomllib' in sys.modules)"
    )

    def run() -> str:
        return subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path, env=env
        ).stdout.strip()

    assert run() == "False True 30000 False"
    (tmp_path / "chainmark.toml").write_text("busy_timeout_ms = 700\n")
    assert run() == "False True 700 True"
