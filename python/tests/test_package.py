"""The Python package against the CLI: the same DBs, the same arrays, the same errors."""

import gc
import re
import threading

import chess
import numpy as np
import pytest

import pawnstorm
from pawnstorm import _native
from conftest import psdb_contents


@pytest.fixture(scope="module")
def dbs(tmp_path_factory, cli, fixtures):
    """DBs made by the CLI from the fixtures: positions only (small blocks, a partial last
    block), PGN games (result, game id, ply), lines with and without scores, and one
    single-block DB."""
    tmp = tmp_path_factory.mktemp("dbs")
    wac = tmp / "wac.psdb"
    cli("import", fixtures / "epd" / "wac.epd", "--block-size", "64", "-o", wac)
    games = tmp / "games.psdb"
    cli("import", fixtures / "pgn" / "famous-games.pgn", fixtures / "pgn" / "chess-informant-d00.pgn",
        "-o", games)
    # Scores on some lines only: the column has unknowns.
    lines = []
    for i, line in enumerate((fixtures / "epd" / "bk.epd").read_text().splitlines()):
        fen = " ".join(line.split()[:4]) + " 0 1"
        lines.append(f"{fen} | {i * 37 - 400} | 0.5" if i % 3 else fen)
    scored_epd = tmp / "scored.epd"
    scored_epd.write_text("\n".join(lines) + "\n")
    scored = tmp / "scored.psdb"
    cli("import", scored_epd, "-o", scored)
    texel = tmp / "texel.psdb"
    cli("import", fixtures / "texel" / "labeled-from-fixture-pgns.epd", "-o", texel)
    return {"wac": wac, "games": games, "scored": scored, "texel": texel}


def exported_lines(cli, db, tmp_path):
    out = tmp_path / (db.stem + ".epd")
    cli("export", db, "-o", out)
    return out.read_text().splitlines()


def castling_code(board: chess.Board) -> int:
    """The DB's castling column for a python-chess board (docs/FORMAT.md): nibble
    2 * colour + side, 0b1000 | the rook's file."""
    code = 0
    for color, index in ((chess.WHITE, 0), (chess.BLACK, 1)):
        king = board.king(color)
        for rook in chess.SquareSet(board.castling_rights & chess.BB_BACKRANKS & board.occupied_co[color]):
            side = 0 if chess.square_file(rook) > chess.square_file(king) else 1
            code |= (0b1000 | chess.square_file(rook)) << (4 * (2 * index + side))
    return code


def test_columns_are_the_boards_of_the_exported_positions(cli, dbs, tmp_path):
    db = pawnstorm.Database(dbs["wac"])
    lines = exported_lines(cli, dbs["wac"], tmp_path)
    assert len(db) == len(lines) > db.block_size
    assert db.block_count == -(-len(db) // db.block_size) and len(db) % db.block_size
    columns = db.columns()
    for name, view in columns.items():
        assert view.shape == (db.block_count, db.block_size), name
    flat = {name: view.reshape(-1) for name, view in columns.items()}
    pieces = [chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING]
    for row, line in enumerate(lines):
        board = chess.Board(" ".join(line.split()[:6]))
        for name, piece in zip(pawnstorm.BITBOARDS, pieces):
            assert int(flat[name][row]) == int(board.pieces_mask(piece, chess.WHITE) | board.pieces_mask(piece, chess.BLACK)), (row, name)
        assert int(flat["white"][row]) == board.occupied_co[chess.WHITE]
        assert int(flat["black"][row]) == board.occupied_co[chess.BLACK]
        assert flat["side_to_move"][row] == (0 if board.turn == chess.WHITE else 1)
        assert flat["castling"][row] == castling_code(board), row
        assert flat["en_passant"][row] == (255 if board.ep_square is None else board.ep_square)
        assert flat["halfmove_clock"][row] == board.halfmove_clock
        assert flat["fullmove_number"][row] == board.fullmove_number
    # Padding rows: empty boards, no en passant.
    for name in pawnstorm.BITBOARDS:
        assert not flat[name][len(db):].any()
    assert (flat["en_passant"][len(db):] == 255).all()
    # The one (blocks, 8, B) view holds the same boards.
    stacked = db.bitboards()
    assert stacked.shape == (db.block_count, 8, db.block_size)
    for i, name in enumerate(pawnstorm.BITBOARDS):
        assert np.array_equal(stacked[:, i, :], columns[name])


def test_views_are_read_only_views_of_the_map_that_keep_it_alive(dbs):
    db = pawnstorm.Database(dbs["texel"])
    first, second = db.columns(), db.columns()
    pawns = first["pawns"]
    assert np.shares_memory(pawns, second["pawns"])
    assert np.shares_memory(pawns, db.bitboards())
    assert not pawns.flags.writeable and not db.bitboards().flags.writeable
    with pytest.raises(ValueError):
        pawns[0, 0] = 1
    with pytest.raises(ValueError):
        pawns.flags.writeable = True
    # The base chain ends at the native object that owns the map: no copy on the way.
    base = pawns
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    assert isinstance(base, _native.NativeDatabase)
    saved = pawns.copy()
    del db, first, second, base
    gc.collect()
    assert np.array_equal(pawns, saved), "the views outlive the Database and still read the map"


def test_flat_columns_are_views_for_one_block_and_copies_otherwise(dbs, cli, fixtures, tmp_path):
    db = pawnstorm.Database(dbs["wac"])
    flat = db.column("pawns")
    assert flat.shape == (len(db),)
    assert np.array_equal(flat, db.columns()["pawns"].reshape(-1)[: len(db)])
    assert not np.shares_memory(flat, db.columns()["pawns"])
    one = tmp_path / "one.psdb"
    cli("import", fixtures / "epd" / "bk.epd", "-o", one)
    single = pawnstorm.Database(one)
    assert single.block_count == 1
    assert np.shares_memory(single.column("pawns"), single.columns()["pawns"])


@pytest.mark.parametrize("name", ["wac", "games", "texel"])
@pytest.mark.parametrize("pov", ["white", "stm"])
def test_evaluate_equals_the_cli_scores(cli, dbs, tmp_path, name, pov):
    out = tmp_path / "scores.npy"
    cli("eval", dbs[name], "-o", out, "--pov", pov)
    expected = np.load(out)
    got = pawnstorm.Database(dbs[name]).evaluate(pov=pov)
    assert got.dtype == expected.dtype == np.int32
    assert np.array_equal(got, expected)
    assert np.array_equal(pawnstorm.Database(dbs[name]).evaluate(threads=1, pov=pov), expected)


@pytest.mark.parametrize("name", ["wac", "games"])
def test_evaluate_terms_equals_the_cli_breakdown(cli, dbs, tmp_path, name):
    out = tmp_path / "terms.npy"
    cli("eval", dbs[name], "-o", out, "--terms")
    expected = np.load(out)
    got = pawnstorm.Database(dbs[name]).evaluate(terms=True)
    assert got.dtype == expected.dtype
    assert got.dtype.names[:5] == ("index", "score", "phase", "scale", "rule")
    assert np.array_equal(got, expected)
    assert np.array_equal(got["score"], pawnstorm.Database(dbs[name]).evaluate())


def test_evaluate_with_weights_and_scalar_equals_the_cli(cli, dbs, tmp_path):
    weights = tmp_path / "weights.txt"
    cli("weights", "-o", weights)
    # A changed weight, so that the file is seen to be used: double every number on the
    # first line that holds numbers.
    lines = weights.read_text().splitlines()
    for i, line in enumerate(lines):
        if re.search(r"-?\d+", line) and not line.lstrip().startswith("#"):
            lines[i] = re.sub(r"-?\d+", lambda m: str(int(m.group()) * 2), line)
            break
    weights.write_text("\n".join(lines) + "\n")
    out = tmp_path / "scores.npy"
    cli("eval", dbs["games"], "-o", out, "--weights", weights)
    db = pawnstorm.Database(dbs["games"])
    with_weights = db.evaluate(weights=weights)
    assert np.array_equal(with_weights, np.load(out))
    assert not np.array_equal(with_weights, db.evaluate())
    cli("--scalar", "eval", dbs["games"], "-o", out)
    assert np.array_equal(db.evaluate(scalar=True), np.load(out))


def test_masks_equal_the_cli_file(cli, dbs, tmp_path):
    out = tmp_path / "masks.npy"
    cli("features", dbs["games"], "--kind", "masks", "-o", out)
    expected = np.load(out)
    got = pawnstorm.Database(dbs["games"]).features("masks")
    assert got.dtype == expected.dtype
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("kind,flag", [("terms", None), ("terms", "--sparse"), ("planes", None), ("planes", "--unpacked")])
def test_npz_features_equal_the_cli_file(cli, dbs, tmp_path, kind, flag):
    out = tmp_path / "features.npz"
    cli("features", dbs["games"], "--kind", kind, "-o", out, *([flag] if flag else []))
    got = pawnstorm.Database(dbs["games"]).features(
        kind, sparse=flag == "--sparse", unpacked=flag == "--unpacked"
    )
    with np.load(out) as expected:
        assert sorted(got) == sorted(expected.files)
        for name in expected.files:
            assert got[name].dtype == expected[name].dtype, name
            # Unknown results are NaN in the float label arrays.
            nan = expected[name].dtype.kind == "f"
            assert np.array_equal(got[name], expected[name], equal_nan=nan), name


@pytest.mark.parametrize(
    "flags,kwargs",
    [
        (["--require-result", "--skip-plies", "6"], {"require_result": True, "skip_plies": 6}),
        (["--pieces", "10..24", "--skip-check"], {"pieces": "10..24", "skip_check": True}),
        (["--quiet-only", "--drop-mates"], {"quiet_only": True, "drop_mates": True}),
    ],
)
def test_filtered_features_equal_the_cli_file(cli, dbs, tmp_path, flags, kwargs):
    out = tmp_path / "features.npz"
    cli("features", dbs["games"], "--kind", "terms", "-o", out, *flags)
    got = pawnstorm.Database(dbs["games"]).features("terms", **kwargs)
    with np.load(out) as expected:
        assert 0 < len(expected["index"]) < len(pawnstorm.Database(dbs["games"])), "the filter drops some"
        for name in expected.files:
            nan = expected[name].dtype.kind == "f"
            assert np.array_equal(got[name], expected[name], equal_nan=nan), name
    with pytest.raises(ValueError, match="is not MIN..MAX"):
        pawnstorm.Database(dbs["games"]).features("terms", pieces="ten")
    with pytest.raises(ValueError, match="filters are for"):
        pawnstorm.Database(dbs["games"]).features("masks", **kwargs)


def test_labels_are_the_exported_labels_with_sentinels(cli, dbs, tmp_path):
    db = pawnstorm.Database(dbs["games"])
    labels = db.labels()
    assert list(labels) == db.label_names()
    assert {"result", "game_id", "ply"} <= set(labels)
    results = {'"1-0"': 1, '"0-1"': -1, '"1/2-1/2"': 0}
    for row, line in enumerate(exported_lines(cli, dbs["games"], tmp_path)):
        ops = dict(op.strip().split(" ", 1) for op in " ".join(line.split()[6:]).split(";") if op.strip())
        assert labels["result"][row] == results.get(ops.get("c9"), pawnstorm.NO_RESULT), row
        assert labels["game_id"][row] == int(ops["game"])
        assert labels["ply"][row] == int(ops["ply"])
    for values in labels.values():
        assert values.shape == (len(db),)

    scored = pawnstorm.Database(dbs["scored"])
    score = scored.labels()["score"]
    known = np.arange(len(scored)) % 3 != 0
    # `FEN | score | result` scores are White's.
    assert np.array_equal(score[known], (np.arange(len(scored)) * 37 - 400)[known])
    assert (score[~known] == pawnstorm.NO_SCORE).all()
    masked = scored.labels(masked=True)["score"]
    assert np.array_equal(masked.mask, ~known)
    assert masked.mean() == score[known].mean()


def test_import_files_writes_the_cli_db(cli, fixtures, tmp_path):
    inputs = [fixtures / "epd" / "wac.epd", fixtures / "pgn" / "famous-games.pgn"]
    by_cli = tmp_path / "cli.psdb"
    done = cli("import", *inputs, "--every", "3", "--skip-plies", "2", "-o", by_cli)
    by_python = tmp_path / "python.psdb"
    counts = pawnstorm.import_files(inputs, by_python, every=3, skip_plies=2)
    assert psdb_contents(by_python) == psdb_contents(by_cli)
    summary = re.search(r"imported (\d+) positions from (\d+) games, rejected (\d+)", done.stderr)
    assert (counts["positions"], counts["games"], counts["rejected"]) == tuple(map(int, summary.groups()))
    assert counts["total"] == len(pawnstorm.Database(by_python))
    again = pawnstorm.import_files([fixtures / "epd" / "bk.epd"], by_python, append=True)
    assert again["appended_to"] == counts["total"]
    cli("import", fixtures / "epd" / "bk.epd", "--append", "-o", by_cli)
    assert psdb_contents(by_python) == psdb_contents(by_cli)


LICHESS_GAMES = """[Event "Rated Blitz game"]
[White "a"]
[Black "b"]
[Result "1-0"]
[WhiteElo "{white}"]
[BlackElo "2010"]
[TimeControl "{tc}"]

1. e4 {{ [%eval 0.17] [%clk 0:03:00] }} 1... e5 {{ [%eval 0.2] [%clk 0:03:00] }} 2. Qh5 {{ [%eval -0.5] }} 2... Nc6 {{ [%eval #3] }} 1-0

"""


def test_import_files_reads_lichess_pgn_zst_and_jsonl_like_the_cli(cli, tmp_path):
    games = "".join(
        LICHESS_GAMES.format(white=white, tc=tc)
        for white, tc in [("2100", "300+3"), ("1500", "300+3"), ("2200", "60+0"), ("?", "600+5")]
    )
    pgn = tmp_path / "games.pgn"
    pgn.write_text(games)
    jsonl = tmp_path / "evals.jsonl"
    jsonl.write_text(
        '{"fen": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -", "evals": [{"pvs": [{"cp": 31, "line": "e7e5"}], "knodes": 10, "depth": 20}, {"pvs": [{"mate": -2, "line": "e7e5"}], "knodes": 99, "depth": 30}]}\n'
        "not json\n"
    )
    options = dict(min_elo=2000, min_base_seconds=180, require_eval=True)
    by_cli = tmp_path / "cli.psdb"
    done = cli("import", pgn, jsonl, "--min-elo", "2000", "--min-base-seconds", "180", "--require-eval", "-o", by_cli)
    by_python = tmp_path / "python.psdb"
    counts = pawnstorm.import_files([pgn, jsonl], by_python, **options)
    assert psdb_contents(by_python) == psdb_contents(by_cli)
    assert counts["dropped"] == {"min_elo": 2, "max_elo": 0, "min_base_seconds": 1, "speed": 0,
                                 "date": 0, "termination": 0, "rated_only": 0, "require_eval": 0}
    assert "dropped 3 games (2 --min-elo, 1 --min-base-seconds)" in done.stderr
    assert (counts["positions"], counts["rejected"]) == (6, 1)
    labels = pawnstorm.Database(by_python).labels()
    assert set(labels["white_elo"][:5]) == {2100}
    assert list(labels["move"][:4] != pawnstorm.NO_U16) == [True, True, True, True]


def test_import_rejections_and_errors_carry_the_cli_messages(cli, fixtures, tmp_path):
    bad = tmp_path / "bad.epd"
    good = (fixtures / "epd" / "wac.epd").read_text().splitlines()[:3]
    in_check = "8/8/8/4k3/8/8/8/Q3K3 w - - 0 1"  # Black's king on the a1 queen's diagonal
    bad.write_text("\n".join([good[0], "not a fen at all", good[1], "8/8/8/8 w - -", good[2], in_check]) + "\n")
    out = tmp_path / "out.psdb"
    counts = pawnstorm.import_files([bad], out)
    assert (counts["positions"], counts["rejected"]) == (3, 3)
    assert "black is in check with white to move" in counts["rejections"][2]
    warnings = [l.removeprefix("warning: ") for l in cli("import", bad, "-o", tmp_path / "c.psdb").stderr.splitlines() if l.startswith("warning: skipped")]
    assert counts["rejections"] == warnings
    assert f"{bad}:2:" in counts["rejections"][0]

    strict = cli("import", bad, "--strict", "-o", tmp_path / "s.psdb", check=False)
    with pytest.raises(pawnstorm.PawnstormError) as raised:
        pawnstorm.import_files([bad], tmp_path / "s.psdb", strict=True)
    assert strict.stderr.strip() == f"error: {raised.value}"
    assert not (tmp_path / "s.psdb").exists()

    missing = tmp_path / "missing.epd"
    done = cli("import", missing, "-o", tmp_path / "m.psdb", check=False)
    with pytest.raises(FileNotFoundError) as raised:
        pawnstorm.import_files([missing], tmp_path / "m.psdb")
    assert done.stderr.strip() == f"error: {raised.value}"


def test_bad_dbs_raise_the_cli_messages(cli, dbs, fixtures, tmp_path):
    with pytest.raises(pawnstorm.PawnstormError, match="not a pawnstorm position database"):
        pawnstorm.Database(fixtures / "epd" / "wac.epd")
    with pytest.raises(FileNotFoundError):
        pawnstorm.Database(tmp_path / "nowhere.psdb")
    data = bytearray(dbs["wac"].read_bytes())
    db_for_layout = pawnstorm.Database(dbs["wac"])
    # A flipped bit in block 2's pawns: opening is cheap and does not see it; every pass does.
    at = 128 + 2 * db_for_layout._block_bytes + 8 * 5
    data[at] ^= 0x01
    broken = tmp_path / "broken.psdb"
    broken.write_bytes(bytes(data))
    db = pawnstorm.Database(broken)
    done = cli("eval", broken, "-o", tmp_path / "s.npy", check=False)
    assert done.returncode != 0
    with pytest.raises(pawnstorm.PawnstormError) as raised:
        db.evaluate()
    assert "block 2: checksum mismatch" in str(raised.value)
    assert done.stderr.strip() == f"error: {raised.value}"
    with pytest.raises(pawnstorm.PawnstormError, match="block 2: checksum mismatch"):
        db.verify()
    with pytest.raises(pawnstorm.PawnstormError, match="block 2: checksum mismatch"):
        db.features("masks")
    pawnstorm.Database(dbs["wac"]).verify()


def test_an_empty_db_gives_empty_arrays(tmp_path):
    empty = tmp_path / "empty.epd"
    empty.write_text("")
    out = tmp_path / "empty.psdb"
    assert pawnstorm.import_files([empty], out)["total"] == 0
    db = pawnstorm.Database(out)
    assert len(db) == 0
    assert db.columns()["pawns"].shape == (0, db.block_size)
    assert db.evaluate().shape == (0,)
    assert db.features("masks").shape == (0,)


def test_passes_release_the_gil(dbs):
    """Two evaluations in two Python threads run at once: each thread's call returns the
    same scores as alone. This checks that concurrent use is safe (a pass that kept the GIL
    would pass it too); test_loader.py's GIL tests check the release itself, with a Python
    thread that must keep counting while `evaluate` or the loader runs."""
    db = pawnstorm.Database(dbs["texel"])
    alone = db.evaluate(threads=1)
    results = [None, None]

    def run(i):
        results[i] = db.evaluate(threads=1)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(r, alone) for r in results)


def test_cpu_info_names_the_level_and_the_environment_lowers_it(dbs):
    """`cpu_info()` says what `info --cpu` says; a process started with PAWNSTORM_SIMD=scalar
    runs the scalar level and scores every position as the default level does."""
    import os
    import subprocess
    import sys

    info = pawnstorm.cpu_info()
    assert info["level"] in info["available"] and info["detected"] == info["available"][-1]
    assert info["sliding_attacks"] in ("pext", "magics")
    code = (
        "import sys, pawnstorm, numpy as np\n"
        "db = pawnstorm.Database(sys.argv[1])\n"
        "np.save(sys.argv[2], db.evaluate())\n"
        "print(pawnstorm.cpu_info()['level'])\n"
    )
    scores = {}
    for level in ("", "scalar"):
        env = dict(os.environ, PAWNSTORM_SIMD=level)
        out = dbs["games"].parent / f"scores-{level or 'default'}.npy"
        done = subprocess.run([sys.executable, "-c", code, str(dbs["games"]), str(out)],
                              env=env, capture_output=True, text=True, check=True)
        assert done.stdout.strip() == (level or info["level"]), done.stderr
        scores[level] = np.load(out)
    assert np.array_equal(scores[""], scores["scalar"])
