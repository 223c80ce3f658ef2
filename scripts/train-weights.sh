#!/usr/bin/env bash
# The recipe behind weights/default.txt, from nothing to the weights file:
#
#   1. datagen: self-play games with the START weights (default: the hand-set ones the
#      project began with), GAMES games at NODES nodes a move, seed SEED;
#   2. label:   every position scored by ENGINE (default Stockfish 15.1 from Debian, installed
#      by scripts/setup.sh) at depth DEPTH, or by pawnstorm's own search with ENGINE=own;
#   3. split + merge: 10 contiguous shards (whole games but the one at each boundary); the
#      first 9, and any labelled DBs in EXTRA (space-separated), merged for training; the
#      last kept aside to measure;
#   4. tune from START on the training DB; the Texel loss of START and of the tuned weights
#      on the kept-aside games (game results alone, K fitted for each) is printed and
#      written into the weights file's header with everything above.
#
#   scripts/train-weights.sh                   # writes target/train/weights.txt (~45 min on 2 cores)
#   GAMES=20000 SEED=21 START=weights/default.txt scripts/train-weights.sh   # another round
#
# Every setting is an environment variable (defaults: the values weights/default.txt was
# made with). Datagen at a fixed node count, label at a fixed depth and the tuner are
# deterministic, so the same settings give the same file on any machine with the same
# build (the Stockfish labels: the same Stockfish binary).
set -euo pipefail
cd "$(dirname "$0")/.."

WORK=${WORK:-target/train}
GAMES=${GAMES:-3000}
NODES=${NODES:-5000}
SEED=${SEED:-20}
START=${START:-weights/hand-set.txt}
ENGINE=${ENGINE:-/usr/games/stockfish}
DEPTH=${DEPTH:-8}
THREADS=${THREADS:-$(nproc)}
WDL_WEIGHT=${WDL_WEIGHT:-0.3}
TUNE_ARGS=${TUNE_ARGS:---skip-check --quiet-only --drop-mates}
EXTRA=${EXTRA:-}

cargo build --release
bin=target/release/pawnstorm
if [[ "$ENGINE" != own && ! -x "$ENGINE" ]] && ! command -v "$ENGINE" >/dev/null; then
  scripts/setup.sh
fi
mkdir -p "$WORK"

selfplay="$WORK/selfplay-s$SEED-g$GAMES-n$NODES.psdb"
if [[ ! -e "$selfplay" ]]; then
  "$bin" datagen -o "$selfplay" --games "$GAMES" --nodes "$NODES" --seed "$SEED" \
    --threads "$THREADS" --weights "$START" --pgn "${selfplay%.psdb}.pgn"
fi

labelled="${selfplay%.psdb}-d$DEPTH-$(basename "$ENGINE").psdb"
if [[ ! -e "$labelled" ]]; then
  if [[ "$ENGINE" == own ]]; then
    label_with=(--weights "$START")
  else
    label_with=(--engine "$ENGINE")
  fi
  # --resume: an interrupted labelling (Ctrl-C) continues where it stopped.
  "$bin" label "$selfplay" -o "$labelled.part" --depth "$DEPTH" --threads "$THREADS" \
    "${label_with[@]}" --resume
  mv "$labelled.part" "$labelled"
fi

"$bin" split "$labelled" --shards 10 -o "$WORK/shards" --force
# shellcheck disable=SC2086 # EXTRA is a list of paths
"$bin" merge "$WORK"/shards/shard-0000[0-8].psdb $EXTRA -o "$WORK/train.psdb"
mv "$WORK/shards/shard-00009.psdb" "$WORK/test.psdb"

# shellcheck disable=SC2086 # TUNE_ARGS is a list of flags
"$bin" tune "$WORK/train.psdb" -o "$WORK/tuned.txt" --start "$START" \
  --wdl-weight "$WDL_WEIGHT" --threads "$THREADS" $TUNE_ARGS 2>"$WORK/tune.log"
grep -v '^tune: positions' "$WORK/tune.log" || true
summary=$(grep '^tune: positions' "$WORK/tune.log")
echo "$summary"

# The Texel loss (results alone, K fitted for each) on the kept-aside games.
loss_on_test() {
  local out
  # shellcheck disable=SC2086
  if out=$("$bin" tune "$WORK/test.psdb" -o "$WORK/scratch.txt" --start "$1" --epochs 0 \
    --holdout 0 $TUNE_ARGS 2>&1); then
    grep '^tune: positions' <<<"$out" | grep -oE 'K [0-9.]+|loss [0-9.]+' | sed -n 1,2p | tr '\n' ' '
  else
    # A tiny run may leave too few kept-aside positions to fit K: say so and go on.
    echo "not measured ($(tail -n 1 <<<"$out")) "
  fi
}
before=$(loss_on_test "$START")
after=$(loss_on_test "$WORK/tuned.txt")
echo "kept-aside games: $START: $before; tuned: $after"

{
  echo "# Made by scripts/train-weights.sh ($(git rev-parse --short HEAD 2>/dev/null || echo '?')), from $START:"
  echo "#   datagen: GAMES=$GAMES NODES=$NODES SEED=$SEED -> $(basename "$selfplay")"
  echo "#   label:   ENGINE=$ENGINE DEPTH=$DEPTH; shards 0-8 of 10 for training${EXTRA:+ with $EXTRA}, shard 9 kept aside"
  echo "#   tune:    --wdl-weight $WDL_WEIGHT $TUNE_ARGS"
  echo "#   ${summary#tune: }"
  echo "#   Texel loss on the kept-aside games (results, K fitted): start $before-> tuned $after"
  cat "$WORK/tuned.txt"
} >"$WORK/weights.txt"
echo "-> $WORK/weights.txt"
