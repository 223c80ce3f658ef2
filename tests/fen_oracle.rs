//! FEN and EPD against the fixtures and against shakmaty as an oracle, on positions from
//! random playouts (standard and Chess960) and on random placements.

mod common;

use std::collections::HashMap;

use pawnstorm::PositionError;
use pawnstorm::epd;
use pawnstorm::fen::{FenErrorKind, parse_fen, write_fen};
use pawnstorm::labels::parse_line;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position as _};

use common::{Rng, board_fen, read_fixture};

fn fixture_lines(relative: &str) -> Vec<String> {
    read_fixture(relative)
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Plays random legal moves from `start`, checking every position on the way.
fn random_playouts(
    start: &Chess,
    mode: CastlingMode,
    games: usize,
    rng: &mut Rng,
    check: &mut dyn FnMut(&Chess, CastlingMode),
) -> usize {
    let mut positions = 0;
    for _ in 0..games {
        let mut position = start.clone();
        for _ in 0..300 {
            check(&position, mode);
            positions += 1;
            let moves = position.legal_moves();
            if moves.is_empty() {
                break;
            }
            let mv = moves[rng.below(moves.len())];
            position.play_unchecked(mv);
        }
    }
    positions
}

fn shakmaty_fen(position: &Chess) -> String {
    Fen::from_position(position, EnPassantMode::Legal).to_string()
}

#[test]
fn random_playout_positions_round_trip_as_shakmaty_writes_them() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut keys: HashMap<u64, String> = HashMap::new();
    let mut check = |position: &Chess, _: CastlingMode| {
        let text = shakmaty_fen(position);
        let ours = parse_fen(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(write_fen(&ours), text);
        // Equal keys for equal positions; a collision between different ones would show
        // as two FENs (clocks aside) under one key.
        let without_clocks: String = text.rsplitn(3, ' ').last().unwrap().to_string();
        let previous = keys.entry(ours.zobrist()).or_insert(without_clocks.clone());
        assert_eq!(*previous, without_clocks, "Zobrist collision");
    };
    let positions = random_playouts(
        &Chess::default(),
        CastlingMode::Standard,
        400,
        &mut rng,
        &mut check,
    );
    assert!(positions > 50_000, "{positions}");

    // Chess960 starts from the FRC perft suite: castling with rooks anywhere.
    let starts: Vec<Chess> = fixture_lines("perft/frc-perftsuite.epd")
        .iter()
        .take(100)
        .map(|line| {
            let fen = line.split(';').next().unwrap().trim();
            Fen::from_ascii(fen.as_bytes())
                .unwrap()
                .into_position(CastlingMode::Chess960)
                .unwrap()
        })
        .collect();
    let mut chess960 = 0;
    for start in &starts {
        chess960 += random_playouts(start, CastlingMode::Chess960, 3, &mut rng, &mut |p, _| {
            // shakmaty writes Shredder letters for Chess960; compare positions, then our
            // own text must read back to the same position.
            let text = Fen::from_position(p, EnPassantMode::Legal).to_string();
            let ours = parse_fen(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let back: Chess = Fen::from_ascii(write_fen(&ours).as_bytes())
                .unwrap()
                .into_position(CastlingMode::Chess960)
                .unwrap_or_else(|e| panic!("{text} -> {}: {e}", write_fen(&ours)));
            assert_eq!(back.board(), p.board(), "{text}");
            assert_eq!(
                back.castles().castling_rights(),
                p.castles().castling_rights(),
                "{text}"
            );
            assert_eq!(parse_fen(&write_fen(&ours)).unwrap(), ours);
        });
    }
    assert!(chess960 > 10_000, "{chess960}");
}

#[test]
fn pawn_key_ignores_everything_but_pawns() {
    let a = parse_fen("4k3/pp6/8/8/8/8/PP6/4K3 w - - 0 1").unwrap();
    let b = parse_fen("3qk3/pp6/8/8/8/8/PP6/R3K3 b Q - 7 30").unwrap();
    let c = parse_fen("4k3/p1p5/8/8/8/8/PP6/4K3 w - - 0 1").unwrap();
    assert_eq!(a.pawn_key(), b.pawn_key());
    assert_ne!(a.pawn_key(), c.pawn_key());
    assert_ne!(a.zobrist(), b.zobrist());
    // Side to move, castling and a capturable en-passant square change the full key;
    // an en-passant square that no pawn can use does not.
    let white = parse_fen("4k3/8/8/3pP3/8/8/8/4K3 w - - 0 1").unwrap();
    let black = parse_fen("4k3/8/8/3pP3/8/8/8/4K3 b - - 0 1").unwrap();
    let ep = parse_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1").unwrap();
    let useless_ep = parse_fen("4k3/8/8/3p3P/8/8/8/4K3 w - d6 0 1").unwrap();
    let no_ep = parse_fen("4k3/8/8/3p3P/8/8/8/4K3 w - - 0 1").unwrap();
    assert_ne!(white.zobrist(), black.zobrist());
    assert_ne!(white.zobrist(), ep.zobrist());
    assert_eq!(useless_ep.zobrist(), no_ep.zobrist());
    assert_eq!(white.pawn_key(), ep.pawn_key());
}

#[test]
fn every_fixture_position_round_trips() {
    let mut checked = 0;
    for suite in [
        "epd/arasan21.epd",
        "epd/bk.epd",
        "epd/bt2630.epd",
        "epd/ecm.epd",
        "epd/eet.epd",
        "epd/sts.epd",
        "epd/tbtest.epd",
        "epd/wac.epd",
        "epd/wac-revised.epd",
        "masks/positions.epd",
        "texel/labeled-from-fixture-pgns.epd",
    ] {
        for line in fixture_lines(suite) {
            let record = epd::parse_epd(&line).unwrap_or_else(|e| panic!("{suite}: {line}: {e}"));
            // The four position fields come back exactly as written.
            let mut fields = String::new();
            pawnstorm::fen::write_position_fields(&record.position, &mut fields);
            let original: Vec<&str> = line.split_whitespace().take(4).collect();
            assert_eq!(fields, original.join(" "), "{suite}");
            // So do the operations, in order, with their operands.
            let again = epd::parse_epd(&record.to_string()).unwrap();
            assert_eq!(again, record, "{suite}: {line}");
            // And shakmaty reads the same position.
            let oracle: Chess = shakmaty::fen::Epd::from_ascii(original.join(" ").as_bytes())
                .unwrap()
                .into_position(CastlingMode::Standard)
                // The masks set has placements with checks no game could reach.
                .or_else(|e| e.ignore_impossible_check().map_err(|e| e.to_string()))
                .unwrap_or_else(|e| panic!("{suite}: {line}: {e}"));
            assert_eq!(shakmaty_fen(&oracle).split(' ').next(), Some(original[0]));
            checked += 1;
        }
    }
    for suite in ["perft/perftsuite.epd", "perft/frc-perftsuite.epd"] {
        for line in fixture_lines(suite) {
            let fen = line.split(';').next().unwrap().trim();
            let position = parse_fen(fen).unwrap_or_else(|e| panic!("{suite}: {fen}: {e}"));
            assert_eq!(parse_fen(&write_fen(&position)).unwrap(), position, "{fen}");
            if suite == "perft/perftsuite.epd" {
                assert_eq!(write_fen(&position), fen);
            }
            checked += 1;
        }
    }
    for line in fixture_lines("perft/cpw-tricky.perft") {
        if let Some(fen) = line.strip_prefix("epd ") {
            let position = match parse_fen(fen) {
                Ok(position) => position,
                // The suite's move-generator stress test has 28 white pieces: legal for a
                // move generator, but more than a game can reach, and pawnstorm's rule.
                Err(e) => {
                    assert!(
                        matches!(
                            e.kind,
                            FenErrorKind::Invalid(PositionError::TooManyPieces { .. })
                        ),
                        "{fen}: {e}"
                    );
                    continue;
                }
            };
            assert_eq!(parse_fen(&write_fen(&position)).unwrap(), position, "{fen}");
            checked += 1;
        }
    }
    assert!(checked > 68_000, "{checked}");
}

#[test]
fn texel_labels_are_read_from_c9() {
    let lines = fixture_lines("texel/labeled-from-fixture-pgns.epd");
    let mut counts = [0usize; 3];
    for line in &lines {
        let record = parse_line(line).unwrap().unwrap();
        let result = record.labels.result.expect("every texel line has c9");
        counts[(result.to_i8() + 1) as usize] += 1;
    }
    // SOURCES.md: 1-0: 27,758, 0-1: 19,511, 1/2-1/2: 16,424.
    assert_eq!(counts, [19_511, 16_424, 27_758]);
}

/// Random placements: kings, pawns and pieces anywhere, random castling and en-passant
/// fields. Whenever shakmaty accepts one (it checks more than pawnstorm: checks, material),
/// pawnstorm must accept it too and read the same position; whenever pawnstorm rejects
/// one, shakmaty must reject it too.
#[test]
fn validation_agrees_with_shakmaty_on_random_placements() {
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    let letters = ['P', 'N', 'B', 'R', 'Q', 'p', 'n', 'b', 'r', 'q'];
    let (mut both_accept, mut both_reject) = (0, 0);
    for _ in 0..100_000 {
        let mut board = [' '; 64];
        let kings = if rng.below(20) == 0 { rng.below(4) } else { 2 };
        for i in 0..kings {
            board[rng.below(64)] = if i % 2 == 0 { 'K' } else { 'k' };
        }
        for _ in 0..rng.below(20) {
            board[rng.below(64)] = letters[rng.below(letters.len())];
        }
        if rng.below(3) == 0 {
            // Stress the corners so castling rights have a chance to be valid.
            board[0] = 'R';
            board[7] = 'R';
            board[4] = 'K';
            board[56] = 'r';
            board[63] = 'r';
            board[60] = 'k';
        }
        let fen = board_fen(&board, ' ');
        let side = if rng.below(2) == 0 { "w" } else { "b" };
        let castling = ["-", "KQkq", "K", "q", "Kk", "Qq"][rng.below(6)];
        let ep = if rng.below(4) == 0 {
            let file = (b'a' + rng.below(8) as u8) as char;
            let rank = ["3", "6", "4"][rng.below(3)];
            format!("{file}{rank}")
        } else {
            "-".to_string()
        };
        let text = format!("{fen} {side} {castling} {ep} 0 1");
        let ours = parse_fen(&text);
        let oracle = Fen::from_ascii(text.as_bytes())
            .ok()
            .and_then(|f| f.into_position::<Chess>(CastlingMode::Standard).ok());
        match (&ours, &oracle) {
            (Ok(position), Some(oracle)) => {
                both_accept += 1;
                let ours_text = write_fen(position);
                let oracle_board = Fen::from_position(oracle, EnPassantMode::Always).to_string();
                assert_eq!(ours_text, oracle_board, "{text}");
            }
            (Err(_), None) => both_reject += 1,
            (Err(e), Some(_)) => panic!("{text}: pawnstorm rejects ({e}), shakmaty accepts"),
            (Ok(_), None) => {} // shakmaty's further checks (side not to move in check, ...)
        }
    }
    assert!(
        both_accept > 2_500 && both_reject > 50_000,
        "{both_accept} {both_reject}"
    );
}
