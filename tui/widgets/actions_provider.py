"""Command palette provider: every key-bound action of the current screen, searchable by name."""

from __future__ import annotations

from functools import partial

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.keymap import keys_in_force


class ScreenActions(Provider):
    """Lists what the footer and help screen list, so nothing is reachable only by memorised keys."""

    def _actions(self) -> list[tuple[str, str, str]]:
        screen = self.screen
        out: list[tuple[str, str, str]] = []
        seen: set[str] = set()
        for node in [screen, *screen.query("*")]:
            for binding in getattr(node, "BINDINGS", []):
                b = binding if isinstance(binding, Binding) else Binding(*binding)
                if not b.description or b.action in seen or b.action in ("help", "quit"):
                    continue
                if node is not screen and not b.action.startswith("screen."):
                    continue  # a widget's own action only makes sense with that widget focused
                seen.add(b.action)
                out.append((b.description, keys_in_force(self.app, b), b.action))
        return out

    async def discover(self) -> Hits:
        for description, key, action in self._actions():
            yield DiscoveryHit(description, partial(self._run, action), help=f"key: {key}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for description, key, action in self._actions():
            score = matcher.match(description)
            if score > 0:
                yield Hit(score, matcher.highlight(description), partial(self._run, action), help=f"key: {key}")

    async def _run(self, action: str) -> None:
        await self.screen.run_action(action.removeprefix("screen."))
