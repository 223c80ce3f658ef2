"""scripts/bench-all: makes its inputs from the fixtures, runs every pass, and prints one
row for each with a positive rate; with --vs, both binaries' columns and their ratio."""

import os
import re
import shutil
import subprocess
import sys

from conftest import ROOT

PASSES = [
    "PGN import (lichess-like), 1 thread",
    "PGN import (lichess-like), 2 threads",
    "binpack import",
    "features --kind masks",
    "features --kind nnue --set 768",
    "eval (hand-crafted), games",
    "eval --eval nnue, games",
    "eval --eval nnue, shuffled",
    "dedup",
    "perft 6 (start position)",
    "bench (hand-crafted)",
    "bench --eval nnue",
]


def test_every_pass_gets_a_row(tmp_path, pawnstorm_bin):
    command = [sys.executable, str(ROOT / "scripts" / "bench-all"), "--bin", str(pawnstorm_bin),
               "--positions", "3000", "--runs", "1", "--work", str(tmp_path / "work")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = {}
    for line in done.stdout.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 3 and cells[0] in PASSES:
            rows[cells[0]] = cells
    assert sorted(rows) == sorted(PASSES), done.stdout
    for name, (_, seconds, rate) in rows.items():
        assert float(seconds) > 0 and rate.endswith("M") and float(rate[:-1]) > 0, (name, rate)
    # Stockfish's perft, the yardstick of the perft ratio, where Stockfish is installed.
    if shutil.which("stockfish") or os.access("/usr/games/stockfish", os.X_OK):
        row = next(line for line in done.stdout.splitlines() if line.startswith("| Stockfish perft 6"))
        assert float(row.strip("|").split("|")[2].strip()[:-1]) > 0, row
    positions = int(re.search(r"; (\d+) positions;", done.stdout).group(1))
    assert 2500 <= positions <= 4000
    # Inputs are kept: a second run (one pass, against the same binary) does not make them
    # again, and prints B's columns and the ratio.
    made = (tmp_path / "work" / "games.psdb").stat().st_mtime_ns
    again = subprocess.run(command + ["--only", "dedup", "--vs", str(pawnstorm_bin)],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "work" / "games.psdb").stat().st_mtime_ns == made
    row = next(line for line in again.stdout.splitlines() if line.startswith("| dedup |"))
    assert len(row.strip("|").split("|")) == 6
