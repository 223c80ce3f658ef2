#!/usr/bin/env python3
"""Counts the positions of every game of PGN files and the distinct ones among them, as
python-chess sees them (`board.epd()`: board, side to move, castling rights, en-passant
square when a legal capture exists): the independent count that `pawnstorm dedup` of the
same files imported must print.

    target/python-venv/bin/python scripts/distinct_positions.py GAMES.pgn...
    pawnstorm import GAMES.pgn... -o games.psdb && pawnstorm dedup games.psdb -o unique.psdb
"""
import sys

import chess.pgn


def main(paths):
    seen = set()
    total = 0
    for path in paths:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            while (game := chess.pgn.read_game(f)) is not None:
                board = game.board()
                seen.add(board.epd())
                total += 1
                for move in game.mainline_moves():
                    board.push(move)
                    seen.add(board.epd())
                    total += 1
    print(f"{total} positions, {len(seen)} distinct, {total - len(seen)} duplicates")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
