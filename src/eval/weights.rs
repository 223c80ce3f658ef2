//! Every weight of the evaluation in one struct, its text file form (what `--weights` reads
//! and the tuner writes), and the bit planes the batch path sums tables with.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use thiserror::Error;

use super::pesto;

/// A middlegame and an endgame value, in centipawns, from the point of view of the side the
/// term is about (a penalty is negative).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Weight {
    pub mg: i32,
    pub eg: i32,
}

/// Shorthand for the default tables.
const fn w(mg: i32, eg: i32) -> Weight {
    Weight { mg, eg }
}

/// A value per square, White's view (a1 = 0); Black reads it vertically mirrored.
pub type SquareTable = [Weight; 64];

/// A value per relative rank (0 = the side's first rank).
pub type RankTable = [Weight; 8];

pub const PIECE_NAMES: [&str; 6] = ["pawn", "knight", "bishop", "rook", "queen", "king"];

/// Every weight of the evaluation. Defaults: `weights/default.txt`, tuned from
/// [`Weights::hand_set`].
///
/// `repr(C)` and nothing but [`Weight`]s, declared in the file's order: the struct is an
/// array of weights, and [`Weights::index_of`] tells a field's place in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Weights {
    /// Pawn, knight, bishop, rook, queen.
    pub material: [Weight; 5],
    /// Pawn, knight, bishop, rook, queen, king.
    pub psqt: [SquareTable; 6],
    /// Per square attacked (set-wise, outside own pieces and enemy pawn attacks): knight,
    /// bishop, rook, queen.
    pub mobility: [Weight; 4],
    pub bishop_pair: Weight,
    /// For the side to move.
    pub tempo: Weight,
    pub doubled: Weight,
    pub isolated: Weight,
    pub backward: Weight,
    pub passed: RankTable,
    pub connected: RankTable,
    pub chain_base: Weight,
    /// Added to `passed` for a passer whose stop square is occupied (default: minus half).
    pub passed_blocked: RankTable,
    pub passed_free_path: Weight,
    /// Per passer next to its own king.
    pub passed_king_support: Weight,
    /// Per king step between a passer and its own king.
    pub passed_own_king_distance: Weight,
    /// Per king step between a passer and the enemy king.
    pub passed_enemy_king_distance: Weight,
    pub passed_own_rook_behind: Weight,
    pub passed_enemy_rook_behind: Weight,
    /// Per passer supported by or beside another passer.
    pub connected_passers: Weight,
    /// Per king step from the four centre squares.
    pub king_centre_distance: Weight,
    /// Per king step from the king to each pawn (both colours').
    pub king_pawn_distance: Weight,
    /// Per passer the enemy king cannot catch (rule of the square, enemy without pieces).
    pub unstoppable_passer: Weight,
    /// Own pawns one and two ranks in front of the king (its file and the adjacent ones).
    pub shelter: [Weight; 2],
    /// Enemy pawns two and three ranks in front of the king.
    pub storm: [Weight; 2],
    /// Per square of the enemy king zone attacked by the side's knights, bishops, rooks,
    /// queens (each kind's attacks counted once a square).
    pub king_zone_attack: [Weight; 4],
    /// By the number of piece kinds (knight, bishop, rook, queen) attacking the enemy king
    /// zone: one, two, three, four.
    pub king_attackers: [Weight; 4],
    /// Per safe square from which a knight, bishop, rook, queen of the side could check.
    pub safe_check: [Weight; 4],
    /// The own king on a half-open file (no own pawn on it, an enemy pawn) and on an open
    /// one (no pawn).
    pub king_file: [Weight; 2],
    /// Per enemy knight, bishop, rook or queen attacked by the side's pawns.
    pub threat_by_pawn: Weight,
    /// Per enemy rook or queen attacked by a minor piece, or queen attacked by a rook.
    pub threat_by_lesser: Weight,
    /// Per enemy piece or pawn (not the king) attacked by the side and not defended.
    pub hanging: Weight,
    /// Per enemy knight, bishop, rook or queen a safe pawn push would attack.
    pub pawn_push_threat: Weight,
    /// Per rook on a half-open file, on an open file.
    pub rook_file: [Weight; 2],
    /// Per queen on a half-open file, on an open file.
    pub queen_file: [Weight; 2],
    /// Per rook on the side's seventh rank.
    pub rook_seventh: Weight,
    /// Per knight, bishop on an outpost.
    pub outpost: [Weight; 2],
    /// Per own pawn on a square of a bishop's colour, for each bishop.
    pub bad_bishop: Weight,
    /// Per safe square of the space area (mg: space matters with pieces on the board).
    pub space: Weight,
}

fn pesto_table(mg: &[i32; 64], eg: &[i32; 64]) -> SquareTable {
    // The published tables read like a diagram (a8 first); a1 = 0 is row 7, column 0.
    std::array::from_fn(|square| w(mg[square ^ 56], eg[square ^ 56]))
}

/// The compiled-in defaults: `weights/default.txt` (tuned; its header says how it was
/// made) over [`Weights::hand_set`].
pub const DEFAULT_FILE: &str = include_str!("../../weights/default.txt");

impl Default for Weights {
    fn default() -> Weights {
        static DEFAULT: OnceLock<Weights> = OnceLock::new();
        DEFAULT
            .get_or_init(|| {
                Weights::parse_over(
                    Weights::hand_set(),
                    DEFAULT_FILE,
                    Path::new("weights/default.txt"),
                )
                // Compiled in, not user input: the tests read it.
                .expect("weights/default.txt is a valid weights file")
            })
            .clone()
    }
}

impl Weights {
    /// The weights the project started from, before any tuning: PeSTO's material and
    /// tables; the other terms take values from the usual ranges of hand-crafted engines
    /// (Stockfish's classical eval, the Chess Programming Wiki's pawn-structure pages).
    /// `weights/hand-set.txt` holds them for the training recipe's first datagen.
    pub fn hand_set() -> Weights {
        let passed = [
            w(0, 0),
            w(5, 12),
            w(10, 20),
            w(15, 35),
            w(30, 60),
            w(55, 100),
            w(90, 160),
            w(0, 0),
        ];
        Weights {
            material: std::array::from_fn(|i| w(pesto::MATERIAL_MG[i], pesto::MATERIAL_EG[i])),
            psqt: std::array::from_fn(|i| pesto_table(&pesto::PSQT_MG[i], &pesto::PSQT_EG[i])),
            mobility: [w(4, 4), w(5, 5), w(3, 5), w(2, 4)],
            bishop_pair: w(30, 50),
            tempo: w(15, 5),
            doubled: w(-10, -25),
            isolated: w(-10, -15),
            backward: w(-9, -20),
            passed,
            connected: [
                w(0, 0),
                w(4, 2),
                w(6, 4),
                w(10, 6),
                w(20, 12),
                w(35, 20),
                w(60, 35),
                w(0, 0),
            ],
            chain_base: w(-5, -3),
            passed_blocked: passed.map(|p| w(-p.mg / 2, -p.eg / 2)),
            passed_free_path: w(5, 15),
            passed_king_support: w(0, 10),
            passed_own_king_distance: w(0, -4),
            passed_enemy_king_distance: w(0, 6),
            passed_own_rook_behind: w(10, 20),
            passed_enemy_rook_behind: w(-10, -20),
            connected_passers: w(10, 25),
            king_centre_distance: w(0, -6),
            king_pawn_distance: w(0, -2),
            unstoppable_passer: w(0, 500),
            shelter: [w(12, 0), w(6, 0)],
            storm: [w(-15, 0), w(-8, 0)],
            king_zone_attack: [w(10, 2), w(8, 2), w(7, 2), w(6, 2)],
            king_attackers: [w(0, 0), w(25, 5), w(60, 10), w(100, 15)],
            safe_check: [w(35, 10), w(25, 10), w(40, 10), w(30, 10)],
            king_file: [w(-15, 0), w(-30, 0)],
            threat_by_pawn: w(70, 45),
            threat_by_lesser: w(50, 40),
            hanging: w(40, 20),
            pawn_push_threat: w(35, 30),
            rook_file: [w(15, 5), w(40, 20)],
            queen_file: [w(3, 3), w(8, 5)],
            rook_seventh: w(20, 35),
            outpost: [w(40, 25), w(20, 10)],
            bad_bishop: w(-3, -7),
            space: w(2, 0),
        }
    }
}

/// A weights file that could not be read.
#[derive(Debug, Error)]
pub enum WeightsError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {reason}: {text:?}")]
    Line {
        path: PathBuf,
        line: usize,
        text: String,
        reason: String,
    },
}

const FILE_KINDS: [&str; 2] = ["half_open", "open"];

/// The largest |count| (White's minus Black's) the weight `name` (as the weights file names
/// it) is multiplied by, in any position whose pieces lie on distinct squares: counts of
/// squares or pieces are at most 64, of a rank's squares 8; a table entry is used at most
/// once per colour, with opposite signs; king distances are at most 7 a square; the bad
/// bishop count is bishops times pawns, at most 32 x 32; the rest are flags or small
/// distances.
pub fn max_count(name: &str) -> i64 {
    match name.split('.').next().unwrap_or(name) {
        "psqt" | "bishop_pair" | "tempo" | "king_attackers" | "king_file" => 1,
        "king_centre_distance" => 3,
        "passed" | "connected" | "passed_blocked" | "rook_seventh" => 8,
        "passed_own_king_distance" | "passed_enemy_king_distance" | "king_pawn_distance" => 7 * 64,
        "bad_bishop" => 32 * 32,
        _ => 64,
    }
}

/// `taper` computes `eg * (24 - phase) * scale` (at most 24 x 64 = 1536 times |eg|) and
/// `mg * phase + eg * (24 - phase) * scale / 64` (at most 24 times |mg| + |eg|) in i32.
const TAPER_MG_FACTOR: i64 = 24;
const TAPER_EG_FACTOR: i64 = 24 * 64;

/// Bounds on a position's total mg and eg over the terms (see [`Weights::sum_bounds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SumBounds {
    pub mg: i64,
    pub eg: i64,
}

impl SumBounds {
    /// Whether no sum of the evaluation, the taper's included, can overflow i32 (and so the
    /// batch lanes, which keep the low 32 bits, agree with plain integers).
    pub fn fit_i32(&self) -> bool {
        let max = i32::MAX as i64;
        TAPER_EG_FACTOR * self.eg <= max && TAPER_MG_FACTOR * (self.mg + self.eg) <= max
    }
}

const RANK_NAMES: [&str; 8] = [
    "rank1", "rank2", "rank3", "rank4", "rank5", "rank6", "rank7", "rank8",
];

impl Weights {
    /// How many weights there are (lines of the weights file).
    pub const COUNT: usize = std::mem::size_of::<Weights>() / std::mem::size_of::<Weight>();

    /// The place in file order of `weight`, which must be a field of `self` (or an element
    /// of one); `None` for any other reference.
    #[inline(always)]
    pub fn index_of(&self, weight: &Weight) -> Option<usize> {
        let offset =
            (weight as *const Weight as usize).checked_sub(self as *const Weights as usize)?;
        (offset < std::mem::size_of::<Weights>()).then_some(offset / std::mem::size_of::<Weight>())
    }

    /// Every weight's name, in file order.
    pub fn names() -> Vec<String> {
        let mut names = Vec::with_capacity(Weights::COUNT);
        Weights::default().visit_mut(|name, _| names.push(name.to_string()));
        names
    }

    /// Every weight, in file order.
    pub fn values(&self) -> Vec<Weight> {
        let mut values = Vec::with_capacity(Weights::COUNT);
        self.clone().visit_mut(|_, weight| values.push(*weight));
        values
    }

    /// The weights from their values in file order; `None` unless there are
    /// [`Weights::COUNT`].
    pub fn from_values(values: &[Weight]) -> Option<Weights> {
        if values.len() != Weights::COUNT {
            return None;
        }
        let mut weights = Weights::default();
        let mut next = values.iter();
        weights.visit_mut(|_, weight| {
            if let Some(value) = next.next() {
                *weight = *value;
            }
        });
        Some(weights)
    }

    /// Calls `visit` with the name and value of every weight, in file order.
    pub fn visit_mut(&mut self, mut visit: impl FnMut(&str, &mut Weight)) {
        let mut name = String::new();
        let mut named = |prefix: &str, suffix: &str, weight: &mut Weight| {
            name.clear();
            name.push_str(prefix);
            if !suffix.is_empty() {
                name.push('.');
                name.push_str(suffix);
            }
            visit(&name, weight);
        };
        for (piece, weight) in PIECE_NAMES.iter().zip(&mut self.material) {
            named("material", piece, weight);
        }
        for (piece, table) in PIECE_NAMES.iter().zip(&mut self.psqt) {
            for (square, weight) in table.iter_mut().enumerate() {
                let file = (b'a' + square as u8 % 8) as char;
                let rank = (b'1' + square as u8 / 8) as char;
                named(&format!("psqt.{piece}"), &format!("{file}{rank}"), weight);
            }
        }
        for (piece, weight) in PIECE_NAMES[1..].iter().zip(&mut self.mobility) {
            named("mobility", piece, weight);
        }
        named("bishop_pair", "", &mut self.bishop_pair);
        named("tempo", "", &mut self.tempo);
        named("doubled", "", &mut self.doubled);
        named("isolated", "", &mut self.isolated);
        named("backward", "", &mut self.backward);
        for (rank, weight) in RANK_NAMES.iter().zip(&mut self.passed) {
            named("passed", rank, weight);
        }
        for (rank, weight) in RANK_NAMES.iter().zip(&mut self.connected) {
            named("connected", rank, weight);
        }
        named("chain_base", "", &mut self.chain_base);
        for (rank, weight) in RANK_NAMES.iter().zip(&mut self.passed_blocked) {
            named("passed_blocked", rank, weight);
        }
        named("passed_free_path", "", &mut self.passed_free_path);
        named("passed_king_support", "", &mut self.passed_king_support);
        named(
            "passed_own_king_distance",
            "",
            &mut self.passed_own_king_distance,
        );
        named(
            "passed_enemy_king_distance",
            "",
            &mut self.passed_enemy_king_distance,
        );
        named(
            "passed_own_rook_behind",
            "",
            &mut self.passed_own_rook_behind,
        );
        named(
            "passed_enemy_rook_behind",
            "",
            &mut self.passed_enemy_rook_behind,
        );
        named("connected_passers", "", &mut self.connected_passers);
        named("king_centre_distance", "", &mut self.king_centre_distance);
        named("king_pawn_distance", "", &mut self.king_pawn_distance);
        named("unstoppable_passer", "", &mut self.unstoppable_passer);
        named("shelter", "near", &mut self.shelter[0]);
        named("shelter", "far", &mut self.shelter[1]);
        named("storm", "near", &mut self.storm[0]);
        named("storm", "far", &mut self.storm[1]);
        for (piece, weight) in PIECE_NAMES[1..5].iter().zip(&mut self.king_zone_attack) {
            named("king_zone", piece, weight);
        }
        for (kinds, weight) in ["kinds1", "kinds2", "kinds3", "kinds4"]
            .iter()
            .zip(&mut self.king_attackers)
        {
            named("king_attackers", kinds, weight);
        }
        for (piece, weight) in PIECE_NAMES[1..5].iter().zip(&mut self.safe_check) {
            named("safe_check", piece, weight);
        }
        for (file, weight) in FILE_KINDS.iter().zip(&mut self.king_file) {
            named("king_file", file, weight);
        }
        named("threat_by_pawn", "", &mut self.threat_by_pawn);
        named("threat_by_lesser", "", &mut self.threat_by_lesser);
        named("hanging", "", &mut self.hanging);
        named("pawn_push_threat", "", &mut self.pawn_push_threat);
        for (file, weight) in FILE_KINDS.iter().zip(&mut self.rook_file) {
            named("rook_file", file, weight);
        }
        for (file, weight) in FILE_KINDS.iter().zip(&mut self.queen_file) {
            named("queen_file", file, weight);
        }
        named("rook_seventh", "", &mut self.rook_seventh);
        for (piece, weight) in PIECE_NAMES[1..3].iter().zip(&mut self.outpost) {
            named("outpost", piece, weight);
        }
        named("bad_bishop", "", &mut self.bad_bishop);
        named("space", "", &mut self.space);
    }

    /// The text form: a comment header, then one `name mg eg` line per weight.
    pub fn to_text(&self) -> String {
        let mut text = String::from(
            "# pawnstorm evaluation weights: one `name mg eg` line per weight, centipawns.\n\
             # Missing names keep their compiled-in defaults; unknown names are errors.\n",
        );
        self.clone().visit_mut(|name, weight| {
            let _ = writeln!(text, "{name} {} {}", weight.mg, weight.eg);
        });
        text
    }

    /// Parses the text form over the defaults; `path` names the source in errors.
    pub fn from_text(text: &str, path: &Path) -> Result<Weights, WeightsError> {
        Weights::parse_over(Weights::default(), text, path)
    }

    /// Parses the text form over `base`: names the text leaves out keep `base`'s values.
    fn parse_over(base: Weights, text: &str, path: &Path) -> Result<Weights, WeightsError> {
        let mut values = std::collections::HashMap::new();
        for (index, line) in text.lines().enumerate() {
            let error = |reason: &str| WeightsError::Line {
                path: path.to_path_buf(),
                line: index + 1,
                text: line.to_string(),
                reason: reason.to_string(),
            };
            let content = line.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let fields: Vec<&str> = content.split_whitespace().collect();
            let [name, mg, eg] = fields[..] else {
                return Err(error("expected `name mg eg`"));
            };
            let (Ok(mg), Ok(eg)) = (mg.parse::<i32>(), eg.parse::<i32>()) else {
                return Err(error("mg and eg must be integers"));
            };
            // Weights times counts stay far inside i32 only with sane magnitudes.
            if mg.abs() > 100_000 || eg.abs() > 100_000 {
                return Err(error("weights must lie within ±100000"));
            }
            if values
                .insert(name.to_string(), (index + 1, line, w(mg, eg)))
                .is_some()
            {
                return Err(error("weight given twice"));
            }
        }
        let mut weights = base;
        // Each weight read from the file, with its line: the one to blame for a bound.
        let mut given = Vec::new();
        weights.visit_mut(|name, weight| {
            if let Some((line, text, value)) = values.remove(name) {
                *weight = value;
                given.push((name.to_string(), line, text));
            }
        });
        if let Some((name, (line, text, _))) = values.into_iter().min_by_key(|(_, v)| v.0) {
            return Err(WeightsError::Line {
                path: path.to_path_buf(),
                line,
                text: text.to_string(),
                reason: format!("unknown weight `{name}`"),
            });
        }
        let bounds = weights.sum_bounds();
        if !bounds.fit_i32() {
            // Blame the file's weight that adds the most to the overflowing taper.
            let mut contributions = std::collections::HashMap::new();
            weights.clone().visit_mut(|name, weight| {
                let count = max_count(name);
                let cost = TAPER_MG_FACTOR * count * weight.mg.unsigned_abs() as i64
                    + TAPER_EG_FACTOR * count * weight.eg.unsigned_abs() as i64;
                contributions.insert(name.to_string(), (count, *weight, cost));
            });
            let (name, line, text) = given
                .into_iter()
                .max_by_key(|(name, _, _)| contributions[name].2)
                .expect("the defaults fit, so the file changed some weight");
            let (count, weight, _) = contributions[&name];
            return Err(WeightsError::Line {
                path: path.to_path_buf(),
                line,
                text: text.to_string(),
                reason: format!(
                    "weight `{name}` ({} {}) times its largest count ({count}) lets a sum \
                     overflow i32: with every weight at its largest count |mg| reaches {} and \
                     |eg| {}, and the taper needs 24 x (|mg| + |eg|) and 1536 x |eg| within \
                     {}",
                    weight.mg,
                    weight.eg,
                    bounds.mg,
                    bounds.eg,
                    i32::MAX
                ),
            });
        }
        Ok(weights)
    }

    /// The largest |mg| and |eg| totals any position can reach: each weight's magnitude
    /// times the largest count it multiplies ([`max_count`]), summed.
    pub fn sum_bounds(&self) -> SumBounds {
        let mut bounds = SumBounds { mg: 0, eg: 0 };
        self.clone().visit_mut(|name, weight| {
            let count = max_count(name);
            bounds.mg += count * weight.mg.unsigned_abs() as i64;
            bounds.eg += count * weight.eg.unsigned_abs() as i64;
        });
        bounds
    }

    /// Reads a weights file.
    pub fn read(path: &Path) -> Result<Weights, WeightsError> {
        let text = std::fs::read_to_string(path).map_err(|source| WeightsError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Weights::from_text(&text, path)
    }
}

/// Most bit planes a table can need: weights lie within ±100,000, so a table of White's
/// values and Black's negated ones spans less than 2^18.
pub const MAX_PLANE_BITS: usize = 18;
/// Most disjoint piece sets one plane sum covers (6 piece types x 2 colours).
pub const MAX_PLANE_SETS: usize = 12;

/// Square tables over disjoint piece sets as bit planes, so that a batch sums them with
/// popcounts only. With `v(s, square)` the value of a piece of set `s` on `square`, the sum
/// over all pieces is `offset x popcount(all pieces)` plus the sum over j of
/// `2^j x popcount(union over s of (set_s & masks[s][j]))`, where `masks[s][j]` holds the
/// squares whose `v(s, square) - offset` has bit j set. The sets being disjoint, one
/// popcount per bit serves every set: Black's sets carry their values negated, so White's
/// and Black's pieces share the popcounts too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planes {
    pub offset: i32,
    pub bits: usize,
    pub masks: [[u64; MAX_PLANE_BITS]; MAX_PLANE_SETS],
}

impl Planes {
    /// Planes for `values[s][square]`, at most [`MAX_PLANE_SETS`] sets.
    pub fn new(values: &[[i32; 64]]) -> Planes {
        assert!(values.len() <= MAX_PLANE_SETS, "too many piece sets");
        let all = values.iter().flatten().copied();
        let offset = all.clone().min().unwrap_or(0);
        let span = all.map(|v| (v - offset) as u32).max().unwrap_or(0);
        let bits = (32 - span.leading_zeros()) as usize;
        assert!(bits <= MAX_PLANE_BITS, "weights out of range");
        let mut masks = [[0u64; MAX_PLANE_BITS]; MAX_PLANE_SETS];
        for (set, table) in masks.iter_mut().zip(values) {
            for (square, &value) in table.iter().enumerate() {
                let excess = (value - offset) as u32;
                for (j, plane) in set.iter_mut().enumerate().take(bits) {
                    if excess >> j & 1 == 1 {
                        *plane |= 1 << square;
                    }
                }
            }
        }
        Planes {
            offset,
            bits,
            masks,
        }
    }
}

/// White's view of a table and Black's, negated: the two sets of a White-minus-Black sum.
fn signed(table: &SquareTable, phase: fn(&Weight) -> i32) -> [[i32; 64]; 2] {
    [
        std::array::from_fn(|square| phase(&table[square])),
        std::array::from_fn(|square| -phase(&table[square ^ 56])),
    ]
}

/// A table's planes for both phases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TablePlanes {
    pub mg: Planes,
    pub eg: Planes,
}

impl TablePlanes {
    /// Over the sets [White's, Black's] of each table in `tables`, in that order.
    pub fn new(tables: &[&SquareTable]) -> TablePlanes {
        let values = |phase: fn(&Weight) -> i32| -> Vec<[i32; 64]> {
            tables.iter().flat_map(|t| signed(t, phase)).collect()
        };
        TablePlanes {
            mg: Planes::new(&values(|w| w.mg)),
            eg: Planes::new(&values(|w| w.eg)),
        }
    }
}

/// Weights with the tables turned into planes: what the term code reads.
#[derive(Clone, Debug)]
pub struct Prepared {
    pub weights: Weights,
    /// Sets: White's pawns, Black's pawns, White's knights, ..., Black's king.
    pub psqt: TablePlanes,
}

impl Prepared {
    pub fn new(weights: Weights) -> Prepared {
        let tables: Vec<&SquareTable> = weights.psqt.iter().collect();
        Prepared {
            psqt: TablePlanes::new(&tables),
            weights,
        }
    }
}

impl Default for Prepared {
    fn default() -> Prepared {
        Prepared::new(Weights::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compiled-in file names every weight (none falls back to the hand-set value
    /// unnoticed) and is what `Weights::default()` holds.
    #[test]
    fn the_default_file_names_every_weight() {
        let path = Path::new("weights/default.txt");
        let named = DEFAULT_FILE
            .lines()
            .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
            .count();
        let mut count = 0;
        Weights::hand_set().visit_mut(|_, _| count += 1);
        assert_eq!(named, count);
        let parsed = Weights::parse_over(Weights::hand_set(), DEFAULT_FILE, path).unwrap();
        assert_eq!(parsed, Weights::default());
        assert_ne!(
            parsed,
            Weights::hand_set(),
            "the defaults are the tuned weights"
        );
        assert!(parsed.sum_bounds().fit_i32());
    }

    /// `weights/hand-set.txt` (the training recipe's starting point) is the code's.
    #[test]
    fn the_hand_set_file_is_the_hand_set_weights() {
        let text = include_str!("../../weights/hand-set.txt");
        let path = Path::new("weights/hand-set.txt");
        let parsed = Weights::parse_over(Weights::default(), text, path).unwrap();
        assert_eq!(parsed, Weights::hand_set());
    }

    /// The memory order of the fields is the file order, so `index_of` names the right
    /// line; and values round-trip.
    #[test]
    fn field_places_are_file_order() {
        let mut weights = Weights::default();
        let base = &weights as *const Weights as usize;
        let mut expected = 0;
        let mut names = Vec::new();
        weights.visit_mut(|name, weight| {
            let place = (weight as *const Weight as usize - base) / std::mem::size_of::<Weight>();
            assert_eq!(place, expected, "{name}");
            expected += 1;
            names.push(name.to_string());
        });
        assert_eq!(expected, Weights::COUNT);
        assert_eq!(names, Weights::names());
        let weights = Weights::default();
        assert_eq!(weights.index_of(&weights.material[0]), Some(0));
        assert_eq!(weights.index_of(&weights.space), Some(Weights::COUNT - 1));
        assert_eq!(weights.index_of(&Weight::default()), None);
        let mut values = weights.values();
        values[7].eg = 12345;
        let changed = Weights::from_values(&values).expect("count");
        assert_eq!(changed.values(), values);
        assert!(Weights::from_values(&values[1..]).is_none());
    }

    /// Every single piece, of every set, sums to its table entry (Black's negated and
    /// mirrored).
    #[test]
    fn planes_sum_to_the_tables() {
        let weights = Weights::default();
        let prepared = Prepared::new(weights.clone());
        for (set, piece) in (0..12).map(|s| (s, s / 2)) {
            for square in 0..64 {
                let bit = 1u64 << square;
                let sum = |p: &Planes| {
                    p.offset
                        + (0..p.bits)
                            .map(|j| (((p.masks[set][j] & bit) != 0) as i32) << j)
                            .sum::<i32>()
                };
                let (mg, eg) = (sum(&prepared.psqt.mg), sum(&prepared.psqt.eg));
                let expected = if set % 2 == 0 {
                    weights.psqt[piece][square]
                } else {
                    let w = weights.psqt[piece][square ^ 56];
                    w_neg(w)
                };
                assert_eq!(
                    (mg, eg),
                    (expected.mg, expected.eg),
                    "set {set} square {square}"
                );
            }
        }
    }

    fn w_neg(weight: Weight) -> Weight {
        w(-weight.mg, -weight.eg)
    }

    /// The defaults leave a wide margin: tuned weights several times larger still load.
    #[test]
    fn default_sums_fit_i32_with_margin() {
        let bounds = Weights::default().sum_bounds();
        assert!(bounds.fit_i32(), "{bounds:?}");
        let doubled = SumBounds {
            mg: 4 * bounds.mg,
            eg: 4 * bounds.eg,
        };
        assert!(doubled.fit_i32(), "{bounds:?}");
    }

    #[test]
    fn text_form_round_trips_and_rejects_bad_lines() {
        let mut weights = Weights::default();
        weights.passed[5] = w(77, -3);
        weights.psqt[5][4] = w(-1, 2);
        let text = weights.to_text();
        let path = Path::new("w.txt");
        assert_eq!(Weights::from_text(&text, path).unwrap(), weights);
        let partial = Weights::from_text("tempo 1 2\n# comment\n\n", path).unwrap();
        assert_eq!(partial.tempo, w(1, 2));
        assert_eq!(partial.passed, Weights::default().passed);
        let error = Weights::from_text("tempo 1 2\nno_such 1 2\n", path)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("w.txt:2") && error.contains("no_such"),
            "{error}"
        );
        let error = Weights::from_text("tempo one 2\n", path)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("w.txt:1") && error.contains("integers"),
            "{error}"
        );
        assert!(Weights::from_text("tempo 1\n", path).is_err());
        // Each within ±100000, but a queen's worth of 90000 times 64 queens overflows.
        let error = Weights::from_text("tempo 1 2\nmaterial.queen 90000 90000\n", path)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("w.txt:2")
                && error.contains("material.queen")
                && error.contains("overflow"),
            "{error}"
        );
        // A large value on a flag is fine.
        assert!(Weights::from_text("tempo 100000 100000\n", path).is_ok());
        assert!(Weights::from_text("tempo 1 2\ntempo 3 4\n", path).is_err());
    }
}
