//! FEN and EPD against the fixtures and against shakmaty as an oracle, on positions from
//! random playouts (standard and Chess960) and on random placements.
//!
//! The playouts make every move in shakmaty and in pawnstorm's `Board` (passed as UCI
//! text) and compare the two FENs after each move; the placements count every position
//! pawnstorm accepts and shakmaty rejects, by shakmaty's reason.

use crate::common;

use std::collections::HashMap;

use pawnstorm::PositionError;
use pawnstorm::movegen::Board;
use pawnstorm::position::epd;
use pawnstorm::position::fen::{FenErrorKind, STARTPOS, parse_fen, write_fen};
use pawnstorm::position::labels::parse_line;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position as _, PositionErrorKinds};

use common::{EPD_FIXTURES, Rng, board_fen, random_playout, read_fixture};

fn fixture_lines(relative: &str) -> Vec<String> {
    read_fixture(relative)
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

fn shakmaty_fen(position: &Chess) -> String {
    Fen::from_position(position, EnPassantMode::Legal).to_string()
}

#[test]
fn random_playout_positions_round_trip_as_shakmaty_writes_them() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut keys: HashMap<u64, String> = HashMap::new();
    let mut check = |_: &Board, position: &Chess| {
        let text = shakmaty_fen(position);
        let ours = parse_fen(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(write_fen(&ours), text);
        // Equal keys for equal positions; a collision between different ones would show
        // as two FENs (clocks aside) under one key.
        let without_clocks: String = text.rsplitn(3, ' ').last().unwrap().to_string();
        let previous = keys.entry(ours.zobrist()).or_insert(without_clocks.clone());
        assert_eq!(*previous, without_clocks, "Zobrist collision");
    };
    let mut positions = 0;
    for _ in 0..400 {
        positions += random_playout(STARTPOS, CastlingMode::Standard, 300, &mut rng, &mut check);
    }
    assert!(positions > 50_000, "{positions}");

    // Chess960 starts from the FRC perft suite: castling with rooks anywhere.
    let starts: Vec<String> = fixture_lines("perft/frc-perftsuite.epd")
        .iter()
        .take(100)
        .map(|line| line.split(';').next().unwrap().trim().to_string())
        .collect();
    // Reading shakmaty's text: compare positions, then our own text must read back to the
    // same position.
    let mut check = |_: &Board, p: &Chess| {
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
    };
    let mut chess960 = 0;
    for start in &starts {
        for _ in 0..3 {
            chess960 += random_playout(start, CastlingMode::Chess960, 300, &mut rng, &mut check);
        }
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
    for suite in EPD_FIXTURES {
        for line in fixture_lines(suite) {
            let record = epd::parse_epd(&line).unwrap_or_else(|e| panic!("{suite}: {line}: {e}"));
            // The four position fields come back exactly as written.
            let mut fields = String::new();
            pawnstorm::position::fen::write_position_fields(&record.position, &mut fields);
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

/// What shakmaty rejects and pawnstorm reads on purpose (docs/CLI.md, "FEN is read strictly"):
/// pawnstorm checks what its own code relies on (one king a side, pawns off the back ranks,
/// at most 16 pieces a side, castling rights with their king and rook, a possible
/// en-passant square, the side not to move out of check), not whether a game could reach
/// the position. So it reads checks no last move could have given (two sliders in line,
/// three checkers), and material no promotions could produce (nine pawns, three bishops
/// with eight pawns); evaluation and test suites hold such positions.
const DELIBERATE: PositionErrorKinds =
    PositionErrorKinds::IMPOSSIBLE_CHECK.union(PositionErrorKinds::TOO_MUCH_MATERIAL);

/// shakmaty's reading of `text`: standard castling, or Chess960 castling where standard
/// refuses the rights (X-FEN `K`/`Q` with the king off the e-file is how pawnstorm reads
/// them, by rook file). `Err(None)`: shakmaty cannot parse the text at all.
fn shakmaty_position(text: &str) -> Result<Chess, Option<PositionErrorKinds>> {
    let fen = Fen::from_ascii(text.as_bytes()).map_err(|_| None)?;
    match fen.clone().into_position::<Chess>(CastlingMode::Standard) {
        Ok(position) => Ok(position),
        Err(e)
            if e.kinds()
                .contains(PositionErrorKinds::INVALID_CASTLING_RIGHTS) =>
        {
            fen.into_position(CastlingMode::Chess960)
                .map_err(|e| Some(e.kinds()))
        }
        Err(e) => Err(Some(e.kinds())),
    }
}

/// Random placements: kings, pawns and pieces anywhere, random castling and en-passant
/// fields. Whenever shakmaty accepts one, pawnstorm must accept it too and read the same
/// position; whenever pawnstorm rejects one, shakmaty must reject it too; and every one
/// pawnstorm accepts and shakmaty rejects must be of a kind in `DELIBERATE`.
#[test]
fn validation_agrees_with_shakmaty_on_random_placements() {
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    let letters = ['P', 'N', 'B', 'R', 'Q', 'p', 'n', 'b', 'r', 'q'];
    let (mut both_accept, mut both_reject) = (0, 0);
    let mut deliberate: HashMap<String, usize> = HashMap::new();
    let mut undocumented = Vec::new();
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
        let oracle = shakmaty_position(&text);
        match (&ours, &oracle) {
            (Ok(position), Ok(oracle)) => {
                both_accept += 1;
                let ours_text = write_fen(position);
                let oracle_board = Fen::from_position(oracle, EnPassantMode::Always).to_string();
                assert_eq!(ours_text, oracle_board, "{text}");
            }
            (Err(_), Err(_)) => both_reject += 1,
            (Err(e), Ok(_)) => panic!("{text}: pawnstorm rejects ({e}), shakmaty accepts"),
            (Ok(_), Err(Some(kinds))) if DELIBERATE.contains(*kinds) => {
                *deliberate.entry(format!("{kinds:?}")).or_default() += 1;
            }
            (Ok(_), Err(kinds)) => undocumented.push(format!("{text}: {kinds:?}")),
        }
    }
    assert!(
        undocumented.is_empty(),
        "{} positions pawnstorm accepts and shakmaty rejects for reasons not documented \
         as deliberate, e.g. {:#?}",
        undocumented.len(),
        &undocumented[..undocumented.len().min(10)]
    );
    eprintln!("accepted by pawnstorm only, deliberately: {deliberate:?}");
    assert!(
        both_accept > 2_500 && both_reject > 50_000,
        "{both_accept} {both_reject}"
    );
}
