#!/usr/bin/env python3
"""Writes fixtures/binpack/python-chess-games.txt: positions of seeded random games played
by python-chess, one a line as `FEN | move (UCI) | score | result | ply`, score and result
from the side to move's point of view as binpack keeps them. tests/binpack.rs writes these
through the sfbinpack crate and checks that `pawnstorm import` reads back what python-chess
says, so the expected values come from python-chess, not from pawnstorm.

Special moves (castling, en passant, promotions) are preferred when legal so that every
kind of binpack move appears; some scores are mates (32000 - plies, as Stockfish and the
DB both write them).

    target/match-venv/bin/python scripts/binpack_fixture.py
"""
import random
import sys
from pathlib import Path

import chess

GAMES = 14
MAX_PLIES = 180


def special(board, move):
    return (board.is_castling(move) or board.is_en_passant(move)
            or move.promotion is not None)


def play(rng):
    board = chess.Board()
    plies = []
    while not board.is_game_over() and board.ply() < MAX_PLIES:
        moves = list(board.legal_moves)
        preferred = [m for m in moves if special(board, m)]
        move = rng.choice(preferred) if preferred and rng.random() < 0.7 else rng.choice(moves)
        plies.append((board.fen(), move.uci(), board.turn, board.ply()))
        board.push(move)
    outcome = board.outcome()
    if outcome is not None and outcome.winner is not None:
        white_result = 1 if outcome.winner == chess.WHITE else -1
    else:
        white_result = rng.choice([1, 0, -1])
    return plies, white_result


def main():
    rng = random.Random(20261125)
    out = ["# python-chess random games: FEN | move | score | result | ply (side to move's view)",
           f"# written by scripts/binpack_fixture.py (python-chess {chess.__version__})"]
    for _ in range(GAMES):
        plies, white_result = play(rng)
        for fen, uci, turn, ply in plies:
            if rng.random() < 0.05:
                score = rng.choice([1, -1]) * (32000 - rng.randint(1, 60))
            else:
                score = rng.randint(-3000, 3000)
            result = white_result if turn == chess.WHITE else -white_result
            out.append(f"{fen} | {uci} | {score} | {result} | {ply}")
    path = Path(__file__).resolve().parent.parent / "fixtures/binpack/python-chess-games.txt"
    path.write_text("\n".join(out) + "\n")
    print(f"{path}: {len(out) - 2} positions", file=sys.stderr)


if __name__ == "__main__":
    main()
