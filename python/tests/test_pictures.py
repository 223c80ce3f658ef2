"""Boards as SVG from Python: ``pawnstorm.svg``, ``Position._repr_svg_`` (what Jupyter
shows) and ``Database[i]``: the text parses as XML, holds one piece per piece of the
position (python-chess's board as the reference) and one mark per square of each mask, and
is what ``pawnstorm show --svg`` writes."""

import xml.etree.ElementTree as ET

import chess
import pytest

import pawnstorm

FEN = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"


def elements(text):
    root = ET.fromstring(text)
    assert root.tag.endswith("svg")
    return list(root.iter())


def test_svg_draws_the_pieces_and_the_marks(cli, tmp_path):
    text = pawnstorm.svg(FEN, masks=["white_attacks", "black_king_zone"], arrows=["h5f7"])
    nodes = elements(text)
    pieces = {n.get("id")[len("piece-"):]: n.get("class") for n in nodes if (n.get("class") or "").startswith("piece ")}
    board = chess.Board(FEN)
    expected = {chess.square_name(s): p for s, p in board.piece_map().items()}
    assert set(pieces) == set(expected)
    for square, piece in expected.items():
        color = "white" if piece.color else "black"
        assert pieces[square] == f"piece {color} {chess.piece_name(piece.piece_type)}"
    # White's attacks: every square some white piece attacks, by python-chess.
    attacked = {chess.square_name(s) for s in chess.SQUARES if board.is_attacked_by(chess.WHITE, s)}
    marked = {n.get("id")[len("mark-0-"):] for n in nodes if (n.get("id") or "").startswith("mark-0-")}
    assert marked == attacked
    assert any(n.get("id") == "arrow-h5f7" for n in nodes)
    out = tmp_path / "board.svg"
    cli("show", FEN, "--svg", out, "--mask", "white_attacks,black_king_zone", "--arrows", "h5f7")
    assert out.read_text() == text


def test_positions_and_database_rows_show_as_boards(cli, fixtures, tmp_path):
    position = pawnstorm.Position(FEN, masks=["white_passed"])
    assert position._repr_svg_() == pawnstorm.svg(FEN, ["white_passed"])
    assert "white_king_zone" in pawnstorm.mask_names() and len(pawnstorm.mask_names()) == 28
    db_path = tmp_path / "wac.psdb"
    cli("import", fixtures / "epd" / "wac.epd", "-o", db_path)
    db = pawnstorm.Database(db_path)
    exported = cli("export", db_path).stdout.splitlines()
    for i in [0, 7, len(db) - 1, -1]:
        fen = " ".join(exported[i].split()[:6])
        assert db[i].fen == fen
        assert len([n for n in elements(db[i]._repr_svg_()) if (n.get("class") or "").startswith("piece ")]) == len(
            chess.Board(fen).piece_map()
        )
    with pytest.raises(IndexError):
        db[len(db)]
    with pytest.raises(TypeError):
        db["0"]
    with pytest.raises(ValueError, match="invalid FEN"):
        pawnstorm.Position("not a fen")
    with pytest.raises(ValueError, match="no such mask"):
        pawnstorm.svg(FEN, masks=["white_everything"])
    with pytest.raises(ValueError, match="not a move"):
        pawnstorm.svg(FEN, arrows=["e9e4"])
