"""Every user setting in one typed object, from ``chainmark.toml`` files and ``CHAINMARK_*`` variables.

Precedence, highest first: the environment (``CHAINMARK_<NAME>``), the project file (``$CHAINMARK_CONFIG``
or ``./chainmark.toml``), the user file (``$XDG_CONFIG_HOME/chainmark/chainmark.toml``, default
``~/.config/chainmark``), the defaults below. Values are validated once, with an error that names the
setting and where it came from. API keys are never settings: a file or variable names the *environment
variable* that holds a key, so no key is ever written to a settings file, the database or a log.

Settings are read again whenever the environment or a settings file changes (tests and long-lived
processes see edits), and cached otherwise: ``current()`` is cheap enough for hot paths.
"""

from __future__ import annotations

import os
import threading
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

ENV_PREFIX = "CHAINMARK_"
ENV_CONFIG = "CHAINMARK_CONFIG"
PROJECT_FILE = "chainmark.toml"
ImageProtocol = Literal["auto", "tgp", "sixel", "halfcell", "unicode"]


class Settings(BaseSettings):
    """What a user may set. Each field's description is the README's environment table."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", validate_default=True)

    db: str = Field(
        "chainmark.db", description="Database: a SQLite path or a postgresql+psycopg:// URL (overridden by --db)"
    )
    user: str | None = Field(
        None, description="Who is acting, for the audit trail (overridden by --as; default: the login name)"
    )
    busy_timeout_ms: int = Field(
        30_000, ge=0, le=3_600_000, description="How long a SQLite writer waits for another's lock"
    )
    blobs: str | None = Field(
        None,
        description="Folder for images and other blobs (default: beside a SQLite database; required for PostgreSQL)",
    )
    images: ImageProtocol = Field("auto", description="Terminal image protocol: auto, tgp, sixel, halfcell, unicode")
    max_file_mb: int = Field(512, ge=1, description="Import: largest data file read (MB)")
    max_image_mb: int = Field(64, ge=1, description="Import: largest image file read (MB)")
    max_image_pixels: int = Field(89_478_485, ge=1, description="Import: most pixels in one image")
    max_record_mb: int = Field(256, ge=1, description="Import: largest task or trajectory with its files (MB)")
    bwrap: str | None = Field(
        None,
        description="The bubblewrap binary for the sandbox; 'off' finds none (default: the bundled one, then PATH)",
    )
    sandbox_slots: int | None = Field(
        None,
        ge=1,
        le=1024,
        description="Sandboxes of model-written code run at once (default: the CPUs available), whatever -j is",
    )
    lease_seconds: float = Field(
        60.0, ge=1.0, description="A run's lease: a holder silent this long is taken over on resume"
    )
    vlm_base_url: str | None = Field(
        None, description="Vision service tools (ImageDescription, TextToBbox…): an OpenAI-compatible base URL"
    )
    vlm_model: str | None = Field(None, description="Model name for the vision service tools")
    search_base_url: str = Field("https://google.serper.dev", description="Web search service (Serper API)")
    fetch_via: str = Field(
        "direct", description="Web page fetch: 'direct' or a reader prefix such as https://r.jina.ai/"
    )
    image_base_url: str | None = Field(None, description="Image generation service: an OpenAI-compatible base URL")
    image_model: str | None = Field(None, description="Model name for image generation")
    replay_only: bool = Field(False, description="Service tools answer only from the record/replay cache")
    traceback: bool = Field(False, description="Print Python tracebacks instead of one-line errors")
    keymap: dict[str, str] = Field(
        default_factory=dict,
        description='[keymap] table: binding id = keys, e.g. "editor.save" = "ctrl+s,f2" (ids: chainmark config keys)',
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        files = [TomlFile(settings_cls, path) for path in reversed(config_files())]  # project before user
        return (init_settings, env_settings, *files)


class TomlFile(PydanticBaseSettingsSource):
    """One ``chainmark.toml``: a flat table of settings plus an optional ``[keymap]`` table."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path):
        super().__init__(settings_cls)
        self.path = path

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # required, unused
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        return read_toml(self.path)


class SettingsError(ValueError):
    """A setting that cannot be used, named with where it came from."""


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
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
    try:
        return Settings()  # type: ignore[call-arg]  # pydantic-settings fills the fields from its sources
    except ValidationError as exc:
        raise SettingsError(_describe(exc)) from None


def _describe(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        name = ".".join(str(p) for p in err["loc"]) or "settings"
        where = source_of(name.split(".")[0])
        label = where[4:] + f" (setting {name})" if where.startswith("env ") else f"{name} in {where}"
        if err["type"] == "extra_forbidden":
            lines.append(f"{label}: is not a chainmark setting (chainmark config show lists them)")
        else:
            lines.append(f"{label}: {err['msg'][0].lower()}{err['msg'][1:]} (got {err.get('input')!r})")
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
    for name, field in Settings.model_fields.items():
        rows.append(
            {
                "name": name,
                "value": getattr(settings, name),
                "source": source_of(name),
                "env": ENV_PREFIX + name.upper(),
                "description": field.description or "",
            }
        )
    return rows
