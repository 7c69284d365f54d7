"""Search and fetch tools: Serper (web search, Google Lens), ImgBB upload for Lens, plain HTTP GET.

Keys come from environment variables named in ToolSettings and go only into HTTP headers or
query strings, never into the recorded request.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
from html.parser import HTMLParser
from typing import Any

from evaluation.modelcall.failures import StatusFailure, TransportFailure
from evaluation.tools import replay
from evaluation.tools.result import ToolContext, ToolError, ToolOutput
from store import safe_json

_KEEP_KEYS = ("title", "link", "snippet", "date", "source", "position", "imageUrl", "price", "rating")


def _key(env_name: str) -> str | None:
    value = os.environ.get(env_name, "").strip()
    return value or None


def _serper_missing(ctx: ToolContext) -> str | None:
    env = ctx.settings.search_api_key_env
    return None if _key(env) else f"set the {env} environment variable to a Serper API key"


def _serper(ctx: ToolContext, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    url = ctx.settings.search_base_url.rstrip("/") + "/" + endpoint
    headers = {"X-API-KEY": _key(ctx.settings.search_api_key_env) or "", "Content-Type": "application/json"}
    status, answer = _post_json(ctx, url, headers, body)
    if status != 200:
        raise ToolError(f"search service answered HTTP {status}: {answer.decode('utf-8', 'replace')[:200]}")
    try:
        data = safe_json.loads(answer)
    except ValueError as exc:
        raise ToolError("search service answered with something that is not JSON") from exc
    return data if isinstance(data, dict) else {"results": data}


def _post_json(ctx: ToolContext, url: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, bytes]:
    """(status, body) of a JSON POST: through the run's ``http_post`` when it has one (sent on its
    event loop), else with httpx2, imported here so a run never loads it for its service calls."""
    where = ctx.settings.search_base_url
    if ctx.http_post is not None:
        try:
            return 200, ctx.http_post(url, headers, json.dumps(body).encode(), ctx.settings.timeout_s)
        except StatusFailure as exc:
            return exc.status, exc.body
        except TransportFailure as exc:
            kind, why = exc.reason()
            raise ToolError(f"search service at {where} is unreachable: {kind}{why}") from exc
    import httpx2  # openai's own HTTP library; never the legacy httpx (see modelcall.sync_client)

    try:
        resp = httpx2.post(url, json=body, headers=headers, timeout=ctx.settings.timeout_s)
    except httpx2.HTTPError as exc:
        raise ToolError(f"search service at {where} is unreachable: {exc}") from exc
    return resp.status_code, resp.content


def _prune(data: dict[str, Any], limit: int = 10) -> dict[str, Any]:
    """The parts of a Serper answer worth keeping: answer box, knowledge graph, top results."""
    out: dict[str, Any] = {}
    for key in ("answerBox", "knowledgeGraph"):
        if isinstance(data.get(key), dict):
            out[key] = {k: v for k, v in data[key].items() if isinstance(v, (str, int, float))}
    for key in ("organic", "visual_matches", "visualMatches", "images", "news"):
        items = data.get(key)
        if isinstance(items, list):
            out[key] = [{k: it[k] for k in _KEEP_KEYS if k in it} for it in items[:limit] if isinstance(it, dict)]
    return out


def _context(pruned: dict[str, Any]) -> str:
    """Readable text of a pruned answer, one block per result (what the model reads)."""
    parts: list[str] = []
    box = pruned.get("answerBox")
    if box:
        parts.append("Answer box: " + " | ".join(str(box[k]) for k in ("title", "answer", "snippet") if k in box))
    kg = pruned.get("knowledgeGraph")
    if kg:
        parts.append("Knowledge graph: " + " | ".join(f"{k}: {v}" for k, v in kg.items()))
    for key in ("organic", "visual_matches", "visualMatches", "images", "news"):
        for k, it in enumerate(pruned.get(key, []), 1):
            lines = [f"[{k}] {it.get('title', '')}".rstrip()]
            if it.get("snippet"):
                lines.append(str(it["snippet"]))
            if it.get("link"):
                lines.append(str(it["link"]))
            parts.append("\n".join(lines))
    return "\n\n".join(parts) if parts else "No results."


def google_search(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Agentic-MME ``google_search``: the reference's dict shape, context text for the model."""
    query, gl, hl = args["query"], args.get("gl") or "us", args.get("hl") or "en"
    request = {"endpoint": "search", "q": query, "gl": gl, "hl": hl, "page": 1}
    raw, replayed = replay.call(
        ctx,
        "google_search",
        "search",
        request,
        lambda: _serper(ctx, "search", {"q": query, "gl": gl, "hl": hl, "page": 1}),
        _serper_missing(ctx),
    )
    pruned = _prune(raw)
    data = {
        "tool": "google_search",
        "query": query,
        "gl": gl,
        "hl": hl,
        "page": 1,
        "type": "search",
        "context": _context(pruned),
        "raw": pruned,
    }
    return ToolOutput(text=data["context"], data=data, replayed=replayed)


def gta_google_search(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """GTA ``GoogleSearch``: the first k results as numbered text."""
    query, k = args["query"], int(args.get("k") or 10)
    if not 1 <= k <= 100:
        raise ToolError(f"GoogleSearch.k must be between 1 and 100, got {k}")
    request = {"endpoint": "search", "q": query, "num": k}
    raw, replayed = replay.call(
        ctx,
        "GoogleSearch",
        "search",
        request,
        lambda: _serper(ctx, "search", {"q": query, "num": k}),
        _serper_missing(ctx),
    )
    pruned = _prune(raw, limit=k)
    results = pruned.get("organic", [])[:k]
    lines = [
        f"{n} - {r.get('title', '')}: {r.get('snippet', '')} ({r.get('link', '')})" for n, r in enumerate(results, 1)
    ]
    box = pruned.get("answerBox")
    if box and (box.get("answer") or box.get("snippet")):
        lines.insert(0, f"Answer: {box.get('answer') or box.get('snippet')}")
    return ToolOutput(
        text="\n".join(lines) or "No results.", data={"query": query, "k": k, "results": results}, replayed=replayed
    )


def _upload_imgbb(ctx: ToolContext, image: bytes) -> str:
    import base64

    import httpx2

    key = _key(ctx.settings.imgbb_api_key_env)
    try:
        resp = httpx2.post(
            ctx.settings.imgbb_base_url,
            params={"key": key},
            data={"image": base64.b64encode(image).decode("ascii")},
            timeout=ctx.settings.timeout_s,
        )
        resp.raise_for_status()
        return str(resp.json()["data"]["url"])
    except (httpx2.HTTPError, KeyError, ValueError) as exc:
        raise ToolError(f"google_lens_search: uploading the image to ImgBB failed: {exc}") from exc


def google_lens_search(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Reverse image search of the original, the latest, or a named image (local images are uploaded)."""
    if args.get("image_path"):
        image = ctx.resolve_image(args["image_path"], "image_path")
    elif args.get("image_index") is not None:
        image = ctx.resolve_image(int(args["image_index"]), "image_index")
    else:
        ref = args.get("image_ref") or "current"
        image = ctx.resolve_image(len(ctx.images) - 1 if ref == "current" else 0, f"image_ref {ref!r}")
    digest = hashlib.sha256(image).hexdigest()
    request = {"endpoint": "lens", "image_sha256": digest}
    missing = _serper_missing(ctx)
    if missing is None and not _key(ctx.settings.imgbb_api_key_env):
        missing = f"set the {ctx.settings.imgbb_api_key_env} environment variable (local images are uploaded to ImgBB)"
    raw, replayed = replay.call(
        ctx,
        "google_lens_search",
        "search",
        request,
        lambda: _serper(ctx, "lens", {"url": _upload_imgbb(ctx, image)}),
        missing,
    )
    pruned = _prune(raw)
    data = {
        "tool": "google_lens_search",
        "page": 1,
        "num": len(pruned.get("organic") or pruned.get("visual_matches") or []),
        "image_sha256": digest,
        "context": _context(pruned),
        "raw": pruned,
    }
    return ToolOutput(text=data["context"], data=data, replayed=replayed)


class _TextExtractor(HTMLParser):
    """Visible text of an HTML page: drops script/style/head, keeps block boundaries as newlines."""

    _SKIP = {"script", "style", "noscript", "head", "svg", "template"}
    _BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "table"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self.skip += 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self.skip:
            self.skip -= 1
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    parser = _TextExtractor()
    parser.feed(markup)
    text = html.unescape("".join(parser.parts))
    lines = [re.sub(r"[ \t\r\f\v]+", " ", ln).strip() for ln in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(ln for ln in lines)).strip()


def _fetch(ctx: ToolContext, url: str) -> dict[str, Any]:
    via = ctx.settings.fetch_via
    target = url if via == "direct" else via.rstrip("/") + "/" + url
    import httpx2

    try:
        resp = httpx2.get(
            target,
            follow_redirects=True,
            timeout=ctx.settings.timeout_s,
            headers={"User-Agent": "chainmark/0.1 (+benchmark tool runtime)"},
        )
    except httpx2.HTTPError as exc:
        raise ToolError(f"fetch_webpage: could not fetch {url}: {exc}") from exc
    if resp.status_code >= 400:
        raise ToolError(f"fetch_webpage: {url} answered HTTP {resp.status_code}")
    kind = resp.headers.get("content-type", "")
    body = resp.text
    text = html_to_text(body) if "html" in kind or body.lstrip()[:1] == "<" else body
    return {"status": resp.status_code, "content_type": kind, "text": text}


def fetch_webpage(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    url = str(args["url"]).strip()
    if not re.match(r"^https?://", url, re.I):
        raise ToolError(f"fetch_webpage: url must start with http:// or https://, got {url!r}")
    max_chars = int(args.get("max_chars") or 12000)
    request = {"url": url, "via": ctx.settings.fetch_via}
    page, replayed = replay.call(ctx, "fetch_webpage", "fetch", request, lambda: _fetch(ctx, url), None)
    text = page["text"][:max_chars]
    return ToolOutput(text=text, data={"url": url, "text": text}, replayed=replayed)
