#!/usr/bin/env python3
"""SPSA tuning of the search's constants, as OpenBench's SPSA does it.

The engine started as `ENGINE uci --tune` lists its tunables as UCI spin options
(`src/engine/search/tunables.rs`). Each iteration k draws a random sign for every
tunable, plays game pairs (one opening, colours swapped) between the engine at theta + c_k
and at theta - c_k, and moves theta by r_k c_k (wins - losses of the plus side) in the
drawn directions. The schedules are OpenBench's (alpha 0.602, gamma 0.101, A a tenth of
the iterations), set by each tunable's c_end (the perturbation at the last iteration,
default a twentieth of its range) and r_end (the learning rate at the last one):

    c_k = c_end N^gamma / (k + 1)^gamma
    a_k = r_end c_end^2 (A + N)^alpha / (A + k + 1)^alpha,   r_k = a_k / c_k^2

    target/match-venv/bin/python scripts/spsa.py --engine target/release/pawnstorm \\
        --iterations 2000 --tc 4+0.04 --state target/spsa.json [--params RFP_MARGIN,...]

The state (theta, the iteration, every iteration's result) is written whole after each
iteration; the same command with --resume goes on from it. The values found are only
candidates: each is kept after an SPRT at 10 s + 0.1 s against the defaults (scripts/
match.py --sprt), as docs/ENGINE.md says.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import math
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALPHA, GAMMA, A_RATIO = 0.602, 0.101, 0.1


def load_match():
    """scripts/match.py as a module: its game loop, clocks and openings."""
    spec = importlib.util.spec_from_file_location("match", ROOT / "scripts" / "match.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["match"] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


@dataclass
class Param:
    name: str
    default: int
    low: int
    high: int
    c_end: float
    r_end: float


def read_tunables(engine: list[str]) -> list[Param]:
    """The spin options `ENGINE uci --tune` lists that `ENGINE uci` does not."""

    def spins(args):
        out = subprocess.run(engine + args, input="uci\nquit\n", capture_output=True,
                             text=True, timeout=30, check=True).stdout
        found = {}
        for line in out.splitlines():
            words = line.split()
            if words[:2] == ["option", "name"] and "spin" in words:
                at = words.index("type")
                name = " ".join(words[2:at])
                value = dict(zip(words[at + 2::2], words[at + 3::2]))
                found[name] = (int(value["default"]), int(value["min"]), int(value["max"]))
        return found

    tuned, plain = spins(["uci", "--tune"]), spins(["uci"])
    return [Param(name, d, lo, hi, max(1.0, (hi - lo) / 20), 0.002)
            for name, (d, lo, hi) in tuned.items() if name not in plain]


class Schedule:
    """OpenBench's gains for N iterations."""

    def __init__(self, iterations: int):
        self.n = iterations
        self.big_a = A_RATIO * iterations

    def c(self, p: Param, k: int) -> float:
        return p.c_end * self.n ** GAMMA / (k + 1) ** GAMMA

    def r(self, p: Param, k: int) -> float:
        a_end = p.r_end * p.c_end ** 2
        a = a_end * (self.big_a + self.n) ** ALPHA
        return a / (self.big_a + k + 1) ** ALPHA / self.c(p, k) ** 2


def clamp(p: Param, value: float) -> float:
    return min(max(value, p.low), p.high)


def step(params, theta, k, schedule, rng, play_pairs):
    """One SPSA iteration: the perturbed pair of settings, the games, the update. Returns
    the new theta and the plus side's wins - losses. `play_pairs(plus, minus)` plays the
    iteration's game pairs between the two settings (dicts of rounded values) and returns
    the plus side's wins - losses."""
    delta = {p.name: rng.choice((-1, 1)) for p in params}
    plus = {p.name: round(clamp(p, theta[p.name] + schedule.c(p, k) * delta[p.name]))
            for p in params}
    minus = {p.name: round(clamp(p, theta[p.name] - schedule.c(p, k) * delta[p.name]))
             for p in params}
    result = play_pairs(plus, minus)
    new = {p.name: clamp(p, theta[p.name] + schedule.r(p, k) * schedule.c(p, k) * result
                         * delta[p.name]) for p in params}
    return new, result


def write_state(path: Path, state: dict) -> None:
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(json.dumps(state, indent=1))
    os.replace(temp, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--engine", default=str(ROOT / "target" / "release" / "pawnstorm"))
    parser.add_argument("--iterations", type=int, default=1000)
    # Every game of an iteration plays at once, so two games a pair: more pairs than half
    # the cores would split a core between two games and halve each side's search.
    parser.add_argument("--pairs", type=int, default=max(1, (os.cpu_count() or 2) // 2),
                        help="game pairs an iteration, all its games at once (one a core)")
    parser.add_argument("--tc", default="4+0.04", metavar="BASE+INC")
    parser.add_argument("--margin-ms", type=float, default=100.0)
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a UCI option for both sides (repeatable)")
    parser.add_argument("--params", default=None,
                        help="comma-separated tunables to tune (default: all)")
    parser.add_argument("--r-end", type=float, default=0.002)
    parser.add_argument("--c-end-share", type=float, default=0.05,
                        help="c_end as a share of each tunable's range")
    parser.add_argument("--openings", type=Path, default=ROOT / "fixtures" / "openings")
    parser.add_argument("--state", type=Path, default=ROOT / "target" / "spsa.json")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    match = load_match()
    engine = [args.engine]
    params = read_tunables(engine)
    if not params:
        sys.exit(f"{args.engine}: `uci --tune` lists no tunables")
    if args.params:
        wanted = {n.strip().lower() for n in args.params.split(",")}
        unknown = wanted - {p.name.lower() for p in params}
        if unknown:
            sys.exit(f"no tunables named {', '.join(sorted(unknown))}")
        params = [p for p in params if p.name.lower() in wanted]
    for p in params:
        p.c_end = max(1.0, (p.high - p.low) * args.c_end_share)
        p.r_end = args.r_end
    base, inc = match.parse_tc(args.tc)
    openings = match.read_openings(args.openings)
    if not openings:
        sys.exit(f"{args.openings}: no openings")
    common = dict(match.parse_option(o) for o in args.option)

    if args.resume and args.state.exists():
        state = json.loads(args.state.read_text())
        if state["iterations"] != args.iterations:
            sys.exit(f"{args.state}: a run of {state['iterations']} iterations, not {args.iterations}")
        print(f"resuming at iteration {state['done']} from {args.state}", flush=True)
    else:
        if args.state.exists() and not args.resume:
            sys.exit(f"{args.state} exists: --resume to go on, or another --state")
        state = {"iterations": args.iterations, "done": 0, "seed": args.seed,
                 "theta": {p.name: float(p.default) for p in params}, "results": []}
    schedule = Schedule(args.iterations)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2 * args.pairs)

    def play_pairs(plus, minus, k):
        specs = {"A": match.EngineSpec("A", engine + ["uci", "--tune"], {**common, **plus}),
                 "B": match.EngineSpec("B", engine + ["uci", "--tune"], {**common, **minus})}
        rng = random.Random(args.seed * 1_000_003 + k)
        jobs = []
        for pair in range(args.pairs):
            opening = rng.choice(openings)
            for a_white in (True, False):
                jobs.append(pool.submit(match.play_game, 2 * pair + a_white, opening, a_white,
                                        specs, base, inc, args.margin_ms / 1000.0, args.tc))
        games = [j.result() for j in jobs]
        faults = [g.termination for g in games if g.loser_fault]
        if faults:
            print(f"  iteration {k}: {'; '.join(faults)}", file=sys.stderr, flush=True)
        return sum(g.score_a for g in games) * 2 - len(games)

    started = time.monotonic()
    while state["done"] < args.iterations:
        k = state["done"]
        rng = random.Random(args.seed * 7_919 + k)
        theta, result = step(params, state["theta"], k, schedule, rng,
                             lambda plus, minus: play_pairs(plus, minus, k))
        state["theta"], state["done"] = theta, k + 1
        state["results"].append(result)
        write_state(args.state, state)
        elapsed = time.monotonic() - started
        shown = ", ".join(f"{n} {v:.1f}" for n, v in theta.items())
        print(f"iteration {k + 1}/{args.iterations}: {result:+g}, {elapsed:.0f} s; {shown}",
              flush=True)
    print("final (rounded): " + " ".join(f"{n}={round(v)}" for n, v in state["theta"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
