"""What a tool call gives back, what it may use, and how a tool says "that input is wrong"."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine

from evaluation.tools.errors import ToolError  # re-exported: tools name it from here
from store.blobs import BlobStore

if TYPE_CHECKING:
    from sqlmodel import Session

    from evaluation.tools.images import ImageData


class StoreBusy(Exception):
    """The database stayed locked through every retry. Not the tool's fault and nothing the model can
    act on, so ``execute`` raises it to the caller instead of returning it as a tool result."""


@dataclass
class ToolSettings:
    """Backends for service tools. Only env-var *names* live here, never keys, so settings can be logged."""

    vlm_base_url: str | None = None
    vlm_model: str | None = None
    vlm_api_key_env: str = "CHAINMARK_VLM_API_KEY"
    search_base_url: str = "https://google.serper.dev"
    search_api_key_env: str = "SERPER_API_KEY"
    imgbb_api_key_env: str = "IMGBB_API_KEY"
    imgbb_base_url: str = "https://api.imgbb.com/1/upload"
    fetch_via: str = "direct"  # "direct" (plain GET) or a reader prefix such as "https://r.jina.ai/"
    image_gen_base_url: str | None = None
    image_gen_model: str | None = None
    image_gen_api_key_env: str = "CHAINMARK_IMAGE_API_KEY"
    replay_only: bool = False  # never call a service; answer from the ReplayCache or fail
    unsafe_in_process_sandbox: bool = False  # Solver/Plot may run with no OS-level sandbox (user's explicit choice)
    timeout_s: float = 60.0

    @classmethod
    def from_env(cls) -> "ToolSettings":
        """Settings from ``CHAINMARK_*`` environment variables (the CLI's source of truth)."""
        from store.settings import current

        user = current()
        s = cls()
        s.vlm_base_url = user.vlm_base_url or None
        s.vlm_model = user.vlm_model or None
        s.search_base_url = user.search_base_url or s.search_base_url
        s.image_gen_base_url = user.image_base_url or None
        s.image_gen_model = user.image_model or None
        s.fetch_via = user.fetch_via or s.fetch_via
        s.replay_only = user.replay_only
        return s


@dataclass
class ToolContext:
    """Everything a tool call may read or extend.

    ``images`` is the indexed list (0 = original, N = N-th produced image): every produced image is
    appended, so Agentic-MME indices advance across calls. ``files`` maps names to bytes for
    path-style arguments (GTA ``image/image_96.jpg``, VTC paths); produced images are added there too
    under the name the tool reports, so a later call can refer to them by that name. Produced images
    are kept as :class:`~evaluation.tools.images.Produced` (pixels, PNG bytes on first ask):
    ``resolve_image`` gives bytes, ``resolve_pixels`` lets an image tool read the pixels directly.
    """

    images: list[ImageData] = field(default_factory=list)
    files: dict[str, ImageData] = field(default_factory=dict)
    session: Session | None = None  # the caller's own transaction (TUI, CLI)
    engine: Engine | None = None  # or: open short transactions here, none held across a service call (harness)
    blobs: BlobStore | None = None
    settings: ToolSettings = field(default_factory=ToolSettings.from_env)
    allow_paths: bool = True  # may a string argument name a file on disk (CLI use)?
    # how a service tool posts to its endpoint (``modelcall.sync_client.Post``): a run hands its own,
    # which sends on the run's event loop; None: the blocking client of ``sync_client``
    http_post: Callable[[str, dict[str, str], bytes, float], bytes] | None = None

    @property
    def next_index(self) -> int:
        """The index the next produced image will get."""
        return len(self.images)

    def resolve_image(self, ref: Any, what: str = "image") -> bytes:
        """Bytes of an image argument: an index, a name in ``files``, or (CLI) a path on disk."""
        data = self.resolve_pixels(ref, what)
        if isinstance(data, bytes):  # stored bytes: no need to load the image module (OpenCV) for them
            return data
        from evaluation.tools.images import image_bytes

        return image_bytes(data)

    def resolve_pixels(self, ref: Any, what: str = "image") -> ImageData:
        """Like ``resolve_image``, but a produced image comes back as is (for tools that decode it)."""
        if isinstance(ref, bool):
            raise ToolError(f"{what} must be an image index or name, got {ref!r}")
        if isinstance(ref, int) or (isinstance(ref, str) and ref.strip().isdigit() and ref.strip() not in self.files):
            idx = int(ref)
            if not 0 <= idx < len(self.images):
                have = f"0-{len(self.images) - 1}" if self.images else "none (no images loaded)"
                raise ToolError(f"{what}: invalid image index {idx}; valid indices: {have}")
            return self.images[idx]
        if not isinstance(ref, str) or not ref.strip():
            raise ToolError(f"{what} must be an image index or file name, got {ref!r}")
        name = ref.strip()
        if name in self.files:
            return self.files[name]
        base = os.path.basename(name)
        matches = [k for k in self.files if os.path.basename(k) == base]
        if len(matches) == 1:
            return self.files[matches[0]]
        if self.allow_paths:
            p = Path(name).expanduser()
            if p.is_file():
                return p.read_bytes()
        known = ", ".join(sorted(self.files)[:8]) or "none"
        raise ToolError(f"{what}: no image named {name!r} (known files: {known})")


@dataclass
class ToolOutput:
    """What an implementation returns; ``execute`` turns it into a ToolResult."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    images: list[ImageData] = field(default_factory=list)
    image_names: list[str] = field(default_factory=list)
    replayed: bool = False  # the answer came from the ReplayCache, not a live service


@dataclass
class ToolResult:
    """The JSON-able outcome of one call. ``ok=False`` carries a clear ``error``; nothing is made up.

    ``produced`` holds the result images as the tool made them; ``images`` is their encoded bytes,
    produced on first access (storing, sending or saving them) rather than inside the tool call."""

    ok: bool
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    produced: list[ImageData] = field(default_factory=list)
    asset_ids: list[int] = field(default_factory=list)
    image_names: list[str] = field(default_factory=list)
    error: str | None = None
    tool: str = ""
    tool_set: str = ""
    replayed: bool = False

    @property
    def images(self) -> list[bytes]:
        from evaluation.tools.images import image_bytes

        return [image_bytes(i) for i in self.produced]

    def to_dict(self) -> dict[str, Any]:
        """JSON form (image bytes are left out; they are assets or files)."""
        return {
            "ok": self.ok,
            "tool_set": self.tool_set,
            "tool": self.tool,
            "text": self.text,
            "data": self.data,
            "asset_ids": self.asset_ids,
            "image_names": self.image_names,
            "error": self.error,
            "replayed": self.replayed,
        }
