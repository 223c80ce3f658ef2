#!/usr/bin/env bash
# The recipe behind nets/default.nnue: pawnstorm's network trained by `pawnstorm train-net`
# on pawnstorm's own self-play.
#
#   scripts/train-net.sh [DATA_DIR] [EXTRA TRAIN-NET OPTIONS...]
#
# Inputs: every self-play shard under DATA_DIR, at any depth (default DATA_DIR:
# data/selfplay, the shards kept in the repository, one folder a generation), as
# `selfplay-*.binpack`, or as `selfplay-*.psdb` where no .binpack of the same name is beside
# it (`scripts/datagen-shards` writes both: ../data/gen3 works as DATA_DIR too), and every
# .binpack in SHARED (default ../shared/data: the first shard of self-play; SHARED= for
# none), read one after the other, the held-out tenth split off as `tune` splits (whole
# games where the DB has game ids, runs of 512 positions in a binpack). The default skips
# apply (positions in check, captures and promotions as the move played, mate scores).
# Relative paths are from the checkout's root; a DATA_DIR or SHARED that is not a
# directory, or a DATA_DIR without shards, is an error (not a net from less data).
#
#   scripts/train-net.sh                                   # writes nets/default.nnue
#   EPOCHS=1 OUT=/tmp/try.nnue scripts/train-net.sh ../data/gen3   # a quick trial
#
# Settings are environment variables (HIDDEN, EPOCHS, LR, WDL, SEED, THREADS, SHARED, OUT;
# the defaults are the committed net's: 20 epochs from a learning rate of 0.002, docs/NNUE.md
# "Epochs and learning rate"); other train-net options (--epoch-positions, --output-buckets,
# filters) follow DATA_DIR. The committed net was trained on some of the shards now under
# data/selfplay: nets/default.md names them and how to point DATA_DIR at exactly those.
#
# The net is the same for the same inputs and settings on any thread count (train-net is
# deterministic); an interrupted run continues with the same command and --resume.
set -euo pipefail
cd "$(dirname "$0")/.."

DATA=${1:-data/selfplay}
[[ $# -gt 0 ]] && shift
SHARED=${SHARED-../shared/data}
OUT=${OUT:-nets/default.nnue}
HIDDEN=${HIDDEN:-128}
EPOCHS=${EPOCHS:-20}
LR=${LR:-0.002}
WDL=${WDL:-0.3}
SEED=${SEED:-1}
THREADS=${THREADS:-$(nproc)}

# A mistyped DATA_DIR must not quietly train on ../shared/data alone and overwrite the net.
if [[ ! -d $DATA ]]; then
  echo "train-net.sh: $DATA: no such directory (DATA_DIR, the self-play shards)" >&2
  exit 1
fi
shopt -s nullglob globstar
inputs=()
for shard in "$DATA"/**/selfplay-*.binpack "$DATA"/**/selfplay-*.psdb; do
  [[ $shard == *.psdb && -e ${shard%.psdb}.binpack ]] || inputs+=("$shard")
done
if [[ ${#inputs[@]} -eq 0 ]]; then
  echo "train-net.sh: no selfplay-*.binpack or selfplay-*.psdb under $DATA" >&2
  exit 1
fi
if [[ -n $SHARED ]]; then
  if [[ ! -d $SHARED ]]; then
    echo "train-net.sh: $SHARED: no such directory (SHARED; SHARED= trains without it)" >&2
    exit 1
  fi
  inputs+=("$SHARED"/*.binpack)
fi
cargo build --release
bin=target/release/pawnstorm
mkdir -p "$(dirname "$OUT")"
set -x
"$bin" train-net "${inputs[@]}" -o "$OUT" --hidden "$HIDDEN" --epochs "$EPOCHS" \
  --lr "$LR" --wdl "$WDL" --seed "$SEED" --threads "$THREADS" "$@"
