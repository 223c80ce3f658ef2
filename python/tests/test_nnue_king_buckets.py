"""King-bucketed networks (issue 55): a raw file as bullet saves a net with
``ChessBucketsMirrored`` inputs, written here with numpy, evaluates through the CLI
(``--net FILE --arch ...``) exactly as a reference written from bullet's own code does (not
from pawnstorm's writer or docs):

- bulletformat's ``ChessBoard`` holds the board from the side to move's view (Black to
  move: every square ``^ 56``, colours swapped), ``our_ksq`` the side to move's king in that
  view, ``opp_ksq`` the other king ``^ 56`` (in its own view);
- ``ChessBucketsMirrored::new(map32)`` expands the map as
  ``map32[(sq // 8) * 4 + [0, 1, 2, 3, 3, 2, 1, 0][sq % 8]]``;
- ``map_features``: per perspective ``flip = 7 if ksq % 8 > 3 else 0`` and
  ``bucket = 768 * expanded[ksq]``; ``Chess768`` gives ``stm = [0, 384][c] + 64 * pc + sq``
  and ``ntm = [384, 0][c] + 64 * pc + (sq ^ 56)``; the features are
  ``stm_bucket + (stm ^ stm_flip)`` and ``ntm_bucket + (ntm ^ ntm_flip)``;
- the saved first layer is ``[768 K][N]`` (a factoriser already merged in), then the
  biases ``[N]``, the output weights ``[B][2N]`` and biases ``[B]`` (``MaterialCount<B>``),
  all ``i16``, the file padded with zeros to a multiple of 64 bytes.
"""

import random

import chess
import numpy as np
import pytest

from test_nnue import QA, QB, SCALE, output_bucket, positions, truncating_div

STANDARD = {
    4: "0011" "2222" "3333" "3333" "3333" "3333" "3333" "3333",
    8: "0123" "4455" "6666" "6666" "7777" "7777" "7777" "7777",
}


def expand(map32):
    return [map32[(sq // 8) * 4 + [0, 1, 2, 3, 3, 2, 1, 0][sq % 8]] for sq in range(64)]


def bullet_features(board, map32):
    """(stm features, ntm features) of `board` as bullet's ChessBucketsMirrored maps them."""
    black = board.turn == chess.BLACK
    flip = 56 if black else 0
    us = board.turn
    ksq = board.king(us) ^ flip
    opp_ksq = (board.king(not us) ^ flip) ^ 56
    expanded = expand(map32)

    def get(k):
        return (7 if k % 8 > 3 else 0), 768 * expanded[k]

    stm_flip, stm_bucket = get(ksq)
    ntm_flip, ntm_bucket = get(opp_ksq)
    stm, ntm = [], []
    for square, piece in board.piece_map().items():
        sq = square ^ flip
        c = int(piece.color != us)
        pc = 64 * (piece.piece_type - 1)
        s = [0, 384][c] + pc + sq
        n = [384, 0][c] + pc + (sq ^ 56)
        stm.append(stm_bucket + (s ^ stm_flip))
        ntm.append(ntm_bucket + (n ^ ntm_flip))
    return stm, ntm


def random_net(k, n, buckets, seed):
    rng = np.random.default_rng(seed)
    return (
        rng.integers(-60, 61, size=(768 * k, n)),
        rng.integers(-40, 121, size=n),
        rng.integers(-127, 128, size=(buckets, 2 * n)),
        rng.integers(-3000, 3001, size=buckets),
    )


def write_bullet(path, net):
    data = b"".join(np.asarray(a, dtype="<i2").tobytes() for a in (x.reshape(-1) for x in net))
    data += bytes(-len(data) % 64)
    path.write_bytes(data)
    return path


def reference(fen, net, map32):
    ft_weights, ft_bias, out_weights, out_bias = net
    board = chess.Board(fen)
    stm_features, ntm_features = bullet_features(board, map32)
    accs = []
    for features in (stm_features, ntm_features):
        acc = ft_bias.astype(np.int64) + ft_weights[features].sum(axis=0)
        assert np.all((acc >= -32768) & (acc < 32768))
        accs.append(acc)
    bucket = output_bucket(board, len(out_bias))
    n = len(ft_bias)
    w = out_weights[bucket]
    total = 0
    for acc, half in ((accs[0], w[:n]), (accs[1], w[n:])):
        v = np.clip(acc, 0, QA)
        total += int((v * v * half).sum())
    assert -(2**31) <= total < 2**31
    return truncating_div((truncating_div(total, QA) + int(out_bias[bucket])) * SCALE, QA * QB)


def kings_everywhere(count, seed):
    """Positions of random games with both kings moved to random squares (legal, not over,
    pawns on both sides so no exact endgame rule applies): every bucket and both halves of
    the board for each perspective."""
    rng = random.Random(seed)
    fens = []
    for fen in positions(count * 3, seed):
        if len(fens) == count:
            break
        board = chess.Board(fen)
        for colour in chess.COLORS:
            empty = [s for s in chess.SQUARES if board.piece_at(s) is None]
            board.remove_piece_at(board.king(colour))
            board.set_piece_at(rng.choice(empty), chess.Piece(chess.KING, colour))
        board.castling_rights = 0
        board.ep_square = None
        board.clear_stack()
        if board.is_valid() and not board.is_game_over():
            fens.append(board.fen())
    assert len(fens) == count
    return fens


def random_map(k, seed):
    """A map of K buckets, every one used, in no pattern a standard map has."""
    rng = random.Random(seed)
    cells = list(range(k)) + [rng.randrange(k) for _ in range(32 - k)]
    rng.shuffle(cells)
    return cells


CASES = [
    # (K, map, N, output buckets): N = 64 and 48 (a width the kernels pad to whole
    # 32-value chunks), 8 output buckets and 1.
    (4, STANDARD[4], 64, 8),
    (8, STANDARD[8], 48, 8),
    (4, "random", 48, 1),
    (8, "random", 64, 8),
]


@pytest.mark.parametrize("k, layout, n, buckets", CASES)
def test_a_raw_bullet_king_bucketed_net_gives_bullets_values(tmp_path, cli, k, layout, n, buckets):
    if layout == "random":
        map32 = random_map(k, seed=k * n)
        spec = "".join(f"{b:x}" for b in map32)
    else:
        map32 = [int(c, 16) for c in layout]
        spec = str(k)
    net = random_net(k, n, buckets, seed=k * 100 + n + buckets)
    path = write_bullet(tmp_path / "bullet.bin", net)
    fens = kings_everywhere(150, seed=k + n)
    # The positions reach every king bucket and both mirror halves from both perspectives.
    seen = set()
    for fen in fens:
        board = chess.Board(fen)
        for colour in chess.COLORS:
            view = board.king(colour) ^ (56 if colour == chess.BLACK else 0)
            seen.add((expand(map32)[view], view % 8 > 3))
    assert {b for b, _ in seen} == set(range(k)) and {m for _, m in seen} == {False, True}

    stm = np.array([reference(fen, net, map32) for fen in fens], dtype=np.int32)
    assert len(set(stm.tolist())) > 100
    black = np.array([chess.Board(fen).turn == chess.BLACK for fen in fens])
    white = np.where(black, -stm, stm)
    arch = f"king-buckets={spec},output-buckets={buckets}"

    epd = tmp_path / "positions.epd"
    epd.write_text("\n".join(fens) + "\n")
    out = tmp_path / "scores.npy"
    cli("eval", epd, "--eval", "nnue", "--net", path, "--arch", arch, "--pov", "stm", "-o", out)
    np.testing.assert_array_equal(np.load(out), stm)
    # A DB of the positions in order: the bulk pass carries accumulators from row to row,
    # refreshing a perspective whose king changed bucket or side.
    db = tmp_path / "positions.psdb"
    cli("import", epd, "-o", db)
    cli("eval", db, "--net", path, "--arch", arch, "-o", out, "--threads", "2")
    np.testing.assert_array_equal(np.load(out), white)

    # Without its architecture the raw file is refused by its size, with the reason.
    done = cli("eval", db, "--net", path, "-o", out, check=False)
    assert done.returncode != 0 and "--arch" in done.stderr, done.stderr
    # Another map of the same K loads (the size agrees) but reads other features.
    other = "".join(f"{b:x}" for b in random_map(k, seed=1))
    if other != spec:
        cli("eval", epd, "--net", path, "--arch", f"king-buckets={other},output-buckets={buckets}",
            "--pov", "stm", "-o", out)
        assert not np.array_equal(np.load(out), stm)


def test_the_python_api_reads_a_raw_bucketed_net_with_its_arch(tmp_path, cli):
    """``arch=`` in ``evaluate_fens``, ``Database.evaluate`` and ``evaluate_boards`` is the
    CLI's ``--arch``: the same reference values, and the same refusals."""
    import pawnstorm

    k, n, buckets = 4, 48, 8
    map32 = random_map(k, seed=11)
    spec = "".join(f"{b:x}" for b in map32)
    arch = f"king-buckets={spec},output-buckets={buckets}"
    path = write_bullet(tmp_path / "bullet.bin", random_net(k, n, buckets, seed=5))
    fens = kings_everywhere(60, seed=7)
    stm = np.array([reference(fen, random_net(k, n, buckets, seed=5), map32) for fen in fens],
                   dtype=np.int32)
    black = np.array([chess.Board(fen).turn == chess.BLACK for fen in fens])
    white = np.where(black, -stm, stm)

    np.testing.assert_array_equal(pawnstorm.evaluate_fens(fens, net=path, arch=arch, pov="stm"), stm)
    epd = tmp_path / "positions.epd"
    epd.write_text("\n".join(fens) + "\n")
    db_path = tmp_path / "positions.psdb"
    cli("import", epd, "-o", db_path)
    db = pawnstorm.Database(db_path)
    np.testing.assert_array_equal(db.evaluate(net=path, arch=arch), white)
    side = db.columns()["side_to_move"]
    np.testing.assert_array_equal(
        pawnstorm.evaluate_boards(db.bitboards(), side, count=len(db), net=path, arch=arch),
        white)

    with pytest.raises(pawnstorm.PawnstormError, match="--arch"):
        pawnstorm.evaluate_fens(fens, net=path)
    with pytest.raises(ValueError, match="standard map"):
        pawnstorm.evaluate_fens(fens, net=path, arch="king-buckets=3")
    with pytest.raises(ValueError, match="raw bullet net file"):
        pawnstorm.evaluate_fens(fens, eval="nnue", arch=arch)


def test_bad_architectures_are_refused_with_the_reason(tmp_path, cli):
    path = write_bullet(tmp_path / "bullet.bin", random_net(4, 32, 8, seed=3))
    epd = tmp_path / "p.epd"
    epd.write_text(chess.STARTING_FEN + "\n")
    for arch, message in [
        ("king-buckets=3", "standard map"),
        ("king-buckets=0011", "32"),
        ("output-buckets=9", "from 1 to 8"),
        ("kings=4", "king-buckets and output-buckets"),
        ("king-buckets=8,output-buckets=8", "768x8hm"),
    ]:
        done = cli("eval", epd, "--net", path, "--arch", arch, check=False)
        assert done.returncode != 0 and message in done.stderr, (arch, done.stderr)


@pytest.mark.parametrize("k, layout", [(4, STANDARD[4]), (8, "random")])
def test_features_give_bullets_king_bucketed_inputs(tmp_path, cli, k, layout):
    """`features --kind nnue --set 768xKhm` (or `768hm:MAP`): the inputs a Python trainer
    feeds are bullet's ChessBucketsMirrored indices, side to move first."""
    if layout == "random":
        map32 = random_map(k, seed=5)
        name = "768hm:" + "".join(f"{b:x}" for b in map32)
    else:
        map32 = [int(c, 16) for c in layout]
        name = f"768x{k}hm"
    fens = kings_everywhere(120, seed=k)
    epd = tmp_path / "p.epd"
    epd.write_text("\n".join(fens) + "\n")
    out = tmp_path / "f.npz"
    cli("features", epd, "--kind", "nnue", "--set", name, "-o", out)
    data = np.load(out)
    stm_rows, nstm_rows = data["stm_features"], data["nstm_features"]
    for i, fen in enumerate(fens):
        stm, ntm = bullet_features(chess.Board(fen), map32)
        for row, expected in ((stm_rows[i], stm), (nstm_rows[i], ntm)):
            got = row[row >= 0]
            assert sorted(got.tolist()) == sorted(expected), fen
            assert np.all(row[len(got):] == -1)
        assert max(stm + ntm) < 768 * k


def test_the_loader_gives_the_same_king_bucketed_inputs(tmp_path, cli):
    """`pawnstorm.Loader(features="768x8hm")` batches are the features CLI's arrays."""
    import pawnstorm

    fens = kings_everywhere(200, seed=11)
    epd = tmp_path / "p.epd"
    epd.write_text("\n".join(fens) + "\n")
    db = tmp_path / "p.psdb"
    cli("import", epd, "-o", db)
    out = tmp_path / "f.npz"
    cli("features", db, "--kind", "nnue", "--set", "768x8hm", "-o", out)
    want = np.load(out)
    batches = list(pawnstorm.Loader(db, batch_size=64, shuffle=False, features="768x8hm"))
    for name in ["stm_features", "nstm_features"]:
        got = np.concatenate([b[name] for b in batches])
        np.testing.assert_array_equal(got, want[name], err_msg=name)
    assert want["stm_features"].max() >= 768 * 4, "buckets past the first are used"
