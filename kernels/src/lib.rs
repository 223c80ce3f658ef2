//! Bitboard geometry for pawnstorm: the `Square`, `Bitboard` and `Color` types that every
//! other layer shares, kept apart from chess rules so that the vectorised kernels can be
//! built on them without pulling in I/O or move generation.
//!
//! Squares are numbered a1 = 0, b1 = 1, ..., h8 = 63; north is `<< 8`.
//!
//! ```
//! use pawnstorm_kernels::{Bitboard, Square};
//! let e4 = Square::from_name("e4").unwrap();
//! assert_eq!(Bitboard::from(e4).north(), Bitboard::from(Square::from_name("e5").unwrap()));
//! ```
#![deny(missing_docs)]

pub mod attacks;
mod bitboard;
mod color;
pub mod geometry;
pub mod lanes;
pub mod pawns;
pub mod setwise;
pub mod simd;
mod square;

pub use bitboard::Bitboard;
pub use color::Color;
pub use lanes::Lanes;
pub use square::{File, Rank, Square};
