"""The compatibility test of the network (issue 37): a raw network in bullet's quantised
layout, written here by hand with numpy (not by pawnstorm), evaluates through the CLI
(`eval --eval nnue --net FILE`) and the Python API exactly as a plain reference written
from the formula does:

- inputs bullet's Chess768: ``(colour != perspective) * 384 + type * 64 + square``, the
  square ``^ 56`` from Black's perspective;
- first layer ``acc = bias + sum of the rows of the active inputs`` (int16, QA = 255);
- ``eval = (sum(screlu(acc)[stm] * w[:N]) + sum(screlu(acc)[nstm] * w[N:])) / QA + b``,
  times 400, over QA * QB (QB = 64), divisions truncating toward zero, ``screlu(x) =
  clamp(x, 0, 255)**2``; centipawns from the side to move's view.

The positions have pawns on both sides, so no exact endgame rule applies."""

import random

import chess
import numpy as np
import pytest

import pawnstorm
from conftest import ROOT



QA, QB, SCALE = 255, 64, 400


def write_raw(path, ft_weights, ft_bias, out_weights, out_bias, pad=False):
    """bullet's raw layout: little-endian i16, ft weights [768][N], ft bias [N], output
    weights [2N] (the side to move's half first), output bias; `pad` as bullet pads the
    file, with zeros to a multiple of 64 bytes. A raw file has one output."""
    assert len(out_bias) == 1, "a raw file has no field for output buckets"
    data = payload(ft_weights, ft_bias, out_weights, out_bias)
    if pad:
        data += bytes(-len(data) % 64)
    path.write_bytes(data)
    return path


def payload(ft_weights, ft_bias, out_weights, out_bias):
    """bullet's (bucketed) payload: ft weights [768][N], ft bias [N], output weights
    [B][2N] (bucket by bucket, each the side to move's half first), output biases [B]."""
    return b"".join(
        np.asarray(a, dtype="<i2").tobytes()
        for a in (ft_weights.reshape(-1), ft_bias, out_weights, out_bias)
    )


def write_pawnstorm(path, ft_weights, ft_bias, out_weights, out_bias, provenance="by hand"):
    """pawnstorm's layout, written from docs/NNUE.md's table (not from pawnstorm's writer):
    a 64-byte header, the provenance text, the payload."""
    import struct
    import zlib

    n, buckets = len(ft_bias), len(out_bias)
    text = provenance.encode()
    body = text + payload(ft_weights, ft_bias, out_weights, out_bias)
    header = b"pawnstorm-nnue\r\n" + struct.pack(
        "<10IQ", 1, 768, n, buckets, 1, QA, QB, SCALE, len(text), zlib.crc32(body),
        len(body) - len(text))
    assert len(header) == 64 and len(body) - len(text) == 2 * (769 * n + buckets * (2 * n + 1))
    path.write_bytes(header + body)
    return path


def random_net(n, seed, out_range, buckets=1):
    rng = np.random.default_rng(seed)
    return (
        rng.integers(-60, 61, size=(768, n)),
        rng.integers(-40, 121, size=n),
        rng.integers(-out_range, out_range + 1, size=buckets * 2 * n),
        rng.integers(-3000, 3001, size=buckets),
    )


def truncating_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def features(board, perspective):
    out = []
    for square, piece in board.piece_map().items():
        s = square if perspective == chess.WHITE else square ^ 56
        out.append((piece.color != perspective) * 384 + (piece.piece_type - 1) * 64 + s)
    return out


def output_bucket(board, buckets):
    """bullet's MaterialCount<B>: (pieces - 2) // ceil(32 / B), at most B - 1."""
    pieces = len(board.piece_map())
    return min((pieces - 2) // -(-32 // buckets), buckets - 1)


def reference(fen, net):
    """The formula, in Python integers."""
    ft_weights, ft_bias, out_weights, out_bias = net
    n, buckets = len(ft_bias), len(out_bias)
    board = chess.Board(fen)
    acc = {}
    for perspective in (chess.WHITE, chess.BLACK):
        a = [int(b) for b in ft_bias]
        for f in features(board, perspective):
            a = [x + int(w) for x, w in zip(a, ft_weights[f])]
        assert all(-32768 <= x < 32768 for x in a), "the test's weights keep i16"
        acc[perspective] = a
    stm, nstm = acc[board.turn], acc[not board.turn]
    bucket = output_bucket(board, buckets)
    weights = out_weights[bucket * 2 * n:(bucket + 1) * 2 * n]
    total = 0
    for values, half in ((stm, weights[:n]), (nstm, weights[n:])):
        for x, w in zip(values, half):
            v = min(max(x, 0), QA)
            total += v * v * int(w)
    assert -(2**31) <= total < 2**31, "the test's weights keep the i32 sum"
    return truncating_div((truncating_div(total, QA) + int(out_bias[bucket])) * SCALE, QA * QB)


def positions(count, seed):
    """Positions of random games with pawns on both sides (no exact rule applies)."""
    rng = random.Random(seed)
    fens = []
    while len(fens) < count:
        board = chess.Board()
        for _ in range(rng.randrange(1, 90)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        pawns = board.pieces(chess.PAWN, chess.WHITE), board.pieces(chess.PAWN, chess.BLACK)
        if all(pawns) and not board.is_game_over():
            fens.append(board.fen())
    return fens


def thinned_positions(count, seed):
    """Positions of every size, 4 to 32 pieces, for output buckets: random game positions
    with random pieces other than kings taken off, a pawn of each side kept (so no exact
    rule applies), legal and not over."""
    rng = random.Random(seed)
    fens = []
    for fen in positions(count * 4, seed):
        if len(fens) == count:
            break
        board = chess.Board(fen)
        pieces = [sq for sq, p in board.piece_map().items() if p.piece_type != chess.KING]
        rng.shuffle(pieces)
        keep = {next(sq for sq in pieces if board.piece_at(sq) == chess.Piece(chess.PAWN, c))
                for c in chess.COLORS}
        for square in pieces[:rng.randrange(len(pieces))]:
            if square not in keep:
                board.remove_piece_at(square)
        board.clear_stack()
        if board.is_valid() and not board.is_game_over():
            fens.append(board.fen())
    assert len(fens) == count
    return fens


CASES = [
    # (width, output weight range, padded): small output weights (|w| <= 127, the kernels'
    # multiply-first path) and larger ones (widened first), unpadded and padded files; 48,
    # a width the kernels pad to whole 32-value chunks inside.
    (32, 127, False),
    (64, 127, True),
    (32, 400, False),
    (64, 127, False),
    (48, 127, True),
    (48, 400, False),
]


@pytest.mark.parametrize("n, out_range, pad", CASES)
def test_a_hand_written_bullet_network_gives_the_formulas_values(tmp_path, cli, n, out_range, pad):
    net = random_net(n, seed=n + out_range, out_range=out_range)
    path = write_raw(tmp_path / "net.bin", *net, pad=pad)
    size = path.stat().st_size
    assert size == (1542 * n + 2 if not pad else -(-(1542 * n + 2) // 64) * 64)
    fens = positions(120, seed=n * 7 + out_range)
    evaluates_as_the_formula(tmp_path, cli, path, net, fens)


@pytest.mark.parametrize("n, buckets, out_range", [(48, 8, 127), (64, 8, 400), (32, 3, 127)])
def test_a_hand_written_bucketed_network_gives_the_formulas_values(tmp_path, cli, n, buckets, out_range):
    """Output buckets ([B][2N] output weights, B biases) in pawnstorm's layout, written and
    evaluated here from docs/NNUE.md alone, on positions of every piece count."""
    net = random_net(n, seed=n * buckets + out_range, out_range=out_range, buckets=buckets)
    path = write_pawnstorm(tmp_path / "bucketed.nnue", *net)
    fens = thinned_positions(160, seed=n + buckets)
    used = {output_bucket(chess.Board(fen), buckets) for fen in fens}
    assert used == set(range(buckets)), f"every bucket is read: {sorted(used)}"
    evaluates_as_the_formula(tmp_path, cli, path, net, fens)


def evaluates_as_the_formula(tmp_path, cli, path, net, fens):
    """The network file at `path` gives `reference`'s values for `net` on `fens` through
    the CLI (text input and a DB, both points of view) and the Python API (a DB, FENs,
    board arrays; every kernel path)."""
    stm = np.array([reference(fen, net) for fen in fens], dtype=np.int32)
    black = np.array([chess.Board(fen).turn == chess.BLACK for fen in fens])
    white = np.where(black, -stm, stm)
    # The weights drive the values far apart: not a constant, not all clamped.
    assert len(set(stm.tolist())) > 100

    epd = tmp_path / "positions.epd"
    epd.write_text("\n".join(fens) + "\n")
    out = tmp_path / "scores.npy"
    cli("eval", epd, "--eval", "nnue", "--net", path, "--pov", "stm", "-o", out)
    np.testing.assert_array_equal(np.load(out), stm)
    db_path = tmp_path / "positions.psdb"
    cli("import", epd, "-o", db_path)
    cli("eval", db_path, "--eval", "nnue", "--net", path, "-o", out, "--threads", "2")
    np.testing.assert_array_equal(np.load(out), white)

    db = pawnstorm.Database(db_path)
    for scalar in (False, True):
        np.testing.assert_array_equal(db.evaluate(eval="nnue", net=path, pov="stm", scalar=scalar), stm)
    np.testing.assert_array_equal(db.evaluate(net=path, threads=1), white)
    np.testing.assert_array_equal(pawnstorm.evaluate_fens(fens, eval="nnue", net=str(path)), white)
    boards = db.bitboards()
    side = db.columns()["side_to_move"]
    np.testing.assert_array_equal(
        pawnstorm.evaluate_boards(boards, side, count=len(db), eval="nnue", net=path, pov="stm"), stm
    )


def test_bad_network_files_are_refused_with_the_reason(tmp_path, cli):
    net = random_net(32, seed=1, out_range=127)
    good = write_raw(tmp_path / "good.bin", *net)
    raw = good.read_bytes()
    truncated = tmp_path / "truncated.bin"
    truncated.write_bytes(raw[:-7])
    wrong_size = tmp_path / "wrong-size.bin"
    wrong_size.write_bytes(raw + bytes(100))
    fens = positions(4, seed=2)
    epd = tmp_path / "p.epd"
    epd.write_text("\n".join(fens) + "\n")
    db_path = tmp_path / "p.psdb"
    cli("import", epd, "-o", db_path)
    db = pawnstorm.Database(db_path)
    for bad in (truncated, wrong_size):
        done = cli("eval", db_path, "--eval", "nnue", "--net", bad, check=False)
        assert done.returncode != 0
        assert bad.name in done.stderr and "is no (768 → N) × 2 → 1 network" in done.stderr, done.stderr
        with pytest.raises(pawnstorm.PawnstormError, match="is no \\(768 → N\\) × 2 → 1 network"):
            db.evaluate(eval="nnue", net=bad)
        with pytest.raises(pawnstorm.PawnstormError, match=bad.name):
            pawnstorm.evaluate_fens(fens, net=bad)
    with pytest.raises(FileNotFoundError):
        db.evaluate(net=tmp_path / "missing.bin")
    # What belongs to the hand-crafted evaluation is refused with a network.
    with pytest.raises(ValueError, match="a network has none"):
        db.evaluate(terms=True, net=good)
    with pytest.raises(ValueError, match="eval must be"):
        db.evaluate(eval="nn", net=good)
    with pytest.raises(ValueError, match="net is the network of eval='nnue'"):
        db.evaluate(eval="hce", net=good)
    # Without a file, the compiled-in network (one always is): nets/default.nnue.
    scores = db.evaluate(eval="nnue")
    assert scores.shape == (len(db),)
    assert np.array_equal(scores, db.evaluate(eval="nnue", net=ROOT / "nets" / "default.nnue"))
