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
so a failed task leaves no half shard. The driver appends each finished shard to
`SHARD_DIR/manifest.jsonl` (its seed, games, positions, node and seconds) as it finishes;
a rerun skips every shard there (and any complete shard file the manifest missed, had the
driver died in between). A task whose worker or node dies is run again by Ray (up to
`--max-retries` times): the shard is redone from its seed, the same bytes, never twice
and never half. `--binpack` also writes each shard as a Stockfish .binpack beside it (the
form `data/selfplay/` keeps).

On a cluster: `ray start --head` on one machine, `ray start --address HEAD:6379` on the
others (with Ray's token auth, the same `RAY_AUTH_MODE=token` and token file on each),
then this script with `--address HEAD:6379` from any of them.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import socket
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


def _shard(commands: list[list[str]], shard: str, binpack: list[str] | None = None) -> dict:
    start = time.perf_counter()
    summaries = [_run(c) for c in commands]
    part = pathlib.Path(commands[-1][commands[-1].index("-o") + 1])
    if len(commands) > 1:
        # The unlabelled games were only the labeller's input.
        pathlib.Path(commands[0][3]).unlink()
    if binpack is not None:
        # Before the rename: a shard DB that exists has its binpack too.
        summaries.append(_run(binpack))
    part.replace(shard)
    return {
        "shard": pathlib.Path(shard).stem,
        "summaries": summaries,
        "seconds": time.perf_counter() - start,
        "node": socket.gethostname(),
        "pid": os.getpid(),
        "node_id": ray.get_runtime_context().get_node_id() if ray.is_initialized() else None,
    }


# A task whose worker process or node dies is run again (max_retries); one whose command
# fails is not (retry_exceptions=False): the same seed would fail the same way.
@ray.remote(num_cpus=1, max_retries=3, retry_exceptions=False)
def run_shard(commands: list[list[str]], shard: str, binpack: list[str] | None = None) -> dict:
    return _shard(commands, shard, binpack)


def read_manifest(shard_dir: pathlib.Path) -> dict[str, dict]:
    """The finished shards recorded in SHARD_DIR/manifest.jsonl, by shard name (a line cut
    short by a killed driver is ignored: its shard is found by its file instead)."""
    entries = {}
    path = shard_dir / "manifest.jsonl"
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            entries[entry["shard"]] = entry
    return entries


def _record(shard_dir: pathlib.Path, entry: dict) -> None:
    with open(shard_dir / "manifest.jsonl", "a") as manifest:
        manifest.write(json.dumps(entry) + "\n")
        manifest.flush()


def _positions(summaries: list[str]) -> int | None:
    """The positions datagen's (or label's) summary line reports, if it says."""
    for summary in summaries:
        words = summary.split()
        if "positions," in words:
            try:
                return int(words[words.index("positions,") - 1])
            except ValueError:
                pass
    return None


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
    binpack: bool = False,
    max_retries: int = 3,
) -> tuple[list[dict], str]:
    """Runs every shard not yet finished as a Ray task (Ray must be initialised), recording
    each in the manifest as it finishes, then merges them into `output`. Returns the
    tasks' reports in shard order and merge's summary line."""
    output = pathlib.Path(output).resolve()
    shard_dir = pathlib.Path(shard_dir).resolve() if shard_dir else output.with_name(output.stem + ".shards")
    shard_dir.mkdir(parents=True, exist_ok=True)
    task = run_shard.options(num_cpus=threads_per_task, max_retries=max_retries)
    paths = [shard_dir / f"shard-{i:05}.psdb" for i in range(shards)]
    manifest = read_manifest(shard_dir)
    pending, reports = {}, {}
    for i, path in enumerate(paths):
        if path.exists():
            reports[i] = {"shard": path.stem, "summaries": ["already complete"], "seconds": 0.0}
            if path.stem not in manifest:
                # Finished, but the driver died before recording it.
                _record(shard_dir, {"shard": path.stem, "seed": seed + i, "games": games_per_shard, "nodes": nodes})
            continue
        commands = shard_commands(pawnstorm, path, seed + i, games_per_shard, nodes, threads_per_task, label)
        export = [pawnstorm, "export", commands[-1][commands[-1].index("-o") + 1], "-o", str(path.with_suffix(".binpack"))]
        pending[task.remote(commands, str(path), export if binpack else None)] = i
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        i = pending.pop(done[0])
        reports[i] = ray.get(done[0])
        _record(shard_dir, {
            "shard": reports[i]["shard"], "seed": seed + i, "games": games_per_shard, "nodes": nodes,
            "positions": _positions(reports[i]["summaries"]), "node": reports[i]["node"],
            "node_id": reports[i]["node_id"], "pid": reports[i]["pid"],
            "seconds": round(reports[i]["seconds"], 3),
        })
    # What tasks killed midway left: their CLI's temporary files (never a shard).
    for leftover in shard_dir.glob(".*.tmp"):
        leftover.unlink(missing_ok=True)
    for pattern in ("*.part.psdb", "*.selfplay.psdb"):
        for leftover in shard_dir.glob(pattern):
            leftover.unlink(missing_ok=True)
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
    parser.add_argument("--binpack", action="store_true", help="also write each shard as .binpack beside it")
    parser.add_argument("--max-retries", type=int, default=3, help="runs of a task again when its worker or node dies")
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
            binpack=args.binpack,
            max_retries=args.max_retries,
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
