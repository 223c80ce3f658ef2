"""`pawnstorm import` against python-chess, the reference, on every PGN fixture and on
fixtures/pgn/adversarial (scripts/adversarial_pgn.py writes it): each game python-chess
reads cleanly comes out of pawnstorm with the same positions (board, side, castling
rights, en passant, clocks) and moves, or is refused with its first line and a reason
from the short list of deliberate refusals; a game python-chess reads with errors is
refused, or kept with python-chess's main line as far as python-chess read it (an error in
a variation); no game
is lost, merged or invented: the two readers' games pair up one to one, in order."""

import pathlib
import re

import pytest

from conftest import ROOT, required

chess = required("chess")
import chess.pgn  # noqa: E402

pawnstorm = required("pawnstorm")

FIXTURES = sorted((ROOT / "fixtures" / "pgn").glob("*.pgn")) + sorted(
    (ROOT / "fixtures" / "pgn" / "adversarial").glob("*.pgn")
)

# What pawnstorm refuses where python-chess reads on: a tag line python-chess silently
# ignores, moves that are not moves of chess (null moves, drops, another variant), text
# with neither tags nor moves (python-chess makes it a game of the starting position),
# and a comment never closed (python-chess lets it run to the end of the file).
DELIBERATE = ("malformed tag", "null moves", "piece drops", "not a game", "unterminated comment")
# A variant refusal is deliberate only for a game python-chess itself reads as another
# variant (its board's `uci_variant` is not "chess"): a standard game refused as a
# "variant" is a bug.
VARIANT_REFUSAL = "is not supported"


class LineCounter:
    """A text file whose readline counts lines, to know where python-chess's games start."""

    def __init__(self, handle):
        self.handle = handle
        self.line = 0

    def readline(self):
        line = self.handle.readline()
        if line:
            self.line += 1
        return line


def python_chess_games(text):
    """(first line, errors, positions, moves, variant) of each game python-chess reads in
    `text` (variant: the board's `uci_variant`, None where no board could be set up)."""
    import io

    counter = LineCounter(io.StringIO(text, newline=None))
    games = []
    while True:
        start = {}

        class Builder(chess.pgn.GameBuilder):
            def begin_game(self):
                start["line"] = counter.line
                return super().begin_game()

        game = chess.pgn.read_game(counter, Visitor=Builder)
        if game is None:
            return games
        variant = None
        try:
            board = game.board()
            variant = board.uci_variant
            positions = [key(board)]
            moves = []
            for move in game.mainline_moves():
                moves.append(move_code(board, move))
                board.push(move)
                positions.append(key(board))
        except (AssertionError, ValueError):
            # After an error in a variation python-chess goes on reading the main line in
            # the variation's position (its board stack is not popped): a main line that
            # does not replay, with the error recorded; and a bad FEN tag leaves no board.
            # Nothing to compare with.
            assert game.errors
            positions = moves = None
        games.append((start["line"], list(game.errors), positions, moves, variant))


def key(board):
    ep = board.ep_square if board.has_legal_en_passant() else None
    return (board.board_fen(), board.turn, board.clean_castling_rights(), ep,
            board.halfmove_clock, board.fullmove_number)


def move_code(board, move):
    """The DB's move label: castling as the king's move to the g- or c-file, or to its own
    rook when it is already there (Chess960)."""
    to = move.to_square
    if board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        target = chess.square(6 if board.is_kingside_castling(move) else 2, rank)
        if target != move.from_square:
            to = target
        elif not board.chess960:
            to = move.to_square
    promotion = move.promotion - 1 if move.promotion else 0
    return move.from_square + 64 * to + 4096 * promotion


def pawnstorm_games(cli, path, tmp_path, threads):
    """(kept games in order as (positions, moves), {first line: reason} of refused ones)."""
    db_path = tmp_path / f"{path.name}.{threads}.psdb"
    done = cli("import", path, "-o", db_path, "--threads", threads)
    refused = {}
    for line in done.stderr.splitlines():
        prefix = f"warning: skipped {path}:"
        if line.startswith(prefix):
            number, reason = line[len(prefix):].split(": ", 1)
            refused[int(number)] = reason
    db = pawnstorm.Database(db_path)
    labels = db.labels()
    games = []
    last = None
    for i in range(len(db)):
        game_id = int(labels["game_id"][i])
        if game_id != last:
            games.append(([], []))
            last = game_id
        assert int(labels["ply"][i]) == len(games[-1][0]), f"{path}: row {i}: plies run on"
        games[-1][0].append(key(chess.Board(db[i].fen, chess960=True)))
        games[-1][1].append(int(labels["move"][i]))
    return games, refused, done.stderr


def restore_blank_lines(text):
    """The file with a blank line put back before each tag pair that follows movetext."""
    out = []
    for line in text.split("\n"):
        if re.match(r'\[[A-Za-z0-9]\w* +".*"\]\s*$', line) and out and out[-1].strip() and not out[-1].startswith("["):
            out.append("")
        out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT / "fixtures" / "pgn")))
def test_import_replays_every_game_as_python_chess_does(cli, tmp_path, path):
    text = path.read_bytes().decode("utf-8", errors="replace")
    deviation = path.name == "no-blank-line-between-games.pgn"
    reference = python_chess_games(restore_blank_lines(text) if deviation else text)
    ours, refused, stderr = pawnstorm_games(cli, path, tmp_path, 2)
    if deviation:
        assert not refused, stderr
        assert len(reference) == 4 and all(not errors for _, errors, _, _, _ in reference)
    kept = iter(ours)
    compared = 0
    for first_line, errors, positions, moves, variant in reference:
        where = f"{path.name}: the game at line {first_line}"
        if not deviation and first_line in refused:
            reason = refused.pop(first_line)
            if not errors:
                deliberate = any(d in reason for d in DELIBERATE) or (
                    VARIANT_REFUSAL in reason and variant not in (None, "chess"))
                assert deliberate, (
                    f"{where}: python-chess reads it cleanly (as {variant}), pawnstorm "
                    f"refuses it: {reason}")
            continue
        game = next(kept, None)
        assert game is not None, f"{where}: python-chess reads it, pawnstorm lost it\n{stderr}"
        our_positions, our_moves = game
        if positions is None:
            continue
        if errors:
            # python-chess stops at an error (or, after one in a variation, reads the rest
            # of the main line in the wrong position): the same up to there, and pawnstorm's
            # game may go on (its last move is then a real one, not "no move").
            our_positions = our_positions[:len(positions)]
            our_moves = our_moves[:len(positions) - 1]
        assert our_positions == positions, (
            f"{where}: positions differ (python-chess errors: {errors})\n"
            f"first difference at ply {next((i for i, (a, b) in enumerate(zip(our_positions, positions)) if a != b), min(len(positions), len(our_positions)))}: "
            f"{len(our_positions)} positions against {len(positions)}")
        if errors:
            assert our_moves == moves, f"{where}: moves differ"
        else:
            assert our_moves[:-1] == moves, f"{where}: moves differ"
            assert our_moves[-1] == 65535, f"{where}: the last position has no move"
        compared += 1
    assert next(kept, None) is None, f"{path.name}: pawnstorm has games python-chess does not"
    assert not refused, f"{path.name}: refusals python-chess has no game for: {refused}"
    assert compared > 0


def test_threads_give_the_same_db_and_the_same_refusals(cli, tmp_path):
    path = ROOT / "fixtures" / "pgn" / "adversarial" / "refused.pgn"
    one = pawnstorm_games(cli, path, tmp_path, 1)
    two = pawnstorm_games(cli, path, tmp_path, 2)
    assert one[:2] == two[:2]
    assert len(one[1]) >= 9, one[2]
