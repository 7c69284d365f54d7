"""Bradley–Terry strengths against cases worked out by hand, the Elo-like scale, ties as half wins,
the prior that keeps unbeaten players finite, and bootstrap CIs that repeat exactly for a seed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.agreement.bradley_terry import Comparison, elo, fit_strengths, leaderboard


def games(a: str, b: str, a_wins: int, b_wins: int, ties: int = 0) -> list[Comparison]:
    return [Comparison(a, b, "a")] * a_wins + [Comparison(a, b, "b")] * b_wins + [Comparison(a, b, "tie")] * ties


def by_model(standings):  # type: ignore[no-untyped-def]
    return {s.model: s for s in standings}


def test_two_players_strength_ratio_is_the_win_ratio() -> None:
    board = by_model(leaderboard(games("x", "y", 3, 1), prior=0, resamples=0))
    assert board["x"].strength / board["y"].strength == pytest.approx(3.0)
    assert board["x"].strength == pytest.approx(math.sqrt(3))  # geometric mean 1
    assert board["x"].score - board["y"].score == pytest.approx(400 * math.log10(3))
    assert board["x"].score + board["y"].score == pytest.approx(2000)
    assert (board["x"].wins, board["x"].losses, board["x"].comparisons, board["x"].win_rate) == (3, 1, 4, 0.75)


def test_ties_count_half_a_win_to_each_side() -> None:
    board = by_model(leaderboard(games("x", "y", 2, 1, ties=2), prior=0, resamples=0))
    assert board["x"].strength / board["y"].strength == pytest.approx(3 / 2)  # (2 + 1) / (1 + 1)
    assert board["x"].ties == board["y"].ties == 2
    assert board["x"].win_rate == pytest.approx(3 / 5) and board["y"].win_rate == pytest.approx(2 / 5)
    only_ties = by_model(leaderboard(games("x", "y", 0, 0, ties=3), prior=0, resamples=0))
    assert only_ties["x"].score == pytest.approx(1000) and only_ties["y"].score == pytest.approx(1000)


def test_transitive_three_players_recover_strengths_4_2_1() -> None:
    """With p = (4, 2, 1): x beats y 2 of 3, y beats z 2 of 3, x beats z 4 of 5 — each player's wins
    equal their expected wins, so these are the maximum-likelihood strengths."""
    comps = games("x", "y", 2, 1) + games("y", "z", 2, 1) + games("x", "z", 4, 1)
    standings = leaderboard(comps, prior=0, resamples=0)
    assert [s.model for s in standings] == ["x", "y", "z"]
    board = by_model(standings)
    assert [board[m].strength for m in "xyz"] == pytest.approx([2.0, 1.0, 0.5])  # geometric mean 1
    assert [board[m].score for m in "xyz"] == pytest.approx(
        [1000 + 400 * math.log10(2), 1000, 1000 - 400 * math.log10(2)]
    )


def test_prior_is_virtual_ties_and_keeps_an_unbeaten_player_finite() -> None:
    with pytest.raises(ValueError):
        leaderboard(games("x", "y", 3, 0), prior=0, resamples=0)
    board = by_model(leaderboard(games("x", "y", 3, 0), prior=1, resamples=0))
    assert board["x"].strength / board["y"].strength == pytest.approx(3.5 / 0.5)  # one virtual game, tied
    # disconnected comparisons still get finite scores, centred on 1000
    apart = leaderboard(games("x", "y", 2, 1) + games("u", "v", 1, 2))
    assert all(math.isfinite(s.score) for s in apart)
    assert np.mean([s.score for s in apart]) == pytest.approx(1000)


def test_fit_and_elo_on_a_wins_matrix() -> None:
    wins = np.array([[0.0, 3.0], [1.0, 0.0]])
    p = fit_strengths(wins, prior=0)
    assert p[0] / p[1] == pytest.approx(3.0)
    assert list(elo(np.array([10.0, 1.0]))) == pytest.approx([1200.0, 800.0])


def test_bootstrap_cis_repeat_for_a_seed_and_cover_the_score() -> None:
    comps = games("x", "y", 6, 3, ties=1) + games("y", "z", 5, 4) + games("x", "z", 7, 2, ties=2)
    first = leaderboard(comps, resamples=300, seed=7)
    again = leaderboard(comps, resamples=300, seed=7)
    other = leaderboard(comps, resamples=300, seed=8)
    assert [s.ci for s in first] == [s.ci for s in again]
    assert [s.ci for s in first] != [s.ci for s in other]
    for s in first:
        assert s.ci is not None and s.ci[0] <= s.score <= s.ci[1] and s.ci[0] < s.ci[1]
    assert leaderboard(comps, resamples=0)[0].ci is None


def test_self_comparisons_and_bad_outcomes() -> None:
    assert leaderboard([Comparison("x", "x", "a")]) == []
    with pytest.raises(ValueError):
        leaderboard([Comparison("x", "y", "left")])
    board = by_model(leaderboard(games("x", "y", 1, 1) + [Comparison("x", "x", "a")], resamples=0))
    assert board["x"].comparisons == 2
