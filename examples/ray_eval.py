#!/usr/bin/env python3
"""Evaluates every shard of a split DB as Ray tasks, one .npy of scores per shard.

    pawnstorm split big.psdb --shards 64 -o shards/
    python examples/ray_eval.py shards/ -o scores/                  # a local Ray instance
    python examples/ray_eval.py shards/ -o scores/ --address auto   # a running cluster

Each task opens one shard with the Python package (`pip install ./python` on every node),
evaluates it (`Database.evaluate`, the CLI's batch path, GIL released) and writes
`OUT_DIR/shard-NNNNN.npy` (int32 centipawns, White's view; with `--parquet` also
`shard-NNNNN.parquet` with the global row index). Output names sort in row order, so the
shards' outputs concatenated in name order are `pawnstorm eval big.psdb -o scores.npy`.

The shards are read where the tasks run: on one machine, or on a cluster whose nodes see
the same path (shared storage). With `--ship` the driver reads each shard and ships its
bytes through Ray's object store instead, for nodes that do not share a file system (the
outputs are still written to OUT_DIR on the node that runs each task: use a shared path,
or collect them).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys
import tempfile
import time

import numpy as np
import ray

SHARD = re.compile(r"^shard-\d+\.psdb$")


def shard_paths(shard_dir: str | os.PathLike) -> list[pathlib.Path]:
    """The shard DBs of `pawnstorm split` in `shard_dir`, in row order (name order)."""
    paths = sorted(p for p in pathlib.Path(shard_dir).iterdir() if SHARD.match(p.name))
    if not paths:
        raise SystemExit(f"{shard_dir}: no shard-NNNNN.psdb files (see `pawnstorm split`)")
    return paths


def _write_atomically(path: pathlib.Path, write) -> None:
    """Writes through `write(file)` into a temporary file beside `path`, then renames it:
    a failed task leaves no partial output."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _evaluate(source, name: str, first_row: int, out_dir: str, parquet: bool, threads: int) -> dict:
    import pawnstorm

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pawnstorm-shard-") as tmp:
        if isinstance(source, bytes):
            # Shipped through the object store: the DB needs a file to be mapped.
            path = pathlib.Path(tmp) / f"{name}.psdb"
            path.write_bytes(source)
        else:
            path = source
        scores = pawnstorm.Database(path).evaluate(threads=threads)
    out = pathlib.Path(out_dir) / f"{name}.npy"
    _write_atomically(out, lambda f: np.save(f, scores))
    if parquet:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table(
            {
                "index": pa.array(np.arange(first_row, first_row + len(scores), dtype=np.uint64)),
                "score": pa.array(scores),
            }
        )
        _write_atomically(out.with_suffix(".parquet"), lambda f: pq.write_table(table, f))
    return {"shard": name, "output": str(out), "positions": len(scores), "seconds": time.perf_counter() - start}


@ray.remote(num_cpus=1)
def evaluate_shard(source, name: str, first_row: int, out_dir: str, parquet: bool, threads: int) -> dict:
    """One shard: `source` is its path (shared storage) or its bytes (shipped)."""
    return _evaluate(source, name, first_row, out_dir, parquet, threads)


def evaluate_shards(
    shard_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    parquet: bool = False,
    ship: bool = False,
    threads_per_task: int = 1,
) -> list[dict]:
    """Evaluates every shard in `shard_dir` as a Ray task (Ray must be initialised) and
    returns each task's report, in row order. Each task asks Ray for `threads_per_task`
    CPUs and runs that many evaluation threads."""
    import pawnstorm

    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    task = evaluate_shard.options(num_cpus=threads_per_task)
    pending = []
    first_row = 0
    for path in shard_paths(shard_dir):
        # The header alone: the driver learns where each shard's rows start (for the
        # Parquet index) without reading the shard.
        rows = len(pawnstorm.Database(path))
        source = ray.put(path.read_bytes()) if ship else str(path.resolve())
        pending.append(task.remote(source, path.stem, first_row, str(out_dir.resolve()), parquet, threads_per_task))
        first_row += rows
    return ray.get(pending)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shards", help="directory of shard-NNNNN.psdb files (pawnstorm split)")
    parser.add_argument("-o", "--output", required=True, help="directory for shard-NNNNN.npy outputs")
    parser.add_argument("--address", help="Ray cluster to join ('auto' for the one `ray start` runs); default: a local instance")
    parser.add_argument("--num-cpus", type=int, help="CPUs of the local instance (default: all)")
    parser.add_argument("--threads-per-task", type=int, default=1, help="CPUs (and evaluation threads) a task takes")
    parser.add_argument("--parquet", action="store_true", help="also write shard-NNNNN.parquet (index, score)")
    parser.add_argument("--ship", action="store_true", help="ship shard bytes through the object store instead of reading a shared path")
    args = parser.parse_args(argv)

    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)
    try:
        start = time.perf_counter()
        reports = evaluate_shards(
            args.shards,
            args.output,
            parquet=args.parquet,
            ship=args.ship,
            threads_per_task=args.threads_per_task,
        )
        seconds = time.perf_counter() - start
    finally:
        ray.shutdown()
    positions = sum(r["positions"] for r in reports)
    task_seconds = sum(r["seconds"] for r in reports)
    print(
        f"ray_eval: {positions} positions in {len(reports)} shards, {seconds:.2f} s, "
        f"{positions / max(seconds, 1e-9):.0f} positions/s ({task_seconds:.2f} s in tasks) -> {args.output}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
