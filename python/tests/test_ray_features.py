"""examples/ray_features.py on a local Ray instance: the shards' .npz files concatenate to
the single-machine `pawnstorm features --kind nnue`, and the loader reads the shard list."""

import numpy as np

import pawnstorm
from conftest import load_example, required

ray = required("ray")


def test_shard_features_concatenate_to_the_single_machine_features(cli, fixtures, tmp_path, local_ray):
    db = tmp_path / "texel.psdb"
    cli("import", fixtures / "texel" / "labeled-from-fixture-pgns.epd", "--block-size", "1024", "-o", db)
    whole = tmp_path / "whole.npz"
    cli("features", db, "--kind", "nnue", "--set", "halfkp", "-o", whole)
    expected = np.load(whole)
    shards = tmp_path / "shards"
    cli("split", db, "--shards", "4", "-o", shards)
    out = tmp_path / "features"
    reports = load_example("ray_features").features_of_shards(shards, out, feature_set="halfkp")
    assert [r["shard"] for r in reports] == [f"shard-{i:05}" for i in range(4)]
    parts = [np.load(p) for p in sorted(out.glob("shard-*.npz"))]
    for name in ["stm_features", "nstm_features", "stm", "score", "result"]:
        np.testing.assert_array_equal(np.concatenate([p[name] for p in parts]), expected[name], err_msg=name)
    first_rows = [int(p["first_row"]) for p in parts]
    assert first_rows[0] == 0 and first_rows == sorted(first_rows)
    assert not list(out.glob(".*.tmp"))
    # The loader takes the shard list as one input.
    batches = list(pawnstorm.Loader(sorted(shards.glob("shard-*.psdb")), features="halfkp", shuffle=False,
                                    batch_size=10_000))
    np.testing.assert_array_equal(np.concatenate([b["stm_features"] for b in batches]), expected["stm_features"])
