//! pawnstorm: bulk chess-position evaluation over memory-mapped structure-of-arrays
//! bitboards. This crate holds the chess types above the kernels, FEN/EPD, the position
//! database and the import/export machinery; `main.rs` is a thin CLI over it.

pub mod db;
pub mod engine;
pub mod eval;
pub mod export;
#[doc(hidden)]
pub mod fuzzing;
pub mod import;
pub mod io;
pub mod movegen;
pub mod nnue;
pub mod pictures;
pub mod position;
pub mod scoring;
pub mod training;

pub use pawnstorm_kernels::{Bitboard, Color, File, Rank, Square};
pub use position::board::{
    CastlingRights, CastlingSide, Piece, PieceType, Position, PositionError,
};
