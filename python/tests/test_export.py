"""`pawnstorm export` read back by other tools: Parquet by pyarrow, polars and DuckDB;
Stockfish `.plain` text and bullet `ChessBoard` records by readers written here (python-chess
for boards, struct for bytes). Every value is checked against the DB as the EPD export
writes it, and the side-to-move conventions on Black-to-move positions."""

import struct

import chess
import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pawnstorm

BITBOARDS = [
    f"{color}_{kind}"
    for color in ("white", "black")
    for kind in ("pawns", "knights", "bishops", "rooks", "queens", "kings")
]
PIECE_TYPES = [chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING]
RESULTS = {"1-0": 1, "1/2-1/2": 0, "0-1": -1}


@pytest.fixture(scope="module")
def exported(tmp_path_factory, cli, fixtures):
    """A DB from the fixture games, a labelled EPD made here (results and scores, Black to
    move among them) and self-play games (scores, results, moves), exported to every
    format."""
    dir = tmp_path_factory.mktemp("export")
    lines = (fixtures / "texel" / "labeled-from-fixture-pgns.epd").read_text().splitlines()[:400]
    scored = dir / "scored.epd"
    # `ce` is the side to move's score, as EPD defines it; some lines have none.
    scored.write_text(
        "".join(
            f"{line} ce {(i * 37) % 401 - 200};\n" if i % 5 else f"{line}\n"
            for i, line in enumerate(lines)
        )
    )
    db = dir / "db.psdb"
    cli("import", fixtures / "pgn" / "famous-games.pgn", scored, "-o", db, "--block-size", "256")
    cli("datagen", "-o", db, "--append", "--games", "8", "--nodes", "200", "--threads", "1")
    out = {}
    for name in ("db.epd", "db.parquet", "db.plain", "db.bullet"):
        cli("export", db, "-o", dir / name)
        out[name.split(".")[1]] = dir / name
    cli("export", db, "-o", dir / "null.plain", "--null-move")
    out["null-plain"] = dir / "null.plain"
    out["epd-rows"] = [parse_epd(line) for line in out["epd"].read_text().splitlines()]
    return out


def parse_epd(line):
    """FEN and labels of an exported EPD line (White's view for score and result)."""
    fields = line.split(" ")
    fen = " ".join(fields[:6])
    ops = {}
    for op in " ".join(fields[6:]).split(";"):
        op = op.strip()
        if op:
            code, _, operand = op.partition(" ")
            ops[code] = operand.strip('"')
    board = chess.Board(fen)
    score = int(ops["ce"]) if "ce" in ops else None
    if score is not None and board.turn == chess.BLACK:
        score = -score
    return {
        "fen": fen,
        "board": board,
        "result": RESULTS[ops["c9"]] if "c9" in ops else None,
        "score": score,
        "game_id": int(ops["game"]) if "game" in ops else None,
        "ply": int(ops["ply"]) if "ply" in ops else None,
    }


def stm(value, board):
    """A White's-view score or result from the side to move's view."""
    return value if board.turn == chess.WHITE else -value


def test_parquet_types_rows_and_every_value(exported):
    table = pq.read_table(exported["parquet"])
    rows = exported["epd-rows"]
    assert table.num_rows == len(rows)
    types = {field.name: field.type for field in table.schema}
    assert types["index"] == pa.uint64()
    for name in BITBOARDS:
        assert types[name] == pa.uint64(), name
    assert list(types)[:13] == ["index", *BITBOARDS]
    assert types["side_to_move"] == pa.uint8()
    assert types["en_passant"] == pa.uint8()
    assert types["halfmove_clock"] == types["fullmove_number"] == pa.uint16()
    assert types["castling"] == types["fen"] == types["move"] == pa.string()
    assert types["result"] == pa.int8() and types["score"] == pa.int32()
    assert types["game_id"] == pa.uint32() and types["ply"] == pa.uint16()
    data = table.to_pydict()
    assert data["index"] == list(range(len(rows)))
    assert data["fen"] == [row["fen"] for row in rows]
    for name in ("result", "score", "game_id", "ply"):
        assert data[name] == [row[name] for row in rows], name
    assert None in data["score"] and None in data["move"]
    black = 0
    for i, row in enumerate(rows):
        board = row["board"]
        for color, offset in ((chess.WHITE, 0), (chess.BLACK, 6)):
            for k, piece_type in enumerate(PIECE_TYPES):
                assert data[BITBOARDS[offset + k]][i] == int(board.pieces(piece_type, color))
        assert data["side_to_move"][i] == (board.turn == chess.BLACK)
        black += board.turn == chess.BLACK
        fields = row["fen"].split(" ")
        assert data["castling"][i] == fields[2]
        ep = None if fields[3] == "-" else chess.parse_square(fields[3])
        assert data["en_passant"][i] == ep
        assert data["halfmove_clock"][i] == int(fields[4])
        assert data["fullmove_number"][i] == int(fields[5])
        move = data["move"][i]
        if move is not None:
            assert chess.Move.from_uci(move) in board.legal_moves, (row["fen"], move)
    assert black > 0


def test_polars_and_duckdb_read_the_same_file(exported):
    path = str(exported["parquet"])
    table = pq.read_table(path)
    frame = pl.read_parquet(path)
    assert frame.height == table.num_rows
    assert frame.schema["white_kings"] == pl.UInt64
    assert frame["score"].sum() == pa.compute.sum(table["score"]).as_py()
    assert frame["white_kings"].max() == pa.compute.max(table["white_kings"]).as_py()
    count, score_sum, ply_sum, moves = duckdb.sql(
        f"select count(*), sum(score), sum(ply), count(move) from '{path}'"
    ).fetchall()[0]
    assert count == table.num_rows
    assert score_sum == frame["score"].sum()
    assert ply_sum == frame["ply"].sum()
    assert moves == frame["move"].count() > 0
    kind = duckdb.sql(f"select typeof(black_pawns) from '{path}' limit 1").fetchall()[0][0]
    assert kind == "UBIGINT"


def read_plain(path):
    """Stockfish's .plain blocks, read field by field as `convert_bin` reads them."""
    records, record = [], {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        if key == "e":
            assert set(record) == {"fen", "move", "score", "ply", "result"}, record
            records.append(record)
            record = {}
        else:
            assert key not in record, line
            record[key] = value
    assert record == {}
    return records


def test_plain_records_are_the_labelled_positions_from_the_side_to_move(exported):
    moves = pq.read_table(exported["parquet"], columns=["move"])["move"].to_pylist()
    rows = exported["epd-rows"]
    labelled = [
        (row, move)
        for row, move in zip(rows, moves)
        if row["score"] is not None and row["result"] is not None
    ]
    with_move = [(row, move) for row, move in labelled if move is not None]
    assert 0 < len(with_move) < len(labelled)
    for path, expected, null_moves in (
        (exported["plain"], with_move, False),
        (exported["null-plain"], labelled, True),
    ):
        records = read_plain(path)
        assert len(records) == len(expected)
        black = 0
        for record, (row, move) in zip(records, expected):
            board = row["board"]
            assert record["fen"] == row["fen"]
            assert int(record["score"]) == stm(row["score"], board)
            assert int(record["result"]) == stm(row["result"], board)
            played = row["ply"] if row["ply"] is not None else board.ply()
            assert int(record["ply"]) == played
            if move is None:
                assert null_moves and record["move"] == "0000"
            else:
                assert record["move"] == move
                assert chess.Move.from_uci(move) in board.legal_moves
            if board.turn == chess.BLACK:
                black += 1
                if row["score"] != 0:
                    assert int(record["score"]) == -row["score"]
        assert black > 0


BULLET = struct.Struct("<Q16shBBB3s")


def read_bullet(path):
    """bullet's ChessBoard records: (board as the side to move sees it, score, result,
    king squares, extra bytes)."""
    data = path.read_bytes()
    assert len(data) % 32 == 0 and BULLET.size == 32
    for offset in range(0, len(data), 32):
        occ, pcs, score, result, ksq, opp_ksq, extra = BULLET.unpack_from(data, offset)
        pieces = {}
        for i, square in enumerate(chess.SquareSet(occ)):
            nibble = (pcs[i // 2] >> (4 * (i & 1))) & 15
            assert nibble & 7 < 6, nibble
            pieces[square] = (nibble >> 3, nibble & 7)
        yield pieces, score, result, ksq, opp_ksq, extra


def test_bullet_records_are_side_to_move_relative_as_bullet_defines_them(exported):
    rows = [
        row for row in exported["epd-rows"] if row["score"] is not None and row["result"] is not None
    ]
    records = list(read_bullet(exported["bullet"]))
    assert len(records) == len(rows) > 0
    black = 0
    for (pieces, score, result, ksq, opp_ksq, extra), row in zip(records, rows):
        board = row["board"]
        us = board.turn
        # Undo the mirror: Black to move was turned upside down, colours swapped.
        mirror = 0 if us == chess.WHITE else 56
        rebuilt = chess.Board(None)
        for square, (theirs, kind) in pieces.items():
            color = us if theirs == 0 else not us
            rebuilt.set_piece_at(square ^ mirror, chess.Piece(PIECE_TYPES[kind], color))
        assert rebuilt.board_fen() == board.board_fen(), row["fen"]
        assert score == stm(row["score"], board)
        assert result == stm(row["result"], board) + 1
        assert ksq == board.king(us) ^ mirror
        assert opp_ksq == board.king(not us) ^ mirror ^ 56
        assert extra == b"\0\0\0"
        if us == chess.BLACK:
            black += 1
            # The side to move's pieces are "ours" (bit 3 clear) and stand where White's
            # would: Black's king on e8 shows on e1.
            assert pieces[ksq] == (0, 5)
    assert black > 0


def test_parquet_over_several_row_groups_written_on_two_threads_reads_back_in_order(cli, fixtures, tmp_path):
    """More than one row group (131,072 rows each) written by two threads: pyarrow reads
    every row back in DB order, every column equal to the EPD export of the same DB."""
    texel = (fixtures / "texel" / "labeled-from-fixture-pgns.epd").read_text()
    source = tmp_path / "big.epd"
    source.write_text(texel * 5)  # 320,080 positions: three row groups
    db = tmp_path / "big.psdb"
    cli("import", source, "-o", db)
    parquet, epd = tmp_path / "big.parquet", tmp_path / "big.epd.out"
    cli("export", db, "-o", parquet, "--threads", "2")
    cli("export", db, "-o", epd, "--format", "epd")
    metadata = pq.ParquetFile(parquet).metadata
    assert metadata.num_row_groups >= 3, metadata.num_row_groups
    table = pq.read_table(parquet)
    lines = epd.read_text().splitlines()
    assert table.num_rows == len(lines) == 5 * len(texel.splitlines())
    data = table.to_pydict()
    assert data["index"] == list(range(len(lines)))
    assert data["fen"] == [" ".join(line.split(" ")[:6]) for line in lines]
    # Every column, row by row, against the position the EPD line names (a sample of rows
    # from each row group and every row group boundary, to keep the test quick).
    rows = sorted({*range(0, len(lines), 997), *(k * 131_072 + d for k in range(1, 3) for d in (-1, 0, 1))})
    for i in rows:
        row = parse_epd(lines[i])
        board = row["board"]
        for color, offset in ((chess.WHITE, 0), (chess.BLACK, 6)):
            for k, piece_type in enumerate(PIECE_TYPES):
                assert data[BITBOARDS[offset + k]][i] == int(board.pieces(piece_type, color)), (i, BITBOARDS[offset + k])
        assert data["side_to_move"][i] == (board.turn == chess.BLACK), i
        assert data["result"][i] == row["result"], i
        # The labelled set has results only: no score column, and no scores in the EPD.
        assert "score" not in data and row["score"] is None, i


def test_clocks_are_a_parquet_column_and_a_label_array(cli, fixtures, tmp_path):
    """The `clock` label (format 5) from `clk` operations: a nullable uint16 Parquet column
    after `move`, and `Database.labels()["clock"]` with NO_U16 where unknown."""
    lines = (fixtures / "db" / "lichess-labels.epd").read_text().splitlines()
    expected = [300 - i % 290 if "move " in line and i % 5 else None for i, line in enumerate(lines)]
    epd = tmp_path / "clocks.epd"
    epd.write_text("".join(f"{line} clk {c};\n" if c is not None else f"{line}\n" for line, c in zip(lines, expected)))
    db = tmp_path / "clocks.psdb"
    cli("import", epd, "-o", db, "--block-size", "64")
    parquet = tmp_path / "clocks.parquet"
    cli("export", db, "-o", parquet)
    table = pq.read_table(parquet)
    assert table.schema.names[-2:] == ["move", "clock"]
    assert table.schema.field("clock").type == pa.uint16()
    assert table["clock"].to_pylist() == expected
    assert None in expected and any(c is not None for c in expected)

    database = pawnstorm.Database(db)
    assert database.version == 5
    assert database.label_names()[-1] == "clock"
    clocks = database.labels()["clock"]
    assert clocks.dtype == np.uint16
    assert clocks.tolist() == [pawnstorm.NO_U16 if c is None else c for c in expected]
    masked = database.labels(masked=True)["clock"]
    assert masked.mask.tolist() == [c is None for c in expected]
    # A format 4 file has no clock column.
    old = pawnstorm.Database(fixtures / "db" / "lichess-labels-v4.psdb")
    assert old.version == 4 and "clock" not in old.label_names() and "move" in old.label_names()
