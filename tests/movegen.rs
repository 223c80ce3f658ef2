//! Move generation against shakmaty on random playouts (standard and Chess960), the
//! captures/quiets split, incremental keys against keys from scratch, UCI text, and draws
//! by repetition and the fifty-move rule.
//!
//! In the playouts shakmaty plays every move beside pawnstorm (the move passed as UCI text),
//! so the oracle's position comes from its own move making, never from pawnstorm's FEN, and
//! the two FENs are compared after every move.

mod common;

use std::collections::BTreeSet;

use pawnstorm::movegen::{
    Board, Game, Move, MoveList, Outcome, captures, count_legal_moves, is_fifty_move_draw,
    legal_moves, quiets,
};
use pawnstorm::position::fen::STARTPOS;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position as _};

use common::{Rng, random_playout, read_fixture};

fn moves_of(board: &Board) -> MoveList {
    let mut list = MoveList::new();
    legal_moves(board, &mut list);
    list
}

fn uci_set(moves: &[Move]) -> BTreeSet<String> {
    moves.iter().map(|m| m.uci(true).to_string()).collect()
}

/// Chess960 start position number `n` (0..960) by Scharnagl's numbering, with Shredder
/// castling letters.
fn chess960_fen(n: usize) -> String {
    let mut rank = [' '; 8];
    let (n, light) = (n / 4, n % 4);
    rank[light * 2 + 1] = 'b';
    let (n, dark) = (n / 4, n % 4);
    rank[dark * 2] = 'b';
    let empty = |rank: &[char; 8]| -> Vec<usize> { (0..8).filter(|&i| rank[i] == ' ').collect() };
    let (n, queen) = (n / 6, n % 6);
    rank[empty(&rank)[queen]] = 'q';
    let knight_pairs = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
        (3, 4),
    ];
    let (a, b) = knight_pairs[n];
    let free = empty(&rank);
    rank[free[a]] = 'n';
    rank[free[b]] = 'n';
    let free = empty(&rank);
    rank[free[0]] = 'r';
    rank[free[1]] = 'k';
    rank[free[2]] = 'r';
    let black: String = rank.iter().collect();
    let files = |upper: bool| -> String {
        [free[2], free[0]]
            .iter()
            .map(|&f| {
                let c = (b'a' + f as u8) as char;
                if upper { c.to_ascii_uppercase() } else { c }
            })
            .collect()
    };
    format!(
        "{black}/pppppppp/8/8/8/8/PPPPPPPP/{} w {}{} - 0 1",
        black.to_ascii_uppercase(),
        files(true),
        files(false)
    )
}

fn oracle(fen: &str) -> Chess {
    Fen::from_ascii(fen.as_bytes())
        .unwrap_or_else(|e| panic!("shakmaty reads {fen}: {e}"))
        .into_position(CastlingMode::Chess960)
        .unwrap_or_else(|e| panic!("shakmaty accepts {fen}: {e}"))
}

/// The oracle's FEN in `Board`'s convention: an en-passant square is kept when a pawn of the
/// side to move stands beside the pawn that double-pushed (X-FEN's rule, shakmaty's
/// `PseudoLegal`), whether or not the capture is legal.
fn oracle_fen(reference: &Chess) -> String {
    Fen::from_position(reference, EnPassantMode::PseudoLegal).to_string()
}

/// Compares one position with shakmaty's `reference` (the same position, reached by
/// shakmaty's own moves) and checks our own invariants; returns its moves.
fn check_position(board: &Board, reference: &Chess) -> MoveList {
    let fen = board.to_fen();
    assert_eq!(fen, oracle_fen(reference), "FEN differs from shakmaty's");
    let moves = moves_of(board);
    let ours = uci_set(&moves);
    assert_eq!(ours.len(), moves.len(), "{fen}: a move generated twice");

    let theirs: BTreeSet<String> = reference
        .legal_moves()
        .iter()
        .map(|m| UciMove::from_move(*m, CastlingMode::Chess960).to_string())
        .collect();
    assert_eq!(ours, theirs, "{fen}: legal moves differ");
    let their_noisy: BTreeSet<String> = reference
        .legal_moves()
        .iter()
        .filter(|m| m.is_capture() || m.is_promotion())
        .map(|m| UciMove::from_move(*m, CastlingMode::Chess960).to_string())
        .collect();

    assert_eq!(board.in_check(), reference.is_check(), "{fen}: check");
    let mate = board.in_check() && moves.is_empty();
    let stalemate = !board.in_check() && moves.is_empty();
    assert_eq!(mate, reference.is_checkmate(), "{fen}: checkmate");
    assert_eq!(stalemate, reference.is_stalemate(), "{fen}: stalemate");
    assert_eq!(count_legal_moves(board), moves.len() as u64, "{fen}: count");

    let mut noisy = MoveList::new();
    captures(board, &mut noisy);
    let mut quiet = MoveList::new();
    quiets(board, &mut quiet);
    let (noisy, quiet) = (uci_set(&noisy), uci_set(&quiet));
    assert!(
        noisy.is_disjoint(&quiet),
        "{fen}: captures and quiets overlap"
    );
    assert_eq!(
        noisy.union(&quiet).cloned().collect::<BTreeSet<_>>(),
        ours,
        "{fen}: captures + quiets != all"
    );
    assert_eq!(noisy, their_noisy, "{fen}: captures and promotions");

    assert_eq!(board.key(), board.position().zobrist(), "{fen}: key");
    assert_eq!(
        board.pawn_key(),
        board.position().pawn_key(),
        "{fen}: pawn key"
    );
    let reparsed = Board::from_fen(&fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
    assert_eq!(&reparsed, board, "{fen}: FEN round trip");
    moves
}

/// A random playout from `fen` beside shakmaty (every position checked by
/// [`check_position`]); returns how many positions it checked.
fn playout(fen: &str, plies: usize, rng: &mut Rng) -> usize {
    random_playout(
        fen,
        CastlingMode::Chess960,
        plies,
        rng,
        &mut |board, reference| {
            check_position(board, reference);
        },
    )
}

fn suite_fens(name: &str) -> Vec<String> {
    let text = read_fixture(name);
    text.lines()
        .filter_map(|line| line.split(';').next())
        .map(|fen| fen.trim().to_owned())
        .filter(|fen| !fen.is_empty())
        .collect()
}

#[test]
fn random_playouts_agree_with_shakmaty_on_over_ten_thousand_positions() {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut starts: Vec<String> = vec![STARTPOS.to_string(); 40];
    starts.extend((0..960).step_by(24).map(chess960_fen));
    for name in ["perft/perftsuite.epd", "perft/frc-perftsuite.epd"] {
        starts.extend(suite_fens(name).into_iter().step_by(4));
    }
    let positions: usize = starts
        .iter()
        .map(|start| playout(start, 120, &mut rng))
        .sum();
    assert!(positions >= 10_000, "only {positions} positions checked");
}

#[test]
fn chess960_start_positions_are_all_accepted_and_agree_with_shakmaty() {
    let mut seen = BTreeSet::new();
    for n in 0..960 {
        let fen = chess960_fen(n);
        let board = Board::from_fen(&fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        check_position(&board, &oracle(&fen));
        seen.insert(fen);
    }
    assert_eq!(seen.len(), 960);
}

#[test]
fn en_passant_that_uncovers_the_king_along_the_rank_is_illegal() {
    let board = Board::from_fen("8/8/8/K2pP2r/8/8/8/7k w - d6 0 2").expect("valid");
    let moves = uci_set(&moves_of(&board));
    assert!(!moves.contains("e5d6"), "{moves:?}");
    assert!(moves.contains("e5e6"));
    let free = Board::from_fen("8/8/8/3pP2r/8/8/K7/7k w - d6 0 2").expect("valid");
    assert!(uci_set(&moves_of(&free)).contains("e5d6"));
}

#[test]
fn castling_is_refused_out_of_through_and_into_check() {
    let castles = |fen: &str| -> BTreeSet<String> {
        let board = Board::from_fen(fen).expect("valid");
        moves_of(&board)
            .iter()
            .filter(|m| m.is_castle())
            .map(|m| m.to_string())
            .collect()
    };
    let both: BTreeSet<String> = ["e1g1", "e1c1"].map(String::from).into();
    assert_eq!(castles("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"), both);
    // Out of check, through check (f1), into check (c1), and a1-b1 attacked only.
    assert!(castles("r3k2r/8/8/8/8/8/4r3/R3K2R w KQkq - 0 1").is_empty());
    assert_eq!(
        castles("r3kr2/8/8/8/8/8/8/R3K2R w KQq - 0 1"),
        ["e1c1".to_string()].into()
    );
    assert_eq!(
        castles("r1r1k3/8/8/8/8/8/8/R3K2R w KQq - 0 1"),
        ["e1g1".to_string()].into()
    );
    assert_eq!(castles("1r2k3/8/8/8/8/8/8/R3K2R w KQ - 0 1"), both);
    // Chess960: the rook on b1 shields c1 from the a1 rook; once it moves, c1 is attacked.
    assert!(castles("4k3/8/8/8/8/8/8/rR1K4 w B - 0 1").is_empty());
}

#[test]
fn promotions_come_in_all_four_pieces() {
    let board = Board::from_fen("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1").expect("valid");
    let moves = uci_set(&moves_of(&board));
    for text in [
        "a7a8q", "a7a8r", "a7a8b", "a7a8n", "a7b8q", "a7b8r", "a7b8b", "a7b8n",
    ] {
        assert!(moves.contains(text), "{text} missing from {moves:?}");
    }
}

#[test]
fn uci_text_parses_back_in_both_castling_notations() {
    let board = Board::from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").expect("valid");
    let short = Move::from_uci("e1g1", &board, false).expect("legal");
    assert!(short.is_castle());
    assert_eq!(Move::from_uci("e1h1", &board, false), Ok(short));
    assert_eq!(short.uci(true).to_string(), "e1h1");
    assert!(Move::from_uci("e1e3", &board, false).is_err());
    assert!(Move::from_uci("e1", &board, false).is_err());
    assert!(Move::from_uci("e1g1x", &board, false).is_err());
    assert!(Move::from_uci("é1g1", &board, false).is_err());
    assert!(Move::from_uci("aé1g", &board, false).is_err());
    // Chess960: king b1, rook a1. "b1c1" is a king move in 960 notation and castling in
    // standard notation.
    let board = Board::from_fen("4k3/8/8/8/8/8/8/RK6 w A - 0 1").expect("valid");
    assert!(board.has_chess960_castling());
    let step = Move::from_uci("b1c1", &board, true).expect("legal");
    assert!(!step.is_castle());
    let castle = Move::from_uci("b1a1", &board, true).expect("legal");
    assert!(castle.is_castle());
    assert_eq!(castle.to_string(), "b1c1");
    for mv in moves_of(&board).iter() {
        assert_eq!(
            Move::from_uci(&mv.uci(true).to_string(), &board, true),
            Ok(*mv)
        );
    }
}

#[test]
fn incremental_keys_follow_en_passant_and_castling() {
    // e2e4 with a black pawn on d4: the e3 square enters the key; after a reply it leaves.
    let board = Board::from_fen("r3k2r/8/8/8/3p4/8/4P3/R3K2R w KQkq - 0 1").expect("valid");
    let play = |board: &Board, text: &str| {
        let mv = Move::from_uci(text, board, false).expect("legal");
        let next = board.play(mv);
        assert_eq!(next.key(), next.position().zobrist(), "after {text}");
        assert_eq!(next.pawn_key(), next.position().pawn_key(), "after {text}");
        next
    };
    let pushed = play(&board, "e2e4");
    assert_eq!(
        pushed.position().en_passant().map(|s| s.to_string()),
        Some("e3".into())
    );
    let taken = play(&pushed, "d4e3");
    assert!(taken.position().en_passant().is_none());
    let castled = play(&taken, "e1g1");
    assert_eq!(castled.to_fen(), "r3k2r/8/8/8/8/4p3/8/R4RK1 b kq - 1 2");
    let rook_taken = play(&play(&castled, "a8a1"), "f1a1");
    assert_eq!(rook_taken.to_fen(), "4k2r/8/8/8/8/4p3/8/R5K1 b k - 0 3");
}

#[test]
fn threefold_repetition_counts_only_reversible_positions_with_the_same_side_to_move() {
    let mut game = Game::new(Board::startpos());
    let play = |game: &mut Game, text: &str| {
        let mv = Move::from_uci(text, game.board(), false).expect("legal");
        game.play(mv);
    };
    for text in ["g1f3", "g8f6", "f3g1", "f6g8"] {
        play(&mut game, text);
    }
    assert!(game.history().is_repetition(game.board()));
    assert_eq!(game.outcome(), None);
    for text in ["g1f3", "g8f6", "f3g1"] {
        play(&mut game, text);
        assert_eq!(game.outcome(), None);
    }
    play(&mut game, "f6g8");
    assert_eq!(game.outcome(), Some(Outcome::ThreefoldRepetition));
    assert!(game.undo());
    assert_eq!(game.outcome(), None);

    // A pawn move makes earlier positions unreachable: no repetition across it.
    let mut game = Game::new(Board::startpos());
    for text in ["g1f3", "g8f6", "f3g1", "f6g8", "e2e4", "e7e5"] {
        play(&mut game, text);
    }
    for text in ["g1f3", "g8f6", "f3g1", "f6g8"] {
        play(&mut game, text);
    }
    assert_eq!(game.history().repetitions(game.board()), 1);
}

#[test]
fn fifty_move_rule_draws_at_a_hundred_plies_unless_mate() {
    let board = Board::from_fen("4k3/8/8/8/8/8/8/4K2R w - - 99 80").expect("valid");
    assert!(!is_fifty_move_draw(&board));
    let after = board.play(Move::from_uci("h1h2", &board, false).expect("legal"));
    assert_eq!(after.position().halfmove_clock(), 100);
    assert!(is_fifty_move_draw(&after));
    assert_eq!(Game::new(after).outcome(), Some(Outcome::FiftyMoves));
    let pawn_move = Board::from_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 99 80").expect("valid");
    let reset = pawn_move.play(Move::from_uci("e2e4", &pawn_move, false).expect("legal"));
    assert!(!is_fifty_move_draw(&reset));
    let mated = Board::from_fen("7k/6Q1/6K1/8/8/8/8/8 b - - 100 80").expect("valid");
    assert!(!is_fifty_move_draw(&mated));
    assert_eq!(Game::new(mated).outcome(), Some(Outcome::Checkmate));
    let stalemate = Board::from_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 3 80").expect("valid");
    assert_eq!(Game::new(stalemate).outcome(), Some(Outcome::Stalemate));
}
