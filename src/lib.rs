//! pawnstorm: bulk chess-position evaluation over memory-mapped structure-of-arrays
//! bitboards. This crate holds the chess types above the kernels, FEN/EPD, the position
//! database and the import/export machinery; `main.rs` is a thin CLI over it.

pub mod binpack;
pub mod board;
pub mod datagen;
pub mod db;
pub mod durable;
pub mod epd;
pub mod eval;
pub mod export;
pub mod features;
pub mod fen;
pub mod filters;
#[doc(hidden)]
pub mod fuzzing;
pub mod import;
pub mod label;
pub mod labels;
pub mod loader;
pub mod movegen;
pub mod nnue;
pub mod npz;
pub mod perft;
pub mod report;
pub mod search;
pub mod svg;
pub mod table;
pub mod training;
pub mod tune;
pub mod uci;
pub mod wdl;
pub mod workers;
pub mod zobrist;

pub use board::{CastlingRights, CastlingSide, Piece, PieceType, Position, PositionError};
pub use pawnstorm_kernels::{Bitboard, Color, File, Rank, Square};
