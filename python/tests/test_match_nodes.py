"""scripts/match.py --nodes: games without a clock, each move a fixed node count (as
datagen's), so that a match between two settings of datagen's search is reproducible."""

import subprocess
import sys

import chess.pgn

from conftest import ROOT, required


def play(tmp_path, pawnstorm_bin, name, nodes):
    required("chess")
    openings = tmp_path / "one.epd"
    openings.write_text("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n")
    pgn = tmp_path / f"{name}.pgn"
    command = [sys.executable, str(ROOT / "scripts" / "match.py"),
               "--engine-a", str(pawnstorm_bin), "--engine-b", str(pawnstorm_bin),
               "--option-b", "Hash=1", "--openings", str(openings), "--games", "2",
               "--concurrency", "2", "--nodes", str(nodes), "--tc", "0.001+0",
               "--pgn", str(pgn)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{nodes} nodes a move" in done.stdout
    games = []
    with open(pgn, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            games.append(game)
    return done.stdout, games


def test_fixed_node_games_ignore_the_clock_and_repeat_exactly(tmp_path, pawnstorm_bin):
    # A clock of 1 ms would lose every game on time; with --nodes nobody has a clock.
    first_out, first = play(tmp_path, pawnstorm_bin, "first", 300)
    _, second = play(tmp_path, pawnstorm_bin, "second", 300)
    assert len(first) == 2
    for game in first:
        assert game.headers["TimeControl"] == "-"
        assert "time" not in game.headers["Termination"], game.headers["Termination"]
        assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2")
        assert len(list(game.mainline_moves())) > 10
    # The same node counts from the same opening: the same games, move for move.
    moves = lambda games: sorted([m.uci() for m in g.mainline_moves()] for g in games)
    assert moves(first) == moves(second)
    assert "lost on time" not in first_out
