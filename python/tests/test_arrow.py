"""Arrays and Arrow in: `evaluate_fens`, `evaluate_boards`, `from_arrow`, `Database.to_arrow`
and the import of Parquet files, each checked against the CLI (`pawnstorm eval`,
`pawnstorm export --format parquet`) on the same positions."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pawnstorm
from conftest import required


@pytest.fixture(scope="module")
def labelled(tmp_path_factory, cli, fixtures):
    """A DB with every label (lichess games: ratings, time control, scores, moves; a
    labelled EPD: results) in small blocks, its FENs, and the CLI's scores of it from
    White's side and from the side to move's."""
    dir = tmp_path_factory.mktemp("arrow")
    db = dir / "labelled.psdb"
    cli("import", fixtures / "pgn" / "lichess-2025-05-sample.pgn",
        fixtures / "texel" / "labeled-from-fixture-pgns.epd", "-o", db, "--block-size", "512")
    white, stm = dir / "white.npy", dir / "stm.npy"
    cli("eval", db, "-o", white)
    cli("eval", db, "--pov", "stm", "-o", stm)
    database = pawnstorm.Database(db)
    fens = [database[i].fen for i in range(len(database))]
    assert len(fens) > 3 * 512, "several blocks and a partial one"
    return {"path": db, "db": database, "fens": fens, "white": np.load(white), "stm": np.load(stm)}


def test_evaluate_fens_equals_the_cli_for_lists_arrays_and_arrow(labelled):
    fens, white = labelled["fens"], labelled["white"]
    scores = pawnstorm.evaluate_fens(fens)
    assert scores.dtype == np.int32 and scores.shape == (len(fens),)
    assert np.array_equal(scores, white)
    assert np.array_equal(pawnstorm.evaluate_fens(fens, pov="stm"), labelled["stm"])
    assert np.array_equal(pawnstorm.evaluate_fens(tuple(fens), threads=1, scalar=True), white)
    assert np.array_equal(pawnstorm.evaluate_fens(np.array(fens)), white)
    # Spaces around a FEN are not part of it.
    assert np.array_equal(pawnstorm.evaluate_fens([f"  {f}\n" for f in fens[:50]]), white[:50])
    # Arrow: every string type, chunked, and a slice (an offset into the buffers).
    for kind in (pa.string(), pa.large_string(), pa.string_view()):
        array = pa.array(fens, type=kind)
        assert np.array_equal(pawnstorm.evaluate_fens(array), white), kind
    chunked = pa.chunked_array([fens[:700], fens[700:701], fens[701:]])
    assert np.array_equal(pawnstorm.evaluate_fens(chunked), white)
    sliced = pa.array(fens).slice(123, 1000)
    assert np.array_equal(pawnstorm.evaluate_fens(sliced), white[123:1123])
    assert pawnstorm.evaluate_fens([]).shape == (0,)


def test_evaluate_fens_names_a_bad_fen_or_marks_it(labelled):
    fens, white = labelled["fens"][:20], labelled["white"][:20]
    bad = fens[:5] + ["8/8/8/8/8/8/8/8 w - - 0 1"] + fens[5:9] + ["rnbqkbnr/pppppppp w"] + fens[9:] + [None]
    with pytest.raises(ValueError, match=r"fens\[5\] is not a FEN: .*king.*'8/8/8/8/8/8/8/8 w - - 0 1' \(and 2 more bad rows\)"):
        pawnstorm.evaluate_fens(bad)
    scores = pawnstorm.evaluate_fens(bad, errors="sentinel")
    rejected = np.flatnonzero(scores == pawnstorm.NO_SCORE)
    assert rejected.tolist() == [5, 10, len(bad) - 1]
    assert np.array_equal(np.delete(scores, rejected), white)
    # The same through Arrow, nulls included.
    arrow = pa.array(bad)
    assert np.array_equal(pawnstorm.evaluate_fens(arrow, errors="sentinel"), scores)
    with pytest.raises(ValueError, match=r"fens\[5\]"):
        pawnstorm.evaluate_fens(arrow)
    with pytest.raises(TypeError, match=r"fens\[1\] is int, not str"):
        pawnstorm.evaluate_fens([fens[0], 7])
    with pytest.raises(TypeError, match="one str"):
        pawnstorm.evaluate_fens(fens[0])
    with pytest.raises(TypeError, match="not of strings"):
        pawnstorm.evaluate_fens(pa.array([1, 2]))
    with pytest.raises(ValueError, match="errors must be"):
        pawnstorm.evaluate_fens(fens, errors="ignore")


def test_evaluate_boards_reads_the_dbs_own_arrays_in_place(labelled):
    db, white = labelled["db"], labelled["white"]
    boards = db.bitboards()
    columns = db.columns()
    # The DB's blocked views: memory of the map itself (read-only), not copies.
    assert np.shares_memory(boards, db._bytes) and not boards.flags.writeable
    scores = pawnstorm.evaluate_boards(boards, columns["side_to_move"], columns["castling"],
                                       columns["en_passant"], count=len(db))
    assert np.array_equal(scores, white)
    stm = pawnstorm.evaluate_boards(boards, columns["side_to_move"], count=len(db), pov="stm",
                                    threads=1, scalar=True)
    assert np.array_equal(stm, labelled["stm"])
    # Flat (8, N) arrays, any length (not a multiple of 8), into an output given.
    flat = np.stack([db.column(name) for name in pawnstorm.BITBOARDS])
    side = db.column("side_to_move")
    for n in (len(db), 1001, 7, 0):
        out = np.full(n, 12345, dtype=np.int32)
        got = pawnstorm.evaluate_boards(flat[:, :n], side[:n], out=out)
        assert got is out
        assert np.array_equal(out, white[:n])
    # Rows (the last axis) must be contiguous: a strided array is refused, not copied.
    with pytest.raises(ValueError, match="not contiguous"):
        pawnstorm.evaluate_boards(flat[:, ::2], side[::2].copy())


def test_evaluate_boards_refuses_wrong_arrays_and_impossible_positions(labelled):
    db = labelled["db"]
    flat = np.stack([db.column(name) for name in pawnstorm.BITBOARDS])[:, :100].copy()
    side = db.column("side_to_move")[:100].copy()
    with pytest.raises(TypeError, match="boards must be uint64.*not int64"):
        pawnstorm.evaluate_boards(flat.astype(np.int64), side)
    with pytest.raises(TypeError, match="side must be uint8"):
        pawnstorm.evaluate_boards(flat, side.astype(np.int32))
    with pytest.raises(TypeError, match="boards must be a numpy array"):
        pawnstorm.evaluate_boards(flat.tolist(), side)
    with pytest.raises(ValueError, match=r"shape \(8, N\)"):
        pawnstorm.evaluate_boards(flat[:7], side)
    with pytest.raises(ValueError, match=r"side has shape \(99,\)"):
        pawnstorm.evaluate_boards(flat, side[:99])
    with pytest.raises(ValueError, match="count 101"):
        pawnstorm.evaluate_boards(flat, side, count=101)
    # The DB's padded last block: without count, the padding rows are no positions.
    with pytest.raises(ValueError, match=f"position {len(db)} is impossible: white has 0 kings"):
        pawnstorm.evaluate_boards(db.bitboards(), db.columns()["side_to_move"])
    kingless = flat.copy()
    kings, white_pieces = pawnstorm.BITBOARDS.index("kings"), pawnstorm.BITBOARDS.index("white")
    king = kingless[kings, 42] & kingless[white_pieces, 42]
    kingless[kings, 42] ^= king
    kingless[white_pieces, 42] ^= king
    with pytest.raises(ValueError, match="position 42 is impossible: white has 0 kings"):
        pawnstorm.evaluate_boards(kingless, side)
    bad_side = side.copy()
    bad_side[77] = 2
    with pytest.raises(ValueError, match="position 77 is impossible: side to move byte is 2"):
        pawnstorm.evaluate_boards(flat, bad_side)
    ep = np.full(100, pawnstorm.NO_SQUARE, dtype=np.uint8)
    ep[9] = 64
    with pytest.raises(ValueError, match="position 9 .*en-passant byte 64"):
        pawnstorm.evaluate_boards(flat, side, ep=ep)
    castling = np.zeros(100, dtype=np.uint16)
    castling[3] = 0x0007
    with pytest.raises(ValueError, match="position 3 .*castling bits 0x0007"):
        pawnstorm.evaluate_boards(flat, side, castling)


def test_to_arrow_equals_the_parquet_export(labelled, cli, tmp_path):
    db = labelled["db"]
    exported = tmp_path / "export.parquet"
    cli("export", labelled["path"], "-o", exported)
    expected = pq.read_table(exported)
    positions = db.to_arrow(threads=2)
    assert positions.schema.equals(expected.schema), f"{positions.schema}\n!=\n{expected.schema}"
    assert positions.equals(expected)
    assert set(db.label_names()) <= set(positions.column_names)
    assert positions["score"].null_count > 0 and positions["move"].null_count > 0, "unknown labels are nulls"
    # Polars and DuckDB take it as it is.
    pl = required("polars")
    frame = pl.from_arrow(positions)
    assert frame["fen"].to_list() == labelled["fens"]
    duckdb = required("duckdb")
    count = duckdb.sql("select count(*) from positions where side_to_move = 1").fetchall()[0][0]
    assert count == int((db.column("side_to_move") == 1).sum())


def test_from_arrow_round_trips_and_evaluates_as_the_cli(labelled, tmp_path):
    db, white = labelled["db"], labelled["white"]
    table = db.to_arrow()
    back = pawnstorm.from_arrow(table)
    assert len(back) == len(db) and back.rejected == []
    assert back.to_arrow().equals(table), "the same positions and labels"
    assert np.array_equal(back.evaluate(), white)
    # A record batch; only a FEN column (any case) and a few labels, of other types.
    batch = pa.record_batch({
        "FEN": pa.array(labelled["fens"][:300], pa.large_string()),
        "Score": pa.array(range(300), pa.int64()),
        "result": pa.array(["1-0", "0-1", None] * 100),
        "extra": pa.array([1.5] * 300),
    })
    small = pawnstorm.from_arrow(batch, tmp_path / "small.psdb", block_size=64)
    assert (tmp_path / "small.psdb").exists() and small.block_size == 64
    assert np.array_equal(small.evaluate(), white[:300])
    labels = small.labels(masked=True)
    assert labels["score"].tolist() == list(range(300))
    assert labels["result"].tolist()[:3] == [1, -1, None]
    assert not list(tmp_path.glob(".pawnstorm-arrow-*")), "no temporary files left"


def test_from_arrow_takes_polars_and_duckdb(labelled):
    pl = required("polars")
    duckdb = required("duckdb")
    fens, white = labelled["fens"][:500], labelled["white"][:500]
    frame = pl.DataFrame({"fen": fens, "ply": list(range(500))})
    db = pawnstorm.from_arrow(frame)
    assert np.array_equal(db.evaluate(), white)
    assert db.labels()["ply"].tolist() == list(range(500))
    relation = duckdb.sql("select * from frame where ply < 100")
    assert np.array_equal(pawnstorm.from_arrow(relation.arrow()).evaluate(), white[:100])


def test_from_arrow_bad_rows_and_missing_columns(labelled, tmp_path):
    fens = labelled["fens"][:10]
    table = pa.table({"fen": fens[:3] + ["not a fen", None] + fens[3:], "score": [1] * 12})
    out = tmp_path / "out.psdb"
    with pytest.raises(ValueError, match=r"row 3 is no position: .*'not a fen' \(and 1 more bad rows\)"):
        pawnstorm.from_arrow(table, out)
    assert not out.exists() and not list(tmp_path.iterdir()), "nothing written"
    db = pawnstorm.from_arrow(table, out, errors="skip")
    assert len(db) == 10 and [row for row, _ in db.rejected] == [3, 4]
    assert "no FEN (null)" in db.rejected[1][1]
    assert np.array_equal(db.evaluate(), labelled["white"][:10])
    with pytest.raises(pawnstorm.PawnstormError, match="no column fen"):
        pawnstorm.from_arrow(pa.table({"position": fens}))
    with pytest.raises(pawnstorm.PawnstormError, match='"score" holds DOUBLE'):
        pawnstorm.from_arrow(pa.table({"fen": fens, "score": [0.5] * 10}))
    with pytest.raises(TypeError, match="from_arrow takes"):
        pawnstorm.from_arrow({"fen": fens})


def test_import_files_reads_the_parquet_export(labelled, cli, tmp_path):
    exported = tmp_path / "export.parquet"
    cli("export", labelled["path"], "-o", exported)
    out = tmp_path / "back.psdb"
    report = pawnstorm.import_files([exported], out, block_size=512)
    assert report["positions"] == len(labelled["db"]) and report["rejected"] == 0
    assert pawnstorm.Database(out).to_arrow().equals(labelled["db"].to_arrow())
