#!/usr/bin/env bash
# The recipe of the win-draw-loss model in src/engine/search/wdl.rs: self-play games with the
# default weights, their positions with search scores and results, and the fit.
#
#   scripts/fit-wdl.sh [GAMES] [WORKDIR]     # defaults: 2000 games, target/wdl
#
# Needs only the Rust toolchain and Python 3: numpy and scipy go into target/wdl-venv.
set -euo pipefail
cd "$(dirname "$0")/.."
games="${1:-2000}"
work="${2:-target/wdl}"
venv="${WDL_VENV:-target/wdl-venv}"
mkdir -p "$work"
if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -c 'import numpy, scipy' 2>/dev/null ||
  "$venv/bin/python" -m pip install --quiet 'numpy>=1.26,<3' 'scipy>=1.11,<2'
cargo build --release
bin=target/release/pawnstorm
# Seed 21: not the seed of the weights' training games (20).
"$bin" datagen --games "$games" --nodes 5000 --seed 21 -o "$work/selfplay.psdb"
"$bin" export "$work/selfplay.psdb" --require-score --require-result --skip-check \
  --drop-mates --skip-plies 8 -o "$work/selfplay.plain"
"$venv/bin/python" scripts/fit-wdl.py "$work/selfplay.plain"
