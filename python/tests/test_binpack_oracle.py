"""pawnstorm's Stockfish `.binpack` export and import held to oracles that share no code
with the sfbinpack crate pawnstorm reads and writes binpacks with:

- binpack_decoder.py, a decoder written here from the format's description, reads
  pawnstorm's exports, and every record is compared with pawnstorm's EPD export of the
  same DB;
- fixtures/binpack/stockfish-tools-games.binpack was written by Stockfish's own C++ writer
  (fixtures/SOURCES.md says how): decoded, replayed move by move in python-chess, imported
  by pawnstorm and compared, and exported again.
"""

import hashlib
import random

import chess
import pytest
from binpack_decoder import decode, plain

FIXTURE = "stockfish-tools-games.binpack"
# The sha256 of the .plain file Stockfish's writer made the fixture from (fixtures/SOURCES.md).
FIXTURE_PLAIN_SHA256 = "f71c18b6506f5191d136c2388e7461852e3d0b418d4013edb38ab2840a3ceae7"
RESULTS = {"1-0": 1, "1/2-1/2": 0, "0-1": -1}
# docs/EXPORT.md: Stockfish reads every score from VALUE_MATE_IN_MAX_PLY (31754) up as a
# mate while the DB's mates start at 31872, so the export writes a non-mate beyond
# ±31753 as ±31753.
SF_MATE_IN_MAX_PLY, DB_LONGEST_MATE = 31754, 31872


def epd_records(path):
    """pawnstorm's EPD export: (six-field FEN, {operation: value}) a line."""
    records = []
    for line in path.read_text().splitlines():
        fields = line.split(" ", 6)
        ops = {}
        for op in fields[6].split(";") if len(fields) > 6 else []:
            key, _, value = op.strip().partition(" ")
            if key:
                ops[key] = value.strip('"')
        records.append((" ".join(fields[:6]), ops))
    return records


def expected_binpack(epd):
    """What the binpack export must hold for the EPD export's records, in the same order:
    the records with a score, a result and a move (the others are skipped), with score and
    result turned to the side to move's view. Each is (FEN without the fullmove number,
    move, score, ply, result, game)."""
    expected = []
    for fen, ops in epd:
        if not {"ce", "c9", "move"} <= ops.keys():
            continue
        white = fen.split()[1] == "w"
        score = int(ops["ce"])  # EPD's ce is already the side to move's
        if SF_MATE_IN_MAX_PLY <= abs(score) < DB_LONGEST_MATE:
            score = (SF_MATE_IN_MAX_PLY - 1) * (1 if score > 0 else -1)
        result = RESULTS[ops["c9"]] * (1 if white else -1)
        # The fullmove number is left out: binpack keeps the ply, and its reader's FEN says
        # ply // 2 + 1 (not the same for a game that starts from a FEN).
        expected.append((fen.rsplit(" ", 1)[0], ops["move"], score, int(ops["ply"]), result, ops.get("game")))
    return expected


def continues(previous, current):
    """Stockfish's writer's rule (isContinuation) for whether `current` is written as the
    next move of `previous`'s chain: the next ply, the result turned round, and the
    position `previous`'s move leads to (board, side, castling, en passant; not clocks)."""
    fen, move, _, ply, result, _ = previous
    board = chess.Board(fen + " 1")
    board.push_uci(move)
    return ply + 1 == current[3] and result == -current[4] and board.epd() == " ".join(current[0].split()[:4])


def compare(decoded, expected):
    """Every decoded record against the EPD export's, and the chains where Stockfish's
    writer would have put them."""
    assert len(decoded) == len(expected), "positions written"
    for i, (got, want) in enumerate(zip(decoded, expected)):
        assert (got.fen.rsplit(" ", 1)[0], got.move, got.score, got.ply, got.result) == want[:5], f"record {i}"
        assert got.fen.rsplit(" ", 1)[1] == str(got.ply // 2 + 1)
    starts = [i for i, record in enumerate(decoded) if i == 0 or record.chain != decoded[i - 1].chain]
    want_starts = [i for i in range(len(expected)) if i == 0 or not continues(expected[i - 1], expected[i])]
    assert starts == want_starts, "chain boundaries"


def scripted_epd(path):
    """Two seeded random games as EPD lines with scores at the format's edges (clamped
    non-mates, mates of either sign one after the other, so that the score deltas wrap in
    16 bits), a draw, and positions without a score (skipped, so a chain breaks there)."""
    rng = random.Random(6)
    edges = [31753, 31754, -31871, 31872, -31999, 31999, 0, -1, 2500, -31990, -31990]
    lines = []
    for game, result in enumerate(["1/2-1/2", "0-1"]):
        board = chess.Board()
        for ply in range(60):
            move = rng.choice(list(board.legal_moves))
            ce = "" if ply % 13 == 12 else f" ce {edges[(ply + game) % len(edges)]};"
            lines.append(f'{board.fen()} c9 "{result}";{ce} game {game}; ply {ply}; move {move.uci()};\n')
            board.push(move)
    path.write_text("".join(lines))
    return path


@pytest.fixture(scope="module")
def fixture_binpack(fixtures):
    return (fixtures / "binpack" / FIXTURE).read_bytes()


@pytest.mark.parametrize("source", ["lichess-pgn", "scripted-epd", "stockfish-binpack"])
def test_export_decodes_to_the_epd_export(source, tmp_path, cli, fixtures):
    inputs = {
        "lichess-pgn": lambda: fixtures / "pgn" / "lichess-2025-05-sample.pgn",  # [%eval] scores
        "scripted-epd": lambda: scripted_epd(tmp_path / "scripted.epd"),
        # Castling both ways for both sides, en passant, every promotion, mates.
        "stockfish-binpack": lambda: fixtures / "binpack" / FIXTURE,
    }
    db = tmp_path / "db.psdb"
    cli("import", inputs[source](), "-o", db)
    cli("export", db, "-o", tmp_path / "db.epd")
    cli("export", db, "-o", tmp_path / "db.binpack")
    decoded = decode((tmp_path / "db.binpack").read_bytes())
    expected = expected_binpack(epd_records(tmp_path / "db.epd"))
    assert len(expected) > 100
    compare(decoded, expected)


def test_fixture_replays_in_python_chess(fixture_binpack):
    """The Stockfish-written fixture, decoded: exactly the .plain text it was written from
    (scores included, which nothing else here holds the decoder to), every move legal in
    python-chess, each next record of a chain the position python-chess reaches by it
    (clocks included), and the special cases the fixture was made to hold are there."""
    records = decode(fixture_binpack)
    assert len(records) == 936
    assert hashlib.sha256(plain(records).encode()).hexdigest() == FIXTURE_PLAIN_SHA256
    seen = set()
    for previous, record in zip([None] + records, records):
        board = chess.Board(record.fen)
        assert board.is_valid(), record
        move = chess.Move.from_uci(record.move)
        assert move in board.legal_moves, record
        if previous is not None and previous.chain == record.chain:
            before = chess.Board(previous.fen)
            before.push_uci(previous.move)
            before.fullmove_number = record.ply // 2 + 1  # binpack keeps the ply (see decoder)
            assert (before.fen(), record.ply, record.result) == (record.fen, previous.ply + 1, -previous.result)
        elif record.ply > 0:
            seen.add("chain starting mid-game")
        if board.is_castling(move):
            seen.add(("O-O" if board.is_kingside_castling(move) else "O-O-O", board.turn))
        if board.is_en_passant(move):
            seen.add("en passant")
        if move.promotion:
            seen.add(chess.piece_symbol(move.promotion))
        if abs(record.score) >= SF_MATE_IN_MAX_PLY:
            seen.add("mate" if record.score > 0 else "mated")
        if record.fen.startswith("8/8/8/KPp4r/"):  # c7c5 made: b5xc6 e.p. would be pinned
            assert record.fen.split()[3] == "-"
            seen.add("pinned en passant")
    castlings = {(side, color) for side in ("O-O", "O-O-O") for color in chess.COLORS}
    specials = {"en passant", "n", "b", "r", "q", "mate", "mated", "chain starting mid-game", "pinned en passant"}
    assert castlings | specials <= seen
    assert records[-1].chain + 1 == 13  # 11 games, one cut in three (fixtures/SOURCES.md)


def test_fixture_import_matches_decoder(fixture_binpack, tmp_path, cli, fixtures):
    """`pawnstorm import` of the Stockfish-written fixture holds what the decoder reads:
    every position, move, score, ply and result, each chain a game; and exporting it again
    gives back Stockfish's bytes (the same chains, the same encoding)."""
    db = tmp_path / "fixture.psdb"
    cli("import", fixtures / "binpack" / FIXTURE, "-o", db)
    cli("export", db, "-o", tmp_path / "fixture.epd")
    decoded = decode(fixture_binpack)
    expected = expected_binpack(epd_records(tmp_path / "fixture.epd"))
    compare(decoded, expected)
    assert [int(game) for *_, game in expected] == [record.chain for record in decoded]
    cli("export", db, "-o", tmp_path / "again.binpack")
    assert (tmp_path / "again.binpack").read_bytes() == fixture_binpack
