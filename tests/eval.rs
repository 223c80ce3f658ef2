//! The evaluation: one path (scalar == batch on every lane width, with and without the pawn
//! hash table), colour symmetry, endgame knowledge (insufficient material, the KPK bitbase
//! against Syzygy, KBNK, KXK) and known answers for each term.

mod common;

use pawnstorm::Position;
use pawnstorm::db::{Columns, Database, DbWriter};
use pawnstorm::eval::batch::{BREAKDOWN_WIDTH, db_scores, rows_breakdown, rows_scores};
use pawnstorm::eval::features::Path;
use pawnstorm::eval::terms::Term;
use pawnstorm::eval::{Evaluator, Prepared, breakdown, default_weights, evaluate};
use pawnstorm::position::fen::parse_fen;
use pawnstorm::position::labels::{Labels, Record, parse_line};

use common::{Rng, board_fen, fixture, random_square, read_fixture, test_stride};

fn position(fen: &str) -> Position {
    parse_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// Random legal-looking placements of every piece kind, either side to move, edge files
/// crowded half the time; sparse ones reach the endgame rules.
fn random_positions(count: usize, rng: &mut Rng) -> Vec<Position> {
    let mut positions = Vec::with_capacity(count);
    while positions.len() < count {
        let mut board = ['.'; 64];
        let edge = rng.next() & 1 == 0;
        let mut place = |c: char, rng: &mut Rng| {
            for _ in 0..10 {
                let (file, rank) = random_square(rng, c, edge);
                if board[rank * 8 + file] == '.' {
                    board[rank * 8 + file] = c;
                    return;
                }
            }
        };
        place('K', rng);
        place('k', rng);
        let pieces = rng.below(24);
        for _ in 0..pieces {
            let c = b"PPPPPPppppppNNnnBBbbRRrrQq"[rng.below(26)] as char;
            place(c, rng);
        }
        let side = if rng.next() & 1 == 0 { "w" } else { "b" };
        if let Ok(p) = parse_fen(&format!("{} {side} - - 0 1", board_fen(&board, '.'))) {
            positions.push(p);
        }
    }
    positions
}

fn real_positions() -> Vec<Position> {
    let mut positions: Vec<Position> = read_fixture("texel/labeled-from-fixture-pgns.epd")
        .lines()
        .filter_map(|l| parse_line(l).ok().flatten().map(|r| r.position))
        .collect();
    for suite in [
        "epd/sts.epd",
        "epd/ecm.epd",
        "epd/tbtest.epd",
        "epd/wac.epd",
    ] {
        positions.extend(
            read_fixture(suite)
                .lines()
                .filter_map(|l| parse_line(l).ok().flatten().map(|r| r.position)),
        );
    }
    positions
}

/// The colour-flipped, vertically mirrored position.
fn flipped(original: &Position) -> Position {
    let fen = original.to_fen();
    let fields: Vec<&str> = fen.split(' ').collect();
    let board: Vec<String> = fields[0]
        .split('/')
        .rev()
        .map(|rank| {
            rank.chars()
                .map(|c| {
                    if c.is_ascii_uppercase() {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect()
        })
        .collect();
    let side = if fields[1] == "w" { "b" } else { "w" };
    let castling: String = if fields[2] == "-" {
        "-".to_string()
    } else {
        let mut c: Vec<char> = fields[2]
            .chars()
            .map(|c| {
                if c.is_ascii_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect();
        c.sort_by_key(|c| (c.is_ascii_lowercase(), *c));
        c.into_iter().collect()
    };
    let ep = if fields[3] == "-" {
        "-".to_string()
    } else {
        let b = fields[3].as_bytes();
        format!("{}{}", b[0] as char, (b'1' + b'8' - b[1]) as char)
    };
    position(&format!(
        "{} {side} {castling} {ep} {} {}",
        board.join("/"),
        fields[4],
        fields[5]
    ))
}

fn write_db(path: &std::path::Path, positions: &[Position]) {
    let mut writer = DbWriter::create(path, 4096, Columns::NONE, false).unwrap();
    for p in positions {
        writer
            .push(&Record {
                position: p.clone(),
                labels: Labels::default(),
            })
            .unwrap();
    }
    writer.finish().unwrap();
}

#[test]
fn scalar_equals_batch_on_every_width_and_with_the_pawn_table() {
    let mut rng = Rng(0x00c0_ffee_1234);
    let mut positions = random_positions(60_000, &mut rng);
    positions.extend(real_positions());
    assert!(positions.len() >= 120_000, "{}", positions.len());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eval.psdb");
    write_db(&path, &positions);
    let db = Database::open(&path).unwrap();
    let prepared = default_weights();

    let expected: Vec<i32> = positions.iter().map(evaluate).collect();
    for batch_path in Path::every() {
        let scores = db_scores(&db, batch_path, prepared).unwrap();
        let mismatches: Vec<usize> = (0..positions.len())
            .filter(|&i| scores[i] != expected[i])
            .collect();
        assert!(
            mismatches.is_empty(),
            "{batch_path:?}: {} mismatches, first {} (batch {} scalar {})",
            mismatches.len(),
            positions[mismatches[0]].to_fen(),
            scores[mismatches[0]],
            expected[mismatches[0]]
        );
    }

    // Ranges that start and end inside the batch's runs of staged positions (multiples of
    // 8, not of 32) score as the whole block does.
    let block = db.block(0).unwrap();
    for batch_path in Path::every() {
        for rows in [0..8, 8..48, 48..56, 56..136, 136..4096] {
            let mut scores = vec![0i32; rows.len()];
            rows_scores(batch_path, prepared, &block, rows.clone(), &mut scores);
            assert_eq!(
                scores,
                expected[rows.clone()],
                "{batch_path:?}: rows {rows:?}"
            );
        }
    }

    // A small table: collisions and replacements must not change a score.
    let mut evaluator = Evaluator::new(Prepared::default(), 64);
    for (p, &score) in positions.iter().zip(&expected).take(30_000) {
        assert_eq!(evaluator.evaluate(p), score, "{}", p.to_fen());
        assert_eq!(
            evaluator.evaluate(p),
            score,
            "{} (second probe)",
            p.to_fen()
        );
    }
    let table = evaluator.pawn_table();
    assert_eq!(table.probes(), 60_000);
    assert!(table.hits() >= 30_000, "every second probe hits");

    // The breakdown's score column and terms agree with the scalar breakdown.
    let block = db.block(0).unwrap();
    for path in Path::every() {
        let mut rows = vec![0i32; 4096 * BREAKDOWN_WIDTH];
        rows_breakdown(path, prepared, &block, 0..4096, &mut rows);
        for (i, p) in positions.iter().enumerate().take(4096) {
            let row = &rows[i * BREAKDOWN_WIDTH..][..BREAKDOWN_WIDTH];
            assert_eq!(row[0], expected[i]);
            let scalar = breakdown(prepared, p);
            assert_eq!(scalar.finished.score, expected[i]);
            for term in Term::ALL {
                let t = term as usize;
                assert_eq!(
                    row[4 + 3 * t],
                    scalar.mg[t],
                    "{path:?}: {term:?} mg of {}",
                    p.to_fen()
                );
                assert_eq!(
                    row[5 + 3 * t],
                    scalar.eg[t],
                    "{path:?}: {term:?} eg of {}",
                    p.to_fen()
                );
            }
        }
    }
}

#[test]
fn colour_flipped_positions_score_the_negation() {
    let mut rng = Rng(0x5eed_5eed);
    let mut positions = random_positions(50_000, &mut rng);
    positions.extend(real_positions());
    assert!(positions.len() >= 100_000);
    for p in &positions {
        let mirror = flipped(p);
        assert_eq!(
            evaluate(&mirror),
            -evaluate(p),
            "{} vs {}",
            p.to_fen(),
            mirror.to_fen()
        );
    }
}

#[test]
fn insufficient_material_scores_exactly_zero() {
    for fen in [
        "8/8/4k3/8/8/3K4/8/8 w - - 0 1",
        "8/8/4k3/8/8/3K4/8/6N1 w - - 0 1",
        "8/8/4k3/2b5/8/3K4/8/8 b - - 0 1",
        "8/8/4k3/8/8/3K4/8/5NN1 w - - 0 1",
        "8/8/1n2k3/8/8/3K4/8/5n2 b - - 0 1",
        // Bishops all on dark squares, both sides.
        "8/8/4k3/2b5/8/3K4/1B6/2B5 w - - 0 1",
    ] {
        assert_eq!(evaluate(&position(fen)), 0, "{fen}");
    }
    for fen in [
        "8/8/4k3/8/8/3K4/8/4BB2 w - - 0 1",
        "8/8/4k3/8/8/3K4/8/4BN2 w - - 0 1",
        "8/8/4k3/8/8/3K4/8/R7 w - - 0 1",
        "4k3/8/4K3/4P3/8/8/8/8 w - - 0 1",
    ] {
        assert_ne!(evaluate(&position(fen)), 0, "{fen}");
    }
}

/// Every legal KPK position (either side with the pawn, either side to move): the bitbase's
/// verdict through `evaluate` equals the Syzygy WDL table.
#[test]
fn kpk_bitbase_matches_syzygy() {
    use shakmaty::{CastlingMode, Chess, fen::Fen};
    use shakmaty_syzygy::{Tablebase, Wdl};

    let mut tables = Tablebase::<Chess>::new();
    tables.add_file(fixture("syzygy/KPvK.rtbw")).unwrap();
    let mut checked = 0;
    let (mut wins, mut draws) = (0, 0);
    // Under emulation (a stride above 1) a share of the placements, spread so that every
    // square still holds each piece.
    let stride = test_stride();
    for pawn in 8..56 {
        for strong_king in 0..64 {
            for weak_king in 0..64 {
                if strong_king == pawn || weak_king == pawn || strong_king == weak_king {
                    continue;
                }
                if (pawn + strong_king + weak_king) % stride != 0 {
                    continue;
                }
                let mut board = ['.'; 64];
                board[pawn] = 'P';
                board[strong_king] = 'K';
                board[weak_king] = 'k';
                for side in ["w", "b"] {
                    let fen = format!("{} {side} - - 0 1", board_fen(&board, '.'));
                    let Ok(chess) = fen
                        .parse::<Fen>()
                        .unwrap()
                        .into_position::<Chess>(CastlingMode::Standard)
                    else {
                        continue;
                    };
                    let wdl = tables.probe_wdl_after_zeroing(&chess).unwrap();
                    // Syzygy answers for the side to move; turn it to White's view.
                    let white_wins = match (wdl, side) {
                        (Wdl::Win | Wdl::CursedWin, "w") | (Wdl::Loss | Wdl::BlessedLoss, "b") => {
                            true
                        }
                        (Wdl::Draw, _) => false,
                        other => panic!("{fen}: Black cannot win KPvK: {other:?}"),
                    };
                    for (p, white_has_pawn) in
                        [(position(&fen), true), (flipped(&position(&fen)), false)]
                    {
                        let score = evaluate(&p);
                        let strong_sign = if white_has_pawn { 1 } else { -1 };
                        if white_wins {
                            assert!(
                                score * strong_sign >= 800,
                                "{}: a win, scored {score}",
                                p.to_fen()
                            );
                        } else {
                            assert_eq!(score, 0, "{}: a draw", p.to_fen());
                        }
                    }
                    if white_wins {
                        wins += 1;
                    } else {
                        draws += 1;
                    }
                    checked += 1;
                }
            }
        }
    }
    // 48 pawn squares x 64 x 63 king pairs x 2 sides, less the illegal ones.
    assert!(checked * stride > 300_000, "{checked}");
    assert!(
        wins * stride > 100_000 && draws * stride > 50_000,
        "{wins} wins, {draws} draws"
    );
}

#[test]
fn kbnk_drives_the_king_to_a_corner_of_the_bishops_colour() {
    // Light-squared bishop (f1 is light): the mating corners are a8 and h1.
    let right = evaluate(&position("k7/8/2K5/8/8/8/8/4NB2 w - - 0 1"));
    let right_far = evaluate(&position("7k/8/5K2/8/8/8/8/4NB2 w - - 0 1"));
    let centre = evaluate(&position("8/8/8/3k4/8/1K6/8/4NB2 w - - 0 1"));
    assert!(right > 0 && right_far > 0 && centre > 0);
    assert!(
        right > right_far,
        "a8 is a light corner, h8 a dark one: {right} vs {right_far}"
    );
    assert!(right > centre, "{right} vs {centre}");
    // The same with a dark-squared bishop: now h8 is the corner to drive to.
    let dark_right = evaluate(&position("7k/8/5K2/8/8/8/8/3NB3 w - - 0 1"));
    let dark_wrong = evaluate(&position("k7/8/2K5/8/8/8/8/3NB3 w - - 0 1"));
    assert!(dark_right > dark_wrong, "{dark_right} vs {dark_wrong}");
    // Black with the pieces: the mirror image.
    assert_eq!(
        evaluate(&position("4nb2/8/8/8/8/2k5/8/K7 b - - 0 1")),
        -right
    );
}

#[test]
fn kxk_pushes_the_lone_king_to_the_edge_and_brings_the_kings_together() {
    let edge = evaluate(&position("3k4/8/3K4/8/8/8/8/7R w - - 0 1"));
    let centre = evaluate(&position("8/8/8/3k4/8/8/1K6/7R w - - 0 1"));
    assert!(edge > centre && centre >= 1000, "{edge} vs {centre}");
    let close = evaluate(&position("8/8/8/3k4/8/3K4/7Q/8 w - - 0 1"));
    let far = evaluate(&position("8/8/8/3k4/8/8/7Q/K7 w - - 0 1"));
    assert!(close > far, "{close} vs {far}");
}

/// Known answers: each term's (mg, eg) for positions built to show it, White's view.
#[test]
fn terms_known_answers() {
    let w = &default_weights().weights;
    let terms = |fen: &str| breakdown(default_weights(), &position(fen));
    let get = |b: &pawnstorm::eval::Breakdown, t: Term| (b.mg[t as usize], b.eg[t as usize]);

    // The start position: everything cancels but the tempo.
    let start = terms("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    for term in Term::ALL {
        let expected = if term == Term::Tempo {
            (w.tempo.mg, w.tempo.eg)
        } else {
            (0, 0)
        };
        assert_eq!(get(&start, term), expected, "{term:?}");
    }
    assert_eq!(start.finished.phase, 24);
    assert_eq!(start.finished.score, w.tempo.mg);
    let black = terms("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1");
    assert_eq!(black.finished.score, -w.tempo.mg);

    // Doubled: White's e-pawns e2, e3 (one doubled, the rear one); both isolated too.
    let b = terms("k7/8/8/8/8/4P3/4P3/4K3 w - - 0 1");
    assert_eq!(get(&b, Term::Doubled), (w.doubled.mg, w.doubled.eg));
    assert_eq!(
        get(&b, Term::Isolated),
        (2 * w.isolated.mg, 2 * w.isolated.eg)
    );
    // Both are passed; the front one's path is free, the rear one is blocked.
    let passed = w.passed[1].mg + w.passed[2].mg;
    assert_eq!(get(&b, Term::Passed).0, passed);
    assert_eq!(get(&b, Term::PassedBlocked).0, w.passed_blocked[1].mg);
    assert_eq!(get(&b, Term::PassedFreePath).0, w.passed_free_path.mg);

    // Backward: White d2, its stop square d3 attacked by Black's c4 (itself covered by b5),
    // no White pawn beside or behind on c or e. With e2 beside it, d2 is not backward.
    let b = terms("4k3/8/8/1p6/2p5/8/3P4/4K3 w - - 0 1");
    assert_eq!(get(&b, Term::Backward), (w.backward.mg, w.backward.eg));
    let b = terms("4k3/8/8/1p6/2p5/8/3PP3/4K3 w - - 0 1");
    assert_eq!(get(&b, Term::Backward), (0, 0));

    // Connected: a phalanx on the 4th rank (relative rank index 3), both pawns count.
    let b = terms("4k3/8/8/8/3PP3/8/8/4K3 w - - 0 1");
    assert_eq!(get(&b, Term::Connected).0, 2 * w.connected[3].mg);
    assert_eq!(
        get(&b, Term::ConnectedPassers).0,
        2 * w.connected_passers.mg
    );

    // Bishop pair.
    let b = terms("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1");
    assert_eq!(
        get(&b, Term::BishopPair),
        (w.bishop_pair.mg, w.bishop_pair.eg)
    );

    // Mobility: a lone rook on a1 (the kings on h8 and h2 out of its way) sees 14 squares.
    let b = terms("7K/8/8/8/8/8/7k/R7 w - - 0 1");
    assert_eq!(get(&b, Term::Mobility).0, 14 * w.mobility[2].mg);

    // Rook behind a passer: White rook a1 behind the a5 passer.
    let b = terms("4k3/8/8/P7/8/8/8/R3K3 w - - 0 1");
    assert_eq!(
        get(&b, Term::PassedRookBehind),
        (w.passed_own_rook_behind.mg, w.passed_own_rook_behind.eg)
    );
    let b = terms("4k3/8/8/P7/8/8/8/r3K3 w - - 0 1");
    assert_eq!(
        get(&b, Term::PassedRookBehind),
        (w.passed_enemy_rook_behind.mg, w.passed_enemy_rook_behind.eg)
    );

    // King support and king distances: White passer e5, White king d5, Black king h8.
    let b = terms("7k/8/8/3KP3/8/8/8/8 w - - 0 1");
    assert_eq!(get(&b, Term::PassedKingSupport).1, w.passed_king_support.eg);
    assert_eq!(
        get(&b, Term::PassedKingDistance).1,
        w.passed_own_king_distance.eg + 3 * w.passed_enemy_king_distance.eg
    );

    // King centralisation: White king e4 (distance 0), Black king a8 (distance 3).
    let b = terms("k7/8/8/8/4K3/8/8/8 w - - 0 1");
    assert_eq!(
        get(&b, Term::KingCentralisation).1,
        -3 * w.king_centre_distance.eg
    );

    // Rule of the square: White a5 passer, Black king far on h8: unstoppable with White to
    // move (3 moves, the king needs 7 steps to a8); with the king on d5 and White to move
    // it is caught (distance 3 <= 3).
    let b = terms("7k/8/8/P7/8/8/8/4K3 w - - 0 1");
    assert_eq!(get(&b, Term::Unstoppable).1, w.unstoppable_passer.eg);
    let b = terms("8/8/8/P2k4/8/8/8/4K3 w - - 0 1");
    assert_eq!(get(&b, Term::Unstoppable).1, 0);
    // Distance 4 from a8: escapes with White to move, caught with Black to move.
    let b = terms("8/8/8/P7/4k3/8/8/4K3 w - - 0 1");
    assert_eq!(get(&b, Term::Unstoppable).1, w.unstoppable_passer.eg);
    let b = terms("8/8/8/P7/4k3/8/8/4K3 b - - 0 1");
    assert_eq!(get(&b, Term::Unstoppable).1, 0);
    // The double step: a2 needs 5 moves; a king 6 steps from a8 (g3... g2 is 6) is outside.
    let b = terms("8/8/8/8/8/8/P5k1/4K3 w - - 0 1");
    assert_eq!(get(&b, Term::Unstoppable).1, w.unstoppable_passer.eg);
    // Not while the defender has a piece.
    let b = terms("7k/8/8/P7/8/8/8/4K2n w - - 0 1");
    assert_eq!(get(&b, Term::Unstoppable).1, 0);

    // Shelter and storm: White king g1 with f2 g2 h2; Black pawn g4 storms (3 ranks ahead).
    let b = terms("4k3/8/8/8/6p1/8/5PPP/6K1 w - - 0 1");
    assert_eq!(get(&b, Term::Shelter).0, 3 * w.shelter[0].mg);
    assert_eq!(get(&b, Term::Storm).0, w.storm[1].mg);

    // Chain base: d4 supported by c3 (c3 is the base: it supports, nothing supports it).
    let b = terms("k7/8/8/8/3P4/2P5/8/4K3 w - - 0 1");
    assert_eq!(get(&b, Term::ChainBase), (w.chain_base.mg, w.chain_base.eg));

    // Piece-square tables: one knight on e4 against a bare board adds its table value
    // (the kings, on mirrored squares, cancel).
    let b = terms("4k3/8/8/8/4N3/8/8/4K3 w - - 0 1");
    let e4 = w.psqt[1][28];
    assert_eq!(get(&b, Term::Psqt), (e4.mg, e4.eg));

    // King-pawn tropism: one pawn on e4; White king e1 (3 steps), Black king e8 (4 steps).
    let b = terms("4k3/8/8/8/4P3/8/8/4K3 w - - 0 1");
    assert_eq!(
        get(&b, Term::KingPawnTropism),
        (
            (3 - 4) * w.king_pawn_distance.mg,
            (3 - 4) * w.king_pawn_distance.eg
        )
    );

    // Rook files: a1 on a half-open file (Black's a7, no White a-pawn), h1 on an open one.
    let b = terms("4k3/p7/8/8/8/8/8/R3K2R w - - 0 1");
    assert_eq!(
        get(&b, Term::RookFile).0,
        w.rook_file[0].mg + w.rook_file[1].mg
    );
    // Rook on the seventh (the a-file is open too).
    let b = terms("4k3/R7/8/8/8/8/8/4K3 w - - 0 1");
    assert_eq!(
        get(&b, Term::RookSeventh),
        (w.rook_seventh.mg, w.rook_seventh.eg)
    );
    // King file: White's king on e1 with Black's e7 and no White e-pawn (half-open); Black's
    // king has its own pawn on the file.
    let b = terms("4k3/4p3/8/8/8/8/8/4K3 w - - 0 1");
    assert_eq!(
        get(&b, Term::KingFile),
        (w.king_file[0].mg, w.king_file[0].eg)
    );
    // Outpost: knight d5 defended by e4, no Black pawn that could ever attack d5; with
    // Black's c7 (c6 attacks d5) it is none.
    let b = terms("4k3/8/8/3N4/4P3/8/8/4K3 w - - 0 1");
    assert_eq!(get(&b, Term::Outpost), (w.outpost[0].mg, w.outpost[0].eg));
    let b = terms("4k3/2p5/8/3N4/4P3/8/8/4K3 w - - 0 1");
    assert_eq!(get(&b, Term::Outpost), (0, 0));
    // Threats: e4 attacks the knight on d5, which nothing defends.
    let b = terms("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1");
    assert_eq!(
        get(&b, Term::ThreatByPawn),
        (w.threat_by_pawn.mg, w.threat_by_pawn.eg)
    );
    assert_eq!(get(&b, Term::Hanging), (w.hanging.mg, w.hanging.eg));
    // A bishop on b2 attacks the undefended rook on g7.
    let b = terms("4k3/6r1/8/8/8/8/1B6/4K3 w - - 0 1");
    assert_eq!(
        get(&b, Term::ThreatByLesser),
        (w.threat_by_lesser.mg, w.threat_by_lesser.eg)
    );
    assert_eq!(get(&b, Term::Hanging), (w.hanging.mg, w.hanging.eg));
    // d4-d5 would attack the knight on c6 (d5 is safe); the knight attacks d4 (hanging).
    let b = terms("4k3/8/2n5/8/3P4/8/8/4K3 w - - 0 1");
    assert_eq!(
        get(&b, Term::PawnPushThreat),
        (w.pawn_push_threat.mg, w.pawn_push_threat.eg)
    );
    assert_eq!(get(&b, Term::Hanging), (-w.hanging.mg, -w.hanging.eg));
    // Bad bishop: c1 is dark, of a2 b2 c2 only b2 is.
    let b = terms("4k3/8/8/8/8/8/PPP5/2B1K3 w - - 0 1");
    assert_eq!(get(&b, Term::BadBishop), (w.bad_bishop.mg, w.bad_bishop.eg));

    // Material counts every piece type once.
    let b = terms("4k3/8/8/8/8/8/8/RNBQK3 w - - 0 1");
    let material: i32 = w.material[1..].iter().map(|m| m.mg).sum();
    assert_eq!(get(&b, Term::Material).0, material);
}
