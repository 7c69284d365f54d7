"""Command palette provider: the run and review screens, reachable from anywhere with ctrl+p."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

ENTRIES = (
    ("Rating queue: rate my assigned targets", "rate", "v on home"),
    ("Preference queue: judge pairs of answers blind (A / B / tie)", "prefs", "p on home"),
    ("Adjudication queue: settle disagreements", "adjudicate", "a on home"),
    ("Agreement dashboard: κ, α, confusion, plots", "agreement", "g on home"),
    ("Estimates: judge only vs prediction-powered vs humans, next items to label", "estimates", "ctrl+p"),
    ("Run monitor: runs, live progress, cancel/resume", "runs", "m on home"),
    ("New run: launch a model on a benchmark", "launch", "n in the run monitor"),
    ("Reports: paper-style tables, export md/csv", "reports", "o on home"),
)


class ReviewScreens(Provider):
    async def discover(self) -> Hits:
        for text, name, keys in ENTRIES:
            yield DiscoveryHit(text, partial(self._open, name), help=keys)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, name, keys in ENTRIES:
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), partial(self._open, name), help=keys)

    async def _open(self, name: str) -> None:
        from tui.screens.review.nav import screen_for

        self.app.push_screen(screen_for(name))
