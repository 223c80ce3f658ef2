#!/usr/bin/env python3
"""Plays a match between two UCI engines and reports the score and the Elo difference.

Engine A (default: pawnstorm's release build, started with no arguments, which speaks
UCI) plays engine B (default: Stockfish, weakened with --elo) from a file of balanced
openings, each opening twice with colours swapped, with clocks this script keeps itself.

    scripts/setup.sh                      # once: virtualenv with python-chess, Stockfish
    cargo build --release
    target/match-venv/bin/python scripts/match.py --games 40 --elo 1500 --tc 10+0.1

Rules:
- The game ends as python-chess's rules say: checkmate, stalemate, insufficient
  material, threefold repetition and the fifty-move rule (both claimed at once, as
  tournament managers adjudicate them), and the 75-move and fivefold rules.
- Each side has a clock: base seconds, plus the increment after each of its moves. The
  time a move takes is measured around the engine call (sending the position, `go`,
  waiting for `bestmove`), so it includes the pipe and the Python overhead; a side loses
  on time only when its clock goes below -MARGIN (--margin-ms, default 100 ms), so that
  this overhead does not decide games. An engine that has not answered by its clock plus
  the margin plus one second is stopped and loses on time.
- An illegal or unparsable move, or no move in a position that has one, loses; so does an
  engine that crashes or fails to start. Each is counted and written into the PGN.
"""

from __future__ import annotations

import argparse
import faulthandler
import signal
import asyncio
import concurrent.futures
import math
import os
import re
import shlex
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import chess
    import chess.engine
    import chess.pgn
except ImportError:
    sys.exit("python-chess is missing: run scripts/setup.sh and use target/match-venv/bin/python")

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ENGINE_A = str(ROOT / "target" / "release" / "pawnstorm")
DEFAULT_ENGINE_B = "/usr/games/stockfish"
DEFAULT_OPENINGS = ROOT / "fixtures" / "openings"
# Grace beyond the clock (and the margin) before an engine that does not answer is stopped.
HANG_GRACE = 1.0
# With --nodes there is no clock: a move that takes longer than this is a hang.
NODES_HANG_SECONDS = 60.0


@dataclass
class Opening:
    name: str
    board: chess.Board


@dataclass
class EngineSpec:
    label: str
    command: list[str]
    options: dict[str, str]


@dataclass
class GameResult:
    number: int
    opening: str
    a_is_white: bool
    result: str  # PGN result, White's view
    termination: str  # why the game ended
    loser_fault: str | None = None  # "time", "illegal", "crash" for the side that lost by it
    fault_side: str | None = None  # "A" or "B"
    plies: int = 0
    pgn: str = ""

    @property
    def score_a(self) -> float:
        if self.result == "1/2-1/2":
            return 0.5
        white_won = self.result == "1-0"
        return 1.0 if white_won == self.a_is_white else 0.0


@dataclass
class Tally:
    results: list[GameResult] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def parse_tc(text: str) -> tuple[float, float]:
    base, _, inc = text.partition("+")
    try:
        return float(base), float(inc or 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time control like 10+0.1")


def parse_option(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE")
    return name.strip(), value.strip()


def read_openings(path: Path) -> list[Opening]:
    """EPD or FEN lines (blank lines and # comments skipped), or PGN games (the position at
    the end of each game's main line); a directory reads every file in it, sorted."""
    if path.is_dir():
        openings = []
        for child in sorted(p for p in path.iterdir() if p.is_file()):
            openings.extend(read_openings(child))
        return openings
    if path.suffix.lower() == ".pgn":
        openings = []
        with open(path, encoding="utf-8", errors="replace") as f:
            while (game := chess.pgn.read_game(f)) is not None:
                board = game.end().board()
                name = game.headers.get("Opening") or f"{path.name}#{len(openings) + 1}"
                openings.append(Opening(name, board))
        return openings
    openings = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split()
            try:
                # Six fields with numeric clocks is a FEN; anything else is read as EPD.
                if len(fields) >= 6 and fields[4].isdigit() and fields[5].isdigit():
                    board = chess.Board(" ".join(fields[:6]))
                    name = f"{path.name}:{number}"
                else:
                    board = chess.Board()
                    ops = board.set_epd(line)
                    name = str(ops.get("id") or f"{path.name}:{number}")
            except ValueError as e:
                sys.exit(f"{path}:{number}: not a FEN or EPD position: {e}")
            openings.append(Opening(name, board))
    return openings


def start_engine(spec: EngineSpec) -> chess.engine.SimpleEngine:
    engine = chess.engine.SimpleEngine.popen_uci(spec.command, stderr=None)
    if spec.options:
        engine.configure(spec.options)
    return engine


def stop_engine(engine: chess.engine.SimpleEngine | None) -> None:
    if engine is None:
        return
    try:
        engine.quit()
    except Exception:
        pass
    try:
        engine.close()
    except Exception:
        pass


def engine_name(engine: chess.engine.SimpleEngine, spec: EngineSpec) -> str:
    # Read once at start: a crashed engine's `id` raises.
    return engine.id.get("name") or Path(spec.command[0]).name


def play_move(engine, board, limit, deadline):
    """`engine.play` with a deadline: python-chess sets none for clock-based limits, and a
    hung engine must not hang the match."""
    coro = asyncio.wait_for(engine.protocol.play(board, limit), deadline)
    future = asyncio.run_coroutine_threadsafe(coro, engine.protocol.loop)
    return future.result()


def play_game(
    number: int,
    opening: Opening,
    a_is_white: bool,
    specs: dict[str, EngineSpec],
    base: float,
    inc: float,
    margin: float,
    tc_text: str,
    nodes: int | None = None,
) -> GameResult:
    white_label, black_label = ("A", "B") if a_is_white else ("B", "A")
    engines: dict[str, chess.engine.SimpleEngine | None] = {"A": None, "B": None}
    names = {label: Path(spec.command[0]).name for label, spec in specs.items()}
    board = opening.board.copy(stack=False)
    result = GameResult(number, opening.name, a_is_white, "*", "unterminated")

    def forfeit(label: str, fault: str, termination: str) -> None:
        result.result = "0-1" if label == white_label else "1-0"
        result.loser_fault, result.fault_side = fault, label
        result.termination = termination

    try:
        for label in ("A", "B"):
            try:
                engines[label] = start_engine(specs[label])
                names[label] = engine_name(engines[label], specs[label])
            except Exception as e:
                forfeit(label, "crash", f"engine {label} failed to start: {e}")
                return result
        clocks = {chess.WHITE: base, chess.BLACK: base}
        labels = {chess.WHITE: white_label, chess.BLACK: black_label}
        while True:
            outcome = board.outcome(claim_draw=True)
            if outcome is not None:
                result.result = outcome.result()
                result.termination = outcome.termination.name.lower().replace("_", " ")
                break
            side = board.turn
            label = labels[side]
            engine = engines[label]
            if nodes is not None:
                # No clock: each move searches `nodes` nodes, as datagen's do.
                limit = chess.engine.Limit(nodes=nodes)
                deadline = NODES_HANG_SECONDS
            else:
                limit = chess.engine.Limit(
                    white_clock=max(clocks[chess.WHITE], 0.001),
                    black_clock=max(clocks[chess.BLACK], 0.001),
                    white_inc=inc,
                    black_inc=inc,
                )
                deadline = clocks[side] + margin + HANG_GRACE
            started = time.monotonic()
            try:
                played = play_move(engine, board, limit, deadline)
            except TimeoutError:
                forfeit(label, "time", f"{label} did not answer in time")
                break
            except chess.engine.EngineTerminatedError as e:
                forfeit(label, "crash", f"{label} crashed: {e}")
                break
            except chess.engine.EngineError as e:
                forfeit(label, "illegal", f"{label} sent an illegal or unreadable move: {e}")
                break
            elapsed = time.monotonic() - started
            clocks[side] -= elapsed
            if nodes is None and clocks[side] < -margin:
                forfeit(label, "time", f"{label} lost on time ({-clocks[side]:.3f} s over)")
                break
            clocks[side] += inc
            move = played.move
            if move is None or move not in board.legal_moves:
                forfeit(label, "illegal", f"{label} sent no legal move ({move})")
                break
            board.push(move)
    finally:
        for engine in engines.values():
            stop_engine(engine)
        result.plies = len(board.move_stack)
        game = chess.pgn.Game.from_board(board)
        game.headers["Event"] = "pawnstorm match"
        game.headers["Date"] = time.strftime("%Y.%m.%d")
        game.headers["Round"] = str(number)
        game.headers["White"] = names[white_label]
        game.headers["Black"] = names[black_label]
        game.headers["Result"] = result.result
        game.headers["TimeControl"] = "-" if nodes is not None else tc_text
        game.headers["Opening"] = opening.name
        game.headers["Termination"] = result.termination
        result.pgn = str(game)
    return result


def fault_from_termination(termination: str) -> tuple[str | None, str | None]:
    """Inverts the texts `forfeit` writes, so a resumed match still counts time losses."""
    patterns = [
        (r"^engine (A|B) failed to start", "crash"),
        (r"^(A|B) crashed", "crash"),
        (r"^(A|B) (did not answer in time|lost on time)", "time"),
        (r"^(A|B) (sent an illegal|sent no legal move)", "illegal"),
    ]
    for pattern, fault in patterns:
        m = re.match(pattern, termination)
        if m:
            return fault, m.group(1)
    return None, None


def read_played_games(path: Path) -> list[GameResult]:
    results = []
    with open(path, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            headers = game.headers
            try:
                number = int(headers.get("Round", ""))
            except ValueError:
                sys.exit(f"{path}: game {len(results) + 1} has no numeric Round header; "
                         "cannot resume from it")
            termination = headers.get("Termination", "")
            fault, side = fault_from_termination(termination)
            plies = sum(1 for _ in game.mainline_moves())
            results.append(GameResult(
                number, headers.get("Opening", "?"), (number - 1) % 2 == 0,
                headers.get("Result", "*"), termination, fault, side, plies, str(game),
            ))
    return results


def elo_from_score(score: float) -> float:
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


# --- SPRT on game pairs -----------------------------------------------------------------
#
# The generalised SPRT of fishtest, OpenBench and fastchess, after Michel Van den Bergh,
# "Comments on Normalized Elo" (https://www.cantate.be/Fishtest/normalized_elo_practical.pdf):
# the outcomes of the two games of one opening (colours swapped) form a pair scored 0, 1/4,
# 1/2, 3/4 or 1 (the pentanomial model: the two games are correlated through the opening,
# which the trinomial model ignores and so overstates the variance). The log-likelihood
# ratio compares the most likely pair distributions (given the observed frequencies) whose
# expected score is that of elo0 and of elo1.

PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
NELO_PER_T = 800.0 / math.log(10.0)  # normalised Elo = this × t, t = (score - 1/2) / sigma


@dataclass
class Sprt:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"  # or "logistic": fishtest and fastchess default to normalized

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)


def parse_sprt(text: str) -> Sprt:
    """`elo0=0 elo1=5 alpha=0.05 beta=0.05 [model=normalized|logistic]`, as fastchess takes it."""
    values: dict[str, str] = {}
    for item in text.replace(",", " ").split():
        key, sep, value = item.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"{item!r} in --sprt is not KEY=VALUE")
        values[key.strip().lower()] = value.strip()
    unknown = set(values) - {"elo0", "elo1", "alpha", "beta", "model"}
    if unknown:
        raise argparse.ArgumentTypeError(f"--sprt: unknown {', '.join(sorted(unknown))}")
    try:
        sprt = Sprt(
            float(values.get("elo0", 0.0)), float(values.get("elo1", 5.0)),
            float(values.get("alpha", 0.05)), float(values.get("beta", 0.05)),
            values.get("model", "normalized"),
        )
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"--sprt {text!r}: {e}")
    if sprt.model not in ("normalized", "logistic"):
        raise argparse.ArgumentTypeError("--sprt model must be normalized or logistic")
    if not sprt.elo0 < sprt.elo1:
        raise argparse.ArgumentTypeError("--sprt needs elo0 < elo1")
    if not (0 < sprt.alpha < 1 and 0 < sprt.beta < 1 and sprt.alpha + sprt.beta < 1):
        raise argparse.ArgumentTypeError("--sprt needs 0 < alpha, beta and alpha + beta < 1")
    return sprt


def pentanomial(results: list[GameResult]) -> list[int]:
    """Counts of pairs scoring 0, 1/2, 1, 3/2, 2 for A. Games 2k-1 and 2k (Round numbers)
    play one opening with colours swapped; a pair whose other game is missing is left out."""
    by_number = {r.number: r.score_a for r in results}
    counts = [0, 0, 0, 0, 0]
    for number, first in by_number.items():
        if number % 2 == 1 and number + 1 in by_number:
            counts[round(2 * (first + by_number[number + 1]))] += 1
    return counts


def _solve_increasing(f, low: float, high: float) -> float:
    """The root of f, increasing on (low, high) from negative to positive, by bisection
    (the bounds are poles of f, so they are never evaluated)."""
    for _ in range(200):
        mid = (low + high) / 2.0
        if mid in (low, high):
            break
        if f(mid) < 0.0:
            low = mid
        else:
            high = mid
    return (low + high) / 2.0


def _mle_with_mean(freqs: list[float], scores: tuple[float, ...], s: float) -> list[float]:
    # Proposition 1.1 of the paper: p_i = f_i / (1 + theta (a_i - s)), theta the root of
    # sum f_i (a_i - s) / (1 + theta (a_i - s)) = 0, which decreases in theta.
    def g(theta: float) -> float:
        return -sum(f * (a - s) / (1.0 + theta * (a - s)) for f, a in zip(freqs, scores))

    theta = _solve_increasing(g, -1.0 / (scores[-1] - s), -1.0 / (scores[0] - s))
    return [f / (1.0 + theta * (a - s)) for f, a in zip(freqs, scores)]


def _mle_with_t(freqs: list[float], scores: tuple[float, ...], t: float) -> list[float]:
    # Section 4.1 of the paper: the distribution nearest the observed one whose
    # (mean - 1/2) / sigma is t, by fixed-point iteration from the uniform distribution.
    p = [1.0 / len(scores)] * len(scores)
    for _ in range(1000):
        mu = sum(pi * a for pi, a in zip(p, scores))
        sigma = math.sqrt(sum(pi * (a - mu) ** 2 for pi, a in zip(p, scores)))
        phi = [a - 0.5 - 0.5 * t * sigma * (1.0 + ((a - mu) / sigma) ** 2) for a in scores]

        def g(theta: float) -> float:
            return -sum(f * x / (1.0 + theta * x) for f, x in zip(freqs, phi))

        theta = _solve_increasing(g, -1.0 / max(phi), -1.0 / min(phi))
        new = [f / (1.0 + theta * x) for f, x in zip(freqs, phi)]
        change = max(abs(a - b) for a, b in zip(new, p))
        p = new
        if change < 1e-9:
            break
    return p


def llr(counts: list[int], sprt: Sprt, scores: tuple[float, ...] = PAIR_SCORES) -> float:
    """Log-likelihood ratio of elo1 against elo0 for outcome counts (pairs by default;
    trinomial W/D/L counts, lowest score first, with scores (0, 0.5, 1))."""
    if sum(counts) == 0:
        return 0.0
    # An empty cell would pin the estimate to the boundary; fishtest and fastchess put 1e-3.
    regular = [c if c > 0 else 1e-3 for c in counts]
    total = sum(regular)
    freqs = [c / total for c in regular]
    if sprt.model == "logistic":
        p0 = _mle_with_mean(freqs, scores, score_from_elo(sprt.elo0))
        p1 = _mle_with_mean(freqs, scores, score_from_elo(sprt.elo1))
    else:
        # t per pair is sqrt(2) times t per game, the scale normalised Elo is defined on.
        per_pair = math.sqrt(2.0) if len(scores) == 5 else 1.0
        p0 = _mle_with_t(freqs, scores, per_pair * sprt.elo0 / NELO_PER_T)
        p1 = _mle_with_t(freqs, scores, per_pair * sprt.elo1 / NELO_PER_T)
    return total * sum(f * (math.log(b) - math.log(a)) for f, a, b in zip(freqs, p0, p1))


def score_from_elo(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def pair_elo(counts: list[int]) -> tuple[float, float, float, float, float, float] | None:
    """Elo and normalised Elo with their 95% intervals from pair counts:
    (elo, low, high, nelo, nelo_low, nelo_high), or None with fewer than two pairs or no
    spread."""
    pairs = sum(counts)
    if pairs < 2:
        return None
    mu = sum(c * a for c, a in zip(counts, PAIR_SCORES)) / pairs
    var = sum(c * (a - mu) ** 2 for c, a in zip(counts, PAIR_SCORES)) / pairs
    if var <= 0.0:
        return None
    half = 1.959964 * math.sqrt(var / pairs)
    nelo_per_score = NELO_PER_T / math.sqrt(2.0 * var)
    return (
        elo_from_score(mu), elo_from_score(mu - half), elo_from_score(mu + half),
        (mu - 0.5) * nelo_per_score, (mu - half - 0.5) * nelo_per_score,
        (mu + half - 0.5) * nelo_per_score,
    )


def summary(results: list[GameResult], sprt: Sprt | None = None,
            crossed: tuple[int, float] | None = None) -> str:
    """The match's summary lines. `crossed`: the games played and the LLR when the SPRT's
    bound was crossed; the decision is taken there (as fishtest and fastchess stop there),
    whatever the games under way then move the LLR to."""
    n = len(results)
    if n == 0:
        return "no games played"
    scores = [r.score_a for r in results]
    wins = sum(1 for s in scores if s == 1.0)
    draws = sum(1 for s in scores if s == 0.5)
    losses = n - wins - draws
    score = sum(scores) / n
    sd = math.sqrt(sum((s - score) ** 2 for s in scores) / n)
    stderr = sd / math.sqrt(n)
    low, high = score - 1.96 * stderr, score + 1.96 * stderr
    elo, elo_low, elo_high = elo_from_score(score), elo_from_score(low), elo_from_score(high)

    def faults(kind: str, side: str) -> int:
        return sum(1 for r in results if r.loser_fault == kind and r.fault_side == side)

    lines = [
        f"games {n}: A +{wins} ={draws} -{losses} (W/D/L from A's view), score {100 * score:.1f}%",
        f"Elo difference (A - B): {elo:+.1f}, 95% interval [{elo_low:+.1f}, {elo_high:+.1f}]"
        + (f" (+/- {(elo_high - elo_low) / 2:.1f})" if math.isfinite(elo_high - elo_low) else
           " (a score of 0% or 100%, or bounds past them, has no finite Elo)"),
    ]
    counts = pentanomial(results)
    if sum(counts):
        lines.append(
            f"pairs {sum(counts)} (pentanomial, A's pair score 0, 1/2, 1, 3/2, 2): {counts}")
    estimate = pair_elo(counts)
    if estimate:
        elo_p, low_p, high_p, nelo, nlow, nhigh = estimate
        lines.append(
            f"pentanomial Elo {elo_p:+.1f} [{low_p:+.1f}, {high_p:+.1f}], "
            f"normalised Elo {nelo:+.1f} [{nlow:+.1f}, {nhigh:+.1f}] (95%)")
    if sprt is not None:
        value = llr(counts, sprt)
        decisive = crossed[1] if crossed is not None else value
        verdict = ("H1 accepted (A is better by elo1)" if decisive >= sprt.upper else
                   "H0 accepted (A is not better by elo1)" if decisive <= sprt.lower else
                   "no decision")
        if crossed is not None:
            verdict += f" at {crossed[0]} games (LLR {crossed[1]:.2f})"
            after = n - crossed[0]
            if after > 0:
                verdict += (f"; the {after} game{'s' if after > 1 else ''} under way then "
                            "finished after it")
        lines.append(
            f"SPRT [{sprt.elo0:g}, {sprt.elo1:g}] {sprt.model} alpha {sprt.alpha:g} "
            f"beta {sprt.beta:g}: LLR {value:.2f} ({sprt.lower:.2f}, {sprt.upper:.2f}), {verdict}")
    lines += [
        "losses on time: A {} B {}; illegal moves: A {} B {}; crashes: A {} B {}".format(
            faults("time", "A"), faults("time", "B"),
            faults("illegal", "A"), faults("illegal", "B"),
            faults("crash", "A"), faults("crash", "B"),
        ),
    ]
    return "\n".join(lines)


def main() -> int:
    # `kill -USR1 PID` prints every thread's stack: the way to see where a match hangs.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    parser = argparse.ArgumentParser(
        description="Play a match between two UCI engines (A vs B) and report the Elo difference.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--engine-a", default=DEFAULT_ENGINE_A, help="command of engine A")
    parser.add_argument("--engine-b", default=DEFAULT_ENGINE_B, help="command of engine B")
    parser.add_argument("--option-a", action="append", default=[], type=parse_option,
                        metavar="NAME=VALUE", help="UCI option for A (repeatable)")
    parser.add_argument("--option-b", action="append", default=[], type=parse_option,
                        metavar="NAME=VALUE", help="UCI option for B (repeatable)")
    parser.add_argument("--elo", type=int, default=None,
                        help="weaken B: UCI_LimitStrength true, UCI_Elo N (Stockfish: 1320..3190)")
    parser.add_argument("--openings", type=Path, default=DEFAULT_OPENINGS,
                        help="EPD/FEN lines or PGN games, or a directory of such files")
    parser.add_argument("--games", type=int, default=None,
                        help="games to play (default: two per opening)")
    parser.add_argument("--concurrency", type=int, default=2, help="games played at once")
    parser.add_argument("--tc", type=parse_tc, default=(10.0, 0.1), metavar="BASE+INC",
                        help="seconds per game plus seconds added per move")
    parser.add_argument("--nodes", type=int, default=None, metavar="N",
                        help="no clock: every move searches N nodes (UCI go nodes N), as "
                             "datagen's games do; --tc is then ignored")
    parser.add_argument("--margin-ms", type=float, default=100.0,
                        help="overrun of its clock a side is allowed before it loses on time")
    parser.add_argument("--pgn", type=Path, default=None, help="write every game to this PGN file")
    parser.add_argument("--resume", action="store_true",
                        help="keep the games already in --pgn, count them, and play only the rest")
    parser.add_argument("--sprt", type=parse_sprt, default=None,
                        metavar="'elo0=0 elo1=5 alpha=0.05 beta=0.05'",
                        help="stop as soon as the SPRT on game pairs accepts H0 or H1 (or at "
                             "--games); model=logistic for logistic Elo bounds (default normalized)")
    args = parser.parse_args()

    specs = {
        "A": EngineSpec("A", shlex.split(args.engine_a), dict(args.option_a)),
        "B": EngineSpec("B", shlex.split(args.engine_b), dict(args.option_b)),
    }
    if args.elo is not None:
        specs["B"].options.setdefault("UCI_LimitStrength", "true")
        specs["B"].options.setdefault("UCI_Elo", str(args.elo))
    for spec in specs.values():
        if not (os.access(spec.command[0], os.X_OK) or shutil.which(spec.command[0])):
            hint = " (build it: cargo build --release)" if spec.command[0] == DEFAULT_ENGINE_A else ""
            hint = hint or " (install it: scripts/setup.sh)"
            sys.exit(f"engine {spec.label}: {spec.command[0]} is not an executable{hint}")

    if args.resume and args.pgn is None:
        sys.exit("--resume needs --pgn: the games already played are read from it")

    openings = read_openings(args.openings)
    if not openings:
        sys.exit(f"{args.openings}: no openings")
    games = args.games if args.games is not None else 2 * len(openings)
    base, inc = args.tc
    tc_text = f"{base:g}+{inc:g}"
    if args.nodes is not None:
        if args.nodes < 1:
            sys.exit(f"--nodes {args.nodes}: must be at least 1")
        tc_text = f"{args.nodes} nodes a move"
    margin = args.margin_ms / 1000.0
    print(
        f"A: {' '.join(specs['A'].command)} {specs['A'].options or ''}\n"
        f"B: {' '.join(specs['B'].command)} {specs['B'].options or ''}\n"
        f"{games} games, tc {tc_text}, {len(openings)} openings from {args.openings}, "
        f"concurrency {args.concurrency}",
        flush=True,
    )

    tally = Tally()
    played: set[int] = set()
    if args.resume and args.pgn.exists():
        tally.results = read_played_games(args.pgn)
        played = {r.number for r in tally.results}
        print(f"resuming: {len(played)} games already in {args.pgn}", flush=True)
    pgn_mode = "a" if args.resume else "w"
    pgn_file = open(args.pgn, pgn_mode, encoding="utf-8") if args.pgn else None

    def run(number: int) -> GameResult:
        # Game 2k and 2k+1 play opening k with colours swapped.
        opening = openings[(number // 2) % len(openings)]
        a_is_white = number % 2 == 0
        return play_game(number + 1, opening, a_is_white, specs, base, inc, margin, tc_text,
                         args.nodes)

    stopping = False
    crossed: tuple[int, float] | None = None
    if args.sprt is not None:
        print(f"SPRT [{args.sprt.elo0:g}, {args.sprt.elo1:g}] {args.sprt.model}, alpha "
              f"{args.sprt.alpha:g} beta {args.sprt.beta:g}: bounds "
              f"({args.sprt.lower:.2f}, {args.sprt.upper:.2f})", flush=True)
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.concurrency)) as pool:
            futures = [pool.submit(run, i) for i in range(games) if i + 1 not in played]
            for future in concurrent.futures.as_completed(futures):
                if future.cancelled():
                    continue
                r = future.result()
                with tally.lock:
                    tally.results.append(r)
                    done = tally.results
                    w = sum(1 for x in done if x.score_a == 1.0)
                    d = sum(1 for x in done if x.score_a == 0.5)
                    lost = len(done) - w - d
                    colour = "white" if r.a_is_white else "black"
                    print(
                        f"game {r.number:>3} ({len(done)}/{games}) A {colour:<5} {r.result:<7} "
                        f"{r.termination}, {r.plies} plies, opening {r.opening}; "
                        f"A +{w} ={d} -{lost}",
                        flush=True,
                    )
                    if pgn_file:
                        pgn_file.write(r.pgn + "\n\n")
                        pgn_file.flush()
                    partner = r.number - 1 if r.number % 2 == 0 else r.number + 1
                    if args.sprt is not None and any(x.number == partner for x in done):
                        value = llr(pentanomial(done), args.sprt)
                        print(f"  LLR {value:.2f} ({args.sprt.lower:.2f}, {args.sprt.upper:.2f}) "
                              f"[{args.sprt.elo0:g}, {args.sprt.elo1:g}] pairs "
                              f"{pentanomial(done)}", flush=True)
                        if not args.sprt.lower < value < args.sprt.upper and not stopping:
                            stopping = True
                            crossed = (len(done), value)
                            # Games under way finish and count; the rest are not started.
                            for pending in futures:
                                pending.cancel()
                            print("  SPRT bound crossed: finishing the games under way",
                                  flush=True)
    except KeyboardInterrupt:
        print("interrupted; the summary counts the games finished", file=sys.stderr)
    finally:
        if pgn_file:
            pgn_file.close()
    print(summary(sorted(tally.results, key=lambda r: r.number), args.sprt, crossed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
