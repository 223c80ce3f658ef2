"""examples/ray_datagen.py on a local Ray instance: the merged DB is the one the same CLI
commands make one after another on one machine, and a failing task leaves no shard."""

import json

import pytest
from conftest import load_example, psdb_contents, required

ray = required("ray")


def test_shards_merge_to_the_single_machine_db(cli, pawnstorm_bin, tmp_path, local_ray):
    example = load_example("ray_datagen")
    for label in (None, ["--depth", "2"]):
        out = tmp_path / f"ray-{label is not None}.psdb"
        reports, merged = example.generate(
            out, shards=3, games_per_shard=2, nodes=300, seed=40, label=label, pawnstorm=str(pawnstorm_bin)
        )
        assert [r["shard"] for r in reports] == ["shard-00000", "shard-00001", "shard-00002"]
        assert "positions from 3 DBs" in merged
        # The same commands on one machine, in shard order.
        local = []
        for i in range(3):
            games = tmp_path / f"local-{i}.psdb"
            cli("datagen", "-o", games, "--games", 2, "--nodes", 300, "--seed", 40 + i, "--threads", 1)
            if label is not None:
                labelled = tmp_path / f"local-{i}-labelled.psdb"
                cli("label", games, "-o", labelled, "--threads", 1, *label)
                games = labelled
            local.append(games)
        expected = tmp_path / "local.psdb"
        cli("merge", *local, "-o", expected)
        assert psdb_contents(out) == psdb_contents(expected), f"label={label}"
        shard_dir = out.with_name(out.stem + ".shards")
        assert sorted(p.name for p in shard_dir.iterdir()) == ["manifest.jsonl"] + [f"shard-0000{i}.psdb" for i in range(3)]
        manifest = [json.loads(line) for line in (shard_dir / "manifest.jsonl").read_text().splitlines()]
        # Each shard once, in the order the tasks finished.
        assert sorted((e["shard"], e["seed"]) for e in manifest) == [(f"shard-0000{i}", 40 + i) for i in range(3)]
        # A second run finds the shards complete and only merges.
        again, _ = example.generate(
            out, shards=3, games_per_shard=2, nodes=300, seed=40, label=label, pawnstorm=str(pawnstorm_bin)
        )
        assert all(r["summaries"] == ["already complete"] for r in again)
        assert psdb_contents(out) == psdb_contents(expected)


def test_a_failing_task_names_its_command_and_leaves_no_shard(pawnstorm_bin, tmp_path, local_ray):
    example = load_example("ray_datagen")
    out = tmp_path / "labelled.psdb"
    with pytest.raises(Exception, match="no-such-engine"):
        example.generate(
            out,
            shards=1,
            games_per_shard=1,
            nodes=300,
            label=["--depth", "2", "--engine", str(tmp_path / "no-such-engine")],
            pawnstorm=str(pawnstorm_bin),
        )
    assert not out.exists()
    assert not (tmp_path / "labelled.shards" / "shard-00000.psdb").exists()
