//! The network in the bulk passes (`eval --eval nnue`, `nnue::bulk`, the columns behind the
//! Python package): every row of a DB of games in order and of the same rows shuffled
//! scores exactly what the plain integer reference gives it (the exact endgame rules on
//! top), on every SIMD level this build has, whatever the threads and the block edges.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pawnstorm::db::{Block, Columns, Database, DbWriter};
use pawnstorm::io::table::fill_records;
use pawnstorm::movegen::{Board, MoveList, legal_moves};
use pawnstorm::nnue::simd::Level;
use pawnstorm::nnue::{self, Network, NnueEvaluator, bulk};
use pawnstorm::position::labels::{Labels, Record};
use pawnstorm::scoring::ScoreTable;
use pawnstorm::scoring::columns::{BoardColumns, Scorer, board_scores, fen_scores};
use pawnstorm::{Color, Position};

use common::{Rng, fails, npy_scores, ok, s};

/// Random games from the start and from endgames where the exact rules apply (KPK, KBNK,
/// KXK, bare kings after captures) or soon will: positions in game order.
fn game_positions(games: usize, seed: u64) -> Vec<Position> {
    let starts = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "8/8/8/4k3/8/2P5/8/3K4 b - - 0 1",
        "8/8/3k4/8/8/8/8/2BNK3 w - - 0 1",
        "8/3k4/8/8/8/8/3R4/3K4 b - - 0 1",
        "8/P6k/8/8/8/8/6Kp/8 w - - 0 1",
        "4k3/8/8/8/8/8/8/2N1K2n w - - 0 1",
    ];
    let mut rng = Rng(seed | 1);
    let mut positions = Vec::new();
    let mut moves = MoveList::new();
    for g in 0..games {
        let mut board = Board::from_fen(starts[g % starts.len()]).unwrap();
        positions.push(board.position().clone());
        for _ in 0..120 {
            moves.clear();
            legal_moves(&board, &mut moves);
            if moves.is_empty() {
                break;
            }
            board = board.play(moves[rng.below(moves.len())]);
            positions.push(board.position().clone());
        }
    }
    positions
}

fn shuffled(positions: &[Position], seed: u64) -> Vec<Position> {
    let mut out = positions.to_vec();
    let mut rng = Rng(seed | 1);
    for i in (1..out.len()).rev() {
        out.swap(i, rng.below(i + 1));
    }
    out
}

fn write_db(path: &Path, positions: &[Position], block_size: u32) -> Database {
    let mut writer = DbWriter::create(path, block_size, Columns::NONE, false).unwrap();
    for position in positions {
        writer
            .push(&Record {
                position: position.clone(),
                labels: Labels::default(),
            })
            .unwrap();
    }
    writer.finish().unwrap();
    Database::open(path).unwrap()
}

/// `positions` with their game (a new one at each start position, as `game_positions`
/// plays them: `starts` the index of each game's first row) and ply, in `order`.
fn write_labelled_db(
    path: &Path,
    positions: &[Position],
    labels: &[(u32, u16)],
    order: &[usize],
    block_size: u32,
) -> Database {
    let columns = Columns::GAME_ID.union(Columns::PLY);
    let mut writer = DbWriter::create(path, block_size, columns, false).unwrap();
    for &i in order {
        let (game, ply) = labels[i];
        writer
            .push(&Record {
                position: positions[i].clone(),
                labels: Labels {
                    game_id: Some(game),
                    ply: Some(ply),
                    ..Labels::default()
                },
            })
            .unwrap();
    }
    writer.finish().unwrap();
    Database::open(path).unwrap()
}

fn black(position: &Position) -> bool {
    position.side_to_move() == Color::Black
}

/// White's scores `white` of `positions` turned to the side to move's.
fn side_to_move_scores(positions: &[Position], white: &[i32]) -> Vec<i32> {
    positions
        .iter()
        .zip(white)
        .map(|(p, &w)| if black(p) { -w } else { w })
        .collect()
}

/// The reference: the exact rule if one applies, else the plain integer network, White's
/// point of view.
fn expected(net: &Network, position: &Position) -> i32 {
    let boards = nnue::boards_of(position);
    let stm = nnue::exact_rule(&boards, black(position))
        .unwrap_or_else(|| net.evaluate_reference(&boards, black(position)));
    if black(position) { -stm } else { stm }
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

#[test]
fn every_row_of_games_and_of_shuffled_positions_scores_as_the_reference_on_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let games = game_positions(40, 11);
    // Both kinds of rows occur: those an exact rule scores and those the network does.
    let ruled = games
        .iter()
        .filter(|p| nnue::exact_rule(&nnue::boards_of(p), black(p)).is_some())
        .count();
    assert!(ruled > 100 && ruled < games.len() - 1000, "{ruled} ruled");
    let mixed = shuffled(&games, 3);
    // 128 wide: the kernels' blocks of four chunks exactly; 160: one more chunk alone.
    for (hidden, block_size) in [(128, 64), (128, 4096), (160, 256)] {
        let net = Arc::new(Network::random(hidden, 5).unwrap());
        let reference: Vec<i32> = games.iter().map(|p| expected(&net, p)).collect();
        let mixed_reference: Vec<i32> = mixed.iter().map(|p| expected(&net, p)).collect();
        let in_order = write_db(&dir.path().join("games.psdb"), &games, block_size);
        let random = write_db(&dir.path().join("shuffled.psdb"), &mixed, block_size);
        for level in Level::available() {
            let prototype = NnueEvaluator::with_level(net.clone(), level);
            for threads in [1, 2, 3] {
                let pool = pool(threads);
                let scores = pool
                    .install(|| bulk::db_scores(&in_order, &prototype))
                    .unwrap();
                assert_eq!(scores, reference, "{} {threads} threads", level.name());
                let scores = pool
                    .install(|| bulk::db_scores(&random, &prototype))
                    .unwrap();
                assert_eq!(scores, mixed_reference, "{} shuffled", level.name());
            }
        }
    }
}

/// A DB in no order is taken in an order of the pass's own (`bulk::sorted_scores`: by
/// game and ply where every row has them, else by pawns), window by window, and every score
/// lands in its row's place; a DB of games keeps its own order.
#[test]
fn shuffled_rows_are_scored_in_a_sorted_order_each_in_its_own_place() {
    let dir = tempfile::tempdir().unwrap();
    let games = game_positions(30, 17);
    // Each game's rows, as `game_positions` plays them: 121 a game unless it ended early,
    // so the labels are found by replaying the same starts.
    let mut labels = Vec::with_capacity(games.len());
    let (mut game, mut ply) = (0u32, 0u16);
    for (i, position) in games.iter().enumerate() {
        if i > 0 && position.fullmove_number() < games[i - 1].fullmove_number() {
            game += 1;
            ply = 0;
        }
        labels.push((game, ply));
        ply += 1;
    }
    assert!(game > 10, "{game} games found");
    let mut order: Vec<usize> = (0..games.len()).collect();
    let mut rng = Rng(23);
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let net = Arc::new(Network::random(48, 3).unwrap());
    let reference: Vec<i32> = order.iter().map(|&i| expected(&net, &games[i])).collect();
    let mixed: Vec<Position> = order.iter().map(|&i| games[i].clone()).collect();
    for block_size in [64, 256] {
        let labelled = write_labelled_db(
            &dir.path().join("labelled.psdb"),
            &games,
            &labels,
            &order,
            block_size,
        );
        let unlabelled = write_db(&dir.path().join("unlabelled.psdb"), &mixed, block_size);
        let in_order = write_db(&dir.path().join("games.psdb"), &games, block_size);
        for level in Level::available() {
            let prototype = NnueEvaluator::with_level(net.clone(), level);
            for threads in [1, 2] {
                let pool = pool(threads);
                // Windows of several blocks, the last one short; and one window for all.
                for window in [3 * block_size as usize, 1 << 22] {
                    for (db, name) in [(&labelled, "labelled"), (&unlabelled, "unlabelled")] {
                        let done = AtomicUsize::new(0);
                        let scores = pool
                            .install(|| {
                                bulk::sorted_scores(db, &prototype, window, |rows| {
                                    done.fetch_add(rows, Ordering::Relaxed);
                                })
                            })
                            .unwrap()
                            .expect("a shuffled DB is sorted");
                        assert_eq!(done.into_inner(), games.len(), "progress: every row once");
                        assert_eq!(
                            scores,
                            reference,
                            "{name}, {} {threads} threads, windows of {window}",
                            level.name()
                        );
                    }
                }
                let kept = pool
                    .install(|| bulk::sorted_scores(&in_order, &prototype, 1 << 22, |_| {}))
                    .unwrap();
                assert!(kept.is_none(), "games keep their order");
            }
        }
    }
}

#[test]
fn rows_in_game_order_update_and_shuffled_rows_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let games = game_positions(10, 2);
    let net = Arc::new(Network::random(64, 9).unwrap());
    let stats = |positions: &[Position], name: &str| {
        let db = write_db(&dir.path().join(name), positions, 4096);
        let mut evaluator = NnueEvaluator::new(net.clone());
        for index in 0..db.block_count() {
            let block = db.block(index).unwrap();
            let mut out = vec![0; block.len];
            bulk::rows_scores(&mut evaluator, &block, 0..block.len, &mut out);
        }
        evaluator.stats()
    };
    let in_order = stats(&games, "games.psdb");
    // A new game refreshes, every move (ruled endgames aside) updates.
    assert!(
        in_order.updates > 10 * in_order.refreshes,
        "in order: {in_order:?}"
    );
    let random = stats(&shuffled(&games, 4), "shuffled.psdb");
    assert!(
        random.refreshes > 5 * random.updates,
        "shuffled: {random:?}"
    );
}

#[test]
fn columns_and_fens_score_with_the_network_as_the_db_pass() {
    let dir = tempfile::tempdir().unwrap();
    let games = game_positions(12, 8);
    let db = write_db(&dir.path().join("games.psdb"), &games, 64);
    let net = Arc::new(Network::random(32, 1).unwrap());
    let prototype = NnueEvaluator::new(net.clone());
    let expected_white = bulk::db_scores(&db, &prototype).unwrap();
    let blocks: Vec<_> = (0..db.block_count())
        .map(|i| db.block(i).unwrap())
        .collect();
    // Runs of awkward lengths across the blocks.
    let mut runs = Vec::new();
    for (b, block) in blocks.iter().enumerate() {
        let mut start = 0;
        while start < block.len {
            let end = (start + [1usize, 7, 30, 64][b % 4]).min(block.len);
            runs.push(BoardColumns {
                pieces: block.pieces.map(|c| &c[start..end]),
                colors: block.colors.map(|c| &c[start..end]),
                side_to_move: &block.side_to_move[start..end],
                castling: None,
                en_passant: None,
            });
            start = end;
        }
    }
    let stm = side_to_move_scores(&games, &expected_white);
    for threads in [1, 2] {
        pool(threads).install(|| {
            let mut out = vec![0; games.len()];
            board_scores(Scorer::Network(&prototype), &runs, true, &mut out).unwrap();
            assert_eq!(out, stm);
            let fens: Vec<String> = games.iter().map(|p| p.to_fen()).collect();
            let mut out = vec![0; fens.len()];
            let bad = fen_scores(
                Scorer::Network(&prototype),
                &|i| Some(fens[i].as_bytes()),
                false,
                &mut out,
            );
            assert!(bad.is_empty());
            assert_eq!(out, expected_white);
        });
    }
}

#[test]
fn a_score_table_of_shuffled_rows_filled_twice_gives_the_same_scores_and_progress() {
    let dir = tempfile::tempdir().unwrap();
    let games = game_positions(20, 37);
    let mixed = shuffled(&games, 41);
    let db = write_db(&dir.path().join("mixed.psdb"), &mixed, 64);
    let net = Arc::new(Network::random(48, 3).unwrap());
    let white: Vec<i32> = mixed.iter().map(|p| expected(&net, p)).collect();
    let prototype = NnueEvaluator::new(net);
    let prepared = pawnstorm::eval::Prepared::default();
    let source = ScoreTable {
        db: &db,
        path: pawnstorm::eval::features::Path::native(),
        prepared: &prepared,
        breakdown: false,
        with_index: false,
        stm_pov: false,
        wdl: false,
        network: Some(&prototype),
        sorted: Default::default(),
    };
    let columns = source.columns();
    for fill in ["first", "second"] {
        let mut out = vec![0u8; mixed.len() * 4];
        let counted = AtomicUsize::new(0);
        pool(2)
            .install(|| {
                fill_records(
                    &source,
                    &columns,
                    mixed.len() as u64,
                    64,
                    &mut out,
                    |rows| {
                        counted.fetch_add(rows, Ordering::Relaxed);
                    },
                )
            })
            .unwrap();
        let scores: Vec<i32> = out
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(scores, white, "{fill} fill");
        assert_eq!(
            counted.into_inner(),
            mixed.len(),
            "{fill} fill: every row once"
        );
    }
}

/// Rows `rows` of `block` as a block of their own (the boards and side to move only).
fn rows_of<'a>(block: &Block<'a>, rows: std::ops::Range<usize>) -> Block<'a> {
    Block::of_boards(
        rows.len(),
        block.pieces.map(|c| &c[rows.clone()]),
        block.colors.map(|c| &c[rows.clone()]),
        &block.side_to_move[rows],
    )
}

fn columns_of<'a>(block: &Block<'a>) -> BoardColumns<'a> {
    BoardColumns {
        pieces: block.pieces,
        colors: block.colors,
        side_to_move: block.side_to_move,
        castling: None,
        en_passant: None,
    }
}

#[test]
fn shuffled_columns_are_scored_in_a_sorted_order_and_bad_rows_still_stop_them() {
    let dir = tempfile::tempdir().unwrap();
    let games = game_positions(30, 29);
    let mixed = shuffled(&games, 31);
    let net = Arc::new(Network::random(48, 3).unwrap());
    let white: Vec<i32> = mixed.iter().map(|p| expected(&net, p)).collect();
    let stm = side_to_move_scores(&mixed, &white);
    // One DB block holds every row; the pieces cut it at lengths that are no multiple of 8.
    let db = write_db(&dir.path().join("mixed.psdb"), &mixed, 4096);
    let in_order = write_db(&dir.path().join("games.psdb"), &games, 4096);
    let (block, games_block) = (db.block(0).unwrap(), in_order.block(0).unwrap());
    assert_eq!(block.len, mixed.len());
    let mut placed = Vec::new();
    let mut in_games = Vec::new();
    let mut start = 0;
    for length in [1usize, 7, 300, 1100, 45].into_iter().cycle() {
        if start >= block.len {
            break;
        }
        let end = (start + length).min(block.len);
        placed.push((rows_of(&block, start..end), start));
        in_games.push((rows_of(&games_block, start..end), start));
        start = end;
    }
    // The order given decides: shuffled rows are taken in an order of their own, the same
    // rows in game order as given.
    assert!(bulk::blocks_order_refreshes(&placed));
    assert!(!bulk::blocks_order_refreshes(&in_games));
    let runs: Vec<BoardColumns<'_>> = placed.iter().map(|(b, _)| columns_of(b)).collect();
    for level in Level::available() {
        let prototype = NnueEvaluator::with_level(net.clone(), level);
        for threads in [1, 2] {
            pool(threads).install(|| {
                let name = format!("{} {threads} threads", level.name());
                // Windows of a few pieces, the last one short; and one for all.
                for window in [500, 1 << 22] {
                    let mut out = vec![0; mixed.len()];
                    bulk::blocks_sorted_scores(&placed, &prototype, window, &mut out);
                    assert_eq!(out, white, "{name}, windows of {window}");
                }
                for (stm_pov, expected) in [(true, &stm), (false, &white)] {
                    let mut out = vec![0; mixed.len()];
                    board_scores(Scorer::Network(&prototype), &runs, stm_pov, &mut out).unwrap();
                    assert_eq!(&out, expected, "{name}, stm_pov {stm_pov}");
                }
            });
        }
    }
    // A row that is no position stops the sorted pass as it stops the other, naming the
    // first such row.
    let mut side_to_move = block.side_to_move[..block.len].to_vec();
    for bad in [2000, 1500] {
        side_to_move[bad] = 2;
    }
    let mut bad_runs = vec![BoardColumns {
        side_to_move: &side_to_move,
        ..columns_of(&rows_of(&block, 0..block.len))
    }];
    bad_runs.push(runs[0]);
    let prototype = NnueEvaluator::new(net.clone());
    let mut out = vec![0; block.len + runs[0].len()];
    let error = board_scores(Scorer::Network(&prototype), &bad_runs, false, &mut out).unwrap_err();
    assert_eq!(error.index, 1500, "{error:?}");
    assert!(error.reason.contains("side to move"), "{error:?}");
}

#[test]
fn the_cli_writes_the_networks_scores_for_dbs_and_text_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let games = game_positions(16, 21);
    let db_path = d.join("games.psdb");
    write_db(&db_path, &games, 256);
    let net = Network::random(48, 4).unwrap();
    let net_path = d.join("random.nnue");
    net.save(&net_path).unwrap();
    // The raw layout (bullet's) too, padded to 64 bytes as bullet writes it.
    let raw_path = d.join("random.bin");
    let mut raw = net.raw_bytes();
    raw.resize(raw.len().div_ceil(64) * 64, 0);
    std::fs::write(&raw_path, &raw).unwrap();
    let white: Vec<i32> = games.iter().map(|p| expected(&net, p)).collect();
    let stm = side_to_move_scores(&games, &white);

    let out = d.join("scores.npy");
    for (file, threads, scalar) in [(&net_path, "1", false), (&raw_path, "2", true)] {
        let mut args = vec!["eval", s(&db_path), "--eval", "nnue", "--net", s(file)];
        args.extend(["--threads", threads, "-o", s(&out)]);
        if scalar {
            args.push("--scalar");
        }
        let summary = ok(&args);
        assert!(summary.contains("network 48 wide"), "{summary}");
        assert_eq!(npy_scores(&out), white);
    }
    // --net alone means the network; --pov stm turns Black's rows round.
    ok(&[
        "eval",
        s(&db_path),
        "--net",
        s(&net_path),
        "--pov",
        "stm",
        "-o",
        s(&out),
    ]);
    assert_eq!(npy_scores(&out), stm);

    // CSV with WDL columns from the network's scores.
    let csv = d.join("scores.csv");
    ok(&[
        "eval",
        s(&db_path),
        "--net",
        s(&net_path),
        "--wdl",
        "-o",
        s(&csv),
    ]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("index,score,win,draw,loss"));
    for (i, line) in lines.enumerate() {
        let fields: Vec<i32> = line.split(',').map(|f| f.parse().unwrap()).collect();
        assert_eq!(fields[0], i as i32);
        assert_eq!(fields[1], white[i]);
        assert_eq!(fields[2] + fields[3] + fields[4], 1000);
    }

    // A text input is imported first, then scored the same way.
    let epd = d.join("positions.epd");
    let fens: Vec<String> = games.iter().take(500).map(|p| p.to_fen()).collect();
    std::fs::write(&epd, fens.join("\n") + "\n").unwrap();
    ok(&["eval", s(&epd), "--net", s(&net_path), "-o", s(&out)]);
    assert_eq!(npy_scores(&out), white[..500]);

    // The histogram names the network and counts every row.
    let output = common::pawnstorm(&["eval", s(&db_path), "--net", s(&net_path)]);
    assert!(output.status.success());
    let histogram = String::from_utf8_lossy(&output.stdout);
    assert!(histogram.starts_with("scores (centipawns, White's view)"));
    let counted: u64 = histogram
        .lines()
        .skip(1)
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let percent = words.iter().position(|w| w.ends_with('%')).unwrap();
            words[percent - 1].parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(counted, games.len() as u64);
    let summary = String::from_utf8_lossy(&output.stderr);
    assert!(summary.contains("network 48 wide"), "{summary}");
}

#[test]
fn the_cli_refuses_bad_networks_and_options_that_belong_to_the_terms() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db_path = d.join("games.psdb");
    write_db(&db_path, &game_positions(2, 1), 64);
    let net = Network::random(32, 2).unwrap();
    let net_path = d.join("net.nnue");
    net.save(&net_path).unwrap();
    let out = d.join("x.npy");
    let db = s(&db_path);

    let truncated = d.join("truncated.bin");
    let raw = net.raw_bytes();
    std::fs::write(&truncated, &raw[..raw.len() - 10]).unwrap();
    let error = fails(&["eval", db, "--net", s(&truncated), "-o", s(&out)]);
    assert!(error.contains("truncated.bin"), "{error}");
    assert!(error.contains("is no (768 → N) × 2 → 1 network"), "{error}");
    assert!(!out.exists());

    let mut damaged = std::fs::read(&net_path).unwrap();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    let damaged_path = d.join("damaged.nnue");
    std::fs::write(&damaged_path, &damaged).unwrap();
    let error = fails(&["eval", db, "--net", s(&damaged_path)]);
    assert!(error.contains("checksum mismatch"), "{error}");

    let error = fails(&["eval", db, "--net", s(&d.join("missing.nnue"))]);
    assert!(error.contains("missing.nnue"), "{error}");

    let error = fails(&["eval", db, "--net", s(&net_path), "--terms", "-o", s(&out)]);
    assert!(error.contains("a network has none"), "{error}");
    let error = fails(&["eval", db, "--net", s(&net_path), "--weights", s(&net_path)]);
    assert!(error.contains("--weights are the hand-crafted"), "{error}");

    // Without --net, the compiled-in network (one always is): nets/default.nnue's scores.
    nnue::default_network().expect("the compiled-in network loads");
    ok(&["eval", db, "--eval", "nnue", "-o", s(&out)]);
    let compiled_in = std::fs::read(&out).unwrap();
    let default_file = format!("{}/nets/default.nnue", env!("CARGO_MANIFEST_DIR"));
    ok(&["eval", db, "--net", &default_file, "-o", s(&out)]);
    assert_eq!(compiled_in, std::fs::read(&out).unwrap());
}

#[test]
fn eval_fen_shows_the_compiled_in_networks_score_beside_the_terms() {
    let fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 5 4";
    let output = common::pawnstorm(&["eval", "--fen", fen]);
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("Network evaluation"))
        .unwrap_or_else(|| panic!("no network line: {text}"));
    let net = nnue::default_network().expect("compiled in");
    let board = Board::from_fen(fen).unwrap();
    let stm = net.evaluate_reference(&nnue::boards_of(board.position()), true);
    assert!(line.contains(&format!("[{} cp]", -stm)), "{line}");
    assert!(text.contains("Final evaluation"), "{text}");
}
