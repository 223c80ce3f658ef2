"""examples/ray_data_eval.py on a local Ray instance: Ray Data over Parquet files, each
batch evaluated by pawnstorm (from the FEN column, or from the export's bitboards), gives
the scores of `pawnstorm eval` on the same positions."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import load_example, required

ray = required("ray")


def test_map_batches_over_parquet_gives_the_clis_scores(cli, fixtures, tmp_path, local_ray):
    db = tmp_path / "games.psdb"
    cli("import", fixtures / "pgn" / "famous-games.pgn", "-o", db)
    scores = tmp_path / "scores.npy"
    cli("eval", db, "-o", scores)
    expected = np.load(scores)
    exported = pq.read_table(cli_export(cli, db, tmp_path))
    # Two files of the export, and one file of FENs alone (another writer's, another case).
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    half = exported.num_rows // 2
    pq.write_table(exported.slice(0, half), inputs / "a.parquet")
    pq.write_table(exported.slice(half), inputs / "b.parquet")
    fens_only = tmp_path / "fens.parquet"
    pq.write_table(pa.table({"FEN": exported["fen"], "row": exported["index"]}), fens_only,
                   row_group_size=5000)
    example = load_example("ray_data_eval")
    for source, boards, key in ((inputs, False, "index"), (inputs, True, "index"), (fens_only, False, "row")):
        # Small batches: several a file, so that the tasks split the work.
        got = example.evaluate(str(source), boards=boards, batch_size=4096).to_arrow_refs()
        table = pa.concat_tables(ray.get(got))
        assert table.num_rows == len(expected)
        rows = table[key].to_numpy()
        evals = table["eval"].to_numpy()
        assert np.array_equal(np.sort(rows), np.arange(len(expected)))
        assert np.array_equal(evals[np.argsort(rows)], expected), f"{source} boards={boards}"

    # A bad FEN fails its batch naming the row, or, with skip_bad, gets a null eval.
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"fen": [exported["fen"][0].as_py(), "no fen here"]}), bad)
    with pytest.raises(Exception, match=r"fens\[1\] is not a FEN"):
        example.evaluate(str(bad)).take_all()
    rows = example.evaluate(str(bad), skip_bad=True).take_all()
    assert [r["eval"] for r in rows] == [int(expected[0]), None]


def cli_export(cli, db, tmp_path):
    path = tmp_path / "export.parquet"
    cli("export", db, "-o", path)
    return path
