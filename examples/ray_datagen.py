#!/usr/bin/env python3
"""Self-play games (and their labelling) as Ray tasks, one shard DB each, merged at the end.

    python examples/ray_datagen.py -o selfplay.psdb --shards 8 --games-per-shard 500
    python examples/ray_datagen.py -o labelled.psdb --shards 64 --games-per-shard 1000 \\
        --label-engine /usr/games/stockfish --label-depth 8 --address auto

Each task runs the CLI on one node: `pawnstorm datagen` for `--games-per-shard` games with
seed `--seed` + shard index (shards play different openings; a later run that must not
repeat these games uses seeds at least `--shards` further on), then, with `--label-depth`,
`--label-nodes` or `--label-movetime`, `pawnstorm label` over that shard (pawnstorm's own
search, or `--label-engine CMD`, which must exist on every node). The driver then runs
`pawnstorm merge` over the shards in shard order (game ids renumbered so they stay unique)
into `-o`. The merged DB is the same bytes as running those commands one after another on
one machine: datagen at fixed nodes reads no clock, and label's runs are per shard.

The CLI must be on every node (`--pawnstorm PATH`, default `pawnstorm` on PATH, built on a
CPU like the node's). Shards are written to `--shard-dir` (default: beside the output),
which must be a path every node and the driver see (shared storage) on a real cluster.
A task's DB is written whole or not at all (the CLI writes temporary files and renames),
so a failed task leaves no half shard; rerunning skips shards already complete.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import time

import ray


def _run(command: list[str]) -> str:
    """Runs one CLI command; its summary line (stderr's last line), or an error naming it."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed (exit {done.returncode}):\n{done.stderr.strip()}")
    lines = done.stderr.strip().splitlines()
    return lines[-1] if lines else ""


def shard_commands(
    pawnstorm: str,
    shard: pathlib.Path,
    seed: int,
    games: int,
    nodes: int,
    threads: int,
    label: list[str] | None,
) -> list[list[str]]:
    """The CLI commands one shard runs: datagen, then (with `label`) the labelling, into
    `NAME.part.psdb` beside `shard`, which the task renames to `shard` once all succeeded
    (so an existing `shard` is a complete one). The unlabelled games go to
    `NAME.selfplay.psdb` when they are labelled."""
    part = shard.with_name(shard.stem + ".part.psdb")
    games_db = part if label is None else shard.with_name(shard.stem + ".selfplay.psdb")
    commands = [
        [pawnstorm, "datagen", "-o", str(games_db), "--games", str(games), "--nodes", str(nodes),
         "--seed", str(seed), "--threads", str(threads)],
    ]
    if label is not None:
        commands.append([pawnstorm, "label", str(games_db), "-o", str(part), "--threads", str(threads), *label])
    return commands


def _shard(commands: list[list[str]], shard: str) -> dict:
    start = time.perf_counter()
    summaries = [_run(c) for c in commands]
    part = pathlib.Path(commands[-1][commands[-1].index("-o") + 1])
    if len(commands) > 1:
        # The unlabelled games were only the labeller's input.
        pathlib.Path(commands[0][3]).unlink()
    part.replace(shard)
    return {"shard": pathlib.Path(shard).stem, "summaries": summaries, "seconds": time.perf_counter() - start}


@ray.remote(num_cpus=1)
def run_shard(commands: list[list[str]], shard: str) -> dict:
    return _shard(commands, shard)


def generate(
    output: str | pathlib.Path,
    *,
    shards: int,
    games_per_shard: int,
    nodes: int = 5000,
    seed: int = 0,
    label: list[str] | None = None,
    pawnstorm: str = "pawnstorm",
    shard_dir: str | pathlib.Path | None = None,
    threads_per_task: int = 1,
) -> tuple[list[dict], str]:
    """Runs every shard as a Ray task (Ray must be initialised), then merges them into
    `output`. Returns the tasks' reports in shard order and merge's summary line."""
    output = pathlib.Path(output).resolve()
    shard_dir = pathlib.Path(shard_dir).resolve() if shard_dir else output.with_name(output.stem + ".shards")
    shard_dir.mkdir(parents=True, exist_ok=True)
    task = run_shard.options(num_cpus=threads_per_task)
    paths = [shard_dir / f"shard-{i:05}.psdb" for i in range(shards)]
    pending, reports = [], {}
    for i, path in enumerate(paths):
        if path.exists():
            reports[i] = {"shard": path.stem, "summaries": ["already complete"], "seconds": 0.0}
            continue
        commands = shard_commands(pawnstorm, path, seed + i, games_per_shard, nodes, threads_per_task, label)
        pending.append((i, task.remote(commands, str(path))))
    for i, ref in pending:
        reports[i] = ray.get(ref)
    merged = _run([pawnstorm, "merge", *map(str, paths), "-o", str(output)])
    return [reports[i] for i in range(shards)], merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True, help="the merged DB")
    parser.add_argument("--shards", type=int, required=True, help="tasks (shard DBs)")
    parser.add_argument("--games-per-shard", type=int, required=True)
    parser.add_argument("--nodes", type=int, default=5000, help="datagen's nodes a move")
    parser.add_argument("--seed", type=int, default=0, help="shard i plays with seed SEED+i")
    parser.add_argument("--label-depth", type=int, help="label each shard at this depth")
    parser.add_argument("--label-nodes", type=int, help="label each shard with this many nodes a position")
    parser.add_argument("--label-movetime", type=int, help="label each shard with this many ms a position")
    parser.add_argument("--label-engine", help="UCI engine command for label (default: pawnstorm's search)")
    parser.add_argument("--label-option", action="append", default=[], metavar="NAME=VALUE", help="UCI option for the label engine (repeatable)")
    parser.add_argument("--pawnstorm", default="pawnstorm", help="the CLI on every node (default: on PATH)")
    parser.add_argument("--shard-dir", help="where shards go (default: OUTPUT's stem + .shards beside it; shared storage on a cluster)")
    parser.add_argument("--threads-per-task", type=int, default=1, help="CPUs (and CLI threads) a task takes")
    parser.add_argument("--address", help="Ray cluster to join ('auto' for the one `ray start` runs); default: a local instance")
    parser.add_argument("--num-cpus", type=int, help="CPUs of the local instance (default: all)")
    args = parser.parse_args(argv)

    limits = [(flag, value) for flag, value in
              (("--depth", args.label_depth), ("--nodes", args.label_nodes), ("--movetime", args.label_movetime))
              if value is not None]
    if len(limits) > 1:
        parser.error("give one of --label-depth, --label-nodes, --label-movetime")
    label = None
    if limits or args.label_engine:
        label = [part for flag, value in limits for part in (flag, str(value))]
        if args.label_engine:
            label += ["--engine", args.label_engine]
        for option in args.label_option:
            label += ["--option", option]

    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)
    try:
        start = time.perf_counter()
        reports, merged = generate(
            args.output,
            shards=args.shards,
            games_per_shard=args.games_per_shard,
            nodes=args.nodes,
            seed=args.seed,
            label=label,
            pawnstorm=args.pawnstorm,
            shard_dir=args.shard_dir,
            threads_per_task=args.threads_per_task,
        )
        seconds = time.perf_counter() - start
    except RuntimeError as error:
        print(f"ray_datagen: {error}", file=sys.stderr)
        return 1
    finally:
        ray.shutdown()
    for report in reports:
        for summary in report["summaries"]:
            print(f"{report['shard']}: {summary}", file=sys.stderr)
    task_seconds = sum(r["seconds"] for r in reports)
    print(f"ray_datagen: {len(reports)} shards, {seconds:.2f} s ({task_seconds:.2f} s in tasks); {merged}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
