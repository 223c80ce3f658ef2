//! Pawn kernels per colour: moves (as the bitboard pawn rules give them) and structure
//! masks (as `docs/DEFINITIONS.md` defines them). "Ahead" is toward the colour's promotion rank.

use crate::geometry::*;
use crate::simd::inlined;
use crate::{Color, Lanes};

const RANK_1: u64 = 0xff;
const RANK_3: u64 = 0xff << 16;
const RANK_6: u64 = 0xff << 40;
const RANK_8: u64 = 0xff << 56;

fn promotion_rank<L: Lanes>(color: Color) -> L {
    L::splat(match color {
        Color::White => RANK_8,
        Color::Black => RANK_1,
    })
}

/// Target squares of single pushes onto empty squares.
#[inline(always)]
pub fn single_pushes<L: Lanes>(color: Color, pawns: L, empty: L) -> L {
    forward(color, pawns) & empty
}

/// Target squares of double pushes: from the start rank over an empty square to an empty one.
#[inline(always)]
pub fn double_pushes<L: Lanes>(color: Color, pawns: L, empty: L) -> L {
    let third_rank = L::splat(match color {
        Color::White => RANK_3,
        Color::Black => RANK_6,
    });
    forward(color, single_pushes(color, pawns, empty) & third_rank) & empty
}

/// Captures toward the a-file (west), never wrapping to the h-file.
#[inline(always)]
pub fn captures_west<L: Lanes>(color: Color, pawns: L, targets: L) -> L {
    west(forward(color, pawns)) & targets
}

/// Captures toward the h-file (east), never wrapping to the a-file.
#[inline(always)]
pub fn captures_east<L: Lanes>(color: Color, pawns: L, targets: L) -> L {
    east(forward(color, pawns)) & targets
}

/// The en-passant target if some pawn of `color` attacks it (`en_passant` empty for none).
#[inline(always)]
pub fn en_passant_targets<L: Lanes>(color: Color, pawns: L, en_passant: L) -> L {
    pawn_attacks(color, pawns) & en_passant
}

/// Push targets on the promotion rank.
#[inline(always)]
pub fn promotion_pushes<L: Lanes>(color: Color, pawns: L, empty: L) -> L {
    single_pushes(color, pawns, empty) & promotion_rank(color)
}

/// Capture targets on the promotion rank.
#[inline(always)]
pub fn promotion_captures<L: Lanes>(color: Color, pawns: L, enemies: L) -> L {
    (captures_west(color, pawns, enemies) | captures_east(color, pawns, enemies))
        & promotion_rank(color)
}

/// The pawn-structure masks of one colour, each a subset of its pawns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Structure<L> {
    /// Another own pawn stands strictly ahead on the same file.
    pub doubled: L,
    /// No own pawn on an adjacent file.
    pub isolated: L,
    /// No enemy pawn strictly ahead on the same or an adjacent file.
    pub passed: L,
    /// The stop square is attacked by an enemy pawn and no own pawn on an adjacent file
    /// stands on the same rank or behind.
    pub backward: L,
    /// Defended by an own pawn (one diagonally behind it).
    pub supported: L,
    /// An own pawn stands directly beside it on the same rank.
    pub phalanx: L,
    /// Supported or phalanx.
    pub connected: L,
    /// Defends an own pawn but is not defended: the base of a chain.
    pub chain_base: L,
}

/// The structure masks of `color`'s pawns `own` against the enemy pawns `enemy`.
#[inline(always)]
pub fn structure<L: Lanes>(color: Color, own: L, enemy: L) -> Structure<L> {
    let doubled = own & rear_span(color, own);
    let own_files = file_fill(own);
    let isolated = own & !(east(own_files) | west(own_files));
    let enemy_front = front_span(!color, enemy);
    let passed = own & !(enemy_front | east(enemy_front) | west(enemy_front));
    let enemy_attacks = pawn_attacks(!color, enemy);
    // Own pawns on an adjacent file, on the same rank or behind: a pawn at or ahead of an
    // own pawn's rank on the next file.
    let toward_promotion = match color {
        Color::White => north_fill(own),
        Color::Black => south_fill(own),
    };
    let supportable = east(toward_promotion) | west(toward_promotion);
    let backward = own & backward_of(color, enemy_attacks) & !supportable;
    let supported = own & pawn_attacks(color, own);
    let phalanx = own & (east(own) | west(own));
    let behind = backward_of(color, own);
    let defenders = own & (east(behind) | west(behind));
    Structure {
        doubled,
        isolated,
        passed,
        backward,
        supported,
        phalanx,
        connected: supported | phalanx,
        chain_base: defenders & !supported,
    }
}

/// [`structure`] of both colours at once, `[white, black]`, equal to
/// `[structure(White, white, black), structure(Black, black, white)]`.
///
/// Computed together because most of the work is shared: each side's pawns are filled
/// north and south once, and a pawn set's east-west neighbours `beside(p)` give its own
/// phalanx (`p & beside`), supported (`p & forward(beside)`) and chain bases
/// (`backward(beside)`), and, two ranks on, the enemy's backward test (the squares whose
/// stop square it attacks). Shifts by whole ranks commute with east/west steps, which
/// is what lets these be shared.
#[inline(always)]
pub fn structure_both<L: Lanes>(white: L, black: L) -> [Structure<L>; 2] {
    let beside = inlined(
        #[inline(always)]
        |b: L| east(b) | west(b),
    );
    let (white_north, white_south) = (north_fill(white), south_fill(white));
    let (black_north, black_south) = (north_fill(black), south_fill(black));
    let (white_beside, black_beside) = (beside(white), beside(black));
    // `beside(white_north)`: squares on a file next to a white pawn, level with it or
    // ahead. White's "supportable" set (a white pawn there has a neighbour level or
    // behind), and, one rank on, the adjacent-file part of the front span that decides
    // whether a black pawn is passed. Likewise for Black.
    let white_support = beside(white_north);
    let black_support = beside(black_south);
    let white_side = Structure {
        doubled: white & south(white_south),
        isolated: white & !(white_support | beside(white_south)),
        passed: white & !south(black_south | black_support),
        backward: white & black_beside.shr(16) & !white_support,
        supported: white & north(white_beside),
        phalanx: white & white_beside,
        connected: white & (north(white_beside) | white_beside),
        chain_base: white & south(white_beside) & !north(white_beside),
    };
    let black_side = Structure {
        doubled: black & north(black_north),
        isolated: black & !(black_support | beside(black_north)),
        passed: black & !north(white_north | white_support),
        backward: black & white_beside.shl(16) & !black_support,
        supported: black & south(black_beside),
        phalanx: black & black_beside,
        connected: black & (south(black_beside) | black_beside),
        chain_base: black & north(black_beside) & !south(black_beside),
    };
    [white_side, black_side]
}

/// Squares one step behind `b` from `color`'s side: the pawns whose stop square is in `b`.
#[inline(always)]
fn backward_of<L: Lanes>(color: Color, b: L) -> L {
    backward(color, b)
}

/// Details of `color`'s passed pawns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PassedDetail<L> {
    /// The stop square is occupied by any piece.
    pub blocked: L,
    /// Every square ahead is empty.
    pub free_path: L,
    /// An own rook stands behind it on its file with nothing between.
    pub own_rook_behind: L,
    /// An enemy rook stands behind it on its file with nothing between.
    pub enemy_rook_behind: L,
}

/// Fill from `from` one step at a time toward `color`'s promotion rank through `empty`
/// squares (Kogge-Stone occluded fill); the result includes `from`.
#[inline(always)]
fn occluded_forward_fill<L: Lanes>(color: Color, from: L, empty: L) -> L {
    let (mut filled, mut open) = (from, empty);
    for bits in [8u32, 16, 32] {
        let shift = inlined(
            #[inline(always)]
            |b: L| match color {
                Color::White => b.shl(bits),
                Color::Black => b.shr(bits),
            },
        );
        filled = filled | (open & shift(filled));
        open = open & shift(open);
    }
    filled
}

/// Details of `passed` (passed pawns of `color`) given the occupancy and both sides' rooks.
#[inline(always)]
pub fn passed_detail<L: Lanes>(
    color: Color,
    passed: L,
    occupied: L,
    own_rooks: L,
    enemy_rooks: L,
) -> PassedDetail<L> {
    let empty = !occupied;
    let blocked = passed & backward(color, occupied);
    let free_path = passed & !rear_span(color, occupied);
    // Squares a rook attacks toward the promotion rank: its occluded fill, one step on.
    let attacked_from_behind =
        |rooks: L| forward(color, occluded_forward_fill(color, rooks, empty));
    PassedDetail {
        blocked,
        free_path,
        own_rook_behind: passed & attacked_from_behind(own_rooks),
        enemy_rook_behind: passed & attacked_from_behind(enemy_rooks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{LanesFn, Path, dispatch};

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Random pawn sets, sparse and dense, with the a- and h-files crowded in some, and
    /// the full and empty boards.
    fn pawn_pairs() -> Vec<(u64, u64)> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut pairs = vec![(0, 0), (!0, 0), (0, !0), (FILES_AH, !FILES_AH)];
        for i in 0..20_000 {
            let mut a = xorshift(&mut state) & xorshift(&mut state);
            let mut b = xorshift(&mut state) & xorshift(&mut state) & !a;
            if i % 3 == 0 {
                a &= FILES_AH | xorshift(&mut state);
                b &= FILES_AH | xorshift(&mut state);
            }
            if i % 2 == 0 {
                a &= xorshift(&mut state);
                b &= xorshift(&mut state);
            }
            pairs.push((a, b));
        }
        pairs
    }

    const FILES_AH: u64 = 0x8181_8181_8181_8181;

    /// One lane of every mask.
    fn pick<L: Copy>(s: &Structure<L>, lane: impl Fn(L) -> u64) -> Structure<u64> {
        Structure {
            doubled: lane(s.doubled),
            isolated: lane(s.isolated),
            passed: lane(s.passed),
            backward: lane(s.backward),
            supported: lane(s.supported),
            phalanx: lane(s.phalanx),
            connected: lane(s.connected),
            chain_base: lane(s.chain_base),
        }
    }

    /// The shared two-colour kernel is the per-colour one, on 1, 4 and 8 lanes.
    #[test]
    fn structure_both_matches_structure_per_colour() {
        let pairs = pawn_pairs();
        for &(white, black) in &pairs {
            assert_eq!(
                structure_both(white, black),
                [
                    structure(Color::White, white, black),
                    structure(Color::Black, black, white)
                ],
                "white {white:#x} black {black:#x}"
            );
        }
        for path in Path::every() {
            dispatch(path, BothOnLanes(&pairs));
        }
    }

    struct BothOnLanes<'a>(&'a [(u64, u64)]);
    impl LanesFn for BothOnLanes<'_> {
        type Output = ();
        #[inline(always)]
        fn call<L: Lanes>(self) {
            for chunk in self.0.chunks_exact(L::WIDTH) {
                let white: Vec<u64> = chunk
                    .iter()
                    .map(
                        #[inline(always)]
                        |p| p.0,
                    )
                    .collect();
                let black: Vec<u64> = chunk
                    .iter()
                    .map(
                        #[inline(always)]
                        |p| p.1,
                    )
                    .collect();
                let lanes = structure_both(L::load(&white), L::load(&black));
                for (i, &(w, b)) in chunk.iter().enumerate() {
                    let scalar = structure_both(w, b);
                    for colour in 0..2 {
                        assert_eq!(
                            pick(
                                &lanes[colour],
                                #[inline(always)]
                                |v| v.to_array()[i]
                            ),
                            scalar[colour]
                        );
                    }
                }
            }
        }
    }
}
