//! The network: `(768 × K → N) × 2 → 1` with SCReLU, bullet's `Chess768` inputs or their
//! king-bucketed, mirrored form ([`inputs`]) and its quantised layout (`docs/NNUE.md`).
//! [`network`] reads and writes the file and holds the plain integer reference; [`accumulator`] keeps the first layer's sums, updated from one
//! position to the next by the pieces that changed; [`simd`] has the kernels, one per
//! instruction set, all equal to the reference.

pub mod accumulator;
pub mod arch;
pub mod bulk;
pub mod inputs;
pub mod network;
pub mod simd;
#[cfg(test)]
mod tests;

pub use accumulator::{Accumulators, NnueEvaluator};
pub use inputs::{InputLayout, Orientation};
pub use network::{Arch, NetError, Network};

/// Inputs per perspective: two colours (ours, theirs) × six types × 64 squares.
pub const INPUTS: usize = 768;
/// First-layer quantisation.
pub const QA: i32 = 255;
/// Output-weight quantisation.
pub const QB: i32 = 64;
/// Centipawns per unit of the output (bullet's `SCALE`).
pub const SCALE: i32 = 400;
/// Widths a network may have: multiples of 16 from 16 to 1536.
pub const MIN_HIDDEN: usize = 16;
pub const MAX_HIDDEN: usize = 1536;
pub const HIDDEN_STEP: usize = 16;
/// The most output buckets a network may have (bullet's and most engines' 8).
pub const MAX_BUCKETS: usize = 8;

/// The input index of a piece of `colour` (0 White, 1 Black) and type `kind` (pawn 0 ..
/// king 5) on `square` from `perspective`'s side: bullet's `Chess768`.
#[inline(always)]
pub fn feature(perspective: usize, colour: usize, kind: usize, square: usize) -> usize {
    let square = if perspective == 1 {
        square ^ 56
    } else {
        square
    };
    ((colour != perspective) as usize) * 384 + kind * 64 + square
}

/// The score of an endgame the evaluation knows exactly (insufficient material, KPK, KBNK,
/// KXK) from the side to move's view, if `boards` (colour × 6 + type, White first) is one:
/// the network's score gives way to it, as the terms' does.
#[inline]
pub fn exact_rule(boards: &[u64; 12], black_to_move: bool) -> Option<i32> {
    let position = crate::position::board::PositionBoards {
        pieces: std::array::from_fn(|kind| boards[kind] | boards[6 + kind]),
        colors: [
            boards[..6].iter().fold(0, |a, b| a | b),
            boards[6..].iter().fold(0, |a, b| a | b),
        ],
        black_to_move,
    };
    crate::eval::endgame::exact_rule(&position)
        .map(|(white, _)| if black_to_move { -white } else { white })
}

/// The network compiled into the binary (`nets/default.nnue`), parsed once.
pub fn default_network() -> Result<std::sync::Arc<Network>, String> {
    static DEFAULT: std::sync::OnceLock<Result<std::sync::Arc<Network>, String>> =
        std::sync::OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            Network::from_bytes(EMBEDDED, "the compiled-in network")
                .map(std::sync::Arc::new)
                .map_err(|e| e.to_string())
        })
        .clone()
}

/// The compiled-in network's bytes: `nets/default.nnue`, made by `scripts/train-net.sh`
/// (its provenance is in the file: `pawnstorm info --net`).
const EMBEDDED: &[u8] = include_bytes!("../../nets/default.nnue");

/// A position's piece boards as the network reads them: colour × 6 + type, White first.
#[inline]
pub fn boards_of(position: &crate::Position) -> [u64; 12] {
    std::array::from_fn(|i| {
        let colour = if i < 6 {
            crate::Color::White
        } else {
            crate::Color::Black
        };
        position.pieces(colour, crate::PieceType::ALL[i % 6]).0
    })
}
