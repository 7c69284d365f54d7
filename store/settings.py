"""Every user setting in one typed object, from ``chainmark.toml`` files and ``CHAINMARK_*`` variables.

Precedence, highest first: the environment (``CHAINMARK_<NAME>``), the project file (``$CHAINMARK_CONFIG``
or ``./chainmark.toml``), the user file (``$XDG_CONFIG_HOME/chainmark/chainmark.toml``, default
``~/.config/chainmark``), the defaults below. Values are validated once, with an error that names the
setting and where it came from. API keys are never settings: a file or variable names the *environment
variable* that holds a key, so no key is ever written to a settings file, the database or a log.

Settings are read again whenever the environment or a settings file changes (tests and long-lived
processes see edits), and cached otherwise: ``current()`` is cheap enough for hot paths.

Standard library only: every command reads its settings before its own work, so this module must not
pay for a validation library at start-up (issue #20). Values are read as the pydantic-settings model
that this replaced read them (its lax conversions are in ``store.setting_values``; the same precedence,
[keymap] merging and error wording), which ``tests/test_settings.py`` pins down.
"""

# No ``from __future__ import annotations``: the field annotations are read at import time (FIELDS).

import dataclasses
import json
import os
import threading
from pathlib import Path
from typing import Any, Literal

from store.setting_values import Problem, Spec, spec_of, validate

ENV_PREFIX = "CHAINMARK_"
ENV_CONFIG = "CHAINMARK_CONFIG"
PROJECT_FILE = "chainmark.toml"
ImageProtocol = Literal["auto", "tgp", "sixel", "halfcell", "unicode"]


def _setting(default: Any, description: str, *, ge: float | None = None, le: float | None = None) -> Any:
    """A field with its default, bounds and description (the settings table in docs/guide/team-admin.md)."""
    meta = {"description": description, "ge": ge, "le": le}
    if isinstance(default, dict):
        return dataclasses.field(default_factory=default.copy, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(frozen=True)
class Settings:
    """What a user may set. Each field's description is the settings table in docs/guide/team-admin.md."""

    db: str = _setting("chainmark.db", "Database: a SQLite path or a postgresql+psycopg:// URL (overridden by --db)")
    user: str | None = _setting(
        None, "Who is acting, for the audit trail (overridden by --as; default: the login name)"
    )
    busy_timeout_ms: int = _setting(30_000, "How long a SQLite writer waits for another's lock", ge=0, le=3_600_000)
    blobs: str | None = _setting(
        None, "Folder for images and other blobs (default: beside a SQLite database; required for PostgreSQL)"
    )
    images: ImageProtocol = _setting("auto", "Terminal image protocol: auto, tgp, sixel, halfcell, unicode")
    max_file_mb: int = _setting(512, "Import: largest data file read (MB)", ge=1)
    max_image_mb: int = _setting(64, "Import: largest image file read (MB)", ge=1)
    max_image_pixels: int = _setting(89_478_485, "Import: most pixels in one image", ge=1)
    max_record_mb: int = _setting(256, "Import: largest task or trajectory with its files (MB)", ge=1)
    bwrap: str | None = _setting(
        None, "The bubblewrap binary for the sandbox; 'off' finds none (default: the bundled one, then PATH)"
    )
    sandbox_slots: int | None = _setting(
        None,
        "Sandboxes of model-written code run at once (default: the CPUs available), whatever -j is",
        ge=1,
        le=1024,
    )
    lease_seconds: float = _setting(60.0, "A run's lease: a holder silent this long is taken over on resume", ge=1.0)
    vlm_base_url: str | None = _setting(
        None, "Vision service tools (ImageDescription, TextToBbox…): an OpenAI-compatible base URL"
    )
    vlm_model: str | None = _setting(None, "Model name for the vision service tools")
    search_base_url: str = _setting("https://google.serper.dev", "Web search service (Serper API)")
    fetch_via: str = _setting("direct", "Web page fetch: 'direct' or a reader prefix such as https://r.jina.ai/")
    image_base_url: str | None = _setting(None, "Image generation service: an OpenAI-compatible base URL")
    image_model: str | None = _setting(None, "Model name for image generation")
    judge_attempts: int = _setting(
        3,
        "Judge: times a question whose reply has no usable score (ATP's chief: missing or outside 0-100) is asked",
        ge=1,
        le=10,
    )
    replay_only: bool = _setting(False, "Service tools answer only from the record/replay cache")
    traceback: bool = _setting(False, "Print Python tracebacks instead of one-line errors")
    plain: str = _setting(
        "", "Speed mechanisms to switch off: 'all' or names, comma-separated (chainmark config speedups lists them)"
    )
    keymap: dict[str, str] = _setting(
        {},
        '[keymap] table: binding id = keys, e.g. "editor.save" = "ctrl+s,f2" (ids: chainmark config keys)',
    )


FIELDS: dict[str, Spec] = {f.name: spec_of(f) for f in dataclasses.fields(Settings)}
"""Every setting by name, in the order above: type, bounds, choices, default, description."""


class SettingsError(ValueError):
    """A setting that cannot be used, named with where it came from."""


def read_toml(path: Path) -> dict[str, Any]:
    """A settings file's tables ({} when it does not exist). tomllib is imported only when a file is
    there: most starts have none, and its import (with its patterns) is ≈ 2 ms of every command."""
    try:
        with open(path, "rb") as fh:
            import tomllib

            try:
                data = tomllib.load(fh)
            except tomllib.TOMLDecodeError as exc:
                raise SettingsError(f"{path}: {exc}") from None
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: {exc}") from None
    if "keymap" in data and not isinstance(data["keymap"], dict):
        raise SettingsError(f"{path}: keymap must be a table ([keymap])")
    return data


def user_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or "~/.config"
    return Path(base).expanduser() / "chainmark" / PROJECT_FILE


def project_file() -> Path:
    return Path(os.environ.get(ENV_CONFIG) or PROJECT_FILE).expanduser()


def config_files() -> list[Path]:
    """The files read, lowest precedence first (missing ones are simply empty)."""
    return [user_file(), project_file()]


_lock = threading.Lock()
_cached: tuple[tuple[Any, ...], Settings] | None = None


def _fingerprint() -> tuple[Any, ...]:
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX) or k == "XDG_CONFIG_HOME"))
    stamps: list[tuple[Any, ...]] = []
    for path in config_files():
        try:
            st = path.stat()
            stamps.append((str(path.resolve()), st.st_mtime_ns, st.st_size))
        except OSError:
            stamps.append((str(path), None, None))
    return env, tuple(stamps), os.getcwd()


def current() -> Settings:
    """The settings in force now (re-read when the environment or a file changed)."""
    global _cached
    key = _fingerprint()
    with _lock:
        if _cached is not None and _cached[0] == key:
            return _cached[1]
    value = load()
    with _lock:
        _cached = (key, value)
    return value


def load() -> Settings:
    """Read and validate every source; a bad value raises SettingsError naming the setting and source."""
    merged: dict[str, Any] = {}
    for layer in (_from_environment(), *(read_toml(p) for p in reversed(config_files()))):  # env, project, user
        merged = _deep_update(layer, merged)  # the layer read earlier wins
    values: dict[str, Any] = {}
    problems: list[Problem] = []
    for name, spec in FIELDS.items():
        if name in merged:
            values[name], found = validate(spec, merged[name])
            problems += found
    problems += [Problem((name,), "extra_forbidden", "", value) for name, value in merged.items() if name not in FIELDS]
    if isinstance(values.get("db"), str) and not values["db"].strip():  # else the working folder is opened
        problems.append(Problem(("db",), "empty", "Should name a database (a SQLite path or a URL)", merged["db"]))
    if problems:
        raise SettingsError(_describe(problems))
    return Settings(**values)


def _from_environment() -> dict[str, Any]:
    """``CHAINMARK_<NAME>`` values as strings, the keymap decoded from JSON (variable names in any case)."""
    env = {k.lower(): v for k, v in os.environ.items()}
    found: dict[str, Any] = {}
    for name, spec in FIELDS.items():
        raw = env.get(ENV_PREFIX.lower() + name)
        if raw is None:
            continue
        if spec.kind != "map":
            found[name] = raw
            continue
        try:
            decoded = json.loads(raw)
        except ValueError as exc:
            why = f"{str(exc)[0].lower()}{str(exc)[1:]}"
            raise SettingsError(
                f"{_label(name)}: should be a JSON object, not valid JSON: {why} (got {raw!r})"
            ) from None
        if decoded is not None:  # JSON null: as if unset
            found[name] = decoded
    return found


def _deep_update(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``update``'s keys on top, tables merged key by key ([keymap] from several files)."""
    merged = dict(base)
    for key, value in update.items():
        if isinstance(merged.get(key), dict) and isinstance(value, dict):
            merged[key] = _deep_update(merged[key], value)
        else:
            merged[key] = value
    return merged


def _label(name: str) -> str:
    where = source_of(name.split(".")[0])
    return where[4:] + f" (setting {name})" if where.startswith("env ") else f"{name} in {where}"


def _describe(problems: list[Problem]) -> str:
    lines = []
    for p in problems:
        name = ".".join(p.loc) or "settings"
        if p.kind == "extra_forbidden":
            lines.append(f"{_label(name)}: is not a chainmark setting (chainmark config show lists them)")
        else:
            lines.append(f"{_label(name)}: {p.message[0].lower()}{p.message[1:]} (got {p.value!r})")
    return "; ".join(lines)


def source_of(name: str) -> str:
    """Where a setting's value comes from: ``env CHAINMARK_<NAME>``, a file path, or ``default``."""
    env_name = ENV_PREFIX + name.upper()
    if env_name in os.environ:
        return f"env {env_name}"
    for path in reversed(config_files()):
        try:
            if name in read_toml(path):
                return str(path)
        except SettingsError:
            return str(path)
    return "default"


def shown(settings: Settings) -> list[dict[str, Any]]:
    """Every setting with its value, its source and what it does (``chainmark config show``)."""
    rows = []
    for name, spec in FIELDS.items():
        rows.append(
            {
                "name": name,
                "value": getattr(settings, name),
                "source": source_of(name),
                "env": ENV_PREFIX + name.upper(),
                "description": spec.description,
            }
        )
    return rows
