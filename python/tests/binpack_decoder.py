"""A small Stockfish `.binpack` decoder written from the format's description, to hold
pawnstorm's binpack export to something other than the crate (sfbinpack) it is written
with. Sources read: the Stockfish tools branch, `docs/binpack.md` and
`src/extra/nnue_data_binpack_format.h` (`CompressedTrainingDataFile`, `packEntry`,
`CompressedPosition`, `CompressedMove`, `PackedMoveScoreList(Reader)`, `isEpPossible`).
No code is shared with them; python-chess supplies bitboards, attack sets, move legality
and making moves.

The file is blocks of `BINP`, a little-endian u32 size and that many bytes of chains. A
chain is a 32-byte stem (compressed position 24, move 2, score 2, ply and result 2,
fifty-move counter 2; all big-endian), a big-endian u16 count of the plies that follow,
and a bit stream (most significant bit first) giving for each ply the moved piece, its
move and the score. Every value is from the side to move's point of view.

    python binpack_decoder.py FILE.binpack   # prints the records as .plain text
"""

from __future__ import annotations

import dataclasses
import sys

import chess

# Nibbles of the compressed position 0..11: pawn, knight, ..., king, white before black.
NIBBLE_TYPES = [chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING]
NIBBLE_EP_PAWN = 12  # a pawn that just made a double push which can be taken e.p.
NIBBLE_WHITE_CASTLING_ROOK = 13
NIBBLE_BLACK_CASTLING_ROOK = 14
NIBBLE_BLACK_KING_TO_MOVE = 15

MOVE_NORMAL, MOVE_PROMOTION, MOVE_CASTLE, MOVE_EN_PASSANT = range(4)
SCORE_VLE_BLOCK = 4  # score deltas: 4 value bits and 1 "more follows" bit a block


@dataclasses.dataclass(frozen=True)
class Record:
    fen: str  # six fields; the fullmove number is ply // 2 + 1, as Stockfish's reader writes it
    move: str  # UCI, castling as the king's move (e1g1), as python-chess writes it
    score: int  # side to move's view
    ply: int
    result: int  # side to move's view: 1 won, 0 draw, -1 lost
    chain: int  # which chain of the file (0-based) the record is in


class FormatError(ValueError):
    pass


def unsigned_to_signed(r: int) -> int:
    """Inverse of the format's signedToUnsigned: the sign is in bit 0, and a negative
    value's other bits are flipped, so small magnitudes of either sign are small numbers."""
    r = ((r << 15) | (r >> 1)) & 0xFFFF
    if r & 0x8000:
        r ^= 0x7FFF
    return r - 0x10000 if r & 0x8000 else r


def int16(v: int) -> int:
    """The C++ reader adds scores in std::int16_t, so deltas wrap (a mate after a mate of
    the other sign is a delta beyond 16 bits)."""
    return (v + 0x8000) % 0x10000 - 0x8000


def used_bits(n: int) -> int:
    """Bits needed to tell n choices apart (usedBitsSafe): 0 for one choice."""
    return (n - 1).bit_length() if n > 0 else 0


def nth_square(mask: int, n: int) -> chess.Square:
    """The n-th (0-based) set square of mask in ascending order (a1 = 0, h8 = 63)."""
    squares = list(chess.scan_forward(mask))
    if n >= len(squares):
        raise FormatError(f"index {n} among {len(squares)} squares")
    return squares[n]


class BitReader:
    def __init__(self, data: bytes, offset: int):
        self.data, self.start, self.bit = data, offset, 0

    def read(self, count: int) -> int:
        value = 0
        for _ in range(count):
            byte_index = self.start + self.bit // 8
            if byte_index >= len(self.data):
                raise FormatError("movetext runs past the end of its block")
            value = (value << 1) | ((self.data[byte_index] >> (7 - self.bit % 8)) & 1)
            self.bit += 1
        return value

    def read_vle(self, block: int) -> int:
        value, shift = 0, 0
        while True:
            chunk = self.read(block + 1)
            value |= (chunk & ((1 << block) - 1)) << shift
            if not chunk >> block:
                return value
            shift += block

    def end(self) -> int:
        """The offset after the movetext: it ends at a byte boundary."""
        return self.start + (self.bit + 7) // 8


def stockfish_ep_square(board: chess.Board) -> chess.Square | None:
    """The en-passant square as the format's Position keeps it (isEpPossible): only when a
    pawn of the side to move attacks it and taking would not uncover a slider on its king.
    It matters beyond the FEN: it is among a pawn's destinations that moves are counted in."""
    ep = board.ep_square
    if ep is None:
        return None
    us = board.turn
    forward = 8 if us == chess.WHITE else -8
    attackers = chess.BB_PAWN_ATTACKS[not us][ep] & board.pieces_mask(chess.PAWN, us)
    if (
        not attackers
        or board.piece_at(ep) is not None
        or board.piece_at(ep + forward) is not None
        or board.piece_at(ep - forward) != chess.Piece(chess.PAWN, not us)
    ):
        return None
    king = board.king(us)
    theirs = board.occupied_co[not us]
    diagonal = (board.bishops | board.queens) & theirs
    straight = (board.rooks | board.queens) & theirs
    for square in chess.scan_forward(attackers):
        captured = chess.square(chess.square_file(ep), chess.square_rank(square))
        occupied = (board.occupied ^ chess.BB_SQUARES[square] | chess.BB_SQUARES[ep]) ^ chess.BB_SQUARES[captured]
        if not (chess.BB_DIAG_ATTACKS[king][chess.BB_DIAG_MASKS[king] & occupied] & diagonal) and not (
            (
                chess.BB_RANK_ATTACKS[king][chess.BB_RANK_MASKS[king] & occupied]
                | chess.BB_FILE_ATTACKS[king][chess.BB_FILE_MASKS[king] & occupied]
            )
            & straight
        ):
            return ep
    return None


def castling_king_move(king: chess.Square, long: bool) -> chess.Move:
    """The king's move of a castling (e1g1), which the format writes as e1h1 (stem) or as an index."""
    rank = chess.square_rank(king)
    return chess.Move(king, chess.square(2 if long else 6, rank))


def decode_stem(stem: bytes) -> tuple[chess.Board, chess.Move, int, int, int]:
    """The 32-byte first entry of a chain: (board, move, score, ply, result)."""
    occupied = int.from_bytes(stem[0:8], "big")
    nibbles = stem[8:24]
    board = chess.Board(None)
    board.turn = chess.WHITE
    castling = 0
    for i, square in enumerate(chess.scan_forward(occupied)):
        nibble = (nibbles[i // 2] >> (4 * (i % 2))) & 0xF
        if nibble < 12:
            piece = chess.Piece(NIBBLE_TYPES[nibble // 2], nibble % 2 == 0)
        elif nibble == NIBBLE_EP_PAWN:
            white = chess.square_rank(square) == 3  # a white pawn on rank 4 just moved two
            piece = chess.Piece(chess.PAWN, white)
            board.ep_square = square - 8 if white else square + 8
        elif nibble in (NIBBLE_WHITE_CASTLING_ROOK, NIBBLE_BLACK_CASTLING_ROOK):
            piece = chess.Piece(chess.ROOK, nibble == NIBBLE_WHITE_CASTLING_ROOK)
            castling |= chess.BB_SQUARES[square]
        else:
            piece = chess.Piece(chess.KING, chess.BLACK)
            board.turn = chess.BLACK
        board.set_piece_at(square, piece)
    board.castling_rights = castling

    packed_move = int.from_bytes(stem[24:26], "big")
    kind, origin, target = packed_move >> 14, (packed_move >> 8) & 63, (packed_move >> 2) & 63
    if packed_move == 0:
        move = chess.Move.null()
    elif kind == MOVE_PROMOTION:
        move = chess.Move(origin, target, promotion=chess.KNIGHT + (packed_move & 3))
    elif kind == MOVE_CASTLE:  # stored as the king taking its own rook
        move = castling_king_move(origin, long=target < origin)
    else:
        move = chess.Move(origin, target)

    score = unsigned_to_signed(int.from_bytes(stem[26:28], "big"))
    ply_result = int.from_bytes(stem[28:30], "big")
    ply, result = ply_result & 0x3FFF, unsigned_to_signed(ply_result >> 14)
    board.halfmove_clock = int.from_bytes(stem[30:32], "big")
    return board, move, score, ply, result


def decode_move(board: chess.Board, bits: BitReader) -> chess.Move:
    """One movetext move: the index of the moving piece among the side to move's pieces in
    square order, then the index of its destination among its pseudo-legal destinations in
    square order (for promotions destination * 4 + piece - knight; for the king, castlings
    after its ordinary destinations, queen side first)."""
    us = board.turn
    ours = board.occupied_co[us]
    origin = nth_square(ours, bits.read(used_bits(chess.popcount(ours))))
    kind = board.piece_type_at(origin)
    if kind == chess.PAWN:
        forward = 8 if us == chess.WHITE else -8
        targets = board.occupied_co[not us]
        if board.ep_square is not None:
            targets |= chess.BB_SQUARES[board.ep_square]
        destinations = chess.BB_PAWN_ATTACKS[us][origin] & targets
        if not board.occupied & chess.BB_SQUARES[origin + forward]:
            destinations |= chess.BB_SQUARES[origin + forward]
            start_rank = 1 if us == chess.WHITE else 6
            if chess.square_rank(origin) == start_rank and not board.occupied & chess.BB_SQUARES[origin + 2 * forward]:
                destinations |= chess.BB_SQUARES[origin + 2 * forward]
        count = chess.popcount(destinations)
        if chess.square_rank(origin) == (6 if us == chess.WHITE else 1):
            index = bits.read(used_bits(count * 4))
            return chess.Move(origin, nth_square(destinations, index // 4), promotion=chess.KNIGHT + index % 4)
        return chess.Move(origin, nth_square(destinations, bits.read(used_bits(count))))
    if kind == chess.KING:
        destinations = chess.BB_KING_ATTACKS[origin] & ~ours
        count = chess.popcount(destinations)
        back_rank = chess.BB_RANK_1 if us == chess.WHITE else chess.BB_RANK_8
        rights = board.castling_rights & back_rank
        index = bits.read(used_bits(count + chess.popcount(rights)))
        if index >= count:
            has_long = bool(rights & (chess.BB_A1 | chess.BB_A8))
            return castling_king_move(origin, long=index == count and has_long)
        return chess.Move(origin, nth_square(destinations, index))
    destinations = board.attacks_mask(origin) & ~ours
    return chess.Move(origin, nth_square(destinations, bits.read(used_bits(chess.popcount(destinations)))))


def record(board: chess.Board, move: chess.Move, score: int, ply: int, result: int, chain: int) -> Record:
    if move and move not in board.legal_moves:
        raise FormatError(f"chain {chain}: {move.uci()} is not legal in {board.fen()}")
    board = board.copy(stack=False)
    board.fullmove_number = ply // 2 + 1
    # en_passant="fen": the square the format kept (stockfish_ep_square), not re-judged.
    return Record(board.fen(en_passant="fen"), move.uci(), score, ply, result, chain)


def blocks(data: bytes):
    offset = 0
    while offset < len(data):
        if data[offset : offset + 4] != b"BINP" or offset + 8 > len(data):
            raise FormatError(f"offset {offset}: no BINP block header")
        size = int.from_bytes(data[offset + 4 : offset + 8], "little")
        if offset + 8 + size > len(data):
            raise FormatError(f"offset {offset}: block of {size} bytes runs past the end")
        yield data[offset + 8 : offset + 8 + size]
        offset += 8 + size


def decode(data: bytes) -> list[Record]:
    records = []
    chain = 0
    for block in blocks(data):
        offset = 0
        # Stockfish's writer only closes a block after a whole chain, and its reader stops
        # a block with fewer than 34 bytes left; here a block must end exactly after one.
        while offset < len(block):
            if offset + 34 > len(block):
                raise FormatError(f"chain {chain}: {len(block) - offset} stray bytes at the end of a block")
            board, move, score, ply, result = decode_stem(block[offset : offset + 32])
            plies = int.from_bytes(block[offset + 32 : offset + 34], "big")
            records.append(record(board, move, score, ply, result, chain))
            bits = BitReader(block, offset + 34)
            last = -score  # each score is coded against the negated previous one
            for _ in range(plies):
                board.push(move)
                board.ep_square = stockfish_ep_square(board)
                move = decode_move(board, bits)
                score = int16(last + unsigned_to_signed(bits.read_vle(SCORE_VLE_BLOCK)))
                last = -score
                ply, result = ply + 1, -result
                records.append(record(board, move, score, ply, result, chain))
            offset = bits.end() if plies else offset + 34
            chain += 1
    return records


def plain(records: list[Record]) -> str:
    """The records as Stockfish's `.plain` text (what its convertBinpackToPlain writes)."""
    return "".join(
        f"fen {r.fen}\nmove {r.move}\nscore {r.score}\nply {r.ply}\nresult {r.result}\ne\n" for r in records
    )


def main(path: str) -> None:
    with open(path, "rb") as file:
        sys.stdout.write(plain(decode(file.read())))


if __name__ == "__main__":
    main(sys.argv[1])
