//! Attack tables: knight, king and pawn attacks by square, sliding attacks of bishops,
//! rooks and queens by square and occupancy, and the squares between or through two
//! squares.
//!
//! Sliding attacks use "fancy" magic bitboards: the occupancy of a square's relevant rays,
//! multiplied by a constant, indexes that square's slice of one shared table. Where the CPU
//! runs BMI2's PEXT in hardware (Intel since Haswell, AMD since Zen 3: see
//! [`crate::simd::Cpu::fast_pext`]) the index is `pext(occupancy, mask)` instead, which
//! saves a multiply and a load; on Zen 1/2 PEXT is microcoded and slow. The choice is made
//! once, at run time, when the table is built (a build for any x86-64 CPU has both paths).
//! Both fill the table from the same ray walk and are checked against it in the tests.
//!
//! The leaper tables are computed at compile time; the sliding table (about 840 KiB) and
//! the between and line tables are built on first use.
//!
//! ```
//! use pawnstorm_kernels::{attacks, Bitboard, Square};
//! let sq = |name| Square::from_name(name).unwrap();
//! let blockers = Bitboard::from(sq("a4"));
//! assert!(attacks::rook_attacks(sq("a1"), blockers).contains(sq("a4")));
//! assert!(!attacks::rook_attacks(sq("a1"), blockers).contains(sq("a5")));
//! assert_eq!(attacks::knight_attacks(sq("a1")).count(), 2);
//! ```

use std::sync::LazyLock;

use crate::{Bitboard, Color, Square};

const ROOK_DIRECTIONS: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRECTIONS: [(i8, i8); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
const KNIGHT_STEPS: [(i8, i8); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
const KING_STEPS: [(i8, i8); 8] = [
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
];

/// The bit of the square `file` files and `rank` ranks from a1, or 0 off the board.
const fn bit_at(file: i8, rank: i8) -> u64 {
    if file < 0 || file > 7 || rank < 0 || rank > 7 {
        0
    } else {
        1 << (rank * 8 + file)
    }
}

const fn leaper_table(steps: &[(i8, i8); 8]) -> [u64; 64] {
    let mut table = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        let (file, rank) = ((sq % 8) as i8, (sq / 8) as i8);
        let mut i = 0;
        while i < 8 {
            table[sq] |= bit_at(file + steps[i].0, rank + steps[i].1);
            i += 1;
        }
        sq += 1;
    }
    table
}

const fn pawn_table(color: Color) -> [u64; 64] {
    let forward = match color {
        Color::White => 1,
        Color::Black => -1,
    };
    let mut table = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        let (file, rank) = ((sq % 8) as i8, (sq / 8) as i8);
        table[sq] = bit_at(file - 1, rank + forward) | bit_at(file + 1, rank + forward);
        sq += 1;
    }
    table
}

static KNIGHT: [u64; 64] = leaper_table(&KNIGHT_STEPS);
static KING: [u64; 64] = leaper_table(&KING_STEPS);
static PAWN: [[u64; 64]; 2] = [pawn_table(Color::White), pawn_table(Color::Black)];

const fn ray_table(directions: &[(i8, i8); 4]) -> [u64; 64] {
    let mut table = [0; 64];
    let mut sq = 0;
    while sq < 64 {
        table[sq] = ray_attacks(sq as u8, 0, directions);
        sq += 1;
    }
    table
}

// A slider's empty-board rays from their own 1 KB: read through the attack tables they
// are each a cache line somewhere in the rook's ~800 KB, which is past the L2 cache of
// many cores (pins and checks ask for them at every move).
static ROOK_RAYS: [u64; 64] = ray_table(&ROOK_DIRECTIONS);
static BISHOP_RAYS: [u64; 64] = ray_table(&BISHOP_DIRECTIONS);

/// Squares a slider on `sq` attacks along `directions`, stopping at (and including) the
/// first occupied square of each ray. The slow reference the tables are built from.
const fn ray_attacks(sq: u8, occupied: u64, directions: &[(i8, i8); 4]) -> u64 {
    let mut attacks = 0;
    let mut d = 0;
    while d < 4 {
        let (df, dr) = directions[d];
        let (mut file, mut rank) = ((sq % 8) as i8 + df, (sq / 8) as i8 + dr);
        loop {
            let bit = bit_at(file, rank);
            attacks |= bit;
            if bit == 0 || occupied & bit != 0 {
                break;
            }
            file += df;
            rank += dr;
        }
        d += 1;
    }
    attacks
}

/// The squares whose occupancy can change a slider's attacks from `sq`: its rays without
/// the last square of each, since nothing lies beyond the edge to block.
const fn relevant_mask(sq: u8, directions: &[(i8, i8); 4]) -> u64 {
    let mut mask = 0;
    let mut d = 0;
    while d < 4 {
        let (df, dr) = directions[d];
        let (mut file, mut rank) = ((sq % 8) as i8 + df, (sq / 8) as i8 + dr);
        while bit_at(file + df, rank + dr) != 0 {
            mask |= bit_at(file, rank);
            file += df;
            rank += dr;
        }
        d += 1;
    }
    mask
}

/// For every pair of squares on a common rank, file or diagonal: the squares strictly
/// between them, and the whole line through both (edge to edge).
struct PairTables {
    between: [[u64; 64]; 64],
    line: [[u64; 64]; 64],
}

// Built at run time: the const evaluator takes minutes over 2 x 4096 entries.
static PAIRS: LazyLock<Box<PairTables>> = LazyLock::new(|| {
    let mut tables = Box::new(PairTables {
        between: [[0; 64]; 64],
        line: [[0; 64]; 64],
    });
    for from in 0..64u8 {
        let (file, rank) = ((from % 8) as i8, (from / 8) as i8);
        for (df, dr) in ROOK_DIRECTIONS.into_iter().chain(BISHOP_DIRECTIONS) {
            let full_line =
                ray_attacks(from, 0, &[(df, dr), (-df, -dr), (df, dr), (-df, -dr)]) | (1 << from);
            let mut between = 0;
            let mut step = 1;
            loop {
                let bit = bit_at(file + df * step, rank + dr * step);
                if bit == 0 {
                    break;
                }
                let to = bit.trailing_zeros() as usize;
                tables.between[from as usize][to] = between;
                tables.line[from as usize][to] = full_line;
                between |= bit;
                step += 1;
            }
        }
    }
    tables
});

/// Magic multipliers found by a seeded search (each verified collision-free when the table
/// is built): one per square, for the relevant occupancy of that square's rays.
const ROOK_MAGICS: [u64; 64] = [
    0x008000908064c000,
    0x0040200040001000,
    0x0180100080a0010a,
    0x8880041000800800,
    0x1200100201200804,
    0x0200020004011008,
    0x2180010000800600,
    0x0200005088210204,
    0x0400800040008021,
    0x0400400020005000,
    0x8240801000200080,
    0x8611001004200900,
    0x008180800c001800,
    0x0100800200800400,
    0x0a02000102000408,
    0x8020802300104280,
    0x0080004000402000,
    0xe010104000402000,
    0x0800808010002000,
    0xa280210008100100,
    0x0001818014000800,
    0xa002010100080400,
    0x0080240001020870,
    0x0001020004048845,
    0x0081826280004004,
    0x2020810900284000,
    0x0200100080802000,
    0x0200080080100080,
    0x8083080100100500,
    0x4406000901000400,
    0x0005020080800100,
    0x0090204200008114,
    0x0010400094800420,
    0x0900804000802002,
    0x0201001841002000,
    0x4100080080801000,
    0x4540040080800800,
    0x0002001004040020,
    0x0281195814001002,
    0x1240800040800100,
    0x0880042000524004,
    0x02c080410206002c,
    0x0801200241050010,
    0x8400080010008080,
    0x0008000500090010,
    0x0082009084020008,
    0x4012000108020004,
    0x9000104d08860004,
    0x2004204114800100,
    0x0148802112400300,
    0x0202842000100880,
    0x001b080080900080,
    0x001a002008100600,
    0x0004008004020080,
    0x5181000600040300,
    0x0000044401128a00,
    0x8044110480002441,
    0x2008110084402202,
    0x90806005090010c1,
    0x000420310a004a42,
    0x0023001004020801,
    0x0882001008040102,
    0x000230088118020c,
    0x0000019025040042,
];

const BISHOP_MAGICS: [u64; 64] = [
    0x0045010808008680,
    0x2002080204004898,
    0x0210009a10400006,
    0x0824050200810200,
    0x0006061105004090,
    0x00010108c0000000,
    0x0814040282104004,
    0x0012012201106800,
    0x10823014100c1040,
    0x0080c2088802808c,
    0x0281108410404000,
    0x0101212041826200,
    0x0020141028221058,
    0x2201020202200202,
    0x000082a801482000,
    0x0000008401411044,
    0x0007103014300404,
    0x0002091110010100,
    0x42140012040c0808,
    0x0800808802004020,
    0x90c4004210140000,
    0x0800200900a01000,
    0x00d0400201108810,
    0x80820183814412a0,
    0x00a01008202202b4,
    0x01c2021a09500402,
    0x0084440208042400,
    0x800400400c090100,
    0xba10040010802100,
    0xd182009006005000,
    0x5011021001009004,
    0x0020420200510400,
    0x0292104000468800,
    0x00043009091c0500,
    0x0280441000020025,
    0x0042820080080080,
    0x0440101010010040,
    0x1000900100808080,
    0x0108108120089800,
    0x0044010200012682,
    0xc002500420900400,
    0x0040482210710800,
    0x0002060024000200,
    0x0281020a44000800,
    0xa0021200a4000200,
    0x0001301000840840,
    0x2868500108444220,
    0x0004111041000200,
    0x8044020842080200,
    0x0000220104210200,
    0x0000021201044000,
    0x0000280884040028,
    0x4012114010858003,
    0x0000081004082b88,
    0x3892700508208002,
    0x00220a041b060400,
    0x0812020284014881,
    0x010434a282103100,
    0x0490400824020800,
    0x4a20002c00208800,
    0x000000a011020200,
    0x4002940a02482202,
    0x5100100202140406,
    0x02102000840540c1,
];

/// Where one square's slice of the sliding table starts and how to index it.
#[derive(Clone, Copy, Default)]
struct SliderSquare {
    mask: u64,
    magic: u64,
    shift: u32,
    offset: u32,
}

impl SliderSquare {
    /// The slot of `occupied`'s attacks: by PEXT if `pext` (the tables were built so, on a
    /// CPU with fast PEXT), by the magic multiply otherwise.
    #[inline(always)]
    fn index(&self, occupied: u64, pext: bool) -> usize {
        let index = if pext {
            pext_u64(occupied, self.mask)
        } else {
            (occupied & self.mask).wrapping_mul(self.magic) >> self.shift
        };
        self.offset as usize + index as usize
    }
}

/// BMI2's PEXT, as one instruction whatever the build targets. Inline assembly rather than
/// the intrinsic: the intrinsic only inlines into functions compiled for BMI2, and the
/// search that calls this is compiled for any x86-64.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn pext_u64(value: u64, mask: u64) -> u64 {
    let out: u64;
    // SAFETY: only called where `SliderTables::pext` is set, which `fast_pext` allows only
    // on CPUs with BMI2; the instruction reads two registers and writes one.
    unsafe {
        std::arch::asm!(
            "pext {out}, {value}, {mask}",
            value = in(reg) value,
            mask = in(reg) mask,
            out = lateout(reg) out,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    out
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn pext_u64(_value: u64, _mask: u64) -> u64 {
    unreachable!("PEXT is only chosen on x86-64")
}

struct SliderTables {
    rook: [SliderSquare; 64],
    bishop: [SliderSquare; 64],
    /// Whether the slices are indexed by PEXT (else by magics).
    pext: bool,
    attacks: Box<[u64]>,
}

/// Fills one piece kind's slices, appending to `attacks`, by walking every subset of each
/// square's relevant mask (Carry-Rippler enumeration).
fn fill_slider(
    squares: &mut [SliderSquare; 64],
    magics: &[u64; 64],
    directions: &[(i8, i8); 4],
    attacks: &mut Vec<u64>,
    pext: bool,
) {
    for sq in 0..64u8 {
        let mask = relevant_mask(sq, directions);
        let bits = mask.count_ones();
        let offset = attacks.len();
        let entry = SliderSquare {
            mask,
            magic: magics[sq as usize],
            shift: 64 - bits,
            offset: u32::try_from(offset).expect("the sliding table is far below 4 G entries"),
        };
        attacks.resize(offset + (1 << bits), 0);
        let mut filled = vec![false; 1 << bits];
        let mut subset = 0u64;
        loop {
            let index = entry.index(subset, pext);
            let expected = ray_attacks(sq, subset, directions);
            let slot = &mut attacks[index];
            assert!(
                !filled[index - offset] || *slot == expected,
                "magic for square {sq} collides"
            );
            filled[index - offset] = true;
            *slot = expected;
            subset = subset.wrapping_sub(mask) & mask;
            if subset == 0 {
                break;
            }
        }
        squares[sq as usize] = entry;
    }
}

static SLIDERS: LazyLock<SliderTables> =
    LazyLock::new(|| slider_tables(crate::simd::cpu().fast_pext));

impl SliderTables {
    /// The attacks of `entry`'s square given `occupied`.
    #[inline(always)]
    fn lookup(&self, entry: &SliderSquare, occupied: u64) -> u64 {
        let index = entry.index(occupied, self.pext);
        debug_assert!(index < self.attacks.len());
        // SAFETY: `fill_slider` gave every square a slice of `1 << bits` slots at `offset`
        // (checked there by filling each through this same `index`), and both PEXT and the
        // magic multiply then shift by `64 - bits` give values below `1 << bits`. Unchecked
        // because the bounds test is a compare and branch on every sliding lookup of the
        // move generator.
        unsafe { *self.attacks.get_unchecked(index) }
    }
}

fn slider_tables(pext: bool) -> SliderTables {
    let mut attacks = Vec::with_capacity(102_400 + 5_248);
    let mut rook = [SliderSquare::default(); 64];
    let mut bishop = [SliderSquare::default(); 64];
    fill_slider(
        &mut rook,
        &ROOK_MAGICS,
        &ROOK_DIRECTIONS,
        &mut attacks,
        pext,
    );
    fill_slider(
        &mut bishop,
        &BISHOP_MAGICS,
        &BISHOP_DIRECTIONS,
        &mut attacks,
        pext,
    );
    SliderTables {
        rook,
        bishop,
        pext,
        attacks: attacks.into_boxed_slice(),
    }
}

/// How sliding attacks are indexed in this process: `"pext"` or `"magics"`.
pub fn slider_index() -> &'static str {
    if SLIDERS.pext { "pext" } else { "magics" }
}

/// Builds the run-time tables now rather than on the first lookup (e.g. before timing).
pub fn init() {
    LazyLock::force(&SLIDERS);
    LazyLock::force(&PAIRS);
}

/// Squares a knight on `sq` attacks.
#[inline(always)]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT[sq.index() as usize])
}

/// Squares a king on `sq` attacks.
#[inline(always)]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING[sq.index() as usize])
}

/// Squares a pawn of `color` on `sq` attacks (diagonally forward).
#[inline(always)]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN[color.index()][sq.index() as usize])
}

/// Squares a rook on `sq` attacks given the `occupied` squares (blockers included).
#[inline(always)]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    let tables = &*SLIDERS;
    let entry = &tables.rook[sq.index() as usize];
    Bitboard(tables.lookup(entry, occupied.0))
}

/// Squares a bishop on `sq` attacks given the `occupied` squares (blockers included).
#[inline(always)]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    let tables = &*SLIDERS;
    let entry = &tables.bishop[sq.index() as usize];
    Bitboard(tables.lookup(entry, occupied.0))
}

/// Squares a queen on `sq` attacks given the `occupied` squares (blockers included).
#[inline(always)]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

/// Squares a rook on `sq` attacks on an empty board.
#[inline(always)]
pub fn rook_rays(sq: Square) -> Bitboard {
    Bitboard(ROOK_RAYS[sq.index() as usize])
}

/// Squares a bishop on `sq` attacks on an empty board.
#[inline(always)]
pub fn bishop_rays(sq: Square) -> Bitboard {
    Bitboard(BISHOP_RAYS[sq.index() as usize])
}

/// The squares strictly between `a` and `b` if they share a rank, file or diagonal;
/// empty otherwise (and for adjacent squares).
#[inline(always)]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(PAIRS.between[a.index() as usize][b.index() as usize])
}

/// The whole line (edge to edge) through `a` and `b` if they share a rank, file or
/// diagonal; empty otherwise.
#[inline(always)]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(PAIRS.line[a.index() as usize][b.index() as usize])
}

/// The slow ray walk the rook table is built from, for tests and for checking other
/// implementations.
pub fn rook_attacks_slow(sq: Square, occupied: Bitboard) -> Bitboard {
    Bitboard(ray_attacks(sq.index(), occupied.0, &ROOK_DIRECTIONS))
}

/// The slow ray walk the bishop table is built from.
pub fn bishop_attacks_slow(sq: Square, occupied: Bitboard) -> Bitboard {
    Bitboard(ray_attacks(sq.index(), occupied.0, &BISHOP_DIRECTIONS))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(name: &str) -> Square {
        Square::from_name(name).unwrap()
    }

    fn squares(names: &[&str]) -> Bitboard {
        names.iter().map(|name| sq(name)).collect()
    }

    /// Random occupancies, sparse and dense, from a fixed-seed xorshift.
    fn occupancies() -> impl Iterator<Item = Bitboard> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..3000).map(move |i| {
            Bitboard(match i % 3 {
                0 => next() & next(),
                1 => next(),
                _ => next() & next() & next(),
            })
        })
    }

    #[test]
    fn sliding_tables_equal_the_ray_walk_on_random_occupancies() {
        for occupied in occupancies() {
            for square in Square::all() {
                assert_eq!(
                    rook_attacks(square, occupied),
                    rook_attacks_slow(square, occupied)
                );
                assert_eq!(
                    bishop_attacks(square, occupied),
                    bishop_attacks_slow(square, occupied)
                );
            }
        }
    }

    #[test]
    fn empty_board_rays_equal_the_attack_tables_and_reach_the_edges() {
        for square in Square::all() {
            assert_eq!(rook_rays(square), rook_attacks(square, Bitboard::EMPTY));
            assert_eq!(bishop_rays(square), bishop_attacks(square, Bitboard::EMPTY));
            // Fourteen squares on a rook's rank and file wherever it stands.
            assert_eq!(rook_rays(square).count(), 14);
        }
        let corner = Square::new(0).expect("a1");
        assert_eq!(bishop_rays(corner).count(), 7);
    }

    /// Both ways of indexing (magics always; PEXT where this CPU has BMI2), whichever this
    /// process chose, against the ray walk.
    #[test]
    fn both_slider_indexings_equal_the_ray_walk() {
        #[cfg(target_arch = "x86_64")]
        let bmi2 = std::arch::is_x86_feature_detected!("bmi2");
        #[cfg(not(target_arch = "x86_64"))]
        let bmi2 = false;
        for pext in [false, true].into_iter().filter(|&p| !p || bmi2) {
            let tables = slider_tables(pext);
            for occupied in occupancies().step_by(3) {
                for square in Square::all() {
                    let at = |entry: &SliderSquare| tables.attacks[entry.index(occupied.0, pext)];
                    let i = square.index() as usize;
                    assert_eq!(at(&tables.rook[i]), rook_attacks_slow(square, occupied).0);
                    assert_eq!(
                        at(&tables.bishop[i]),
                        bishop_attacks_slow(square, occupied).0
                    );
                }
            }
        }
    }

    /// The magic path must stay correct even in builds that index by PEXT.
    #[test]
    fn magics_map_every_occupancy_to_a_slot_of_the_same_attacks() {
        for (magics, directions) in [
            (&ROOK_MAGICS, &ROOK_DIRECTIONS),
            (&BISHOP_MAGICS, &BISHOP_DIRECTIONS),
        ] {
            for sq in 0..64u8 {
                let mask = relevant_mask(sq, directions);
                let shift = 64 - mask.count_ones();
                let mut slots = vec![None; 1 << mask.count_ones()];
                let mut subset = 0u64;
                loop {
                    let index = (subset.wrapping_mul(magics[sq as usize]) >> shift) as usize;
                    let attacks = ray_attacks(sq, subset, directions);
                    assert!(slots[index].is_none_or(|a| a == attacks), "square {sq}");
                    slots[index] = Some(attacks);
                    subset = subset.wrapping_sub(mask) & mask;
                    if subset == 0 {
                        break;
                    }
                }
            }
        }
    }

    #[test]
    fn sliders_stop_at_blockers_and_edges() {
        let occupied = squares(&["d6", "f4", "d2"]);
        assert_eq!(
            rook_attacks(sq("d4"), occupied),
            squares(&["d5", "d6", "d3", "d2", "e4", "f4", "c4", "b4", "a4"])
        );
        assert_eq!(
            bishop_attacks(sq("h1"), Bitboard::EMPTY),
            squares(&["g2", "f3", "e4", "d5", "c6", "b7", "a8"])
        );
    }

    #[test]
    fn leapers_do_not_wrap_round_the_edge_files() {
        assert_eq!(knight_attacks(sq("a1")), squares(&["b3", "c2"]));
        assert_eq!(knight_attacks(sq("h8")), squares(&["g6", "f7"]));
        assert_eq!(knight_attacks(sq("g4")).count(), 6);
        assert_eq!(
            king_attacks(sq("h4")),
            squares(&["h5", "h3", "g5", "g4", "g3"])
        );
        assert_eq!(king_attacks(sq("a1")), squares(&["a2", "b2", "b1"]));
        assert_eq!(pawn_attacks(Color::White, sq("a2")), squares(&["b3"]));
        assert_eq!(pawn_attacks(Color::White, sq("h2")), squares(&["g3"]));
        assert_eq!(pawn_attacks(Color::Black, sq("a7")), squares(&["b6"]));
        assert_eq!(pawn_attacks(Color::Black, sq("e4")), squares(&["d3", "f3"]));
    }

    #[test]
    fn between_and_line_cover_ranks_files_and_diagonals_only() {
        assert_eq!(between(sq("a1"), sq("d4")), squares(&["b2", "c3"]));
        assert_eq!(between(sq("d4"), sq("a1")), squares(&["b2", "c3"]));
        assert_eq!(between(sq("e1"), sq("e8")).count(), 6);
        assert_eq!(between(sq("a1"), sq("b3")), Bitboard::EMPTY);
        assert_eq!(between(sq("e4"), sq("e5")), Bitboard::EMPTY);
        assert_eq!(line(sq("c3"), sq("e5")), Bitboard(0x8040_2010_0804_0201));
        assert_eq!(line(sq("b1"), sq("g1")), Bitboard::RANK_1);
        assert_eq!(line(sq("a1"), sq("b3")), Bitboard::EMPTY);
        for a in Square::all() {
            for b in Square::all() {
                assert_eq!(between(a, b), between(b, a));
                assert_eq!(line(a, b), line(b, a));
                if !line(a, b).is_empty() {
                    assert!(line(a, b).contains(a) && line(a, b).contains(b));
                    assert_eq!(between(a, b) & !line(a, b), Bitboard::EMPTY);
                }
            }
        }
    }
}
