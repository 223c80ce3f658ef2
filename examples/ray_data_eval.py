#!/usr/bin/env python3
"""Evaluates the positions of Parquet files with Ray Data: `map_batches` hands each batch
(a pyarrow table) to pawnstorm, which adds an `eval` column (int32 centipawns, White's
view, what `pawnstorm eval` gives the same positions); the batches are written back as
Parquet with every input column kept.

    python examples/ray_data_eval.py data/*.parquet -o scored/                # local Ray
    python examples/ray_data_eval.py data/ -o scored/ --address auto          # a cluster
    python examples/ray_data_eval.py exported.parquet -o scored/ --boards

Any Parquet with a `fen` column works (`pawnstorm.evaluate_fens` reads the batch's Arrow
strings in place). With `--boards`, the files are ones `pawnstorm export --format parquet`
wrote: the twelve bitboard columns and `side_to_move` are turned into the DB's layout
(six piece types, two colours) and evaluated by `pawnstorm.evaluate_boards`, with no FEN
parsing. A bad FEN fails the batch, naming the row, unless `--skip-bad` (its `eval` is then
null).

Each Ray task evaluates its batch on `--threads` threads (default 1: Ray runs a task per
CPU already). Every node needs the Python package (`pip install ./python`).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

#: The export's bitboard columns, by colour then piece type, as the DB orders types.
PIECES = ("pawns", "knights", "bishops", "rooks", "queens", "kings")


def boards_of_export(batch: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """The DB's layout of an export batch: `(8, N)` uint64 boards (`pawnstorm.BITBOARDS`
    order) and the `(N,)` uint8 side to move."""
    white = [batch[f"white_{kind}"].to_numpy() for kind in PIECES]
    black = [batch[f"black_{kind}"].to_numpy() for kind in PIECES]
    boards = np.empty((8, batch.num_rows), dtype=np.uint64)
    for i, (w, b) in enumerate(zip(white, black)):
        np.bitwise_or(w, b, out=boards[i])
    np.bitwise_or.reduce(white, out=boards[6])
    np.bitwise_or.reduce(black, out=boards[7])
    side = batch["side_to_move"].to_numpy().astype(np.uint8, copy=False)
    return boards, side


def evaluate_batch(batch: pa.Table, *, boards: bool = False, skip_bad: bool = False,
                   threads: int = 1) -> pa.Table:
    """`batch` with an `eval` column: its positions' scores."""
    import pawnstorm

    if boards:
        scores = pawnstorm.evaluate_boards(*boards_of_export(batch), threads=threads)
        column = pa.array(scores)
    else:
        fen = next((n for n in batch.column_names if n.lower() == "fen"), None)
        if fen is None:
            raise ValueError(f"no fen column among {batch.column_names}")
        scores = pawnstorm.evaluate_fens(batch[fen], threads=threads,
                                         errors="sentinel" if skip_bad else "raise")
        column = pa.array(scores, mask=scores == pawnstorm.NO_SCORE)
    return batch.append_column("eval", column)


def evaluate(inputs, *, boards: bool = False, skip_bad: bool = False, threads: int = 1,
             batch_size: int = 65536):
    """A Ray Dataset of the Parquet `inputs` (files or directories), each row with its
    `eval`."""
    import ray

    dataset = ray.data.read_parquet(inputs)
    return dataset.map_batches(
        evaluate_batch,
        batch_format="pyarrow",
        batch_size=batch_size,
        fn_kwargs={"boards": boards, "skip_bad": skip_bad, "threads": threads},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="Parquet files or directories")
    parser.add_argument("-o", "--output", required=True, help="directory for the scored Parquet files")
    parser.add_argument("--boards", action="store_true", help="inputs are pawnstorm exports: evaluate their bitboards")
    parser.add_argument("--skip-bad", action="store_true", help="a bad FEN gets a null eval instead of failing")
    parser.add_argument("--threads", type=int, default=1, help="pawnstorm threads per Ray task")
    parser.add_argument("--batch-size", type=int, default=65536)
    parser.add_argument("--address", help="a running Ray cluster (default: start a local one)")
    args = parser.parse_args()

    import ray

    ray.init(address=args.address)
    start = time.perf_counter()
    dataset = evaluate(args.inputs, boards=args.boards, skip_bad=args.skip_bad,
                       threads=args.threads, batch_size=args.batch_size)
    dataset.write_parquet(args.output)
    seconds = time.perf_counter() - start
    rows = ray.data.read_parquet(args.output).count()
    print(f"{rows} positions evaluated in {seconds:.2f} s ({rows / seconds:.0f} positions/s) -> {args.output}")


if __name__ == "__main__":
    main()
