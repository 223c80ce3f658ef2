use super::*;

fn error(fen: &str) -> FenError {
    match parse_fen(fen) {
        Ok(p) => panic!("{fen} was accepted as {p:?}"),
        Err(e) => e,
    }
}

fn check(fen: &str, field: FenField, column: usize, kind: FenErrorKind) {
    let e = error(fen);
    assert_eq!(
        (e.field, e.column, &e.kind),
        (field, column, &kind),
        "{fen}: {e}"
    );
}

/// The fast path may refuse anything, but what it accepts the careful path must accept
/// too, as the same position ending at the same place: checked on every fixture FEN
/// and on many single-byte mutations of each.
#[test]
fn fast_and_careful_paths_agree() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut texts = Vec::new();
    for suite in [
        "epd/wac.epd",
        "epd/sts.epd",
        "masks/positions.epd",
        "perft/perftsuite.epd",
    ] {
        let data = std::fs::read_to_string(format!("{root}/fixtures/{suite}")).unwrap();
        texts.extend(data.lines().map(str::to_string));
    }
    let alphabet = b" -/012345678KQkqRrPpNnBbwbeh36x;";
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut mutated = Vec::new();
    for text in &texts {
        for _ in 0..60 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut bytes = text.as_bytes().to_vec();
            let at = (state % bytes.len() as u64) as usize;
            let with = alphabet[(state >> 32) as usize % alphabet.len()];
            match (state >> 40) % 3 {
                0 => bytes[at] = with,
                1 => bytes.insert(at, with),
                _ => {
                    bytes.remove(at);
                }
            }
            if let Ok(text) = String::from_utf8(bytes) {
                mutated.push(text);
            }
        }
    }
    let (mut fast_accepted, mut careful_only) = (0, 0);
    for text in texts.iter().chain(&mutated) {
        for mode in [ClockMode::Optional, ClockMode::IfNumeric] {
            let mut tokens = Tokens::new(text);
            let careful = parse_fields_careful(text, &mut tokens, mode);
            match parse_fields_fast(text.as_bytes(), 0, mode) {
                Some((position, end)) => {
                    fast_accepted += 1;
                    assert_eq!(careful.as_ref().ok(), Some(&position), "{text}");
                    assert_eq!(end, tokens.pos, "{text}");
                }
                None => careful_only += careful.is_ok() as usize,
            }
        }
    }
    assert!(
        fast_accepted > 20_000 && careful_only > 100,
        "{fast_accepted} {careful_only}"
    );
}

#[test]
fn start_position_round_trips() {
    let position = parse_fen(STARTPOS).unwrap();
    assert_eq!(position.to_fen(), STARTPOS);
    assert_eq!(position.occupied().count(), 32);
    assert_eq!(position.castling(), CastlingRights::STANDARD);
}

#[test]
fn four_field_fen_gets_default_clocks() {
    let position = parse_fen("4k3/8/8/8/8/8/8/4K3 b - -").unwrap();
    assert_eq!(position.to_fen(), "4k3/8/8/8/8/8/8/4K3 b - - 0 1");
}

#[test]
fn board_errors_name_the_character() {
    use FenErrorKind::*;
    let f = FenField::Board;
    check("4k3/8/8/8/8/8/8/4X3 w - - 0 1", f, 18, UnexpectedChar('X'));
    check(
        "4k3/8/8/8/8/8/8/4K4 w - - 0 1",
        f,
        19,
        RankTooLong { rank: 1 },
    );
    check(
        "4k3/8/8/8/8/8/8/4K2 w - - 0 1",
        f,
        20,
        RankTooShort {
            rank: 1,
            squares: 7,
        },
    );
    check(
        "4k3/7/8/8/8/8/8/4K3 w - - 0 1",
        f,
        6,
        RankTooShort {
            rank: 7,
            squares: 7,
        },
    );
    check("4k3/8/8/8/8/8/8/8/4K3 w - - 0 1", f, 18, TooManyRanks);
    check("4k3/8/8/8/8/8/4K3 w - - 0 1", f, 18, TooFewRanks(7));
    check("4k3/8/8/8/8/8/8/44K3 w - - 0 1", f, 18, ConsecutiveDigits);
    check(
        "4k3/8/8/8/8/8/8/4K3P w - - 0 1",
        f,
        20,
        RankTooLong { rank: 1 },
    );
    check("4k3/8/8/8/8/8/8/04K3 w - - 0 1", f, 17, UnexpectedChar('0'));
}

#[test]
fn missing_fields_are_named() {
    use FenErrorKind::Missing;
    check("", FenField::Board, 1, Missing);
    check("4k3/8/8/8/8/8/8/4K3", FenField::SideToMove, 20, Missing);
    check("4k3/8/8/8/8/8/8/4K3 w", FenField::Castling, 22, Missing);
    check("4k3/8/8/8/8/8/8/4K3 w -", FenField::EnPassant, 24, Missing);
    check(
        "4k3/8/8/8/8/8/8/4K3 w - - 0",
        FenField::FullmoveNumber,
        28,
        Missing,
    );
}

#[test]
fn state_field_errors() {
    use FenErrorKind::*;
    check(
        "4k3/8/8/8/8/8/8/4K3 x - - 0 1",
        FenField::SideToMove,
        21,
        UnexpectedChar('x'),
    );
    check(
        "4k3/8/8/8/8/8/8/4K3 wb - - 0 1",
        FenField::SideToMove,
        22,
        UnexpectedChar('b'),
    );
    check(
        "r3k3/8/8/8/8/8/8/4K3 w qX - 0 1",
        FenField::Castling,
        25,
        UnexpectedChar('X'),
    );
    check(
        "r3k3/8/8/8/8/8/8/4K3 w qq - 0 1",
        FenField::Castling,
        25,
        DuplicateCastling('q'),
    );
    check(
        "4k3/8/8/8/8/8/8/4K3 w - e9 0 1",
        FenField::EnPassant,
        26,
        UnexpectedChar('9'),
    );
    check(
        "4k3/8/8/8/8/8/8/4K3 w - - x 1",
        FenField::HalfmoveClock,
        27,
        UnexpectedChar('x'),
    );
    check(
        "4k3/8/8/8/8/8/8/4K3 w - - 0 0",
        FenField::FullmoveNumber,
        29,
        ZeroFullmove,
    );
    check(
        "4k3/8/8/8/8/8/8/4K3 w - - 70000 1",
        FenField::HalfmoveClock,
        27,
        BadNumber { max: 65535 },
    );
    check(
        "4k3/8/8/8/8/8/8/4K3 w - - 0 1 x",
        FenField::Trailing,
        31,
        UnexpectedChar('x'),
    );
}

fn invalid(fen: &str) -> PositionError {
    match error(fen).kind {
        FenErrorKind::Invalid(e) => e,
        other => panic!("{fen}: expected a validation error, got {other}"),
    }
}

#[test]
fn every_validation_error() {
    use pawnstorm_kernels::Color::*;
    assert_eq!(
        invalid("8/8/8/8/8/8/8/4K3 w - - 0 1"),
        PositionError::KingCount {
            color: Black,
            count: 0
        }
    );
    assert_eq!(
        invalid("4k3/8/8/8/8/8/8/4KK2 w - - 0 1"),
        PositionError::KingCount {
            color: White,
            count: 2
        }
    );
    assert_eq!(
        invalid("4k2P/8/8/8/8/8/8/4K3 w - - 0 1"),
        PositionError::PawnOnBackRank {
            square: Square::from_name("h8").unwrap()
        }
    );
    assert_eq!(
        invalid("4k3/8/8/8/8/8/8/p3K3 w - - 0 1"),
        PositionError::PawnOnBackRank {
            square: Square::from_name("a1").unwrap()
        }
    );
    assert_eq!(
        invalid("4k3/8/8/8/8/QQQQQQQQ/QQQQQQQQ/4K3 w - - 0 1"),
        PositionError::TooManyPieces {
            color: White,
            count: 17
        }
    );
    // Castling: king off its square, rook missing, right on the wrong side.
    assert_eq!(
        invalid("4k3/8/8/8/8/8/4K3/R6R w K - 0 1"),
        PositionError::CastlingWithoutKing { color: White }
    );
    assert!(matches!(
        invalid("4k3/8/8/8/8/8/8/R3K3 w K - 0 1"),
        PositionError::CastlingWithoutRook {
            color: White,
            side: CastlingSide::King,
            ..
        }
    ));
    assert!(matches!(
        invalid("r3k3/8/8/8/8/8/8/4K3 w k - 0 1"),
        PositionError::CastlingWithoutRook {
            color: Black,
            side: CastlingSide::King,
            ..
        }
    ));
    assert!(matches!(
        invalid("4k3/8/8/8/8/8/8/R3K2R w CG - 0 1"),
        PositionError::CastlingWithoutRook { color: White, .. }
    ));
    // En passant: wrong rank for the side to move, no pawn that pushed, square or
    // start square occupied.
    assert!(matches!(
        invalid("4k3/8/8/3pP3/8/8/8/4K3 w - d3 0 1"),
        PositionError::EnPassant { .. }
    ));
    assert!(matches!(
        invalid("4k3/8/8/4P3/8/8/8/4K3 w - d6 0 1"),
        PositionError::EnPassant { .. }
    ));
    assert!(matches!(
        invalid("4k3/8/3n4/3pP3/8/8/8/4K3 w - d6 0 1"),
        PositionError::EnPassant { .. }
    ));
    assert!(matches!(
        invalid("4k3/3n4/8/3pP3/8/8/8/4K3 w - d6 0 1"),
        PositionError::EnPassant { .. }
    ));
    assert!(matches!(
        invalid("4k3/8/8/8/3Pp3/8/8/4K3 b - d6 0 1"),
        PositionError::EnPassant { .. }
    ));
    // The valid neighbours of those cases are accepted.
    for fen in [
        "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",
        "4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 1",
        "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
        "4k3/8/8/8/8/8/8/R3K2R w AH - 0 1",
        "r3k2r/8/8/8/8/8/8/4K3 b kq - 0 1",
    ] {
        assert!(parse_fen(fen).is_ok(), "{fen}");
    }
}

#[test]
fn castling_letters_resolve_to_rook_files() {
    // Chess960: king on b1, rooks a1 and h1, and a second king-side rook on d1.
    let position = parse_fen("1k6/8/8/8/8/8/8/RK1R3R w KQD - 0 1").unwrap_err();
    assert_eq!(position.kind, FenErrorKind::DuplicateCastling('D'));
    let position = parse_fen("1k6/8/8/8/8/8/8/RK1R3R w DQ - 0 1").unwrap();
    let rights = position.castling();
    assert_eq!(
        rights.rook_file(Color::White, CastlingSide::King),
        File::from_char('d')
    );
    assert_eq!(
        rights.rook_file(Color::White, CastlingSide::Queen),
        File::from_char('a')
    );
    // The inner rook needs its letter; the outer one is written `Q`.
    assert_eq!(position.to_fen(), "1k6/8/8/8/8/8/8/RK1R3R w DQ - 0 1");
    let xfen =
        parse_fen("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9").unwrap();
    assert_eq!(
        xfen.to_fen(),
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w KQkq - 2 9"
    );
    assert_eq!(parse_fen(&xfen.to_fen()).unwrap(), xfen);
}

#[test]
fn columns_count_characters_not_bytes() {
    let e = error("4k3/8/8/8/8/8/8/4K3 w - - 0 1 é");
    assert_eq!(e.column, 31);
    let e = error("4k3/8/8/8/8/8/8/4Ké2 w - - 0 1");
    assert_eq!(
        (e.field, e.column, e.kind),
        (FenField::Board, 19, FenErrorKind::UnexpectedChar('é'))
    );
}
