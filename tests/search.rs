//! The search on known positions: mates found with their exact score and a line that
//! mates, a legal best move in every perft-suite position, SEE values, draws, node limits
//! and tablebase play that keeps the win.

mod common;

use common::{fixture, read_fixture};
use pawnstorm::engine::perft::parse_suite;
use pawnstorm::engine::search::bench::read_suite;
use pawnstorm::engine::search::see::see;
use pawnstorm::engine::search::{Control, Engine, Features, Info, Limits, SearchResult, Syzygy};
use pawnstorm::movegen::{Board, Move, MoveList, count_legal_moves, legal_moves};
use pawnstorm::position::epd::parse_epd;
use pawnstorm::position::score::{DRAW, MATE_BOUND, TB_WIN_BOUND, mate_in};

fn search(engine: &mut Engine, board: &Board, limits: &Limits) -> (SearchResult, Vec<Info>) {
    let control = Control::default();
    let mut infos = Vec::new();
    let result = engine.search(board, &[], &[], limits, &control, &mut |info| {
        infos.push(info.clone())
    });
    (result, infos)
}

fn board(fen: &str) -> Board {
    Board::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn uci_move(board: &Board, text: &str) -> Move {
    Move::from_uci(text, board, false).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The line is `plies` legal moves from `root` and ends in checkmate.
fn assert_line_mates(root: &Board, line: &[Move], plies: usize, what: &str) {
    assert_eq!(line.len(), plies, "{what}: {line:?}");
    let mut position = root.clone();
    for &mv in line {
        let mut legal = MoveList::new();
        legal_moves(&position, &mut legal);
        assert!(legal.contains(&mv), "{what}: {mv:?} illegal in the pv");
        position = position.play(mv);
    }
    assert!(
        position.in_check() && count_legal_moves(&position) == 0,
        "{what}: the pv does not mate"
    );
}

/// Shortest mates (checked with Stockfish 15.1 at depth 18) and the moves they start with.
const MATES: [(&str, usize, &str); 5] = [
    ("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", 1, "d1d8"),
    (
        "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1",
        2,
        "d5f6",
    ),
    (
        "r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1",
        3,
        "f8c5",
    ),
    (
        "1k5r/pP3ppp/3p2b1/1BN1n3/1Q2P3/P1B5/KP3P1P/7q w - - 1 1",
        3,
        "c5a6",
    ),
    (
        "3r4/pR2N3/2pkb3/5p2/8/2B5/qP3PPP/4R1K1 w - - 1 1",
        3,
        "c3e5",
    ),
];

#[test]
fn mates_in_one_two_and_three_are_found_with_their_score() {
    for (fen, moves, first) in MATES {
        let mut engine = Engine::new(16);
        let root = board(fen);
        // Two plies of slack beyond the mate's own length and its check extensions: late-move
        // reductions may hide a quiet sacrifice for an iteration or two.
        let depth = 2 * moves as i32 + 4;
        let (result, infos) = search(&mut engine, &root, &Limits::depth(depth));
        let plies = 2 * moves - 1;
        assert_eq!(result.score, mate_in(plies), "{fen}");
        assert_eq!(result.best, Some(uci_move(&root, first)), "{fen}");
        let last = infos.last().expect("an info line");
        assert_line_mates(&root, &last.pv, plies, fen);
    }
}

/// How many of the 52 short mates of WAC (`fixtures/epd/wac-mates.epd`) the search finds at
/// exactly the depth the mate needs (2N-1 plies for a mate in N), one thread, fresh tables:
/// the count measured when set (bench 690064, and the same at 766307 and 1006966). Pruning
/// that skips the quiet move or the sacrificial check a mate starts with lowers it. Most of the rest
/// are sacrificial quiet checks pruned by move count and SEE at low depth (exempting checks
/// finds 43, but cost -11 Elo [-29, +7] in an SPRT, so it is not done), the others mates
/// behind a quiet threat that late-move reductions hide until an iteration later.
const WAC_MATES_AT_THEIR_DEPTH: usize = 29;

#[test]
fn short_mates_are_found_at_the_depth_they_need() {
    let text = read_fixture("epd/wac-mates.epd");
    let mut found = 0;
    let mut missed = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let epd = parse_epd(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let operand = |opcode: &str| {
            epd.operation(opcode)
                .and_then(|operands| operands.first().cloned())
                .unwrap_or_else(|| panic!("no {opcode} in {line}"))
        };
        let moves: usize = operand("dm").parse().expect("dm is a number");
        let root = Board::new(epd.position.clone());
        let plies = 2 * moves - 1;
        let mut engine = Engine::new(16);
        let (result, infos) = search(&mut engine, &root, &Limits::depth(plies as i32));
        // Never a mate shorter than the shortest there is.
        assert!(result.score <= mate_in(plies), "{line}: {}", result.score);
        if result.score != mate_in(plies) {
            missed.push(operand("id"));
            continue;
        }
        found += 1;
        let last = infos.last().expect("an info line");
        assert_line_mates(&root, &last.pv, plies, line);
    }
    println!("short mates found at their depth: {found}/52; missed {missed:?}");
    assert!(
        found >= WAC_MATES_AT_THEIR_DEPTH,
        "{found} < {WAC_MATES_AT_THEIR_DEPTH}: missed {missed:?}"
    );
}

/// Lazy SMP: helpers fill the shared table, the main thread decides; the answers must be
/// those of one thread.
#[test]
fn many_threads_find_the_mates_with_their_score() {
    for threads in [2, 4, 8] {
        for (fen, moves, first) in MATES {
            let mut engine = Engine::new(16);
            engine.set_threads(threads);
            assert_eq!(engine.threads(), threads);
            let root = board(fen);
            // More slack than one thread needs: with threads the table's contents differ from run
            // to run, and the mate in 3 after c3e5 (one thread: found at depth 5) was seen to
            // stay hidden to depth 10 in about a third of runs with 2-8 threads.
            let depth = 2 * moves as i32 + 12;
            let (result, infos) = search(&mut engine, &root, &Limits::depth(depth));
            let plies = 2 * moves - 1;
            let trace: Vec<(i32, i32)> = infos.iter().map(|i| (i.depth, i.score)).collect();
            assert_eq!(
                result.score,
                mate_in(plies),
                "{fen}, {threads} threads: {trace:?}"
            );
            assert_eq!(
                result.best,
                Some(uci_move(&root, first)),
                "{fen}, {threads} threads"
            );
            let last = infos.last().expect("an info line");
            assert_line_mates(&root, &last.pv, plies, fen);
        }
    }
}

#[test]
fn go_nodes_counts_every_threads_nodes() {
    // Were the helpers' nodes not counted, the main thread would search the whole budget
    // itself and the total reported would be several times the limit.
    let nodes = 300_000;
    let mut engine = Engine::new(16);
    engine.set_threads(4);
    let limits = Limits {
        nodes: Some(nodes),
        ..Limits::default()
    };
    let root = board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
    let (result, _) = search(&mut engine, &root, &limits);
    // Threads publish their counts every 1,024 nodes, so each may be up to that far past
    // the total when it sees the limit.
    assert!(
        result.nodes <= nodes + 4 * 1024,
        "{} nodes for a limit of {nodes}",
        result.nodes
    );
    assert!(result.best.is_some());
}

#[test]
fn go_mate_stops_at_the_mate() {
    let (fen, moves, first) = MATES[1];
    let mut engine = Engine::new(16);
    let root = board(fen);
    let limits = Limits {
        mate: Some(moves as u32),
        ..Limits::default()
    };
    let (result, _) = search(&mut engine, &root, &limits);
    assert_eq!(result.score, mate_in(2 * moves - 1));
    assert_eq!(result.best, Some(uci_move(&root, first)));
}

#[test]
fn every_perft_suite_position_gets_a_legal_move() {
    let mut checked = 0;
    for suite in [
        "perft/perftsuite.epd",
        "perft/cpw-tricky.perft",
        "perft/frc-perftsuite.epd",
    ] {
        let suite = parse_suite(&read_fixture(suite));
        let mut engine = Engine::new(4);
        for case in &suite.cases {
            let mut legal = MoveList::new();
            legal_moves(&case.board, &mut legal);
            let (result, _) = search(&mut engine, &case.board, &Limits::depth(4));
            match result.best {
                Some(mv) => assert!(legal.contains(&mv), "{}: {mv:?}", case.fen),
                None => assert!(legal.is_empty(), "{}: no move returned", case.fen),
            }
            checked += 1;
        }
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn positions_without_moves_score_mate_or_stalemate() {
    let mut engine = Engine::new(1);
    let mated = board("R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1");
    let (result, _) = search(&mut engine, &mated, &Limits::depth(3));
    assert_eq!((result.best, result.score), (None, -mate_in(0)));
    let stalemate = board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    let (result, _) = search(&mut engine, &stalemate, &Limits::depth(3));
    assert_eq!((result.best, result.score), (None, DRAW));
}

#[test]
fn fifty_move_rule_and_bare_minors_are_draws() {
    let mut engine = Engine::new(1);
    // No mate in one with 99 plies played: every line is a draw.
    let fifty = board("8/8/8/4k3/8/8/Q7/4K3 w - - 99 80");
    assert_eq!(search(&mut engine, &fifty, &Limits::depth(6)).0.score, DRAW);
    // A mate on the hundredth ply is a mate.
    let mate = board("7k/8/6K1/8/8/8/8/1Q6 w - - 99 80");
    assert_eq!(
        search(&mut engine, &mate, &Limits::depth(4)).0.score,
        mate_in(1)
    );
    let knight = board("8/8/4k3/8/8/3NK3/8/8 w - - 0 1");
    assert_eq!(
        search(&mut engine, &knight, &Limits::depth(6)).0.score,
        DRAW
    );
}

#[test]
fn a_repetition_in_the_game_history_is_a_draw() {
    // White, a queen down, has shuffled Ng1-f3-g1 while Black shuffled Kh8-g8-h8: playing
    // Nf3 again repeats a position of the game, a draw White takes.
    let start = board("7k/8/8/8/8/8/q7/6NK w - - 0 1");
    let mut position = start.clone();
    let mut history = Vec::new();
    for text in ["g1f3", "h8g8", "f3g1", "g8h8"] {
        history.push(position.key());
        position = position.play(uci_move(&position, text));
    }
    assert_eq!(position.key(), start.key());
    let control = Control::default();
    let mut engine = Engine::new(4);
    let limits = Limits::depth(4);
    let result = engine.search(&position, &history, &[], &limits, &control, &mut |_| {});
    assert_eq!(result.score, DRAW);
    assert_eq!(result.best, Some(uci_move(&position, "g1f3")));
    // Without the history there is no draw to claim.
    let mut engine = Engine::new(4);
    let result = engine.search(&position, &[], &[], &limits, &control, &mut |_| {});
    assert!(result.score < -500, "{}", result.score);
}

#[test]
fn go_nodes_stays_within_the_limit() {
    for nodes in [1, 100, 5_000, 40_000] {
        let mut engine = Engine::new(4);
        let limits = Limits {
            nodes: Some(nodes),
            ..Limits::default()
        };
        let root = board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
        let (result, _) = search(&mut engine, &root, &limits);
        assert!(result.nodes <= nodes, "{} > {nodes}", result.nodes);
        assert!(result.best.is_some());
    }
}

#[test]
fn search_moves_restrict_the_root() {
    let root = Board::startpos();
    let only = uci_move(&root, "a2a3");
    let mut engine = Engine::new(4);
    let control = Control::default();
    let result = engine.search(
        &root,
        &[],
        &[only],
        &Limits::depth(5),
        &control,
        &mut |_| {},
    );
    assert_eq!(result.best, Some(only));
}

#[test]
fn multipv_reports_distinct_lines_best_first() {
    let mut engine = Engine::new(4);
    engine.options.multipv = 3;
    let (_, infos) = search(&mut engine, &Board::startpos(), &Limits::depth(6));
    let last: Vec<&Info> = infos.iter().filter(|i| i.depth == 6).collect();
    assert_eq!(
        last.iter().map(|i| i.multipv).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert!(last.windows(2).all(|w| w[0].score >= w[1].score));
    let firsts: std::collections::HashSet<Move> = last.iter().map(|i| i.pv[0]).collect();
    assert_eq!(firsts.len(), 3);
}

#[test]
fn see_values_on_known_exchanges() {
    let cases = [
        // Rook takes an undefended pawn.
        (
            "1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1",
            "e1e5",
            100,
        ),
        // Knight takes a pawn defended by a knight, behind which stand bishop and queen
        // against rook and queen: White stops after losing the knight.
        (
            "1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1",
            "d3e5",
            -220,
        ),
        // Pawn takes a knight defended by a pawn.
        ("4k3/8/2p5/3n4/4P3/8/8/4K3 w - - 0 1", "e4d5", 220),
        // Queen steps onto a square a pawn attacks.
        ("4k3/8/2p5/8/8/8/8/3QK3 w - - 0 1", "d1d5", -900),
        // En passant wins a pawn.
        ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", 100),
        // An undefended promotion wins a queen for a pawn.
        ("8/4P3/8/8/8/8/k7/4K3 w - - 0 1", "e7e8q", 800),
        // Quiet move to a safe square.
        ("4k3/8/8/8/8/8/8/4K1N1 w - - 0 1", "g1f3", 0),
        // A rook behind a rook (x-ray) recaptures: the pawn is won all the same.
        ("4k3/4r3/8/4p3/8/8/4R3/4R1K1 w - - 0 1", "e2e5", 100),
    ];
    for (fen, text, expected) in cases {
        let position = board(fen);
        let mv = uci_move(&position, text);
        assert_eq!(see(position.position(), mv), expected, "{fen} {text}");
    }
}

fn syzygy() -> Syzygy {
    Syzygy::open(&fixture("syzygy"))
        .expect("readable")
        .expect("tables present")
}

#[test]
fn tablebase_play_keeps_the_win_in_kqvk_and_krvk() {
    let starts = [
        "8/8/8/4k3/8/8/8/KQ6 w - - 0 1",
        "8/8/3k4/8/8/8/8/R3K3 w - - 0 1",
        "k7/8/8/8/8/8/8/6RK b - - 0 1",
        "8/8/8/8/3K4/8/q7/7k b - - 0 1",
    ];
    let tables = syzygy();
    for fen in starts {
        let mut engine = Engine::new(4);
        engine.set_syzygy(Some(syzygy()));
        let mut game = board(fen);
        let winner = if game.position().color(pawnstorm::Color::White).count() > 1 {
            pawnstorm::Color::White
        } else {
            pawnstorm::Color::Black
        };
        let mut history = Vec::new();
        let mut mated = false;
        for _ in 0..120 {
            if count_legal_moves(&game) == 0 {
                mated = game.in_check();
                break;
            }
            let control = Control::default();
            let limits = Limits::depth(if game.side_to_move() == winner { 6 } else { 2 });
            let result = engine.search(&game, &history, &[], &limits, &control, &mut |_| {});
            let mv = result
                .best
                .unwrap_or_else(|| panic!("{fen}: no move at {}", game.to_fen()));
            history.push(game.key());
            game = game.play(mv);
            if game.side_to_move() != winner && count_legal_moves(&game) > 0 {
                let outcome = tables.probe_wdl(&game);
                // From the loser's side, still lost.
                assert_eq!(
                    outcome,
                    Some(pawnstorm::engine::search::tb::Outcome::Loss),
                    "{fen}: the win slipped at {}",
                    game.to_fen()
                );
            }
            assert!(game.position().halfmove_clock() < 100, "{fen}: fifty moves");
        }
        assert!(mated, "{fen}: no mate in 120 plies, at {}", game.to_fen());
    }
}

#[test]
fn many_threads_keep_the_tablebase_win() {
    let tables = syzygy();
    let mut engine = Engine::new(16);
    engine.set_threads(4);
    engine.set_syzygy(Some(syzygy()));
    let mut game = board("8/8/3k4/8/8/8/8/R3K3 w - - 0 1");
    let mut history = Vec::new();
    for _ in 0..120 {
        if count_legal_moves(&game) == 0 {
            break;
        }
        let white = game.side_to_move() == pawnstorm::Color::White;
        let limits = Limits::depth(if white { 6 } else { 2 });
        let result = engine.search(
            &game,
            &history,
            &[],
            &limits,
            &Control::default(),
            &mut |_| {},
        );
        history.push(game.key());
        game = game.play(result.best.expect("a move"));
        if white && count_legal_moves(&game) > 0 {
            assert_eq!(
                tables.probe_wdl(&game),
                Some(pawnstorm::engine::search::tb::Outcome::Loss),
                "the win slipped at {}",
                game.to_fen()
            );
        }
    }
    assert!(
        game.in_check() && count_legal_moves(&game) == 0,
        "no mate: {}",
        game.to_fen()
    );
}

#[test]
fn tablebase_scores_reach_the_root() {
    let mut engine = Engine::new(4);
    engine.set_syzygy(Some(syzygy()));
    let (result, infos) = search(
        &mut engine,
        &board("8/8/8/4k3/8/8/8/KR6 w - - 0 1"),
        &Limits::depth(3),
    );
    // A tablebase win, not a large evaluation: the tables decide the score.
    assert!(result.score >= TB_WIN_BOUND, "{}", result.score);
    let last = infos.last().expect("info");
    assert!(last.score >= TB_WIN_BOUND, "{}", last.score);
    assert!(last.tbhits > 0);
    // The losing side hears it too: a tablebase loss, not a bad evaluation.
    let (result, _) = search(
        &mut engine,
        &board("8/8/8/4k3/8/8/8/KR6 b - - 0 1"),
        &Limits::depth(3),
    );
    assert!(result.score <= -TB_WIN_BOUND, "{}", result.score);
}

#[test]
fn without_the_tables_the_same_search_sees_only_an_evaluation() {
    // The check above must be able to fail: without tables no score reaches the TB range.
    let mut engine = Engine::new(4);
    let (result, infos) = search(
        &mut engine,
        &board("8/8/8/4k3/8/8/8/KR6 w - - 0 1"),
        &Limits::depth(3),
    );
    assert!(
        result.score < TB_WIN_BOUND && result.score > 0,
        "{}",
        result.score
    );
    assert_eq!(infos.last().expect("info").tbhits, 0);
}

/// A mate the table holds is scored by its distance from the node that stores it, so it
/// must come back exact when the same position is met at another ply: stored by a search
/// from the mating position itself (ply 0) and read one ply down from the position before
/// it. The second search is too shallow to see the mate on its own (checked on a fresh
/// engine), so only the table can give it, and an off-by-one in storing or reading shows in
/// the score. (The other way round, found at the root, cannot come from the table: a PV
/// node takes no cutoff from it, as in Stockfish.)
#[test]
fn a_mate_in_the_table_is_exact_at_another_ply() {
    // Black's Bxd1 leads into a mate in 2 for White (Nf6+ gxf6 Bxf7#).
    let before = board("r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP1b1/3P4/PPP2PPP/R2QK2R b KQkq - 0 1");
    let into = uci_move(&before, "g4d1");
    let after = before.play(into);
    let search_only = |engine: &mut Engine, root: &Board, moves: &[Move], depth: i32| {
        let control = Control::default();
        engine.search(
            root,
            &[],
            moves,
            &Limits::depth(depth),
            &control,
            &mut |_| {},
        )
    };

    let fresh = search_only(&mut Engine::new(16), &before, &[into], 1);
    assert!(
        fresh.score > -MATE_BOUND,
        "depth 1 alone sees the mate: {}",
        fresh.score
    );

    let mut engine = Engine::new(16);
    let stored = search_only(&mut engine, &after, &[], 5);
    assert_eq!(stored.score, mate_in(3), "the mate in 2 itself");
    let found = search_only(&mut engine, &before, &[into], 1);
    assert_eq!(
        found.score,
        -mate_in(4),
        "one ply up: mated in 2 after Bxd1"
    );
}

/// Endgames where the null move, unverified, lets the side to move walk into a loss: with
/// few pieces zugzwang is common, and passing tells the search its position is better than
/// any move makes it (fixtures/epd/null-move-verification.epd: the `am` is what the build
/// without verification played at 4-6 of the depths 8-13, 100 cp to a mate worse by
/// Stockfish's judgement). Each is searched at depths 8 to 13 on fresh tables; the floor is
/// the count of the 96 searches that avoided the `am` when it was last set (bench 1006966:
/// 88; the same build without verification avoids 30). Singular extensions lowered it from
/// 96 (without verification: 14) and were kept on their SPRT in games: games decide.
const NULL_MOVE_AVOIDED_FLOOR: usize = 88;

#[test]
fn verified_null_moves_avoid_the_zugzwang_losses() {
    let suite = read_suite(&read_fixture("epd/null-move-verification.epd"));
    assert!(suite.rejected.is_empty(), "{:?}", suite.rejected);
    assert_eq!(suite.positions.len(), 16);
    let mut fell = Vec::new();
    let mut avoided = 0;
    for position in &suite.positions {
        assert!(!position.avoid.is_empty(), "{}: no am", position.id);
        for depth in 8..=13 {
            let (result, _) = search(&mut Engine::new(16), &position.board, &Limits::depth(depth));
            let best = result.best.expect("a move");
            if position.avoid.contains(&best) {
                fell.push(format!("{} at depth {depth}", position.id));
            } else {
                avoided += 1;
            }
        }
    }
    let searches = suite.positions.len() * 6;
    println!("avoided the am move in {avoided} of {searches} searches; played it: {fell:?}");
    assert!(
        avoided >= NULL_MOVE_AVOIDED_FLOOR,
        "avoided {avoided} < {NULL_MOVE_AVOIDED_FLOOR}; played the am move: {fell:?}"
    );
}

/// Lazy SMP's helpers search: each thread reports its own nodes and finished depth, and
/// every helper has searched and finished at least one iteration by the time the main
/// thread is done (a helper that returned at once would report none).
#[test]
fn every_helper_thread_searches() {
    let root = board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
    for threads in [2, 4] {
        let mut engine = Engine::new(16);
        engine.set_threads(threads);
        let (result, _) = search(&mut engine, &root, &Limits::depth(11));
        assert!(
            result.helper_failure.is_none(),
            "{:?}",
            result.helper_failure
        );
        assert_eq!(result.threads.len(), threads, "{:?}", result.threads);
        assert_eq!(result.threads[0].depth, 11);
        for (index, thread) in result.threads.iter().enumerate() {
            assert!(
                thread.nodes > 0 && thread.depth >= 1,
                "{threads} threads: thread {index} did nothing: {:?}",
                result.threads
            );
        }
    }
}

/// What the helpers do helps: the main thread reaches a fixed depth in fewer of its own
/// nodes when helpers fill the shared table beside it (Lazy SMP's whole point), summed over
/// 48 WAC positions. The main thread's search alone is deterministic, so helpers that search
/// nothing (or whose entries it never reads) give exactly the same count; how much fewer
/// depends on how the scheduler shares the cores among the four threads, so the test asks
/// only for fewer. Measured (the test prints it): 0.53-0.65 of the nodes alone on an idle
/// 2-core Zen 3, 0.45-0.71 beside `stress --cpu 8`; on a 2-core Zen 5, where each search
/// is over in about 40 ms, 0.68-0.98 over 24 positions (0.905 in one CI run, which failed
/// the earlier bound of 0.9), and over these 48 0.71-0.90 idle, 0.62-0.68 beside the rest
/// of this file's tests: when the main thread has a core to itself the helpers lag it.
#[test]
fn helpers_shorten_the_main_threads_way_to_a_depth() {
    let suite = read_suite(&read_fixture("epd/wac.epd")).positions;
    let depth = 11;
    let main_nodes = |threads: usize| -> u64 {
        let mut engine = Engine::new(16);
        engine.set_threads(threads);
        suite
            .iter()
            .take(48)
            .map(|position| {
                engine.clear();
                let (result, _) = search(&mut engine, &position.board, &Limits::depth(depth));
                result.threads[0].nodes
            })
            .sum()
    };
    let alone = main_nodes(1);
    let helped = main_nodes(4);
    eprintln!(
        "main thread's nodes to depth {depth}: {helped} with 3 helpers, {alone} alone ({:.3})",
        helped as f64 / alone as f64
    );
    assert!(
        helped < alone,
        "main thread's nodes to depth {depth}: {helped} with 3 helpers, {alone} alone"
    );
}

/// A helper that panics does not vanish: the search says so (`helper_failure`, which the
/// UCI loop prints as an error) and the main thread's move still stands.
#[test]
fn a_helper_panic_reaches_the_caller() {
    let root = board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
    let mut engine = Engine::new(16);
    engine.set_threads(3);
    engine.options.helpers_panic = true;
    let (result, _) = search(&mut engine, &root, &Limits::depth(6));
    let failure = result
        .helper_failure
        .expect("the helpers' panics are reported");
    assert!(failure.contains("panicked"), "{failure}");
    assert!(result.best.is_some());
    assert_eq!(result.threads.len(), 3);
    assert_eq!(result.threads[0].depth, 6);
}

/// The clock, counted in nodes (`nodestime`), so that the budgets are checked exactly on any
/// machine under any load: the main thread's nodes stay within what the clock allows less
/// `Move Overhead` (plus the 1,024 nodes between two looks at the clock), and a search with
/// time to spare does not move at once. Black to move after 1. e4 e5 2. Nf3.
#[test]
fn timed_searches_keep_to_the_clock_counted_in_nodes() {
    let per_ms = 1000;
    let root = {
        let mut b = Board::startpos();
        for text in ["e2e4", "e7e5", "g1f3"] {
            b = b.play(uci_move(&b, text));
        }
        b
    };
    let clock = |w: u64, b: u64, winc: u64, binc: u64, movestogo: Option<u64>| Limits {
        wtime: Some(w),
        btime: Some(b),
        winc: Some(winc),
        binc: Some(binc),
        movestogo,
        ..Limits::default()
    };
    // (limits, the most the clock allows less the 30 ms overhead, the least to spend), ms.
    let cases = [
        (clock(1000, 1000, 0, 0, None), 970, 5),
        (clock(100, 100, 0, 0, None), 70, 0),
        (clock(1000, 1000, 0, 0, Some(1)), 970, 100),
        (clock(10_000, 10_000, 0, 0, Some(40)), 9970, 20),
        (clock(1000, 1000, 1000, 1000, None), 970, 100),
        // The increment comes after the move: 60 ms left is all there is.
        (clock(60_000, 60, 1000, 1000, None), 30, 0),
        (clock(3000, 3000, 50, 50, None), 2970, 10),
        (
            Limits {
                movetime: Some(100),
                ..Limits::default()
            },
            100,
            99,
        ),
    ];
    for (limits, most, least) in cases {
        let mut engine = Engine::new(16);
        engine.options.nodes_per_ms = per_ms;
        let (result, _) = search(&mut engine, &root, &limits);
        let spent = result.threads[0].nodes;
        assert!(
            spent <= most * per_ms + 1024,
            "{limits:?}: {spent} nodes for {most} ms"
        );
        assert!(
            spent >= least * per_ms,
            "{limits:?}: {spent} nodes, moved at once"
        );
        assert!(result.depth >= 1, "{limits:?}");
    }
}

/// An unfinished first iteration is cut off when the clock runs short (the emergency stop),
/// its move a fallback: in a crowded position whose depth 1 alone takes about 1.15M nodes,
/// a 50 ms clock (20 ms once the 30 ms overhead is kept back) gets a legal move within the
/// clock. Time counted in nodes (a thousand a millisecond), so the same search under any
/// load; without the stop the first iteration would run its million nodes.
#[test]
fn an_unfinished_first_iteration_stops_within_a_short_clock() {
    let per_ms = 1000;
    let root = board("k7/1q1q1q1q/q1q1q1q1/1Q1Q1Q1Q/Q1Q1Q1Q1/8/8/7K w - - 0 1");
    let mut engine = Engine::new(16);
    engine.options.nodes_per_ms = per_ms;
    let limits = Limits {
        wtime: Some(50),
        btime: Some(50),
        ..Limits::default()
    };
    let (result, _) = search(&mut engine, &root, &limits);
    let nodes = result.threads[0].nodes;
    assert!(nodes <= 50 * per_ms, "{nodes} nodes on a 50 ms clock");
    let mut legal = MoveList::new();
    legal_moves(&root, &mut legal);
    assert!(
        result.best.is_some_and(|mv| legal.contains(&mv)),
        "{:?}",
        result.best
    );
}

/// What each search feature changes, shown on positions where it decides the
/// result: at a fixed node count (one thread, so the same search on every run and machine),
/// with the feature the suite's move is found in every position, and with that one feature
/// switched off (`Options::features`) in none. Found by searching WAC, ECM and Arasan at
/// 100,000 nodes with each feature on and off (a feature that did nothing would leave every
/// result as it is; these are the positions where it did not): the ignored
/// `deciding_positions_of_each_feature` lists them again after a change to the search.
fn decides(switch_off: impl Fn(&mut Features), cases: &[(&str, &str, bool)]) {
    for &(fen, best, mates) in cases {
        let root = board(fen);
        let limits = Limits {
            nodes: Some(100_000),
            ..Limits::default()
        };
        // The suite's moves (any of them solves it).
        let expected: Vec<Move> = best.split(' ').map(|m| uci_move(&root, m)).collect();
        let mut with = Engine::new(16);
        let (found, _) = search(&mut with, &root, &limits);
        assert!(
            found.best.is_some_and(|mv| expected.contains(&mv)),
            "{fen}: with the feature {:?}",
            found.best
        );
        if mates {
            assert!(
                found.score >= MATE_BOUND,
                "{fen}: {} with the feature",
                found.score
            );
        }
        let mut without = Engine::new(16);
        switch_off(&mut without.options.features);
        let (missed, _) = search(&mut without, &root, &limits);
        assert!(
            missed.best.is_some_and(|mv| !expected.contains(&mv)) && missed.score < MATE_BOUND,
            "{fen}: without the feature {:?} ({} cp) still found",
            missed.best,
            missed.score
        );
    }
}

/// The capture history: captures ordered by how the same capture fared elsewhere in the
/// tree find the winning capture within the budget (WAC.266 Rxh2+ mating, WAC.176 Rxh2+,
/// WAC.086 Ng4+).
#[test]
fn the_capture_history_orders_the_winning_captures_first() {
    decides(
        |f| f.capture_history = false,
        &[
            (
                "r3q2r/2p1k1p1/p5p1/1p2Nb2/1P2nB2/P7/2PNQbPP/R2R3K b - - 0 1",
                "h8h2",
                true,
            ),
            (
                "r1bq3r/ppp2pk1/3p1pp1/8/2BbPQ2/2NP2P1/PPP4P/R4R1K b - - 0 1",
                "h8h2",
                false,
            ),
            (
                "8/p7/1ppk1n2/5ppp/P1PP4/2P1K1P1/5N1P/8 b - - 0 1",
                "f6g4",
                false,
            ),
        ],
    );
}

/// Each feature `decides` covers does something over a whole suite, not only on the three
/// positions picked for it: at a fixed node count (one thread: the same search on any
/// machine), switching it off changes the move found in at least a few of WAC's 300
/// positions. A move-ordering change that left the picked positions meaningless (the
/// feature no longer deciding them) would still show here whether the feature acts at all;
/// the solved counts with and without are printed (`--nocapture`) as its measured effect.
#[test]
fn each_feature_changes_results_over_a_suite() {
    let suite = read_suite(&read_fixture("epd/wac.epd")).positions;
    let limits = Limits {
        nodes: Some(20_000),
        ..Limits::default()
    };
    // The move found in each position, with `switch` applied to the features.
    let suite = &suite;
    let found = |switch: &(dyn Fn(&mut Features) + Sync)| -> Vec<Option<Move>> {
        let half = suite.len() / 2;
        std::thread::scope(|scope| {
            let parts: Vec<_> = suite
                .chunks(half.max(1))
                .map(|part| {
                    let limits = &limits;
                    scope.spawn(move || {
                        let mut engine = Engine::new(16);
                        switch(&mut engine.options.features);
                        part.iter()
                            .map(|position| {
                                engine.clear();
                                search(&mut engine, &position.board, limits).0.best
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|p| p.join().expect("a search thread"))
                .collect()
        })
    };
    let solved = |moves: &[Option<Move>]| {
        suite
            .iter()
            .zip(moves)
            .filter(|(p, m)| m.is_some_and(|m| p.best.contains(&m)))
            .count()
    };
    let all_on = found(&|_| {});
    let switches = feature_switches();
    for (name, switch) in switches {
        let without = found(switch);
        let changed = all_on.iter().zip(&without).filter(|(a, b)| a != b).count();
        println!(
            "{name}: WAC solved {} with, {} without at 20,000 nodes; {changed} of {} moves differ",
            solved(&all_on),
            solved(&without),
            suite.len()
        );
        assert!(
            changed >= 5,
            "{name}: switching it off changed only {changed} of {} moves",
            suite.len()
        );
    }
}

type Switch<'a> = &'a (dyn Fn(&mut Features) + Sync);

/// Each search feature with its switch to turn it off.
fn feature_switches() -> [(&'static str, Switch<'static>); 4] {
    [
        ("singular extensions", &|f| f.singular_extensions = false),
        ("multi-cut", &|f| f.multi_cut = false),
        ("correction history", &|f| f.correction_history = false),
        ("capture history", &|f| f.capture_history = false),
    ]
}

/// Not a check: the search that picks the positions `decides` tests use. Any change to the
/// search's order or pruning moves its trees, and the picked positions may stop being
/// decided by their feature; this lists the positions of WAC, ECM and Arasan where each
/// feature decides the result now (found with it at 100,000 nodes, missed without), to
/// pick from: `cargo test --release --test search -- --ignored --nocapture deciding`.
#[test]
#[ignore = "a search for test positions, not a test (about ten minutes)"]
fn deciding_positions_of_each_feature() {
    let limits = Limits {
        nodes: Some(100_000),
        ..Limits::default()
    };
    let suites = ["epd/wac.epd", "epd/ecm.epd", "epd/arasan21.epd"];
    let positions: Vec<_> = suites
        .iter()
        .flat_map(|name| read_suite(&read_fixture(name)).positions)
        .collect();
    let switches = feature_switches();
    let best = |switch: Switch<'_>, position: &pawnstorm::engine::search::bench::SuitePosition| {
        let mut engine = Engine::new(16);
        switch(&mut engine.options.features);
        let (found, _) = search(&mut engine, &position.board, &limits);
        (
            found.best.is_some_and(|mv| position.best.contains(&mv)),
            found.score,
        )
    };
    let solved: Vec<_> = positions.iter().map(|p| best(&|_| {}, p)).collect();
    for (name, switch) in switches {
        let mut shown = 0;
        for (position, &(with, score)) in positions.iter().zip(&solved) {
            if !with || shown == 8 {
                continue;
            }
            let (without, _) = best(switch, position);
            if !without {
                shown += 1;
                let best: Vec<String> = position.best.iter().map(|m| m.to_string()).collect();
                let mate = if score >= MATE_BOUND { " (mate)" } else { "" };
                println!(
                    "{name}: {} {} \"{}\"{mate}",
                    position.id,
                    position.board.to_fen(),
                    best.join(" ")
                );
            }
        }
    }
}

/// Singular extensions: the extended hash move's line is the one that wins within the
/// budget (WAC.260 Qe6+ mating, WAC.157 Ne7+, WAC.194 Nh6+).
#[test]
fn singular_extensions_find_the_winning_lines() {
    decides(
        |f| f.singular_extensions = false,
        &[
            (
                "2r2b1r/p1Nk2pp/3p1p2/N2Qn3/4P3/q6P/P4PP1/1R3K1R w - - 0 1",
                "d5e6",
                true,
            ),
            (
                "5rk1/p4ppp/2p1b3/3Nq3/4P1n1/1p1B2QP/1PPr2P1/1K2R2R w - - 0 1",
                "d5e7",
                false,
            ),
            (
                "5rk1/ppq2ppp/2p5/4bN2/4P3/6Q1/PPP2PPP/3R2K1 w - - 0 1",
                "f5h6",
                false,
            ),
        ],
    );
}

/// Multi-cut: the cuts where the moves beside the hash move reach beta anyway leave the
/// budget for the winning line (WAC.082 Bh7+, WAC.190 Bh3, ECM.167 Rd1+).
#[test]
fn multi_cut_leaves_the_nodes_for_the_winning_line() {
    decides(
        |f| f.multi_cut = false,
        &[
            (
                "3rr1k1/pp3pp1/4b3/8/2P1B2R/6QP/P3q1P1/5R1K w - - 0 1",
                "e4h7",
                false,
            ),
            (
                "8/p2b2kp/1q1p2p1/1P1Pp3/4P3/3B2P1/P2Q3P/2Nn3K b - - 0 1",
                "d7h3",
                false,
            ),
            (
                "Q7/1pq2kpp/4bp2/3r4/2B5/P3P3/1r3PPP/2R1K2R b K - 0 1",
                "d5d1",
                false,
            ),
        ],
    );
}

/// The correction history: the static evaluation, corrected by what searches of the same
/// pawn structure found, decides the pruning margins differently, and the search finds the
/// move (WAC.220 Qxf1+, WAC.190 Bh3,
/// WAC.264 Qe5 or Rab8).
#[test]
fn the_correction_history_changes_what_is_pruned() {
    decides(
        |f| f.correction_history = false,
        &[
            (
                "3rr1k1/ppp2ppp/8/5Q2/4n3/1B5R/PPP1qPP1/5RK1 b - - 0 1",
                "e2f1",
                false,
            ),
            (
                "8/p2b2kp/1q1p2p1/1P1Pp3/4P3/3B2P1/P2Q3P/2Nn3K b - - 0 1",
                "d7h3",
                false,
            ),
            (
                "r2r2k1/1R2qp2/p5pp/2P5/b1PN1b2/P7/1Q3PPP/1B1R2K1 b - - 0 1",
                "e7e5 a8b8",
                false,
            ),
        ],
    );
}

/// `forecast_nodes` (datagen's searches) skips iterations forecast not to finish: its
/// search is the first iterations of the search that spends every node, so where both end
/// on the same depth they give the same move and score, and it never ends deeper. Over 100
/// WAC positions at datagen's 5,000 nodes, measured: the same depth in 58, the rest one
/// iteration short; 358,501 nodes against 500,000. (The forecast is often wrong, both
/// ways: at a growth of 0.6 to 0.6 it was 96 and 480,419; at 1.0 to 2.0, 79 and 402,198.
/// Per node it gives the deeper labels: docs/NNUE.md, "Datagen".)
#[test]
fn forecast_nodes_skips_iterations_that_would_not_finish() {
    let suite = read_suite(&read_fixture("epd/wac.epd")).positions;
    let limits = |forecast_nodes| Limits {
        nodes: Some(5000),
        forecast_nodes,
        ..Limits::default()
    };
    let (mut same_depth, mut spent_whole, mut spent_forecast) = (0, 0, 0);
    let positions = suite.iter().take(100);
    let count = positions.len();
    for position in positions {
        let mut engine = Engine::new(16);
        let (whole, _) = search(&mut engine, &position.board, &limits(false));
        engine.clear();
        let (forecast, _) = search(&mut engine, &position.board, &limits(true));
        assert!(forecast.depth <= whole.depth, "{}", position.board.to_fen());
        if forecast.depth == whole.depth {
            same_depth += 1;
            assert_eq!(
                (forecast.best, forecast.score),
                (whole.best, whole.score),
                "{}",
                position.board.to_fen()
            );
        }
        spent_whole += whole.nodes;
        spent_forecast += forecast.nodes;
    }
    let figures = format!(
        "the same depth in {same_depth} of {count} positions; {spent_forecast} nodes against \
         {spent_whole}"
    );
    eprintln!("{figures}");
    assert!(same_depth * 2 >= count, "{figures}");
    assert!(spent_forecast * 10 <= spent_whole * 8, "{figures}");
}
