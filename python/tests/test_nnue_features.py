"""`pawnstorm features --kind nnue`: every index of every feature set against an independent
computation from python-chess boards, written from the feature-set definitions (bullet's
Chess768, nnue-pytorch's features/halfkp.py and features/halfka_v2_hm.py), on the fixture
positions; and the labels from the side to move's view."""

import numpy as np
import chess
import pytest

# nnue-pytorch features/halfka_v2_hm.py: buckets by the oriented king square.
KING_BUCKETS = [
    -1, -1, -1, -1, 31, 30, 29, 28,
    -1, -1, -1, -1, 27, 26, 25, 24,
    -1, -1, -1, -1, 23, 22, 21, 20,
    -1, -1, -1, -1, 19, 18, 17, 16,
    -1, -1, -1, -1, 15, 14, 13, 12,
    -1, -1, -1, -1, 11, 10, 9, 8,
    -1, -1, -1, -1, 7, 6, 5, 4,
    -1, -1, -1, -1, 3, 2, 1, 0,
]


def chess768(board, pov):
    out = []
    for sq, p in board.piece_map().items():
        s = sq if pov == chess.WHITE else chess.square_mirror(sq)
        out.append((p.color != pov) * 384 + (p.piece_type - 1) * 64 + s)
    return out


def halfkp(board, pov):
    def orient(sq):
        return (63 * (not pov)) ^ sq

    ksq = orient(board.king(pov))
    out = []
    for sq, p in board.piece_map().items():
        if p.piece_type == chess.KING:
            continue
        p_idx = (p.piece_type - 1) * 2 + (p.color != pov)
        out.append(1 + orient(sq) + p_idx * 64 + ksq * 641)
    return out


def halfka_v2_hm(board, pov):
    king = board.king(pov)

    def orient(sq):
        return (7 * (king % 8 < 4)) ^ (56 * (not pov)) ^ sq

    out = []
    for sq, p in board.piece_map().items():
        p_idx = (p.piece_type - 1) * 2 + (p.color != pov)
        if p_idx == 11:
            p_idx -= 1
        out.append(orient(sq) + p_idx * 64 + KING_BUCKETS[orient(king)] * 704)
    return out


SETS = {"768": (chess768, 768), "halfkp": (halfkp, 41024), "halfka_v2_hm": (halfka_v2_hm, 22528)}


def fixture_boards(fixtures):
    boards = []
    for name in ["epd/wac.epd", "epd/arasan21.epd", "epd/ecm.epd", "texel/labeled-from-fixture-pgns.epd"]:
        for line in (fixtures / name).read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                fields = line.split()
                boards.append(chess.Board(" ".join(fields[:4]) + " 0 1"))
    return boards


@pytest.fixture(scope="module")
def db(tmp_path_factory, cli, fixtures):
    path = tmp_path_factory.mktemp("nnue") / "positions.psdb"
    sources = [fixtures / n for n in ["epd/wac.epd", "epd/arasan21.epd", "epd/ecm.epd",
                                      "texel/labeled-from-fixture-pgns.epd"]]
    cli("import", *sources, "-o", path)
    return path


@pytest.mark.parametrize("name", list(SETS))
def test_every_index_matches_python_chess(tmp_path, cli, fixtures, db, name):
    out = tmp_path / f"{name}.npz"
    cli("features", db, "--kind", "nnue", "--set", name, "-o", out)
    data = np.load(out)
    boards = fixture_boards(fixtures)
    stm_features, nstm_features = data["stm_features"], data["nstm_features"]
    assert stm_features.shape == (len(boards), 32) and stm_features.dtype == np.int32
    assert nstm_features.shape == (len(boards), 32)
    compute, inputs = SETS[name]
    checked = 0
    for i, board in enumerate(boards):
        for row, pov in ((stm_features[i], board.turn), (nstm_features[i], not board.turn)):
            active = row[row >= 0]
            # Padding only at the end.
            assert (row[len(active):] == -1).all()
            assert sorted(active.tolist()) == sorted(compute(board, pov)), (name, board.fen(), pov)
            assert active.max() < inputs
            checked += len(active)
    assert checked > 100_000


def test_score_and_result_are_the_side_to_moves(tmp_path, cli, fixtures):
    epd = tmp_path / "labelled.epd"
    epd.write_text(
        '4k3/8/8/8/8/8/4P3/4K3 w - - c9 "1-0"; ce 150;\n'
        '4k3/8/8/8/8/8/4P3/4K3 b - - c9 "1-0"; ce -150;\n'
        '4k3/8/8/8/8/8/4P3/4K3 b - - c9 "1/2-1/2";\n'
        '4k3/8/8/8/8/8/4P3/4K3 w - -\n'
    )
    out = tmp_path / "labelled.npz"
    cli("features", epd, "--kind", "nnue", "--set", "768", "-o", out)
    data = np.load(out)
    assert data["stm"].tolist() == [0, 1, 1, 0]
    # ce is the side to move's already: +150 for White to move, -150 for Black to move.
    assert data["score"][:2].tolist() == [150, -150]
    assert data["result"][:3].tolist() == [1.0, 0.0, 0.5]
    assert np.isnan(data["result"][3])


def test_set_is_required_and_checked(tmp_path, cli, fixtures):
    done = cli("features", fixtures / "epd/wac.epd", "--kind", "nnue", "-o", tmp_path / "x.npz", check=False)
    assert done.returncode != 0 and "--set" in done.stderr
    done = cli("features", fixtures / "epd/wac.epd", "--kind", "nnue", "--set", "halfkx",
               "-o", tmp_path / "x.npz", check=False)
    assert done.returncode != 0 and "halfkx" in done.stderr
