//! An independent reference evaluation, written from `docs/EVAL.md` and `docs/DEFINITIONS.md`, not from
//! the term code: it walks the board square by square, walks rays for slider attacks, reads
//! the piece-square tables entry by entry and looks at one king zone at a time. Every term's
//! (mg, eg) must equal `eval::breakdown`'s on every fixture position (the test suites, the
//! mask positions, the perft suites, the positions of the fixture games) and on their colour
//! flips; the final score too, through the library's `endgame::finish` for the special
//! endgames (the terms themselves are computed here alone).
//!
//! A second test checks a handful of PeSTO table values as published (Rofchade's tables on
//! the Chess Programming Wiki), literal numbers, against the compiled-in defaults and through
//! the evaluation.

// Piece kinds index several per-kind tables at once, as the definitions read.
#![allow(clippy::needless_range_loop)]

mod common;

use pawnstorm::Position;
use pawnstorm::eval::endgame;
use pawnstorm::eval::terms::{SIGNATURE_BITS, Term};
use pawnstorm::eval::{Prepared, Weight, Weights, breakdown, default_weights, evaluate};
use pawnstorm::position::board::PositionBoards;
use pawnstorm::{Color, PieceType, Square};

use common::{Rng, board_fen, fixture_positions, random_square, test_stride};

const PAWN: usize = 0;
const KNIGHT: usize = 1;
const BISHOP: usize = 2;
const ROOK: usize = 3;
const QUEEN: usize = 4;
const KING: usize = 5;

const KNIGHT_JUMPS: [(i32, i32); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
const KING_STEPS: [(i32, i32); 8] = [
    (0, 1),
    (1, 1),
    (1, 0),
    (1, -1),
    (0, -1),
    (-1, -1),
    (-1, 0),
    (-1, 1),
];
const DIAGONALS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, -1), (-1, 1)];
const LINES: [(i32, i32); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];

/// The board as an array of squares: `(side, kind)` per square, a1 = 0.
struct Board {
    squares: [Option<(usize, usize)>; 64],
    black_to_move: bool,
}

fn square(file: i32, rank: i32) -> Option<usize> {
    ((0..8).contains(&file) && (0..8).contains(&rank)).then_some((rank * 8 + file) as usize)
}

fn file_of(s: usize) -> i32 {
    (s % 8) as i32
}

fn rank_of(s: usize) -> i32 {
    (s / 8) as i32
}

/// +1 for White (toward rank 8), -1 for Black.
fn ahead(side: usize) -> i32 {
    if side == 0 { 1 } else { -1 }
}

/// 1..=8, counted from the side's first rank.
fn relative_rank(side: usize, s: usize) -> i32 {
    if side == 0 {
        rank_of(s) + 1
    } else {
        8 - rank_of(s)
    }
}

fn chebyshev(a: usize, b: usize) -> i32 {
    (file_of(a) - file_of(b))
        .abs()
        .max((rank_of(a) - rank_of(b)).abs())
}

impl Board {
    fn new(position: &Position) -> Board {
        let mut squares = [None; 64];
        for (s, slot) in squares.iter_mut().enumerate() {
            let square = Square::new(s as u8).expect("a square");
            *slot = position
                .piece_at(square)
                .map(|p| (p.color.index(), p.kind.index()));
        }
        Board {
            squares,
            black_to_move: position.side_to_move() == Color::Black,
        }
    }

    fn is(&self, s: usize, side: usize, kind: usize) -> bool {
        self.squares[s] == Some((side, kind))
    }

    fn is_at(&self, file: i32, rank: i32, side: usize, kind: usize) -> bool {
        square(file, rank).is_some_and(|s| self.is(s, side, kind))
    }

    fn side_of(&self, s: usize) -> Option<usize> {
        self.squares[s].map(|(side, _)| side)
    }

    fn of(&self, side: usize, kind: usize) -> Vec<usize> {
        (0..64).filter(|&s| self.is(s, side, kind)).collect()
    }

    fn count(&self, side: usize, kind: usize) -> i32 {
        self.of(side, kind).len() as i32
    }

    fn king(&self, side: usize) -> usize {
        self.of(side, KING)[0]
    }

    /// Squares reached by single steps (jumps) from `s`.
    fn steps(s: usize, steps: &[(i32, i32)]) -> Vec<usize> {
        steps
            .iter()
            .filter_map(|&(df, dr)| square(file_of(s) + df, rank_of(s) + dr))
            .collect()
    }

    /// Squares along the rays from `s`, each up to and including the first occupied one.
    fn rays(&self, s: usize, directions: &[(i32, i32)]) -> Vec<usize> {
        let mut seen = Vec::new();
        for &(df, dr) in directions {
            let (mut file, mut rank) = (file_of(s), rank_of(s));
            loop {
                file += df;
                rank += dr;
                let Some(t) = square(file, rank) else { break };
                seen.push(t);
                if self.squares[t].is_some() {
                    break;
                }
            }
        }
        seen
    }

    /// The squares a piece of `kind` of `side` on `s` attacks.
    fn attacks_from(&self, s: usize, side: usize, kind: usize) -> Vec<usize> {
        match kind {
            PAWN => Board::steps(s, &[(-1, ahead(side)), (1, ahead(side))]),
            KNIGHT => Board::steps(s, &KNIGHT_JUMPS),
            BISHOP => self.rays(s, &DIAGONALS),
            ROOK => self.rays(s, &LINES),
            QUEEN => [self.rays(s, &DIAGONALS), self.rays(s, &LINES)].concat(),
            _ => Board::steps(s, &KING_STEPS),
        }
    }

    /// Squares attacked by any piece of `kind` of `side`.
    fn attacked_by(&self, side: usize, kind: usize) -> [bool; 64] {
        let mut attacked = [false; 64];
        for s in self.of(side, kind) {
            for t in self.attacks_from(s, side, kind) {
                attacked[t] = true;
            }
        }
        attacked
    }

    fn attacked_by_any(&self, side: usize) -> [bool; 64] {
        let mut attacked = [false; 64];
        for kind in PAWN..=KING {
            for (a, b) in attacked.iter_mut().zip(self.attacked_by(side, kind)) {
                *a |= b;
            }
        }
        attacked
    }

    fn pawn_on_file(&self, side: usize, file: i32) -> bool {
        (0..8).any(|rank| self.is_at(file, rank, side, PAWN))
    }
}

/// One side's pawn masks, as `docs/DEFINITIONS.md` defines them.
struct PawnFacts {
    doubled: bool,
    isolated: bool,
    passed: bool,
    backward: bool,
    supported: bool,
    phalanx: bool,
    chain_base: bool,
}

fn pawn_facts(board: &Board, side: usize, s: usize) -> PawnFacts {
    let (file, rank, up) = (file_of(s), rank_of(s), ahead(side));
    let enemy = 1 - side;
    let strictly_ahead = |r: i32| (r - rank) * up > 0;
    let doubled = (0..8).any(|r| strictly_ahead(r) && board.is_at(file, r, side, PAWN));
    let isolated = !board.pawn_on_file(side, file - 1) && !board.pawn_on_file(side, file + 1);
    let passed = !(file - 1..=file + 1)
        .any(|f| (0..8).any(|r| strictly_ahead(r) && board.is_at(f, r, enemy, PAWN)));
    let stop_attacked = [file - 1, file + 1]
        .iter()
        .any(|&f| board.is_at(f, rank + 2 * up, enemy, PAWN));
    let supportable = [file - 1, file + 1]
        .iter()
        .any(|&f| (0..8).any(|r| (r - rank) * up <= 0 && board.is_at(f, r, side, PAWN)));
    let supported = [file - 1, file + 1]
        .iter()
        .any(|&f| board.is_at(f, rank - up, side, PAWN));
    let phalanx = [file - 1, file + 1]
        .iter()
        .any(|&f| board.is_at(f, rank, side, PAWN));
    let defends = [file - 1, file + 1]
        .iter()
        .any(|&f| board.is_at(f, rank + up, side, PAWN));
    PawnFacts {
        doubled,
        isolated,
        passed,
        backward: stop_attacked && !supportable,
        supported,
        phalanx,
        chain_base: defends && !supported,
    }
}

/// Every term's (mg, eg) from `side`'s point of view, in `Term::ALL` order.
fn side_terms(board: &Board, w: &Weights, side: usize) -> [(i32, i32); Term::COUNT] {
    let mut terms = [(0, 0); Term::COUNT];
    let mut add = |term: Term, count: i32, weight: Weight| {
        let t = &mut terms[term as usize];
        t.0 += count * weight.mg;
        t.1 += count * weight.eg;
    };
    let enemy = 1 - side;
    let up = ahead(side);
    let own_attacks: [[bool; 64]; 6] = std::array::from_fn(|k| board.attacked_by(side, k));
    let enemy_attacks: [[bool; 64]; 6] = std::array::from_fn(|k| board.attacked_by(enemy, k));
    let own_any = board.attacked_by_any(side);
    let enemy_any = board.attacked_by_any(enemy);
    let king = board.king(side);
    let enemy_king = board.king(enemy);

    for kind in PAWN..=QUEEN {
        add(Term::Material, board.count(side, kind), w.material[kind]);
    }
    for kind in PAWN..=KING {
        for s in board.of(side, kind) {
            let entry = if side == 0 { s } else { s ^ 56 };
            add(Term::Psqt, 1, w.psqt[kind][entry]);
        }
    }
    for kind in KNIGHT..=QUEEN {
        let count = (0..64)
            .filter(|&s| {
                own_attacks[kind][s] && board.side_of(s) != Some(side) && !enemy_attacks[PAWN][s]
            })
            .count();
        add(Term::Mobility, count as i32, w.mobility[kind - 1]);
    }
    add(
        Term::BishopPair,
        (board.count(side, BISHOP) >= 2) as i32,
        w.bishop_pair,
    );
    add(
        Term::Tempo,
        (board.black_to_move == (side == 1)) as i32,
        w.tempo,
    );

    // Pawns.
    let pawns = board.of(side, PAWN);
    let facts: Vec<PawnFacts> = pawns.iter().map(|&s| pawn_facts(board, side, s)).collect();
    let passers: Vec<usize> = pawns
        .iter()
        .zip(&facts)
        .filter(|(_, f)| f.passed)
        .map(|(&s, _)| s)
        .collect();
    for (&s, f) in pawns.iter().zip(&facts) {
        let rank_index = (relative_rank(side, s) - 1) as usize;
        add(Term::Doubled, f.doubled as i32, w.doubled);
        add(Term::Isolated, f.isolated as i32, w.isolated);
        add(Term::Backward, f.backward as i32, w.backward);
        add(Term::ChainBase, f.chain_base as i32, w.chain_base);
        if f.passed {
            add(Term::Passed, 1, w.passed[rank_index]);
        }
        if f.supported || f.phalanx {
            add(Term::Connected, 1, w.connected[rank_index]);
        }
    }

    // Passed pawns.
    let no_enemy_pieces = (KNIGHT..=QUEEN).all(|k| board.count(enemy, k) == 0);
    for &p in &passers {
        let (file, rank) = (file_of(p), rank_of(p));
        let rank_index = (relative_rank(side, p) - 1) as usize;
        let is_passer = |f: i32, r: i32| square(f, r).is_some_and(|s| passers.contains(&s));
        let connected = [file - 1, file + 1]
            .iter()
            .any(|&f| is_passer(f, rank - up) || is_passer(f, rank));
        add(
            Term::ConnectedPassers,
            connected as i32,
            w.connected_passers,
        );
        let stop = square(file, rank + up).expect("a pawn is never on its last rank");
        if board.squares[stop].is_some() {
            add(Term::PassedBlocked, 1, w.passed_blocked[rank_index]);
        }
        let free = (1..8)
            .map_while(|d| square(file, rank + d * up))
            .all(|s| board.squares[s].is_none());
        add(Term::PassedFreePath, free as i32, w.passed_free_path);
        add(
            Term::PassedKingSupport,
            (chebyshev(p, king) == 1) as i32,
            w.passed_king_support,
        );
        add(
            Term::PassedKingDistance,
            chebyshev(p, king),
            w.passed_own_king_distance,
        );
        add(
            Term::PassedKingDistance,
            chebyshev(p, enemy_king),
            w.passed_enemy_king_distance,
        );
        let behind = (1..8)
            .map_while(|d| square(file, rank - d * up))
            .find_map(|s| board.squares[s]);
        if behind == Some((side, ROOK)) {
            add(Term::PassedRookBehind, 1, w.passed_own_rook_behind);
        }
        if behind == Some((enemy, ROOK)) {
            add(Term::PassedRookBehind, 1, w.passed_enemy_rook_behind);
        }
        if free && no_enemy_pieces {
            let promotion = square(file, if side == 0 { 7 } else { 0 }).expect("on the board");
            let moves =
                (8 - relative_rank(side, p)).min(5) + (board.black_to_move == (enemy == 1)) as i32;
            add(
                Term::Unstoppable,
                (chebyshev(promotion, enemy_king) > moves) as i32,
                w.unstoppable_passer,
            );
        }
    }

    // The endgame king.
    let centre = [27, 28, 35, 36].map(|c| chebyshev(king, c));
    add(
        Term::KingCentralisation,
        *centre.iter().min().expect("four squares"),
        w.king_centre_distance,
    );
    let tropism: i32 = (0..64)
        .filter(|&s| board.is(s, 0, PAWN) || board.is(s, 1, PAWN))
        .map(|s| chebyshev(king, s))
        .sum();
    add(Term::KingPawnTropism, tropism, w.king_pawn_distance);

    // Shelter and storm: the king's file and the adjacent ones.
    let (king_file, king_rank) = (file_of(king), rank_of(king));
    for f in king_file - 1..=king_file + 1 {
        let at = |d: i32, who: usize| board.is_at(f, king_rank + d * up, who, PAWN) as i32;
        add(Term::Shelter, at(1, side), w.shelter[0]);
        add(Term::Shelter, at(2, side), w.shelter[1]);
        add(Term::Storm, at(2, enemy), w.storm[0]);
        add(Term::Storm, at(3, enemy), w.storm[1]);
    }

    // King safety, against the enemy king: its zone first.
    let mut zone = [false; 64];
    let (ef, er, enemy_up) = (file_of(enemy_king), rank_of(enemy_king), ahead(enemy));
    for df in -1..=1 {
        for dr in -1..=1 {
            for extra in [0, enemy_up] {
                if let Some(s) = square(ef + df, er + dr + extra) {
                    zone[s] = true;
                }
            }
        }
    }
    let mut kinds = 0;
    for kind in KNIGHT..=QUEEN {
        let attacked = (0..64).filter(|&s| zone[s] && own_attacks[kind][s]).count() as i32;
        add(Term::KingZone, attacked, w.king_zone_attack[kind - 1]);
        kinds += (attacked > 0) as usize;
    }
    if kinds > 0 {
        add(Term::KingAttackers, 1, w.king_attackers[kinds - 1]);
    }
    for kind in KNIGHT..=QUEEN {
        // A piece of this kind on a checking square would attack the king: the squares the
        // kind attacks from the king's square.
        let checking = board.attacks_from(enemy_king, side, kind);
        let safe = checking
            .iter()
            .filter(|&&s| own_attacks[kind][s] && board.side_of(s) != Some(side) && !enemy_any[s])
            .count();
        add(Term::SafeChecks, safe as i32, w.safe_check[kind - 1]);
    }
    let own_on_file = board.pawn_on_file(side, king_file);
    let enemy_on_file = board.pawn_on_file(enemy, king_file);
    if !own_on_file {
        let which = if enemy_on_file { 0 } else { 1 };
        add(Term::KingFile, 1, w.king_file[which]);
    }

    // Threats, counted in enemy pieces.
    let enemy_piece = |s: usize, kinds: &[usize]| kinds.iter().any(|&k| board.is(s, enemy, k));
    let minors_and_majors = [KNIGHT, BISHOP, ROOK, QUEEN];
    for s in 0..64 {
        if own_attacks[PAWN][s] && enemy_piece(s, &minors_and_majors) {
            add(Term::ThreatByPawn, 1, w.threat_by_pawn);
        }
        let by_minor = own_attacks[KNIGHT][s] || own_attacks[BISHOP][s];
        if (by_minor && enemy_piece(s, &[ROOK, QUEEN]))
            || (own_attacks[ROOK][s] && enemy_piece(s, &[QUEEN]))
        {
            add(Term::ThreatByLesser, 1, w.threat_by_lesser);
        }
        if board.side_of(s) == Some(enemy) && !board.is(s, enemy, KING) && own_any[s] {
            add(Term::Hanging, !enemy_any[s] as i32, w.hanging);
        }
    }
    let mut push_targets = [false; 64];
    for &p in &pawns {
        let Some(one) = square(file_of(p), rank_of(p) + up) else {
            continue;
        };
        if board.squares[one].is_some() {
            continue;
        }
        let mut pushes = vec![one];
        if relative_rank(side, p) == 2 {
            let two = square(file_of(p), rank_of(p) + 2 * up).expect("on the board");
            if board.squares[two].is_none() {
                pushes.push(two);
            }
        }
        for t in pushes {
            if enemy_attacks[PAWN][t] || (enemy_any[t] && !own_any[t]) {
                continue;
            }
            for a in board.attacks_from(t, side, PAWN) {
                push_targets[a] |= enemy_piece(a, &minors_and_majors);
            }
        }
    }
    let push_threats = push_targets.iter().filter(|&&t| t).count() as i32;
    add(Term::PawnPushThreat, push_threats, w.pawn_push_threat);

    // Pieces on files and ranks.
    for (term, kind, weights) in [
        (Term::RookFile, ROOK, w.rook_file),
        (Term::QueenFile, QUEEN, w.queen_file),
    ] {
        for s in board.of(side, kind) {
            if !board.pawn_on_file(side, file_of(s)) {
                let which = if board.pawn_on_file(enemy, file_of(s)) {
                    0
                } else {
                    1
                };
                add(term, 1, weights[which]);
            }
        }
    }
    for s in board.of(side, ROOK) {
        add(
            Term::RookSeventh,
            (relative_rank(side, s) == 7) as i32,
            w.rook_seventh,
        );
    }
    for (kind, weight) in [(KNIGHT, w.outpost[0]), (BISHOP, w.outpost[1])] {
        for s in board.of(side, kind) {
            let (file, rank) = (file_of(s), rank_of(s));
            let enemy_pawn_ahead = [file - 1, file + 1]
                .iter()
                .any(|&f| (1..8).any(|d| board.is_at(f, rank + d * up, enemy, PAWN)));
            let outpost = (4..=6).contains(&relative_rank(side, s))
                && own_attacks[PAWN][s]
                && !enemy_pawn_ahead;
            add(Term::Outpost, outpost as i32, weight);
        }
    }
    let colour = |s: usize| (file_of(s) + rank_of(s)) % 2;
    for b in board.of(side, BISHOP) {
        let same = pawns.iter().filter(|&&p| colour(p) == colour(b)).count();
        add(Term::BadBishop, same as i32, w.bad_bishop);
    }
    for s in 0..64 {
        let in_area = (2..=5).contains(&file_of(s)) && (2..=4).contains(&relative_rank(side, s));
        if !in_area || board.is(s, side, PAWN) || enemy_attacks[PAWN][s] {
            continue;
        }
        add(Term::Space, 1, w.space);
        let behind_pawn = (1..=3).any(|d| board.is_at(file_of(s), rank_of(s) + d * up, side, PAWN));
        add(Term::Space, (behind_pawn && !enemy_any[s]) as i32, w.space);
    }
    terms
}

struct Reference {
    mg: [i32; Term::COUNT],
    eg: [i32; Term::COUNT],
    score: i32,
}

fn reference(position: &Position, w: &Weights) -> Reference {
    let board = Board::new(position);
    let white = side_terms(&board, w, 0);
    let black = side_terms(&board, w, 1);
    let mg: [i32; Term::COUNT] = std::array::from_fn(|t| white[t].0 - black[t].0);
    let eg: [i32; Term::COUNT] = std::array::from_fn(|t| white[t].1 - black[t].1);
    let both = |kind: usize| board.count(0, kind) + board.count(1, kind);
    let phase = both(KNIGHT) + both(BISHOP) + 2 * both(ROOK) + 4 * both(QUEEN);
    // The signature is `endgame::finish`'s input format: 4-bit counts, White's pawn..queen,
    // Black's, then each side's light-squared bishops.
    let mut fields: Vec<i32> = (0..2)
        .flat_map(|side| (PAWN..=QUEEN).map(move |kind| (side, kind)))
        .map(|(side, kind)| board.count(side, kind))
        .collect();
    for side in 0..2 {
        let light = board
            .of(side, BISHOP)
            .iter()
            .filter(|&&s| (file_of(s) + rank_of(s)) % 2 == 1)
            .count();
        fields.push(light as i32);
    }
    let signature = fields.iter().enumerate().fold(0u64, |sig, (i, &v)| {
        sig | (v as u64) << (i as u32 * SIGNATURE_BITS)
    });
    let boards = PositionBoards {
        pieces: PieceType::ALL.map(|kind| position.piece_type(kind).0),
        colors: Color::ALL.map(|color| position.color(color).0),
        black_to_move: board.black_to_move,
    };
    let (total_mg, total_eg) = (mg.iter().sum(), eg.iter().sum());
    let score = endgame::finish(total_mg, total_eg, phase as u64, signature, || boards).score;
    Reference { mg, eg, score }
}

/// The colour-flipped, vertically mirrored position (castling and en passant dropped: no
/// term reads them).
fn flipped(position: &Position) -> Position {
    let mut board = ['.'; 64];
    for (s, c) in board.iter_mut().enumerate() {
        if let Some(p) = position.piece_at(Square::new((s ^ 56) as u8).expect("a square")) {
            let ch = p.fen_char();
            *c = if ch.is_ascii_uppercase() {
                ch.to_ascii_lowercase()
            } else {
                ch.to_ascii_uppercase()
            };
        }
    }
    let side = if position.side_to_move() == Color::White {
        "b"
    } else {
        "w"
    };
    let fen = format!("{} {side} - - 0 1", board_fen(&board, '.'));
    pawnstorm::position::fen::parse_fen(&fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// Crowded random placements (edge files half the time), for what the fixtures rarely show.
fn random_positions(count: usize) -> Vec<Position> {
    let mut rng = Rng(0x7e57_7e57);
    let mut positions = Vec::new();
    while positions.len() < count {
        let mut board = ['.'; 64];
        let edge = rng.next() & 1 == 0;
        for (i, c) in "Kk"
            .chars()
            .chain("PPPPPPppppppNNnnBBbbRRrrQq".chars())
            .enumerate()
        {
            if i >= 2 && rng.below(3) == 0 {
                continue;
            }
            let (file, rank) = random_square(&mut rng, c, edge);
            if board[rank * 8 + file] == '.' {
                board[rank * 8 + file] = c;
            }
        }
        let side = if rng.next() & 1 == 0 { "w" } else { "b" };
        if let Ok(p) = pawnstorm::position::fen::parse_fen(&format!(
            "{} {side} - - 0 1",
            board_fen(&board, '.')
        )) {
            positions.push(p);
        }
    }
    positions
}

fn check(position: &Position, weights: &Weights) {
    let prepared = pawnstorm::eval::Prepared::new(weights.clone());
    let expected = reference(position, weights);
    let actual = breakdown(&prepared, position);
    for term in Term::ALL {
        let t = term as usize;
        assert_eq!(
            (actual.mg[t], actual.eg[t]),
            (expected.mg[t], expected.eg[t]),
            "{term:?} (mg, eg) of {}",
            position.to_fen()
        );
    }
    assert_eq!(
        actual.finished.score,
        expected.score,
        "score of {}",
        position.to_fen()
    );
}

#[test]
fn the_reference_evaluation_agrees_term_by_term_on_every_fixture_position() {
    let weights = &default_weights().weights;
    let stride = test_stride();
    let positions = fixture_positions();
    assert!(positions.len() > 60_000, "{}", positions.len());
    for position in positions.iter().step_by(stride) {
        check(position, weights);
        check(&flipped(position), weights);
    }
    for position in &random_positions(20_000 / stride) {
        check(position, weights);
    }
    // The final score through the plain evaluation too.
    for position in positions.iter().step_by(97 * stride) {
        assert_eq!(evaluate(position), reference(position, weights).score);
    }
}

/// Distinct weights everywhere (no two terms share a value, no zero): a term the reference
/// counts under another's weight, or a weight read from the wrong slot, shows.
#[test]
fn the_reference_agrees_with_distinct_weights() {
    let mut weights = Weights::default();
    let mut next = 3;
    weights.visit_mut(|name, weight| {
        if !name.starts_with("psqt.") && !name.starts_with("material.") {
            *weight = Weight {
                mg: next,
                eg: -2 * next + 1,
            };
            next += 2;
        }
    });
    for position in fixture_positions().iter().step_by(7 * test_stride()) {
        check(position, &weights);
    }
}

/// PeSTO's tables as published (Rofchade's values on the Chess Programming Wiki, "PeSTO's
/// Evaluation Function"; diagram order there, a8 first), literal numbers: the hand-set
/// weights (the start of tuning, `weights/hand-set.txt`) and the evaluation must read them.
#[test]
fn psqt_hand_set_weights_are_the_published_pesto_values() {
    let w = Weights::hand_set();
    let at = |name: &str| Square::from_name(name).expect("a square").index() as usize;
    // (kind, square, mg, eg), White's view.
    let published = [
        (PAWN, "b7", 134, 173),
        (PAWN, "a6", -6, 94),
        (KNIGHT, "a8", -167, -58),
        (KNIGHT, "h8", -107, -99),
        (ROOK, "e7", 80, -3),
        (ROOK, "h2", -71, -3),
        (QUEEN, "h8", 45, 20),
        (QUEEN, "a1", -1, -33),
        (QUEEN, "e5", -1, 57),
        (KING, "g1", 24, -24),
        (KING, "e1", 8, -28),
        (KING, "a8", -65, -74),
        (KING, "a1", -15, -53),
        (KING, "f6", 6, 45),
    ];
    for (kind, name, mg, eg) in published {
        assert_eq!(
            w.psqt[kind][at(name)],
            Weight { mg, eg },
            "{kind} on {name}"
        );
    }
    let material = [(82, 94), (337, 281), (365, 297), (477, 512), (1025, 936)];
    for (kind, (mg, eg)) in material.into_iter().enumerate() {
        assert_eq!(w.material[kind], Weight { mg, eg });
    }
    // Through the evaluation: White's king on g1, Black's on a8 (a1 for White's table).
    let b = breakdown(
        &Prepared::new(w.clone()),
        &pawnstorm::position::fen::parse_fen("k7/8/8/8/8/8/8/6K1 w - - 0 1").expect("a FEN"),
    );
    let psqt = Term::Psqt as usize;
    assert_eq!((b.mg[psqt], b.eg[psqt]), (24 - -15, -24 - -53));
}

/// The largest magnitude `m` such that the loader takes `text_of(m)`, by bisection over
/// 0..=100,000 (the loader takes 0 and refuses more than 100,000 whatever the bound).
fn largest_accepted(text_of: impl Fn(i64) -> String) -> i64 {
    let accepted = |m: i64| Weights::from_text(&text_of(m), std::path::Path::new("w.txt")).is_ok();
    assert!(accepted(0), "{}", text_of(0));
    let (mut low, mut high) = (0, 100_001);
    while high - low > 1 {
        let mid = (low + high) / 2;
        if accepted(mid) { low = mid } else { high = mid }
    }
    low
}

/// Overflow, tested rather than argued: at the extreme weights the loader still takes
/// (each weight alone at its largest magnitude, either sign; then every weight at once at
/// the largest common magnitude, all one sign or alternating), positions that push the
/// counts up (a side of queens, sixteen pawns, eight passers far from their kings, ...) and
/// crowded random ones score the same through the reference, `evaluate_with`, the breakdown,
/// the evaluator and the batch at every lane width, with no i32 sum wrapping
/// (`fuzzing::check_paths_agree`); and one step past each bound the file is refused.
#[test]
fn extreme_weights_the_loader_takes_evaluate_alike_and_one_step_more_is_refused() {
    use pawnstorm::fuzzing::{EXTREME_FENS, check_paths_agree};
    let mut positions: Vec<Position> = EXTREME_FENS
        .iter()
        .map(|fen| {
            pawnstorm::position::fen::parse_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
        })
        .collect();
    positions.extend(random_positions(54));
    let path = std::path::Path::new("w.txt");
    let evaluate_all = |weights: &Weights| {
        for position in &positions {
            check(position, weights);
        }
        check_paths_agree(&Prepared::new(weights.clone()), &positions);
    };
    let names = Weights::names();
    let stride = test_stride();
    let mut bounded = 0;
    for name in names.iter().step_by(stride) {
        for sign in [1, -1] {
            let text = |m: i64| format!("{name} {} {}\n", sign * m, sign * m);
            let m = largest_accepted(text);
            let weights = Weights::from_text(&text(m), path).expect("accepted");
            evaluate_all(&weights);
            assert!(
                Weights::from_text(&text(m + 1), path).is_err(),
                "{}",
                text(m + 1)
            );
            bounded += usize::from(m < 100_000);
        }
    }
    // The weights multiplied by the largest counts are bounded by the sums, not the range.
    assert!(
        bounded * stride >= 2 * 20,
        "{bounded} of {} bounded by the sums",
        2 * names.len().div_ceil(stride)
    );
    for alternate in [false, true] {
        let text = |m: i64| {
            names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let v = if alternate && i % 2 == 1 { -m } else { m };
                    format!("{name} {v} {}\n", -v)
                })
                .collect::<String>()
        };
        let m = largest_accepted(text);
        assert!(m > 0, "some common magnitude fits");
        evaluate_all(&Weights::from_text(&text(m), path).expect("accepted"));
        let past = Weights::from_text(&text(m + 1), path)
            .expect_err("one step past the bound")
            .to_string();
        assert!(past.contains("overflow"), "{past}");
    }
}
