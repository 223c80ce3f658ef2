"""The distributed path: `pawnstorm split`, then examples/ray_eval.py on a local Ray
instance, gives exactly the single-machine `pawnstorm eval` scores."""

import numpy as np
import pyarrow.parquet as pq
from conftest import load_example, required

ray = required("ray")


def test_shard_outputs_concatenate_to_the_single_machine_eval(cli, fixtures, tmp_path, local_ray):
    db = tmp_path / "texel.psdb"
    # Small blocks, so that shards hold several blocks and a partial one.
    cli("import", fixtures / "texel" / "labeled-from-fixture-pgns.epd", "--block-size", "1024", "-o", db)
    whole = tmp_path / "whole.npy"
    cli("eval", db, "-o", whole)
    expected = np.load(whole)
    shards = tmp_path / "shards"
    cli("split", db, "--shards", "8", "-o", shards)
    example = load_example("ray_eval")
    for ship in (False, True):
        out = tmp_path / f"scores-{ship}"
        reports = example.evaluate_shards(shards, out, parquet=True, ship=ship)
        assert [r["shard"] for r in reports] == [f"shard-{i:05}" for i in range(8)]
        outputs = sorted(out.glob("shard-*.npy"))
        assert [p.stem for p in outputs] == [r["shard"] for r in reports]
        got = np.concatenate([np.load(p) for p in outputs])
        assert got.dtype == expected.dtype
        assert np.array_equal(got, expected), f"ship={ship}"
        tables = [pq.read_table(p) for p in sorted(out.glob("shard-*.parquet"))]
        assert np.array_equal(np.concatenate([t["score"].to_numpy() for t in tables]), expected)
        index = np.concatenate([t["index"].to_numpy() for t in tables])
        assert np.array_equal(index, np.arange(len(expected)))
        assert not list(out.glob(".*.tmp")), "no temporary files left"
