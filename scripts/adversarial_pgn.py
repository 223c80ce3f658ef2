#!/usr/bin/env python3
"""Writes fixtures/pgn/adversarial/: PGN files made the ways real archives are messy, for
the differential test of `pawnstorm import` against python-chess
(python/tests/test_pgn_differential.py). Deterministic: the same files on every run.

    target/python-venv/bin/python scripts/adversarial_pgn.py [OUT_DIR]

Games are replayed with python-chess from fixtures/pgn/famous-games.pgn (and random
Chess960 games), then written with notations, comments, tags and line endings of the
kinds the issue lists: unescaped quotes in tags, games without tags, a comment right
after the tags, blank lines inside the movetext, long algebraic, coordinates, promotions
without `=`, check marks in any number, glyphs glued to moves, `ch` suffixes, CR-only and
CRLF line endings, a byte-order mark, `%` and `;` lines, variations, Chess960 castling
where the king stays on its square, and games python-chess itself refuses.
"""

import io
import os
import random
import sys

import chess
import chess.pgn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def source_games(count):
    with open(os.path.join(ROOT, "fixtures/pgn/famous-games.pgn"), encoding="utf-8") as f:
        games = []
        while len(games) < count:
            game = chess.pgn.read_game(f)
            if game is None:
                break
            if not game.errors and len(list(game.mainline_moves())) >= 20:
                games.append(game)
        return games


def tags(event, result="*", extra=()):
    lines = [f'[Event "{event}"]', '[Site "?"]', f'[Result "{result}"]']
    lines += [f'[{name} "{value}"]' for name, value in extra]
    return "\n".join(lines) + "\n"


def movetext(game, notation, rng, comments=False):
    """The game's main line, each move written by `notation(board, move, rng)`."""
    board = game.board()
    out = []
    for move in game.mainline_moves():
        if board.turn == chess.WHITE:
            out.append(f"{board.fullmove_number}.")
        out.append(notation(board, move, rng))
        if comments:
            out.append("{ [%%eval 0.%02d] [%%clk 0:0%d:%02d] }" % (rng.randrange(100), rng.randrange(10), rng.randrange(60)))
        board.push(move)
    # Wrapped at 80 columns, as archives write movetext.
    lines, line = [], ""
    for token in out:
        if line and len(line) + 1 + len(token) > 80:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    return "\n".join(lines + [line])


def san(board, move, rng):
    return board.san(move)


def long_algebraic(board, move, rng):
    return board.lan(move)


def coordinates(board, move, rng):
    return move.uci()


def decorated(board, move, rng):
    """SAN with glyphs glued on, doubled check marks, `ch`, promotions without `=`."""
    text = board.san(move)
    if text.endswith("+"):
        text = text[:-1] + rng.choice(["+", "++", "ch", "+!", "+?!"])
    elif text.endswith("#"):
        text = text[:-1] + rng.choice(["#", "++", "mate"])
    text = text.replace("=", rng.choice(["=", ""]))
    if rng.random() < 0.2:
        text += rng.choice(["!", "?", "!!", "??", "!?", "?!", " $1", " $14"])
    if rng.random() < 0.1:
        text = text.replace("O-O", "0-0")
    return text


def variation(game, ply, rng):
    """A variation to the game's move number `ply` (0-based): another move, a comment with
    parentheses, a reply, and a variation inside it."""
    board = game.board()
    moves = list(game.mainline_moves())
    for move in moves[:ply]:
        board.push(move)
    alternatives = [m for m in board.legal_moves if m != moves[ply]]
    other = rng.choice(alternatives)
    number = f"{board.fullmove_number}." if board.turn == chess.WHITE else f"{board.fullmove_number}..."
    text = f"({number} {board.san(other)} {{ (in a variation) }}"
    board.push(other)
    reply = rng.choice(list(board.legal_moves))
    text += f" {board.san(reply)} ({board.san(reply)}))"
    return text


def write(path, text, newline="\n", bom=False):
    data = text.replace("\n", newline).encode("utf-8")
    if bom:
        data = b"\xef\xbb\xbf" + data
    with open(path, "wb") as f:
        f.write(data)


def chess960_games(rng, count):
    """Random Chess960 games that castle, some with the king staying on its square."""
    games = []
    while len(games) < count:
        board = chess.Board.from_chess960_pos(rng.randrange(960))
        start = board.fen()
        moves = []
        castled_in_place = False
        for _ in range(80):
            legal = list(board.legal_moves)
            if not legal or board.is_game_over():
                break
            castles = [m for m in legal if board.is_castling(m)]
            move = rng.choice(castles) if castles and rng.random() < 0.7 else rng.choice(legal)
            if board.is_castling(move):
                king_to = chess.square(6 if board.is_kingside_castling(move) else 2, chess.square_rank(move.from_square))
                castled_in_place |= king_to == move.from_square
            moves.append(move)
            board.push(move)
        if castled_in_place or len(games) % 2:
            game = chess.pgn.Game()
            game.setup(chess.Board(start, chess960=True))
            game.headers["Variant"] = "Chess960"
            game.headers["Event"] = f"960 #{len(games)}"
            node = game
            for move in moves:
                node = node.add_variation(move)
            games.append(str(game))
    return games


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "fixtures/pgn/adversarial")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(36)
    games = source_games(40)

    # Tags as archives write them: unescaped quotes, brackets, escaped quotes.
    text = ""
    for i, (name, value) in enumerate([
        ("Annotator", 'Lopez "Battle Royale"'),
        ("White", 'O\\"Kelly, Alberic'),
        ("Event", "Match [rapid] \"final\""),
        ("Black", "Nimzowitsch, A."),
    ]):
        text += tags(f"quotes {i}", "1-0", [(name, value)]) + "\n" + movetext(games[i], san, rng) + " 1-0\n\n"
    write(os.path.join(out, "quotes-in-tags.pgn"), text)

    # Games without tags after the first, and one made of moves only.
    text = tags("first", "1/2-1/2") + "\n" + movetext(games[4], san, rng) + " 1/2-1/2\n\n"
    text += movetext(games[5], san, rng) + " 0-1\n\n" + movetext(games[6], san, rng) + "\n\n"
    write(os.path.join(out, "tagless.pgn"), text)

    # A comment right after the tags, comments across lines (with a blank line inside),
    # `;` and `%` lines, variations with parentheses in their comments, a `(` before any
    # move (python-chess ignores it), a result followed by more moves.
    moves = movetext(games[7], san, rng).split()
    text = tags("comments", "1-0") + "{ An opening comment right after the tags }\n"
    text += " ".join(moves[:10]) + " { a comment\n\nthat spans a blank line ) ( }\n"
    text += " ".join(moves[10:15]) + " " + variation(games[7], 9, rng) + " ; rest of line 1. e4\n"
    text += "% an escape line { not a comment\n" + " ".join(moves[15:]) + " 1-0\n\n"
    text += tags("paren first", "*") + "\n( " + movetext(games[8], san, rng) + " ) *\n\n"
    text += tags("result inside", "*") + "\n" + " ".join(movetext(games[9], san, rng).split()[:12]) + " 1-0 "
    text += " ".join(movetext(games[9], san, rng).split()[12:20]) + "\n\n"
    text += tags("eval before moves", "*") + "\n{ [%eval 0.25] } " + movetext(games[10], san, rng, comments=True) + " *\n\n"
    write(os.path.join(out, "comments.pgn"), text)

    # A blank line inside the movetext: python-chess ends the game there, and reads what
    # follows as a game without tags from the start position.
    text = ""
    for i, cut in [(11, 8), (12, 1), (13, 21)]:
        moves = movetext(games[i], san, rng).split()
        text += tags(f"blank line {i}", "1-0") + "\n" + " ".join(moves[:cut]) + "\n\n" + " ".join(moves[cut:]) + " 1-0\n\n"
    write(os.path.join(out, "blank-line-in-movetext.pgn"), text)

    # Move notations.
    text = ""
    for i, notation in enumerate([long_algebraic, coordinates, decorated, decorated, decorated, long_algebraic]):
        game = games[14 + i]
        result = game.headers.get("Result", "*")
        text += tags(f"notation {notation.__name__} {i}", result) + "\n" + movetext(game, notation, rng) + f" {result}\n\n"
    # Promotions, en passant and both castlings, in every notation.
    board = chess.Board("r3k2r/1P6/8/2pP4/8/8/6p1/R3K2R w KQkq c6 0 1")
    for i, notation in enumerate([san, long_algebraic, coordinates, decorated]):
        game = chess.pgn.Game()
        game.setup(board)
        text += tags(f"specials {i}", "*", [("FEN", board.fen()), ("SetUp", "1")]) + "\n"
        line = ["dxc6", "gxh1=N", "bxa8=N", "O-O", "O-O-O"] if i % 2 == 0 else ["bxa8=Q", "Ke7", "O-O-O", "gxh1=R"]
        b = board.copy()
        parts = []
        for token in line:
            move = b.parse_san(token)
            if b.turn == chess.WHITE:
                parts.append(f"{b.fullmove_number}.")
            else:
                parts.append(f"{b.fullmove_number}...")
            parts.append(notation(b, move, rng))
            b.push(move)
        text += " ".join(parts) + " *\n\n"
    write(os.path.join(out, "notations.pgn"), text)

    # Line endings and a byte-order mark.
    two = lambda a, b: (tags("le a", "1-0") + "\n" + movetext(games[a], san, rng) + " 1-0\n\n"
                        + tags("le b", "0-1") + "\n" + movetext(games[b], san, rng) + " 0-1\n")
    write(os.path.join(out, "cr-only.pgn"), two(20, 21), newline="\r")
    write(os.path.join(out, "crlf.pgn"), two(22, 23), newline="\r\n")
    write(os.path.join(out, "bom.pgn"), two(24, 25), bom=True)
    write(os.path.join(out, "bom-cr-only.pgn"), two(26, 27), newline="\r", bom=True)

    # Chess960, castling with the king staying on its square among them.
    write(os.path.join(out, "chess960.pgn"), "\n\n".join(chess960_games(rng, 8)) + "\n")

    # Games python-chess refuses (or reads with errors), between good ones.
    good = lambda i: tags(f"good {i}", "1-0") + "\n" + movetext(games[i], san, rng) + " 1-0\n\n"
    text = good(28)
    text += tags("illegal", "*") + "\n1. e4 e5 2. Ke3 *\n\n" + good(29)
    text += tags("ambiguous", "*", [("FEN", "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1")]) + "\n1. Nd2 *\n\n"
    text += tags("bad fen", "*", [("FEN", "not a fen")]) + "\n1. e4 *\n\n" + good(30)
    text += tags("null move", "*") + "\n1. e4 -- 2. d4 *\n\n"
    text += tags("drop", "*") + "\n1. e4 e5 2. N@f3 *\n\n"
    text += tags("variant", "*", [("Variant", "Atomic")]) + "\n1. e4 *\n\n" + good(31)
    text += '[Event "malformed]\n[Result "*"]\n\n1. e4 e5 *\n\n'
    text += tags("missing promotion", "*", [("FEN", "8/4P3/8/8/8/8/k7/7K w - - 0 1")]) + "\n1. e8 *\n\n"
    text += "Some text that is not a game\n\n" + good(32)
    text += tags("illegal in a variation", "*") + "\n1. e4 e5 (1... Ke7 2. Kxe8) 2. Nf3 *\n\n"
    write(os.path.join(out, "refused.pgn"), text)

    # No blank line between a game's movetext and the next game's tags: python-chess
    # would merge them; pawnstorm starts a new game at the tag pair (the test compares it
    # with python-chess on the file with the blank lines put back).
    text = ""
    for i in range(33, 37):
        text += tags(f"no blank {i}", "1-0") + movetext(games[i], san, rng) + " 1-0\n"
    write(os.path.join(out, "no-blank-line-between-games.pgn"), text)


if __name__ == "__main__":
    main()
