"""`--quiet-only` against an independent definition of a quiet position, written here with
python-chess and classical material values alone: the side to move is not in check, and no
sequence of captures and promotions wins material, each side free to stop capturing at any
point (a capture-only search over material, as a static exchange generalised from one
square to the board). pawnstorm's filter is the same kind of search over its own
evaluation, so the two may differ only where the evaluation's positional terms outweigh a
material gain or loss: a pawn won at the price of the king's shelter, a trade that improves
the pieces.

A one-square static exchange (`see` below) is a poorer oracle: it calls a capture winning
when the opponent answers by taking more elsewhere (a queen left en prise while a knight
takes a pawn), which both searches see. Its disagreements are printed for comparison."""

import chess
import numpy as np

VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500, chess.QUEEN: 900, chess.KING: 20000}


def see(board: chess.Board, move: chess.Move) -> int:
    """The material the side to move wins by `move` (a capture or a promotion) and the best
    sequence of recaptures on its square, in centipawns."""
    to = move.to_square
    occupied = board.occupied ^ chess.BB_SQUARES[move.from_square]
    if board.is_en_passant(move):
        captured = chess.PAWN
        occupied ^= chess.BB_SQUARES[to + (-8 if board.turn == chess.WHITE else 8)]
    else:
        captured = board.piece_type_at(to)
    gains = [VALUES[captured] if captured else 0]
    on_square = board.piece_type_at(move.from_square)
    if move.promotion:
        gains[0] += VALUES[move.promotion] - VALUES[chess.PAWN]
        on_square = move.promotion
    side = not board.turn
    while True:
        attackers = board.attackers_mask(side, to, occupied) & occupied
        attacker = next(
            ((kind, square) for kind in VALUES for square in chess.scan_forward(attackers & board.pieces_mask(kind, side))),
            None,
        )
        if attacker is None:
            break
        kind, square = attacker
        if kind == chess.KING and board.attackers_mask(not side, to, occupied ^ chess.BB_SQUARES[square]) & occupied:
            break  # the king may not recapture into check
        gains.append(VALUES[on_square] - gains[-1])
        on_square = kind
        occupied ^= chess.BB_SQUARES[square]
        side = not side
    for i in range(len(gains) - 1, 0, -1):
        gains[i - 1] = -max(-gains[i - 1], gains[i])
    return gains[0]


def material(board: chess.Board) -> int:
    """Material from the side to move's point of view."""
    return sum(
        VALUES[piece.piece_type] * (1 if piece.color == board.turn else -1)
        for piece in board.piece_map().values()
        if piece.piece_type != chess.KING
    )


def captures(board: chess.Board):
    """Legal captures and promotions, most valuable victim first, then least valuable attacker."""
    moves = [m for m in board.legal_moves if board.is_capture(m) or m.promotion]

    def order(move):
        victim = board.piece_type_at(move.to_square) or (chess.PAWN if board.is_en_passant(move) else None)
        return (-(VALUES[victim] if victim else 0) - (VALUES[move.promotion] if move.promotion else 0),
                VALUES[board.piece_type_at(move.from_square)])

    return sorted(moves, key=order)


def material_search(board: chess.Board, alpha: int, beta: int, ply: int) -> int:
    """Fail-hard capture-only search over material, standing pat allowed, 16 plies at most."""
    stand = material(board)
    if stand >= beta:
        return beta
    if ply >= 16:
        return max(alpha, stand)
    alpha = max(alpha, stand)
    for move in captures(board):
        board.push(move)
        score = -material_search(board, -beta, -alpha, ply + 1)
        board.pop()
        if score >= beta:
            return beta
        alpha = max(alpha, score)
    return alpha


def quiet_by_material(board: chess.Board) -> bool:
    if board.is_check():
        return False
    stand = material(board)
    return material_search(board, stand, stand + 1, 0) <= stand


def quiet_by_see(board: chess.Board) -> bool:
    if board.is_check():
        return False
    return not any(
        see(board, move) > 0 for move in board.legal_moves if board.is_capture(move) or move.promotion
    )


def test_see_knows_the_textbook_exchanges():
    # A pawn defended by a pawn, taken by a knight: the knight is lost for a pawn.
    board = chess.Board("4k3/8/3p4/4p3/8/5N2/8/4K3 w - - 0 1")
    assert see(board, chess.Move.from_uci("f3e5")) == 100 - 300
    # Undefended: the pawn is won.
    board = chess.Board("r3k3/8/8/8/3p4/8/3R4/3RK3 w - - 0 1")
    assert see(board, chess.Move.from_uci("d2d4")) == 100
    # Defended by a rook, but the rook behind White's recaptures through the x-ray.
    board = chess.Board("3rk3/8/8/3p4/8/8/3R4/3RK3 w - - 0 1")
    assert see(board, chess.Move.from_uci("d2d5")) == 100 - 500 + 500
    # Defended twice: White loses the exchange whether it goes on or stops.
    board = chess.Board("3rk3/3r4/8/3p4/8/8/3R4/3RK3 w - - 0 1")
    assert see(board, chess.Move.from_uci("d2d5")) == 100 - 500
    # A promotion on a guarded square: the queen is taken.
    board = chess.Board("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    assert see(board, chess.Move.from_uci("a7a8q")) == 800 - 900
    assert see(board, chess.Move.from_uci("a7b8q")) == 500 + 800
    assert not quiet_by_see(board)
    assert quiet_by_see(chess.Board())


def test_quiet_only_agrees_with_a_material_capture_search(cli, fixtures, tmp_path):
    lines = []
    for name in ["wac.epd", "sts.epd", "ecm.epd"]:
        lines += [l for l in (fixtures / "epd" / name).read_text().splitlines() if l.strip()][:400]
    boards = [chess.Board(" ".join(line.split()[:4]) + " 0 1") for line in lines]
    epd = tmp_path / "positions.epd"
    epd.write_text("\n".join(" ".join(line.split()[:4]) for line in lines) + "\n")
    db = tmp_path / "positions.psdb"
    cli("import", epd, "-o", db)
    out = tmp_path / "quiet.npz"
    cli("features", db, "--kind", "planes", "--quiet-only", "-o", out)
    with np.load(out) as arrays:
        kept = set(arrays["index"].tolist())
    by_search = [quiet_by_material(board) for board in boards]
    by_see = [quiet_by_see(board) for board in boards]
    kept_noisy = [boards[i].fen() for i in kept if not by_search[i]]
    dropped_quiet = [boards[i].fen() for i, quiet in enumerate(by_search) if quiet and i not in kept]
    quiet_total = sum(by_search)
    print(
        f"{len(boards)} positions, {len(kept)} kept by --quiet-only; by the material search "
        f"{quiet_total} quiet, kept but noisy {len(kept_noisy)}, quiet but dropped {len(dropped_quiet)}; "
        f"by one-square SEE {sum(by_see)} quiet, kept but noisy {sum(1 for i in kept if not by_see[i])}, "
        f"quiet but dropped {sum(1 for i, q in enumerate(by_see) if q and i not in kept)}"
    )
    assert len(boards) > 1000
    # Both kinds occur in these tactical suites (most of them quiet at the root by material).
    assert 0.1 * len(boards) < len(boards) - quiet_total and quiet_total > 0.5 * len(boards)
    assert all(not boards[i].is_check() for i in kept)
    # The two definitions agree but for the evaluation's positional judgement, both ways
    # (measured on these 1,100 positions: 37 of the 886 kept are noisy by material, 96 of
    # the 945 quiet by material are dropped; with PeSTO's material values instead of the
    # classical ones the search agrees no better, 49 and 86).
    assert len(kept_noisy) <= 0.06 * len(kept), kept_noisy[:10]
    assert len(dropped_quiet) <= 0.15 * quiet_total, dropped_quiet[:10]
    # The filter removes most of what is noisy by material (keeping every position not in
    # check would keep all of it).
    noisy_not_in_check = sum(1 for i, quiet in enumerate(by_search) if not quiet and not boards[i].is_check())
    assert len(kept_noisy) <= noisy_not_in_check / 2, (len(kept_noisy), noisy_not_in_check)
