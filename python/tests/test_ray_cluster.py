"""examples/ray_datagen.py on a real two-node Ray cluster: a head and a worker node started
with `ray start` on this machine (not `ray.init()` in-process), the driver a separate
process joining it by address, as on a cluster of machines; one worker killed mid-shard.
The shard it was writing is redone (by Ray's task retry) once, never half-written, and the
merged DB is the one the same commands make one after another on one machine."""

import json
import os
import pathlib
import secrets
import signal
import socket
import subprocess
import sys
import time

import pytest
from conftest import ROOT, psdb_contents, required

ray = required("ray")

SHARDS = 4


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster(tmp_path):
    """A head node and a worker node of one CPU each; (environment, address). Ray's token
    authentication on (its default where a token exists), with a token of the test's own."""
    token = tmp_path / "ray-token"
    token.write_text(secrets.token_hex(32))
    env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(token))
    ray_cli = str(pathlib.Path(sys.executable).with_name("ray"))
    port = free_port()
    address = f"127.0.0.1:{port}"

    def start(*args):
        done = subprocess.run([ray_cli, "start", "--num-cpus=1", "--disable-usage-stats", *args],
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"ray start {' '.join(args)}:\n{done.stderr[-3000:]}"

    try:
        start("--head", f"--port={port}", "--include-dashboard=false")
        start(f"--address={address}")
        yield env, address
    finally:
        subprocess.run([ray_cli, "stop", "--force"], env=env, capture_output=True, timeout=120)


def processes():
    """(pid, parent pid, command line) of every process."""
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        yield int(proc.name), parent, cmdline


def test_a_worker_killed_mid_shard_has_its_shard_redone_once(cluster, pawnstorm_bin, cli, tmp_path):
    env, address = cluster
    out = tmp_path / "cluster.psdb"
    shard_dir = tmp_path / "cluster.shards"
    driver = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "ray_datagen.py"), "-o", str(out), "--shards", str(SHARDS),
         "--games-per-shard", "6", "--nodes", "2000", "--seed", "70", "--address", address,
         "--pawnstorm", str(pawnstorm_bin), "--binpack"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    # The first shard's datagen seen running: kill it and the Ray worker process running it.
    victim = None
    deadline = time.monotonic() + 300
    while victim is None:
        assert driver.poll() is None, f"the driver ended first:\n{driver.communicate()[1][-3000:]}"
        assert time.monotonic() < deadline, "no shard's datagen was seen running"
        for pid, parent, cmdline in processes():
            if " datagen " in cmdline and str(shard_dir) in cmdline:
                victim = (pid, parent, cmdline)
                break
        time.sleep(0.005)
    pid, worker, cmdline = victim
    shard = pathlib.Path(cmdline.split(" -o ")[1].split()[0]).name.replace(".part.psdb", ".psdb")
    assert not (shard_dir / shard).exists(), "killed mid-shard"
    for target in (worker, pid):
        try:
            os.kill(target, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, stderr = driver.communicate(timeout=600)
    assert driver.returncode == 0, stderr[-3000:]

    # Each shard recorded once, both nodes used; no half shard or temporary file left.
    manifest = [json.loads(line) for line in (shard_dir / "manifest.jsonl").read_text().splitlines()]
    assert sorted(e["shard"] for e in manifest) == [f"shard-{i:05}" for i in range(SHARDS)], manifest
    assert len({e["node_id"] for e in manifest}) == 2, manifest
    # The killed shard finished in another worker process: Ray ran its task again.
    assert [e["pid"] for e in manifest if e["shard"] == shard[:-5]] != [worker], manifest
    names = sorted(p.name for p in shard_dir.iterdir())
    assert names == ["manifest.jsonl"] + sorted(
        f"shard-{i:05}.{kind}" for i in range(SHARDS) for kind in ("binpack", "psdb")), names

    # The same commands one after another on one machine.
    local = []
    for i in range(SHARDS):
        games = tmp_path / f"local-{i}.psdb"
        cli("datagen", "-o", games, "--games", 6, "--nodes", 2000, "--seed", 70 + i, "--threads", 1)
        local.append(games)
        assert (shard_dir / f"shard-{i:05}.binpack").read_bytes() == _binpack(cli, games, tmp_path)
    expected = tmp_path / "local.psdb"
    cli("merge", *local, "-o", expected)
    assert psdb_contents(out) == psdb_contents(expected)


def _binpack(cli, db, tmp_path) -> bytes:
    pack = tmp_path / (db.stem + ".binpack")
    cli("export", db, "-o", pack)
    return pack.read_bytes()
