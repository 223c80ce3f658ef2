#!/usr/bin/env python3
"""NNUE training features of every shard of a split DB as Ray tasks, one .npz per shard.

    pawnstorm split big.psdb --shards 64 -o shards/
    python examples/ray_features.py shards/ -o features/ --set halfka_v2_hm
    python examples/ray_features.py shards/ -o features/ --address auto   # a running cluster

Each task opens one shard with the Python package (`pip install ./python` on every node),
computes `Database.features("nnue", set=SET)` (the CLI's `features --kind nnue`, GIL
released) and writes `OUT_DIR/shard-NNNNN.npz`: `stm_features`, `nstm_features`, `stm`,
`score`, `result` (side to move's view), `index` (the row within the shard), `game`, `ply`,
plus `first_row` (the shard's first row in the whole DB). Output names sort in row order.
The shards, or the `.npz` files, then feed a trainer: `pawnstorm.Loader(sorted(shards))`
reads the shard DBs directly.

As in examples/ray_eval.py: the shards are read where the tasks run (shared storage), or
shipped through Ray's object store with `--ship`.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time

import numpy as np
import ray

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ray_eval import shard_paths  # noqa: E402  (the driver's side only)


def _write_atomically(path: pathlib.Path, write) -> None:
    """As ray_eval's, defined here: a task's code travels by value, and the workers cannot
    import the example modules."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _features(source, name: str, first_row: int, out_dir: str, feature_set: str, threads: int,
              filters: dict) -> dict:
    import pawnstorm

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pawnstorm-shard-") as tmp:
        if isinstance(source, bytes):
            path = pathlib.Path(tmp) / f"{name}.psdb"
            path.write_bytes(source)
        else:
            path = source
        arrays = pawnstorm.Database(path).features("nnue", threads, set=feature_set, **filters)
    arrays["first_row"] = np.array(first_row, dtype=np.uint64)
    out = pathlib.Path(out_dir) / f"{name}.npz"
    _write_atomically(out, lambda f: np.savez(f, **arrays))
    return {"shard": name, "output": str(out), "positions": len(arrays["stm"]),
            "seconds": time.perf_counter() - start}


@ray.remote(num_cpus=1)
def shard_features(source, name, first_row, out_dir, feature_set, threads, filters) -> dict:
    """One shard: `source` is its path (shared storage) or its bytes (shipped)."""
    return _features(source, name, first_row, out_dir, feature_set, threads, filters)


def features_of_shards(shard_dir, out_dir, *, feature_set: str = "halfka_v2_hm", ship: bool = False,
                       threads_per_task: int = 1, **filters) -> list[dict]:
    """Computes every shard's features as a Ray task (Ray must be initialised); each task's
    report, in row order."""
    import pawnstorm

    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    task = shard_features.options(num_cpus=threads_per_task)
    pending = []
    first_row = 0
    for path in shard_paths(shard_dir):
        rows = len(pawnstorm.Database(path))
        source = ray.put(path.read_bytes()) if ship else str(path.resolve())
        pending.append(task.remote(source, path.stem, first_row, str(out_dir.resolve()), feature_set,
                                   threads_per_task, filters))
        first_row += rows
    return ray.get(pending)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shards", help="directory of shard-NNNNN.psdb files (pawnstorm split)")
    parser.add_argument("-o", "--output", required=True, help="directory for shard-NNNNN.npz outputs")
    parser.add_argument("--set", default="halfka_v2_hm", choices=["768", "halfkp", "halfka_v2_hm"])
    parser.add_argument("--address", help="Ray cluster to join ('auto' for the one `ray start` runs)")
    parser.add_argument("--num-cpus", type=int, help="CPUs of the local instance (default: all)")
    parser.add_argument("--threads-per-task", type=int, default=1)
    parser.add_argument("--ship", action="store_true", help="ship shard bytes through the object store")
    parser.add_argument("--require-score", action="store_true")
    parser.add_argument("--require-result", action="store_true")
    args = parser.parse_args(argv)

    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)
    try:
        start = time.perf_counter()
        reports = features_of_shards(args.shards, args.output, feature_set=args.set, ship=args.ship,
                                     threads_per_task=args.threads_per_task,
                                     require_score=args.require_score, require_result=args.require_result)
        seconds = time.perf_counter() - start
    finally:
        ray.shutdown()
    positions = sum(r["positions"] for r in reports)
    print(f"ray_features: {positions} positions in {len(reports)} shards, {seconds:.2f} s, "
          f"{positions / max(seconds, 1e-9):.0f} positions/s -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
