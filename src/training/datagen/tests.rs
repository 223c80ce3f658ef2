use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position as _};

use super::*;
use crate::engine::search::Syzygy;

/// Small and quick: a few hundred nodes a move, short games.
fn quick() -> Config {
    Config {
        nodes: 400,
        max_plies: 60,
        ..Config::default()
    }
}

fn shakmaty_position(fen: &str) -> Chess {
    Fen::from_ascii(fen.as_bytes())
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap()
}

#[test]
fn insufficient_material_is_what_shakmaty_calls_it() {
    for fen in [
        "8/8/8/4k3/8/8/8/4K3 w - - 0 1",
        "8/8/8/4k3/8/8/3n4/4K3 w - - 0 1",
        "8/8/8/4k3/8/8/3b4/4K3 w - - 0 1",
        "8/8/8/4k3/8/1B6/3b4/4K3 w - - 0 1",
        "8/8/8/4k3/8/8/2Bb4/4K3 w - - 0 1",
        "8/8/8/4k3/8/8/2Nb4/4K3 w - - 0 1",
        "8/8/8/4k3/8/8/2Nn4/4K3 w - - 0 1",
        "8/8/8/4k3/8/8/3nn3/4K3 w - - 0 1",
        "8/8/8/4k3/8/8/p7/4K3 b - - 0 1",
        "8/8/8/4k3/8/8/3r4/4K3 w - - 0 1",
        "k7/8/8/8/8/B7/1B6/4K3 w - - 0 1",
        "k7/8/8/8/8/B7/1b6/4K3 w - - 0 1",
    ] {
        let ours = is_insufficient_material(Board::from_fen(fen).unwrap().position());
        let theirs = shakmaty_position(fen).is_insufficient_material();
        assert_eq!(ours, theirs, "{fen}");
    }
}

#[test]
fn a_win_needs_a_run_of_one_sign_and_a_draw_a_late_level_run() {
    let rules = Adjudication::default();
    let mut a = Adjudicator::default();
    // Seven big White scores, then Black's search disagrees: no win, the run restarts.
    for ply in 0..7 {
        assert_eq!(a.update(&rules, ply, 1200), None);
    }
    assert_eq!(a.update(&rules, 7, -1500), None);
    for ply in 8..14 {
        assert_eq!(a.update(&rules, ply, -1000), None);
    }
    assert_eq!(
        a.update(&rules, 14, -30_000),
        Some((GameResult::BlackWin, Termination::ScoreAdjudication))
    );

    // Level scores count only from the draw ply on.
    let mut a = Adjudicator::default();
    for ply in 60..80 + rules.draw_plies as u16 - 1 {
        assert_eq!(a.update(&rules, ply, 0), None, "ply {ply}");
    }
    assert_eq!(
        a.update(&rules, 80 + rules.draw_plies as u16 - 1, -10),
        Some((GameResult::Draw, Termination::DrawAdjudication))
    );
    // One score outside the window restarts the count.
    let mut a = Adjudicator::default();
    for ply in 100..110 {
        assert_eq!(a.update(&rules, ply, 5), None);
    }
    assert_eq!(a.update(&rules, 110, 11), None);
    for ply in 111..130 {
        assert_eq!(a.update(&rules, ply, -5), None);
    }
    assert!(a.update(&rules, 130, 0).is_some());
}

#[test]
fn game_generators_differ_by_game_and_seed() {
    let first = |seed, id| Rng::for_game(seed, id).next();
    assert_ne!(first(0, 0), first(0, 1));
    assert_ne!(first(0, 0), first(1, 0));
    assert_eq!(first(7, 3), first(7, 3));
    let mut rng = Rng(1);
    let mut seen = [false; 5];
    for _ in 0..200 {
        seen[rng.below(5)] = true;
    }
    assert_eq!(seen, [true; 5]);
}

#[test]
fn a_game_is_the_same_whatever_came_before_on_its_engine() {
    let config = quick();
    let mut engine = Engine::new(4);
    let a = play_game(&mut engine, &config, 5);
    let other = play_game(&mut engine, &config, 6);
    let b = play_game(&mut Engine::new(4), &config, 5);
    assert_eq!(a, b);
    assert_eq!(a.random_plies, config.random_plies);
    assert_ne!(a.moves[..8], other.moves[..8], "openings of two games");
}

#[test]
fn a_game_keeps_each_searched_position_with_its_labels() {
    let config = quick();
    let game = play_game(&mut Engine::new(4), &config, 0);
    // Replaying the moves passes through every stored position, in order, one a ply
    // from the first searched one on.
    let mut board = game.start.clone();
    let mut boards = vec![board.clone()];
    for &mv in &game.moves {
        board = board.play(mv);
        boards.push(board.clone());
    }
    assert!(!game.records.is_empty());
    for (i, record) in game.records.iter().enumerate() {
        let ply = usize::from(game.random_plies) + i;
        assert_eq!(&record.position, boards[ply].position());
        assert_eq!(record.labels.ply, Some(ply as u16));
        assert_eq!(record.labels.game_id, Some(0));
        assert_eq!(record.labels.result, Some(game.result));
        assert!(record.labels.score.is_some());
    }
    // The opening passed the window (100 draws keep one failing only by bad luck).
    let first = game.records[0].labels.score.unwrap();
    assert!(first.abs() <= config.opening_window, "{first}");
    let end = game.records.len() + usize::from(game.random_plies);
    match game.termination {
        // Adjudicated on the last searched position: its move was not played.
        Termination::ScoreAdjudication | Termination::DrawAdjudication => {
            assert_eq!(game.moves.len() + 1, end)
        }
        _ => assert_eq!(game.moves.len(), end),
    }
}

#[test]
fn rules_end_games_with_their_results() {
    let config = quick();
    let mut engine = Engine::new(4);
    let mate = play_from(
        &mut engine,
        &config,
        1,
        Board::from_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1").unwrap(),
    );
    assert_eq!(
        (mate.result, mate.termination, mate.records.len()),
        (GameResult::WhiteWin, Termination::Checkmate, 1)
    );
    let mut pgn = String::new();
    mate.write_pgn(&mut pgn);
    assert!(pgn.contains("[Termination \"checkmate\"]"), "{pgn}");
    assert!(
        pgn.contains("[FEN \"6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\"]"),
        "{pgn}"
    );
    assert!(pgn.contains("1. Ra8# 1-0"), "{pgn}");

    let bare = play_from(
        &mut engine,
        &config,
        2,
        Board::from_fen("8/8/8/4k3/8/8/3n4/4K3 w - - 0 1").unwrap(),
    );
    assert_eq!(
        (bare.result, bare.termination, bare.records.len()),
        (GameResult::Draw, Termination::InsufficientMaterial, 0)
    );

    let short = Config {
        max_plies: 12,
        ..quick()
    };
    let long = play_game(&mut engine, &short, 3);
    assert_eq!(long.termination, Termination::MaxPlies);
    assert_eq!(long.result, GameResult::Draw);
    assert_eq!(long.moves.len(), 12);
    assert_eq!(long.records.len(), 12 - usize::from(short.random_plies));
}

#[test]
fn a_capture_into_the_tables_ends_the_game_with_their_result() {
    let tables = Syzygy::open(&format!("{}/fixtures/syzygy", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .expect("fixture tables");
    let mut engine = Engine::new(4);
    engine.set_syzygy(Some(tables));
    // White in check from the pawn: whichever way it is taken, KQvK is left.
    let game = play_from(
        &mut engine,
        &quick(),
        0,
        Board::from_fen("4k3/8/8/8/8/8/3p4/3QK3 w - - 0 1").unwrap(),
    );
    assert_eq!(game.termination, Termination::Syzygy);
    assert_eq!(game.result, GameResult::WhiteWin);
    assert_eq!(game.records.len(), 1);
    assert_eq!(game.moves.len(), 1);
    // Stalemated at once: the rules come before the tables (KRvK, in them, is a win).
    let stalemate = play_from(
        &mut engine,
        &quick(),
        1,
        Board::from_fen("8/8/8/8/8/2k5/1r6/K7 w - - 0 1").unwrap(),
    );
    assert_eq!(
        (
            stalemate.termination,
            stalemate.result,
            stalemate.records.len()
        ),
        (Termination::Stalemate, GameResult::Draw, 0)
    );
    // Covered but not just after a capture or pawn move: played on until one.
    let later = play_from(
        &mut engine,
        &quick(),
        2,
        Board::from_fen("8/8/8/8/8/2k5/8/K6r w - - 3 40").unwrap(),
    );
    assert_ne!(later.termination, Termination::Syzygy);
    assert!(!later.records.is_empty());
}

#[test]
fn the_pgn_of_a_game_replays_to_its_positions() {
    let game = play_game(&mut Engine::new(4), &quick(), 9);
    let mut pgn = String::new();
    game.write_pgn(&mut pgn);
    assert!(pgn.contains(&format!("[Result \"{}\"]", game.result.as_pgn())));
    assert!(pgn.contains(&format!("[Termination \"{}\"]", game.termination.name())));
    assert!(pgn.contains("[RandomPlies \"8\"]"));
    assert!(pgn.lines().all(|line| line.len() < 80), "{pgn}");
    let movetext: String = pgn
        .lines()
        .filter(|l| !l.starts_with('['))
        .collect::<Vec<_>>()
        .join(" ");
    let mut position = Chess::default();
    let mut played = 0;
    for token in movetext.split_whitespace() {
        if token.ends_with('.') || token == game.result.as_pgn() {
            continue;
        }
        let san: shakmaty::san::SanPlus = token.parse().unwrap();
        let mv = san.san.to_move(&position).unwrap();
        position.play_unchecked(mv);
        played += 1;
    }
    assert_eq!(played, game.moves.len());
    let end =
        Board::from_fen(&Fen::from_position(&position, shakmaty::EnPassantMode::Legal).to_string())
            .unwrap();
    let mut board = game.start.clone();
    for &mv in &game.moves {
        board = board.play(mv);
    }
    assert_eq!(end.position(), board.position());
}
