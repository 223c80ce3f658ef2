//! NNUE input features: the indices of the active inputs of a position, from one side's
//! perspective, in the feature sets trainers use. `docs/TRAINING.md` gives the formulas
//! with a worked example; they are those of
//! - `768`: bullet's `Chess768` (jw1912/bullet): `(colour ≠ perspective) × 384 + type × 64 +
//!   square`, the square flipped vertically (`^ 56`) for Black's perspective;
//! - `halfkp`: nnue-pytorch's `features/halfkp.py`: `1 + orient(sq) + p × 64 + ksq × 641`,
//!   `orient` the rotation `63 ^ sq` for Black, `ksq` the perspective's king oriented, `p =
//!   2 × (type) + (colour ≠ perspective)` over the ten non-king pieces;
//! - `halfka_v2_hm`: nnue-pytorch's `features/halfka_v2_hm.py` (Stockfish's HalfKAv2_hm,
//!   22,528 inputs): `orient(sq) + p × 64 + bucket(orient(ksq)) × 704`, `orient` flipping
//!   vertically for Black and mirroring horizontally (`^ 7`) when the perspective's king is
//!   on files a-d, `p` as above over all twelve pieces except that both kings share plane
//!   10, and 32 king buckets over the e-h half of the board.

use pawnstorm_kernels::Color;

/// Active features a perspective can have: one per piece.
pub const MAX_ACTIVE: usize = 32;

/// A feature set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureSet {
    Chess768,
    HalfKp,
    HalfKaV2Hm,
}

/// HalfKAv2_hm's king buckets, by the oriented king square (always on files e-h).
#[rustfmt::skip]
const KING_BUCKETS: [i32; 64] = [
    -1, -1, -1, -1, 31, 30, 29, 28,
    -1, -1, -1, -1, 27, 26, 25, 24,
    -1, -1, -1, -1, 23, 22, 21, 20,
    -1, -1, -1, -1, 19, 18, 17, 16,
    -1, -1, -1, -1, 15, 14, 13, 12,
    -1, -1, -1, -1, 11, 10, 9, 8,
    -1, -1, -1, -1, 7, 6, 5, 4,
    -1, -1, -1, -1, 3, 2, 1, 0,
];
const HALFKP_PLANES: i32 = 64 * 10 + 1;
const HALFKA_PLANES: i32 = 64 * 11;
const KING: usize = 5;

impl FeatureSet {
    pub const ALL: [FeatureSet; 3] = [
        FeatureSet::Chess768,
        FeatureSet::HalfKp,
        FeatureSet::HalfKaV2Hm,
    ];

    /// The name `--set` takes (nnue-pytorch's names, lower case; bullet's input size).
    pub fn name(self) -> &'static str {
        match self {
            FeatureSet::Chess768 => "768",
            FeatureSet::HalfKp => "halfkp",
            FeatureSet::HalfKaV2Hm => "halfka_v2_hm",
        }
    }

    pub fn parse(text: &str) -> Option<FeatureSet> {
        FeatureSet::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(text))
    }

    /// The number of inputs (one past the largest index).
    pub fn inputs(self) -> usize {
        match self {
            FeatureSet::Chess768 => 768,
            FeatureSet::HalfKp => 64 * HALFKP_PLANES as usize,
            FeatureSet::HalfKaV2Hm => 64 * HALFKA_PLANES as usize / 2,
        }
    }

    /// The active features of the position whose piece boards are `boards` (colour × 6 +
    /// type, White first; types pawn..king) from `perspective`'s side, written to `out` in
    /// piece order (White's pawns first, each board's squares ascending) and padded with
    /// -1; the number written.
    #[inline]
    pub fn active(
        self,
        boards: &[u64; 12],
        perspective: Color,
        out: &mut [i32; MAX_ACTIVE],
    ) -> usize {
        let (base, orient) = self.layout(boards, perspective);
        let mut n = 0;
        for (code, &board) in boards.iter().enumerate() {
            if self.skips(code) {
                continue;
            }
            for_each_square(board, |sq| {
                if n < MAX_ACTIVE {
                    out[n] = base[code] + (sq ^ orient);
                }
                n += 1;
            });
        }
        let written = n.min(MAX_ACTIVE);
        out[written..].fill(-1);
        written
    }

    /// [`FeatureSet::active`] from both perspectives in one pass over the pieces: `ours`
    /// from `us`, `theirs` from the other side (what a trainer feeds, side to move first).
    #[inline]
    pub fn active_both(
        self,
        boards: &[u64; 12],
        us: Color,
        ours: &mut [i32; MAX_ACTIVE],
        theirs: &mut [i32; MAX_ACTIVE],
    ) -> usize {
        let (our_base, our_orient) = self.layout(boards, us);
        let (their_base, their_orient) = self.layout(boards, !us);
        let mut n = 0;
        for (code, &board) in boards.iter().enumerate() {
            if self.skips(code) {
                continue;
            }
            for_each_square(board, |sq| {
                if n < MAX_ACTIVE {
                    ours[n] = our_base[code] + (sq ^ our_orient);
                    theirs[n] = their_base[code] + (sq ^ their_orient);
                }
                n += 1;
            });
        }
        let written = n.min(MAX_ACTIVE);
        ours[written..].fill(-1);
        theirs[written..].fill(-1);
        written
    }

    /// HalfKP has no inputs for the kings.
    #[inline(always)]
    fn skips(self, code: usize) -> bool {
        self == FeatureSet::HalfKp && code % 6 == KING
    }

    /// The index of each piece code's feature on the square `0`, and the square
    /// orientation (an XOR), from `perspective`'s side: a piece's index is `base[code] +
    /// (square ^ orient)`.
    #[inline(always)]
    fn layout(self, boards: &[u64; 12], perspective: Color) -> ([i32; 12], i32) {
        let black = perspective == Color::Black;
        let king_square = boards[6 * perspective.index() + KING].trailing_zeros() as i32;
        let mut base = [0; 12];
        let orient = match self {
            FeatureSet::Chess768 => {
                for (code, b) in base.iter_mut().enumerate() {
                    let theirs = (code / 6 != perspective.index()) as i32;
                    *b = theirs * 384 + (code % 6) as i32 * 64;
                }
                if black { 56 } else { 0 }
            }
            FeatureSet::HalfKp => {
                let orient = if black { 63 } else { 0 };
                let king = (king_square ^ orient) * HALFKP_PLANES;
                for (code, b) in base.iter_mut().enumerate() {
                    let theirs = (code / 6 != perspective.index()) as i32;
                    *b = 1 + ((code % 6) as i32 * 2 + theirs) * 64 + king;
                }
                orient
            }
            FeatureSet::HalfKaV2Hm => {
                let mirror = if king_square % 8 < 4 { 7 } else { 0 };
                let orient = mirror ^ if black { 56 } else { 0 };
                // A board without a king has none of these inputs' meaning; its index
                // stays in range (bucket 0) rather than reading past the table.
                let bucket =
                    KING_BUCKETS[((king_square & 63) ^ orient) as usize].max(0) * HALFKA_PLANES;
                for (code, b) in base.iter_mut().enumerate() {
                    let theirs = (code / 6 != perspective.index()) as i32;
                    let plane = ((code % 6) as i32 * 2 + theirs).min(10);
                    *b = plane * 64 + bucket;
                }
                orient
            }
        };
        (base, orient)
    }
}

#[inline(always)]
fn for_each_square(mut board: u64, mut f: impl FnMut(i32)) {
    while board != 0 {
        f(board.trailing_zeros() as i32);
        board &= board - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boards(fen: &str) -> [u64; 12] {
        let p = crate::fen::parse_fen(fen).unwrap();
        let mut out = [0u64; 12];
        for color in [Color::White, Color::Black] {
            for kind in crate::board::PieceType::ALL {
                out[6 * color.index() + kind.index()] = p.pieces(color, kind).0;
            }
        }
        out
    }

    fn active(set: FeatureSet, fen: &str, perspective: Color) -> Vec<i32> {
        let mut out = [0; MAX_ACTIVE];
        let n = set.active(&boards(fen), perspective, &mut out);
        assert!(out[n..].iter().all(|&i| i == -1));
        let mut v = out[..n].to_vec();
        v.sort();
        v
    }

    #[test]
    fn the_worked_examples_of_the_docs() {
        // White: Kg1, Pe2; Black: Kb8, Nc6 (docs/TRAINING.md works these out by hand).
        let fen = "1k6/8/2n5/8/8/8/4P3/6K1 w - - 0 1";
        // 768, White: e2 pawn 12, g1 king 5 x 64 + 6, c6 knight 384 + 64 + 42, b8 king
        // 384 + 320 + 57; Black: the squares flipped (^ 56) and the colours swapped.
        assert_eq!(
            active(FeatureSet::Chess768, fen, Color::White),
            vec![12, 326, 490, 761]
        );
        assert_eq!(
            active(FeatureSet::Chess768, fen, Color::Black),
            vec![82, 321, 436, 766]
        );
        // HalfKP, White: king g1 = 6; e2 own pawn p=0, c6 their knight p=3 (sq 42).
        assert_eq!(
            active(FeatureSet::HalfKp, fen, Color::White),
            vec![1 + 12 + 6 * 641, 1 + 42 + 3 * 64 + 6 * 641]
        );
        // HalfKAv2_hm, White: king g1 (file g: no mirror), bucket of g1 = 29.
        let b = 29 * 704;
        let mut want = vec![12 + b, 6 + 10 * 64 + b, 42 + 3 * 64 + b, 57 + 10 * 64 + b];
        want.sort();
        assert_eq!(active(FeatureSet::HalfKaV2Hm, fen, Color::White), want);
        // Black: king b8 (file b: mirrored), oriented b8 ^ 56 ^ 7 = 6 (g1), bucket 29.
        let mut want = vec![
            (12 ^ 63) + 64 + b, // White's pawn e2: theirs, p = 1; e2 -> e7 -> d7 = 51
            (6 ^ 63) + 10 * 64 + b,
            (42 ^ 63) + 2 * 64 + b,
            (57 ^ 63) + 10 * 64 + b,
        ];
        want.sort();
        assert_eq!(active(FeatureSet::HalfKaV2Hm, fen, Color::Black), want);
    }

    #[test]
    fn every_index_is_below_the_input_count_and_kings_are_where_the_set_says() {
        let fen = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R b KQkq - 0 9";
        for set in FeatureSet::ALL {
            for side in [Color::White, Color::Black] {
                let v = active(set, fen, side);
                let pieces = if set == FeatureSet::HalfKp { 30 } else { 32 };
                assert_eq!(v.len(), pieces, "{set:?}");
                assert!(v.iter().all(|&i| i >= 0 && (i as usize) < set.inputs()));
                let mut unique = v.clone();
                unique.dedup();
                assert_eq!(unique.len(), v.len(), "{set:?} {side:?}: a repeated index");
            }
        }
    }
}
