"""Bradley–Terry strengths from pairwise comparisons, with seeded bootstrap CIs. Pure numpy.

Model: P(i beats j) = p_i / (p_i + p_j). **Ties count as half a win for each side** (not Davidson's
tie parameter): simple, and the fitted strengths stay the ones a reader can check by hand (two
players: p_1 / p_2 = (wins_1 + ties/2) / (wins_2 + ties/2)).

Fitted by Hunter's MM iteration (2004): p_i ← W_i / Σ_j n_ij / (p_i + p_j). A player who never wins
(or never loses) has no finite maximum-likelihood strength, so by default every player also has
``prior`` (1) virtual tied games, spread evenly over all the other players: all scores stay finite, a
disconnected comparison graph still gets an answer, and scores shrink a little towards each other. ``prior=0`` is the plain maximum-likelihood fit (its bootstrap
drops resamples without a finite fit, and gives no interval when more than half have none).

Scores are Elo-like: 1000 + 400·log10(p_i / geometric mean of p), so a 400-point gap means 10:1 odds.
Confidence intervals resample the comparisons with replacement (percentile, fixed seed: the same
input always prints the same interval).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

OUTCOMES = ("a", "b", "tie")
ELO_BASE = 1000.0
ELO_SCALE = 400.0


@dataclass(frozen=True)
class Comparison:
    """One judgement: ``outcome`` is ``a`` (a better), ``b`` (b better) or ``tie``."""

    a: str
    b: str
    outcome: str


@dataclass(frozen=True)
class Standing:
    model: str
    score: float
    ci: tuple[float, float] | None
    strength: float
    comparisons: int
    wins: int
    ties: int
    losses: int

    @property
    def win_rate(self) -> float | None:
        """(wins + ties / 2) / comparisons, the same half-win rule the fit uses."""
        return (self.wins + self.ties / 2) / self.comparisons if self.comparisons else None

    def to_dict(self, digits: int = 3) -> dict[str, Any]:
        return {
            "model": self.model,
            "score": round(self.score, digits),
            "ci": None if self.ci is None else [round(self.ci[0], digits), round(self.ci[1], digits)],
            "strength": round(self.strength, 6),
            "comparisons": self.comparisons,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "win_rate": None if self.win_rate is None else round(self.win_rate, 6),
        }


def _tally(comparisons: Sequence[Comparison], players: list[str]) -> np.ndarray:
    """wins[i, j]: how often i beat j, ties counting one half to each."""
    index = {p: i for i, p in enumerate(players)}
    wins = np.zeros((len(players), len(players)))
    for c in comparisons:
        if c.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}; got {c.outcome!r}")
        i, j = index[c.a], index[c.b]
        if c.outcome == "a":
            wins[i, j] += 1
        elif c.outcome == "b":
            wins[j, i] += 1
        else:
            wins[i, j] += 0.5
            wins[j, i] += 0.5
    return wins


def fit_strengths(wins: np.ndarray, *, prior: float = 1.0, tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """Strengths (geometric mean 1) from a wins matrix by the MM iteration; see the module docstring."""
    k = len(wins)
    if k == 0:
        return np.zeros(0)
    if k > 1 and prior > 0:  # ``prior`` virtual games per player, ties, spread over every other player
        virtual = np.full((k, k), prior / (k - 1) / 2)
        np.fill_diagonal(virtual, 0.0)
        wins = wins + virtual
    games = wins + wins.T
    won = wins.sum(axis=1)
    if k > 1 and np.any(won <= 0):
        raise ValueError("with prior=0 every player needs a win (or tie); use a prior > 0")
    p = np.ones(k)
    for _ in range(max_iter):
        new = won / (games / (p[:, None] + p[None, :])).sum(axis=1) if k > 1 else p
        new = new / math.exp(float(np.mean(np.log(new))))
        done = float(np.max(np.abs(new - p) / p)) < tol
        p = new
        if done:
            break
    return p


def elo(strengths: np.ndarray) -> np.ndarray:
    """Elo-like scores: 1000 at the geometric mean strength, 400 points per factor of 10."""
    logs = np.log10(strengths)
    return ELO_BASE + ELO_SCALE * (logs - logs.mean())


def _percentile_ci(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    lo, hi = np.percentile(samples, [(1 - confidence) / 2 * 100, (1 + confidence) / 2 * 100])
    return float(lo), float(hi)


def leaderboard(
    comparisons: Sequence[Comparison],
    *,
    prior: float = 1.0,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Standing]:
    """Standings, best score first (ties in score by name). Self-comparisons are ignored."""
    comps = [c for c in comparisons if c.a != c.b]
    players = sorted({c.a for c in comps} | {c.b for c in comps})
    if not players:
        return []
    wins = _tally(comps, players)
    scores = elo(fit_strengths(wins, prior=prior))
    strengths = 10 ** ((scores - ELO_BASE) / ELO_SCALE)
    cis: list[tuple[float, float] | None] = [None] * len(players)
    if resamples > 0 and len(comps) >= 2:
        rng = np.random.default_rng(seed)
        index = {p: i for i, p in enumerate(players)}
        pairs = np.array([[index[c.a], index[c.b]] for c in comps])
        credit = np.array([{"a": (1.0, 0.0), "b": (0.0, 1.0), "tie": (0.5, 0.5)}[c.outcome] for c in comps])
        draws = []
        for _ in range(resamples):
            pick = rng.integers(0, len(comps), len(comps))
            w = np.zeros((len(players), len(players)))
            np.add.at(w, (pairs[pick, 0], pairs[pick, 1]), credit[pick, 0])
            np.add.at(w, (pairs[pick, 1], pairs[pick, 0]), credit[pick, 1])
            try:
                draws.append(elo(fit_strengths(w, prior=prior, tol=1e-8)))
            except ValueError:  # prior=0 and a resample where someone never wins: no finite fit
                continue
        if len(draws) * 2 > resamples:
            table = np.array(draws)
            cis = [_percentile_ci(table[:, i], confidence) for i in range(len(players))]
    out = []
    for i, name in enumerate(players):
        won = sum(1 for c in comps if (c.a == name and c.outcome == "a") or (c.b == name and c.outcome == "b"))
        tied = sum(1 for c in comps if name in (c.a, c.b) and c.outcome == "tie")
        played = sum(1 for c in comps if name in (c.a, c.b))
        out.append(
            Standing(name, float(scores[i]), cis[i], float(strengths[i]), played, won, tied, played - won - tied)
        )
    return sorted(out, key=lambda s: (-round(s.score, 9), s.model))


__all__ = ["Comparison", "Standing", "elo", "fit_strengths", "leaderboard"]
