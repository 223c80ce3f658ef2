#!/usr/bin/env python3
"""Positions per second of pawnstorm.Loader: one input plain, against weighted inputs with
the trainers' skip rules on. Usage: loader_rate.py DB BINPACK [--threads N] [--epochs N].

Each case runs whole epochs (the mixed one: until every input has given its first read)
and reports positions given per second of wall time, batches consumed by a loop that only
touches them, as a training loop would before its own work. "read" counts positions looked at (given
or dropped by the filters)."""

import argparse
import time

import pawnstorm


def rate(inputs, epochs, **options):
    loader = pawnstorm.Loader(inputs, **options)
    positions, read, start = 0, 0, time.perf_counter()
    # Whole epochs, at least `epochs` and at least 2M positions given (a small DB is read
    # several times).
    done = 0
    while done < epochs or positions < 2_000_000:
        for batch in loader:
            positions += len(batch["stm"])
        counts = loader.counts()
        read += counts["kept"] + counts["dropped"]
        done += 1
    seconds = time.perf_counter() - start
    return positions, read, seconds, loader.counts()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("binpack")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    common = dict(batch_size=16384, threads=args.threads, shuffle_buffer=1_000_000, seed=1)
    skips = dict(skip_capture=True, skip_check=True, max_score=3000, random_skip=1,
                 wdl_skip=True, skip_plies=8)
    cases = [
        ("one DB, plain", args.db, {}),
        ("one binpack, plain", args.binpack, {}),
        ("DB=1 + binpack=3, skip rules", [(args.db, 1), (args.binpack, 3)], skips),
        ("DB=1 + binpack=3, skip rules + unique", [(args.db, 1), (args.binpack, 3)],
         dict(skips, unique=True)),
    ]
    for name, inputs, options in cases:
        n, read, s, counts = rate(inputs, args.epochs, **common, **options)
        print(f"{name:40s} {n:>10,} given {n / s / 1e6:5.2f} M/s, {read:>10,} read"
              f" {read / s / 1e6:5.2f} M/s, {s:6.2f} s; last epoch: inputs {counts['inputs']}"
              f" dropped {counts['dropped_by']}")


if __name__ == "__main__":
    main()
