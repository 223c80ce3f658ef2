"""scripts/spsa.py: the SPSA updates find the optimum of a noisy game model, the tunables
are read from `pawnstorm uci --tune`, and a real run plays games, writes its state whole
and refuses to overwrite it."""

import importlib.util
import json
import math
import random
import subprocess
import sys

import pytest

from conftest import ROOT, required


@pytest.fixture(scope="module")
def spsa():
    required("chess")
    spec = importlib.util.spec_from_file_location("spsa", ROOT / "scripts" / "spsa.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["spsa"] = module
    spec.loader.exec_module(module)
    return module


def test_spsa_climbs_a_noisy_game_model_to_its_optimum(spsa):
    """Games between two settings won with probability sigmoid(strength gap), strength
    falling with the squared distance from an optimum away from the defaults: the
    iterations bring theta near it, from both sides."""
    params = [spsa.Param("MARGIN", 75, 30, 150, 6.0, 0.002),
              spsa.Param("DEPTH", 7, 3, 12, 1.0, 0.002)]
    optimum = {"MARGIN": 110.0, "DEPTH": 4.0}
    scale = {"MARGIN": 40.0, "DEPTH": 3.0}

    def strength(values):
        return -sum(((values[n] - optimum[n]) / scale[n]) ** 2 for n in values)

    games = random.Random(3)

    def play_pairs(plus, minus):
        p = 1 / (1 + math.exp(-(strength(plus) - strength(minus)) * 2))
        wins = sum(games.random() < p for _ in range(8))
        return 2 * wins - 8

    iterations = 1500
    schedule = spsa.Schedule(iterations)
    theta = {p.name: float(p.default) for p in params}
    rng = random.Random(1)
    for k in range(iterations):
        theta, _ = spsa.step(params, theta, k, schedule, rng, play_pairs)
        assert all(p.low <= theta[p.name] <= p.high for p in params)
    assert abs(theta["MARGIN"] - 110) < abs(75 - 110) / 3, theta
    assert abs(theta["DEPTH"] - 4) < abs(7 - 4) / 2, theta


def test_the_schedule_is_openbenchs(spsa):
    p = spsa.Param("X", 0, -100, 100, 10.0, 0.002)
    s = spsa.Schedule(1000)
    # c_k ends at c_end; a_k ends at r_end c_end^2, so r_k ends at r_end.
    assert s.c(p, 999) == pytest.approx(10.0)
    assert s.r(p, 999) == pytest.approx(0.002)
    assert s.c(p, 0) > s.c(p, 500) > s.c(p, 999)


def test_tunables_are_read_from_uci_tune(spsa, pawnstorm_bin):
    params = {p.name: p for p in spsa.read_tunables([str(pawnstorm_bin)])}
    assert params["RFP_MARGIN"].default == 75
    assert (params["LMR_DIVISOR"].low, params["LMR_DIVISOR"].high) == (120, 400)
    assert "Hash" not in params and "MultiPV" not in params


def test_a_short_run_plays_and_keeps_its_state(tmp_path, pawnstorm_bin, spsa):
    state = tmp_path / "spsa.json"
    command = [sys.executable, str(ROOT / "scripts" / "spsa.py"), "--engine", str(pawnstorm_bin),
               "--iterations", "2", "--pairs", "1", "--tc", "0.4+0.01",
               "--params", "RFP_MARGIN,lmr_base", "--state", str(state)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    saved = json.loads(state.read_text())
    assert saved["done"] == 2 and len(saved["results"]) == 2
    assert set(saved["theta"]) == {"RFP_MARGIN", "LMR_BASE"}
    assert all(r in (-2, -1, 0, 1, 2) for r in saved["results"])
    assert "final (rounded): RFP_MARGIN=" in done.stdout
    again = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert again.returncode != 0 and "--resume" in again.stderr
    resumed = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=60)
    assert resumed.returncode == 0 and "resuming at iteration 2" in resumed.stdout
    bad = subprocess.run(command[:-2] + ["--params", "NO_SUCH", "--state", str(tmp_path / "x")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "NO_SUCH".lower() in bad.stderr.lower()
