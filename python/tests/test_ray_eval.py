"""The distributed path: `pawnstorm split`, then examples/ray_eval.py on a local Ray
instance, gives exactly the single-machine `pawnstorm eval` scores."""

import importlib.util
import pathlib

import numpy as np
import pyarrow.parquet as pq
import pytest
from conftest import required

ray = required("ray")

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "ray_eval.py"


def load_example():
    # Not registered in sys.modules: Ray's pickler then ships the task's code by value,
    # as it does for a script run as __main__.
    spec = importlib.util.spec_from_file_location("ray_eval_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_shard_outputs_concatenate_to_the_single_machine_eval(cli, fixtures, tmp_path, local_ray):
    db = tmp_path / "texel.psdb"
    # Small blocks, so that shards hold several blocks and a partial one.
    cli("import", fixtures / "texel" / "labeled-from-fixture-pgns.epd", "--block-size", "1024", "-o", db)
    whole = tmp_path / "whole.npy"
    cli("eval", db, "-o", whole)
    expected = np.load(whole)
    shards = tmp_path / "shards"
    cli("split", db, "--shards", "8", "-o", shards)
    example = load_example()
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
