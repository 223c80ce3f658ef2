"""scripts/match.py's SPRT and pentanomial statistics against published values.

The LLR values are those fastchess's test suite checks (tests/sprt_test.cpp), which were
taken from fishtest's and OpenBench's calculators for the same counts."""

import importlib.util
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def match():
    spec = importlib.util.spec_from_file_location("match", ROOT / "scripts" / "match.py")
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules.
    sys.modules["match"] = module
    spec.loader.exec_module(module)
    return module


# (LL, LD, WL + DD, WD, WW) pairs, elo0, elo1, model, published LLR
PENTANOMIAL = [
    ([365, 16618, 36029 + 200, 16974, 390], 0, 2, "normalized", 2.25),
    ([127, 4883, 10311 + 401, 5150, 104], -1.75, 0.25, "normalized", 3.01),
    ([223, 9863, 20279 + 1000, 10037, 246], 0.5, 2.5, "logistic", -3.07),
    ([871, 26175, 55003 + 980, 26678, 821], 0, 2, "logistic", -4.98),
]
# (L, D, W) games
TRINOMIAL = [
    ([36027, 68692, 36433], 0, 2, "normalized", 0.92),
    ([10650, 20431, 10871], -1.75, 0.25, "normalized", 2.30),
    ([21184, 40708, 21404], 0.5, 2.5, "logistic", -1.57),
    ([57030, 106593, 57433], 0, 2, "logistic", -2.59),
]


@pytest.mark.parametrize("counts, elo0, elo1, model, expected", PENTANOMIAL)
def test_pentanomial_llr_matches_published_values(match, counts, elo0, elo1, model, expected):
    sprt = match.Sprt(elo0, elo1, 0.05, 0.05, model)
    assert match.llr(counts, sprt) == pytest.approx(expected, abs=0.01)


@pytest.mark.parametrize("counts, elo0, elo1, model, expected", TRINOMIAL)
def test_trinomial_llr_matches_published_values(match, counts, elo0, elo1, model, expected):
    sprt = match.Sprt(elo0, elo1, 0.05, 0.05, model)
    assert match.llr(counts, sprt, scores=(0.0, 0.5, 1.0)) == pytest.approx(expected, abs=0.01)


def test_bounds_are_walds(match):
    sprt = match.parse_sprt("elo0=0 elo1=5 alpha=0.05 beta=0.05")
    assert sprt.lower == pytest.approx(-2.944, abs=1e-3)
    assert sprt.upper == pytest.approx(2.944, abs=1e-3)
    assert sprt.model == "normalized"


@pytest.mark.parametrize("text", ["elo0=5 elo1=0", "elo0=0 elo1=5 alpha=0", "elo1", "speed=3",
                                  "elo0=0 elo1=5 model=bayes"])
def test_bad_sprt_arguments_are_refused(match, text):
    with pytest.raises(match.argparse.ArgumentTypeError):
        match.parse_sprt(text)


def test_llr_moves_with_the_evidence(match):
    sprt = match.Sprt(0, 5)
    even = match.llr([10, 40, 100, 40, 10], sprt)
    better = match.llr([5, 30, 100, 50, 15], sprt)
    worse = match.llr([15, 50, 100, 30, 5], sprt)
    assert worse < even < better
    assert better > 0 > worse


def game(match, number, score):
    a_is_white = (number - 1) % 2 == 0
    if score == 0.5:
        result = "1/2-1/2"
    else:
        result = "1-0" if (score == 1.0) == a_is_white else "0-1"
    return match.GameResult(number, "x", a_is_white, result, "checkmate")


def test_pairs_are_games_of_one_opening(match):
    # Rounds 1+2 (win, draw: 3/2), 3+4 (loss, loss: 0), 5+6 (win, loss: 1); 7 has no partner.
    scores = {1: 1.0, 2: 0.5, 3: 0.0, 4: 0.0, 5: 1.0, 6: 0.0, 7: 1.0}
    results = [game(match, n, s) for n, s in scores.items()]
    assert [r.score_a for r in results] == list(scores.values())
    assert match.pentanomial(results) == [1, 0, 1, 1, 0]


def test_pentanomial_elo_and_interval(match):
    counts = [10, 40, 100, 40, 10]
    elo, low, high, nelo, nlow, nhigh = match.pair_elo(counts)
    assert elo == pytest.approx(0.0, abs=1e-9) and nelo == pytest.approx(0.0, abs=1e-9)
    assert low < 0 < high and nlow < 0 < nhigh
    # Pair variance (10·¼ + 40·¹⁄₁₆ + 40·¹⁄₁₆ + 10·¼) / 200 = 0.05: half-width 1.96·sqrt(0.05 / 200).
    half = 1.959964 * math.sqrt(0.05 / 200)
    assert high == pytest.approx(match.elo_from_score(0.5 + half), rel=1e-6)
    assert nhigh == pytest.approx(half / math.sqrt(2 * 0.05) * 800 / math.log(10), rel=1e-6)
    assert match.pair_elo([0, 0, 3, 0, 0]) is None


def test_the_decision_stands_where_the_bound_was_crossed(match):
    sprt = match.parse_sprt("elo0=0 elo1=10")
    # 80 pairs scored 3/2, 20 of 2, 10 of 1 and 10 of 1/2: above the upper bound.
    scores = [1.0, 0.5] * 80 + [1.0, 1.0] * 20 + [0.5, 0.5] * 10 + [0.0, 0.5] * 10
    results = [game(match, n + 1, s) for n, s in enumerate(scores)]
    final = match.llr(match.pentanomial(results), sprt)
    assert final > sprt.upper
    crossed_high = match.summary(results, sprt, crossed=(len(results) - 2, final))
    assert "H1 accepted (A is better by elo1) at 238 games" in crossed_high
    assert "the 2 games under way then finished after it" in crossed_high
    # The first 4 games alone decide nothing; crossed after 2 of them, they do.
    assert "no decision" in match.summary(results[:4], sprt)
    assert "H1 accepted" in match.summary(results[:4], sprt, crossed=(2, sprt.upper + 0.01))
    assert "H0 accepted" in match.summary(results[:4], sprt, crossed=(2, sprt.lower - 0.01))
