#!/usr/bin/env python3
"""A UCI engine for the label tests: its score is a function of the position, and some
positions make it misbehave, chosen by the FEN's halfmove clock:

- clock 6: `bestmove` with no score before it;
- clock 7: it exits in the middle of the search (a crash);
- clock 8: it never answers (a hang);
- clock 9: an unreadable score.

Otherwise it prints a bound (which a labeller must ignore), then `score cp 10 x fullmove`
from the side to move's view, or `score mate 2` when the fullmove number is 99.
Each `ucinewgame` is counted into the file named by FAKE_UCI_LOG, if set.
"""
import os
import sys
import time

fen = None
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "uci":
        print("id name FakeUCI 1.0")
        print("option name Hash type spin default 16 min 1 max 1024")
        print("uciok", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "ucinewgame":
        log = os.environ.get("FAKE_UCI_LOG")
        if log:
            with open(log, "a") as out:
                out.write("ucinewgame\n")
    elif words[0] == "position" and len(words) >= 8 and words[1] == "fen":
        fen = words[2:8]
    elif words[0] == "go":
        clock, fullmove = int(fen[4]), int(fen[5])
        if clock == 6:
            print("bestmove 0000", flush=True)
            continue
        if clock == 7:
            print("info depth 1 score cp 1", flush=True)
            sys.exit(3)
        if clock == 8:
            time.sleep(3600)
        if clock == 9:
            print("info depth 1 score cp banana", flush=True)
            print("bestmove 0000", flush=True)
            continue
        print("info depth 1 score cp -777 upperbound")
        if fullmove == 99:
            print("info depth 2 score mate 2 pv 0000")
        else:
            print(f"info depth 2 multipv 1 score cp {10 * fullmove} pv 0000")
            print(f"info depth 2 multipv 2 score cp -999 pv 0000")
        print("bestmove 0000", flush=True)
    elif words[0] == "quit":
        break
