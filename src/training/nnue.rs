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
//!   10, and 32 king buckets over the e-h half of the board;
//! - `768xKhm` (or `768hm:MAP`): bullet's `ChessBucketsMirrored`, the network's own
//!   king-bucketed inputs (`crate::nnue::inputs`): `bucket × 768 + Chess768(square ^ 7 when
//!   the perspective's king is on files e-h)`, K buckets from a 32-entry map over files a-d.

use pawnstorm_kernels::Color;

use crate::nnue::InputLayout;

#[cfg(target_arch = "x86_64")]
pub mod wide;

/// Active features a perspective can have: one per piece.
pub const MAX_ACTIVE: usize = 32;

/// A feature set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeatureSet {
    Chess768,
    HalfKp,
    HalfKaV2Hm,
    /// A network's king-bucketed, mirrored inputs.
    KingBuckets(InputLayout),
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

    /// The name `--set` takes (nnue-pytorch's names, lower case; bullet's input size and
    /// shorthand): a king-bucketed set by its count when its map is the standard one
    /// (`768x4hm`), else with its map (`768hm:0011/2222/…`).
    pub fn name(self) -> String {
        match self {
            FeatureSet::Chess768 => "768".into(),
            FeatureSet::HalfKp => "halfkp".into(),
            FeatureSet::HalfKaV2Hm => "halfka_v2_hm".into(),
            FeatureSet::KingBuckets(layout) => {
                if InputLayout::standard(layout.king_buckets()) == Some(layout) {
                    layout.shorthand()
                } else {
                    format!("768hm:{}", layout.map_text())
                }
            }
        }
    }

    /// What `--set` says it takes, for errors.
    pub const NAMES: &'static str =
        "768, halfkp, halfka_v2_hm, 768xKhm (K = 1, 2, 4, 8, 16) or 768hm:MAP (32 hex digits)";

    pub fn parse(text: &str) -> Option<FeatureSet> {
        let lower = text.to_ascii_lowercase();
        if let Some(map) = lower.strip_prefix("768hm:") {
            return InputLayout::parse_king_buckets(map)
                .ok()
                .map(FeatureSet::KingBuckets);
        }
        if let Some(count) = lower
            .strip_prefix("768x")
            .and_then(|rest| rest.strip_suffix("hm"))
        {
            return count
                .parse()
                .ok()
                .and_then(InputLayout::standard)
                .map(FeatureSet::KingBuckets);
        }
        FeatureSet::ALL.into_iter().find(|s| s.name() == lower)
    }

    /// The number of inputs (one past the largest index).
    pub fn inputs(self) -> usize {
        match self {
            FeatureSet::Chess768 => 768,
            FeatureSet::HalfKp => 64 * HALFKP_PLANES as usize,
            FeatureSet::HalfKaV2Hm => 64 * HALFKA_PLANES as usize / 2,
            FeatureSet::KingBuckets(layout) => layout.inputs(),
        }
    }

    /// The active features of the position whose piece boards are `boards` (colour × 6 +
    /// type, White first; types pawn..king) from `perspective`'s side, written to `out` in
    /// the order of their squares (a1, b1, ..., h8, as the board stands: nnue-pytorch's
    /// loader's order) and padded with -1; the number written. A position has at most 32
    /// pieces (16 a side, which every reader checks); past that only the first 32 squares'
    /// pieces are written.
    #[inline]
    pub fn active(
        self,
        boards: &[u64; 12],
        perspective: Color,
        out: &mut [i32; MAX_ACTIVE],
    ) -> usize {
        let kings = [
            boards[KING].trailing_zeros() as u8,
            boards[6 + KING].trailing_zeros() as u8,
        ];
        // Only `perspective`'s side, each square's code read straight from the planes (no
        // packing, which pays only when both sides read the codes).
        self.fill_from_planes::<false>(boards, kings, perspective, out, &mut [])
    }

    /// [`FeatureSet::active`] from both perspectives in one pass over the pieces: `ours`
    /// from `us`, `theirs` from the other side (what a trainer feeds, side to move first).
    #[inline(always)]
    pub fn active_both(
        self,
        boards: &[u64; 12],
        us: Color,
        ours: &mut [i32; MAX_ACTIVE],
        theirs: &mut [i32; MAX_ACTIVE],
    ) -> usize {
        let kings = [
            boards[KING].trailing_zeros() as u8,
            boards[6 + KING].trailing_zeros() as u8,
        ];
        #[cfg(target_arch = "x86_64")]
        if pawnstorm_kernels::simd::cpu().fast_pext {
            let (occupied, codes) = pack(boards);
            return self.active_packed(occupied, codes, kings, us, ours, theirs);
        }
        // Without fast PEXT, packing gathers each square's code from the four code planes
        // anyway: they are read here directly, without the nibbles in between.
        self.fill_from_planes::<true>(boards, kings, us, ours, theirs)
    }

    /// [`FeatureSet::fill`] with each square's code read from [`code_planes`].
    #[inline(always)]
    fn fill_from_planes<const BOTH: bool>(
        self,
        boards: &[u64; 12],
        kings: [u8; 2],
        us: Color,
        ours: &mut [i32; MAX_ACTIVE],
        theirs: &mut [i32],
    ) -> usize {
        let all = boards.iter().fold(0, |all, &board| all | board);
        let planes = code_planes(boards);
        self.fill::<BOTH>(
            first_squares(all, MAX_ACTIVE as u32),
            |_, square| code_at(&planes, square),
            kings,
            us,
            ours,
            theirs,
        )
    }

    /// [`FeatureSet::active_both`] from the packed form of a position: its occupied
    /// squares, each one's piece code (colour × 6 + type) in a nibble in square order (see
    /// [`pack`]) and the two kings' squares (White's first; 64 for none).
    #[inline(always)]
    pub fn active_packed(
        self,
        occupied: u64,
        codes: [u64; 2],
        kings: [u8; 2],
        us: Color,
        ours: &mut [i32; MAX_ACTIVE],
        theirs: &mut [i32; MAX_ACTIVE],
    ) -> usize {
        let code_of = |i: usize, _| ((codes[i / 16] >> (4 * (i % 16))) & 15) as usize;
        let occupied = first_squares(occupied, MAX_ACTIVE as u32);
        self.fill::<true>(occupied, code_of, kings, us, ours, theirs)
    }

    /// The features of the pieces on `occupied` (at most `MAX_ACTIVE` squares), the `i`-th
    /// of them on `square` having the code `code_of(i, square)`: `us`'s into `ours` and,
    /// when `BOTH`, the other side's into `theirs` (which may be empty otherwise).
    #[inline(always)]
    fn fill<const BOTH: bool>(
        self,
        occupied: u64,
        code_of: impl Fn(usize, u32) -> usize,
        kings: [u8; 2],
        us: Color,
        ours: &mut [i32; MAX_ACTIVE],
        theirs: &mut [i32],
    ) -> usize {
        let (our_base, our_orient) = self.layout(kings[us.index()] as i32, us);
        let (their_base, their_orient) = if BOTH {
            self.layout(kings[(!us).index()] as i32, !us)
        } else {
            ([0; 12], 0)
        };
        let theirs: &mut [i32; MAX_ACTIVE] = if BOTH {
            theirs.try_into().expect("MAX_ACTIVE features a side")
        } else {
            &mut [0; MAX_ACTIVE]
        };
        *ours = [-1; MAX_ACTIVE];
        if BOTH {
            *theirs = [-1; MAX_ACTIVE];
        }
        let skips_kings = self == FeatureSet::HalfKp;
        let (mut n, mut i, mut b) = (0, 0, occupied);
        while b != 0 {
            let sq = b.trailing_zeros() as i32;
            let code = code_of(i, sq as u32);
            // n < 32 (at most 32 squares); the mask spares the bounds checks. A skipped
            // king is written and then overwritten (or cleared below): no branch.
            ours[n % MAX_ACTIVE] = our_base[code] + (sq ^ our_orient);
            if BOTH {
                theirs[n % MAX_ACTIVE] = their_base[code] + (sq ^ their_orient);
            }
            n += (!skips_kings || code % 6 != KING) as usize;
            i += 1;
            b &= b - 1;
        }
        for k in n..i {
            ours[k] = -1;
            if BOTH {
                theirs[k] = -1;
            }
        }
        n
    }

    /// The index of each piece code's feature on the square `0`, and the square
    /// orientation (an XOR), from `perspective`'s side whose king is on `king_square`: a
    /// piece's index is `base[code] + (square ^ orient)`.
    #[inline(always)]
    fn layout(self, king_square: i32, perspective: Color) -> ([i32; 12], i32) {
        let black = perspective == Color::Black;
        // A board without a king (never in a checked position) reads as a king on a1.
        let king_square = king_square & 63;
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
                let bucket = KING_BUCKETS[(king_square ^ orient) as usize] * HALFKA_PLANES;
                for (code, b) in base.iter_mut().enumerate() {
                    let theirs = (code / 6 != perspective.index()) as i32;
                    let plane = ((code % 6) as i32 * 2 + theirs).min(10);
                    *b = plane * 64 + bucket;
                }
                orient
            }
            FeatureSet::KingBuckets(layout) => {
                let o = layout.orientation(perspective.index(), king_square as usize);
                for (code, b) in base.iter_mut().enumerate() {
                    let theirs = (code / 6 != perspective.index()) as i32;
                    *b = o.base as i32 + theirs * 384 + (code % 6) as i32 * 64;
                }
                o.flip as i32
            }
        };
        (base, orient)
    }
}

/// The lowest `n` set bits of `board`.
#[inline(always)]
fn first_squares(board: u64, n: u32) -> u64 {
    if board.count_ones() <= n {
        return board;
    }
    let mut kept = 0;
    let mut b = board;
    for _ in 0..n {
        kept |= b & b.wrapping_neg();
        b &= b - 1;
    }
    kept
}

/// Bit 0 of every nibble.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const NIBBLE_LOW_BITS: u64 = 0x1111_1111_1111_1111;

/// A position packed: its occupied squares, and the code of each (its board's index,
/// colour × 6 + type) one nibble per occupied square in ascending order, the first sixteen
/// in the first word, lowest nibble first. Past 32 pieces (no legal position has them)
/// only the first 32 squares are kept. Where PEXT and PDEP are fast (chosen at run time: Zen 3
/// and later, Intel since Haswell) a board's pieces are spread into their nibbles at once.
#[inline(always)]
pub fn pack(boards: &[u64; 12]) -> (u64, [u64; 2]) {
    #[cfg(target_arch = "x86_64")]
    if pawnstorm_kernels::simd::cpu().fast_pext {
        // SAFETY: fast PEXT implies the CPU has BMI2.
        return unsafe { bmi2::pack(boards) };
    }
    pack_portable(boards)
}

/// [`pack`] and [`unpack`] with BMI2's PEXT and PDEP, for CPUs where they are fast.
#[cfg(target_arch = "x86_64")]
mod bmi2 {
    use std::arch::x86_64::{_pdep_u64, _pext_u64};

    use super::{MAX_ACTIVE, NIBBLE_LOW_BITS, first_squares};

    /// # Safety
    /// The CPU has BMI2.
    #[inline]
    #[target_feature(enable = "bmi2,popcnt")]
    pub unsafe fn pack(boards: &[u64; 12]) -> (u64, [u64; 2]) {
        let all = boards.iter().fold(0, |all, &board| all | board);
        let occupied = first_squares(all, MAX_ACTIVE as u32);
        let mut pieces = [0u64; 2];
        for (code, &board) in boards.iter().enumerate() {
            let places = _pext_u64(board, occupied);
            pieces[0] |= _pdep_u64(places & 0xffff, NIBBLE_LOW_BITS) * code as u64;
            pieces[1] |= _pdep_u64(places >> 16, NIBBLE_LOW_BITS) * code as u64;
        }
        (occupied, pieces)
    }

    /// # Safety
    /// The CPU has BMI2.
    #[inline]
    #[target_feature(enable = "bmi2,popcnt")]
    pub unsafe fn unpack(occupied: u64, pieces: [u64; 2]) -> [u64; 12] {
        let mut boards = [0u64; 12];
        let real = match occupied.count_ones() {
            n if n >= 32 => u32::MAX as u64,
            n => (1 << n) - 1,
        };
        for (code, board) in boards.iter_mut().enumerate() {
            let mut places = 0;
            for (half, &word) in pieces.iter().enumerate() {
                // Nibbles equal to the code become zero; bit 0 of each marks a zero nibble.
                let x = word ^ (code as u64 * NIBBLE_LOW_BITS);
                let any = x | (x >> 1) | (x >> 2) | (x >> 3);
                places |= _pext_u64(!any, NIBBLE_LOW_BITS) << (16 * half);
            }
            // Nibbles past the last piece are zero, White's pawn code: keep only real ones.
            *board = _pdep_u64(places & real, occupied);
        }
        boards
    }
}

/// The four bits of each square's piece code (colour × 6 + type), bit `k` of them in
/// plane `k`.
#[inline(always)]
fn code_planes(b: &[u64; 12]) -> [u64; 4] {
    // Written out: as a loop over the codes the compiler kept the loop and its tests in
    // the AVX2 features (45% of their time).
    [
        b[1] | b[3] | b[5] | b[7] | b[9] | b[11],
        b[2] | b[3] | b[6] | b[7] | b[10] | b[11],
        b[4] | b[5] | b[6] | b[7],
        b[8] | b[9] | b[10] | b[11],
    ]
}

/// The piece code on `square`, from [`code_planes`].
#[inline(always)]
fn code_at(planes: &[u64; 4], square: u32) -> usize {
    ((planes[0] >> square & 1)
        | (planes[1] >> square & 1) << 1
        | (planes[2] >> square & 1) << 2
        | (planes[3] >> square & 1) << 3) as usize
}

/// [`pack`] without PEXT: the four bits of each square's code are gathered into four
/// boards first, so that one loop over the occupied squares in order reads each code.
/// (A loop per board, twelve loops of unpredictable length, took a quarter of
/// `features --kind nnue` on a CPU without fast PEXT.)
fn pack_portable(boards: &[u64; 12]) -> (u64, [u64; 2]) {
    let all = boards.iter().fold(0, |all, &board| all | board);
    let occupied = first_squares(all, MAX_ACTIVE as u32);
    let planes = code_planes(boards);
    let mut pieces = [0u64; 2];
    let mut rest = occupied;
    for word in &mut pieces {
        let mut shift = 0;
        while rest != 0 && shift < 64 {
            *word |= (code_at(&planes, rest.trailing_zeros()) as u64) << shift;
            rest &= rest - 1;
            shift += 4;
        }
    }
    (occupied, pieces)
}

/// [`pack`] one board at a time: the reference the others are held to.
#[cfg(test)]
fn pack_by_boards(boards: &[u64; 12]) -> (u64, [u64; 2]) {
    let all = boards.iter().fold(0, |all, &board| all | board);
    let occupied = first_squares(all, MAX_ACTIVE as u32);
    let mut pieces = [0u64; 2];
    for (code, &board) in boards.iter().enumerate() {
        let mut b = board & occupied;
        while b != 0 {
            // The piece's place among the occupied squares, counted from a1.
            let i = (occupied & ((b & b.wrapping_neg()) - 1)).count_ones() as usize;
            pieces[i / 16] |= (code as u64) << (4 * (i % 16));
            b &= b - 1;
        }
    }
    (occupied, pieces)
}

/// The boards [`pack`] packed.
#[inline(always)]
pub fn unpack(occupied: u64, pieces: [u64; 2]) -> [u64; 12] {
    #[cfg(target_arch = "x86_64")]
    if pawnstorm_kernels::simd::cpu().fast_pext {
        // SAFETY: fast PEXT implies the CPU has BMI2.
        return unsafe { bmi2::unpack(occupied, pieces) };
    }
    unpack_portable(occupied, pieces)
}

/// [`unpack`], one piece at a time: the reference.
fn unpack_portable(occupied: u64, pieces: [u64; 2]) -> [u64; 12] {
    let mut boards = [0u64; 12];
    let mut b = occupied;
    let mut i = 0;
    while b != 0 {
        let sq = b.trailing_zeros();
        let code = (pieces[i / 16] >> (4 * (i % 16))) & 15;
        boards[code as usize] |= 1 << sq;
        i += 1;
        b &= b - 1;
    }
    boards
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boards(fen: &str) -> [u64; 12] {
        let p = crate::position::fen::parse_fen(fen).unwrap();
        let mut out = [0u64; 12];
        for color in [Color::White, Color::Black] {
            for kind in crate::position::board::PieceType::ALL {
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

    /// Random boards of up to 40 distinct squares (past 32 only the first 32 squares
    /// count; a board may lack a king or have several), from splitmix64 seeded with
    /// `seed`, each with its occupied squares.
    fn random_boards(seed: u64, count: usize) -> Vec<([u64; 12], u64)> {
        let mut state = seed;
        let mut next = |n: u64| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % n
        };
        (0..count)
            .map(|_| {
                let mut boards = [0u64; 12];
                let mut taken = 0u64;
                for _ in 0..next(41) {
                    let sq = next(64);
                    if taken & (1 << sq) == 0 {
                        taken |= 1 << sq;
                        boards[next(12) as usize] |= 1 << sq;
                    }
                }
                (boards, taken)
            })
            .collect()
    }

    #[test]
    fn packing_agrees_with_the_piece_by_piece_reference() {
        for (boards, taken) in random_boards(11, 20_000) {
            let packed = pack(&boards);
            assert_eq!(packed, pack_by_boards(&boards), "{boards:x?}");
            assert_eq!(
                pack_portable(&boards),
                pack_by_boards(&boards),
                "{boards:x?}"
            );
            let kept = first_squares(taken, 32);
            let want = boards.map(|b| b & kept);
            assert_eq!(unpack(packed.0, packed.1), want, "{boards:x?}");
            assert_eq!(unpack_portable(packed.0, packed.1), want, "{boards:x?}");
        }
    }

    /// Every set: the three of nnue-pytorch, the standard king-bucket layouts and one
    /// written out (sixteen buckets in no order).
    fn every_set() -> Vec<FeatureSet> {
        let mut sets = FeatureSet::ALL.to_vec();
        for name in ["768x1hm", "768x2hm", "768x4hm", "768x8hm", "768x16hm"] {
            sets.push(FeatureSet::parse(name).expect("a standard layout"));
        }
        sets.push(FeatureSet::parse("768hm:f0e1d2c3b4a5968778695a4b3c2d1e0f").expect("a map"));
        sets
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_features_are_the_square_by_square_ones() {
        use pawnstorm_kernels::simd::{Level, level};
        if !matches!(level(), Level::Avx2 | Level::Avx512) {
            eprintln!("skipped: the process runs below AVX2");
            return;
        }
        // Real positions (kings on every file, the a and h files' pieces), then random
        // boards of up to 40 pieces: past 32 only the first 32 squares count, and a board
        // may lack a king or have several.
        let mut positions: Vec<[u64; 12]> = [
            "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R b KQkq - 0 9",
            "1k6/8/2n5/8/8/8/4P3/6K1 w - - 0 1",
            "4k3/P6p/8/8/8/8/p6P/4K3 w - - 0 1",
            "k7/7p/8/8/8/8/P7/7K w - - 0 1",
            "8/8/8/3k4/8/4K3/8/8 b - - 0 1",
        ]
        .iter()
        .map(|fen| boards(fen))
        .collect();
        positions.extend(random_boards(5, 20_000).into_iter().map(|(b, _)| b));
        for set in every_set() {
            let wide = wide::Wide::new(set).expect("every set's indices split into tables");
            for (i, b) in positions.iter().enumerate() {
                let us = if i % 2 == 0 {
                    Color::White
                } else {
                    Color::Black
                };
                let (mut ours, mut theirs) = ([0; MAX_ACTIVE], [0; MAX_ACTIVE]);
                let kings = [
                    b[KING].trailing_zeros() as u8,
                    b[6 + KING].trailing_zeros() as u8,
                ];
                let n = set.fill_from_planes::<true>(b, kings, us, &mut ours, &mut theirs);
                let (mut wide_ours, mut wide_theirs) = ([7; MAX_ACTIVE], [7; MAX_ACTIVE]);
                // SAFETY: the level is AVX2 or above.
                let wide_n = unsafe { wide.fill::<true>(b, us, &mut wide_ours, &mut wide_theirs) };
                assert_eq!(
                    (wide_n, wide_ours, wide_theirs),
                    (n, ours, theirs),
                    "{set:?} {us:?} {b:x?}"
                );
                if set != FeatureSet::HalfKp {
                    let (occupied, pieces) = pack(b);
                    let (mut packed_ours, mut packed_theirs) = ([0; MAX_ACTIVE], [0; MAX_ACTIVE]);
                    set.active_packed(
                        occupied,
                        pieces,
                        kings,
                        us,
                        &mut packed_ours,
                        &mut packed_theirs,
                    );
                    let mut seen = Vec::new();
                    // SAFETY: as above.
                    let done = unsafe {
                        wide.fill_packed_rows(
                            &[()],
                            |_| (occupied, pieces, kings, us),
                            |o, t| seen.push((*o, *t)),
                        )
                    };
                    assert_eq!(done, Some(()));
                    assert_eq!(
                        seen,
                        vec![(packed_ours, packed_theirs)],
                        "{set:?} {us:?} {b:x?}"
                    );
                }
                let mut alone = [7; MAX_ACTIVE];
                // SAFETY: as above.
                let alone_n = unsafe { wide.fill::<false>(b, !us, &mut alone, &mut []) };
                assert_eq!((alone_n, alone), (n, theirs), "{set:?} {us:?} {b:x?}");
            }
        }
    }

    #[test]
    fn both_perspectives_at_once_are_each_perspective_alone_in_square_order() {
        let fen = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R b KQkq - 0 9";
        let b = boards(fen);
        for set in FeatureSet::ALL {
            for us in [Color::White, Color::Black] {
                let (mut ours, mut theirs) = ([0; MAX_ACTIVE], [0; MAX_ACTIVE]);
                let n = set.active_both(&b, us, &mut ours, &mut theirs);
                let (mut alone_ours, mut alone_theirs) = ([0; MAX_ACTIVE], [0; MAX_ACTIVE]);
                assert_eq!(set.active(&b, us, &mut alone_ours), n);
                assert_eq!(set.active(&b, !us, &mut alone_theirs), n);
                assert_eq!((ours, theirs), (alone_ours, alone_theirs), "{set:?} {us:?}");
            }
            // Square order: from White's side under 768, the index's square part rises.
            let mut out = [0; MAX_ACTIVE];
            let n = set.active(&b, Color::White, &mut out);
            if set == FeatureSet::Chess768 {
                let squares: Vec<i32> = out[..n].iter().map(|i| i % 64).collect();
                assert!(squares.windows(2).all(|w| w[0] < w[1]), "{squares:?}");
            }
        }
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
