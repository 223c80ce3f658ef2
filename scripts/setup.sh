#!/usr/bin/env bash
# Sets up what scripts/match.py needs: a virtualenv with python-chess, and Stockfish as the
# default opponent. Safe to run again: each step is skipped when already done.
#
#   scripts/setup.sh            # venv in target/match-venv, stockfish from apt if missing
#   MATCH_VENV=DIR scripts/setup.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${MATCH_VENV:-$root/target/match-venv}"

if [ ! -x "$venv/bin/python" ]; then
    echo "creating virtualenv $venv"
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import chess.engine' 2>/dev/null; then
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet 'chess>=1.10'
fi
"$venv/bin/python" -c 'import chess; print("python-chess", chess.__version__)'

if [ ! -x /usr/games/stockfish ] && ! command -v stockfish >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "stockfish is missing; install it (apt-get install stockfish) or pass --engine-b" >&2
        exit 1
    fi
    echo "installing stockfish with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq stockfish
fi
echo "stockfish: $(command -v stockfish || echo /usr/games/stockfish)"

cat <<MSG
ready. Build the engine and play:
  cargo build --release
  $venv/bin/python scripts/match.py --games 20 --elo 1500
MSG
