//! A position and its text: the board (pieces, side to move, castling, en passant, clocks),
//! its Zobrist keys, FEN and EPD, the labels that travel with it (result, score, game id,
//! ply) and the score scale those labels and the search share (centipawns, mates,
//! tablebase wins).

pub mod board;
pub mod epd;
pub mod fen;
pub mod labels;
pub mod score;
pub mod zobrist;
