//! `pawnstorm datagen` end to end: every game replayed by shakmaty from its PGN through
//! the DB's positions, each game's end checked against its final position, `--append`,
//! and the same DB whatever the thread count. Small node counts keep it quick.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use pawnstorm::db::Database;
use pawnstorm::movegen::Board;
use pawnstorm::position::board::Position;
use pawnstorm::position::labels::{GameResult, Record};
use pawnstorm::position::score::MATE_BOUND;
use pawnstorm::training::datagen::Termination;
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, EnPassantMode, Position as _};
use shakmaty_syzygy::{Tablebase, Wdl};

use common::{fails, fixture, ok, pawnstorm, psdb_contents, s};

fn records(path: &Path) -> Vec<Record> {
    let db = Database::open(path).unwrap();
    db.records(0..db.len()).map(Result::unwrap).collect()
}

/// A game as `write_pgn` writes it: its tags and its SAN moves.
struct PgnGame {
    tags: BTreeMap<String, String>,
    moves: Vec<String>,
}

impl PgnGame {
    fn tag(&self, name: &str) -> &str {
        self.tags
            .get(name)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("no {name} tag"))
    }

    fn number(&self, name: &str) -> usize {
        self.tag(name).parse().unwrap()
    }
}

fn read_pgn(path: &Path) -> Vec<PgnGame> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut games: Vec<PgnGame> = Vec::new();
    for line in text.lines() {
        if let Some(tag) = line.strip_prefix('[') {
            let (name, value) = tag.split_once(' ').unwrap();
            if name == "Event" {
                games.push(PgnGame {
                    tags: BTreeMap::new(),
                    moves: Vec::new(),
                });
            }
            let value = value.trim_end_matches(']').trim_matches('"');
            let game = games.last_mut().unwrap();
            game.tags.insert(name.to_string(), value.to_string());
        } else {
            let game = games.last_mut().unwrap();
            for token in line.split_whitespace() {
                let is_number = token.trim_end_matches('.').parse::<u32>().is_ok();
                let is_result = ["1-0", "0-1", "1/2-1/2"].contains(&token);
                if !is_number && !is_result {
                    game.moves.push(token.to_string());
                }
            }
        }
    }
    games
}

/// A shakmaty position as pawnstorm stores it (en passant only where it can be taken).
fn stored(position: &Chess) -> Position {
    let fen = Fen::from_position(position, EnPassantMode::Legal).to_string();
    Board::from_fen(&fen).unwrap().position().clone()
}

fn result_of(game: &PgnGame) -> GameResult {
    GameResult::parse(game.tag("Result")).unwrap()
}

/// Replays every game of the PGN with shakmaty, checking the DB's positions and labels on
/// the way and the game's end against its final position. Returns the terminations seen.
fn check_games(db: &Path, pgn: &Path, max_plies: usize) -> Vec<Termination> {
    let records = records(db);
    let games = read_pgn(pgn);
    let mut by_game: BTreeMap<u32, Vec<&Record>> = BTreeMap::new();
    for record in &records {
        by_game
            .entry(record.labels.game_id.expect("a game id"))
            .or_default()
            .push(record);
    }
    assert_eq!(by_game.len(), games.len());
    // Games are stored in id order, each game's positions together.
    let ids: Vec<u32> = records.iter().map(|r| r.labels.game_id.unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] <= w[1]), "{ids:?}");
    let tables = {
        let mut tables = Tablebase::<Chess>::new();
        tables.add_directory(fixture("syzygy")).unwrap();
        tables
    };
    let mut terminations = Vec::new();
    for game in &games {
        let id: u32 = game.tag("GameId").parse().unwrap();
        let stored_game = &by_game[&id];
        let result = result_of(game);
        let termination = Termination::from_name(game.tag("Termination")).unwrap();
        terminations.push(termination);
        let random = game.number("RandomPlies");
        assert_eq!(game.number("PlyCount"), game.moves.len());

        let mut position = Chess::default();
        let mut keys = vec![position.zobrist_hash::<Zobrist64>(EnPassantMode::Legal)];
        let mut next = stored_game.iter().peekable();
        for (ply, san) in game.moves.iter().enumerate() {
            if ply >= random {
                let record = next.next().expect("a searched position for each ply");
                assert_eq!(record.position, stored(&position), "game {id} ply {ply}");
                assert_eq!(record.labels.ply, Some(ply as u16));
                assert_eq!(record.labels.result, Some(result));
                assert!(record.labels.score.is_some());
            }
            let san: SanPlus = san.parse().unwrap();
            let mv = san.san.to_move(&position).unwrap_or_else(|e| {
                panic!("game {id} ply {ply}: {san} is illegal: {e}");
            });
            position.play_unchecked(mv);
            keys.push(position.zobrist_hash::<Zobrist64>(EnPassantMode::Legal));
        }
        // A score adjudication decides on the last searched position, whose move is not
        // played; every other end comes in a position reached and not searched.
        let unplayed: Vec<&&Record> = next.collect();
        let adjudicated = matches!(
            termination,
            Termination::ScoreAdjudication | Termination::DrawAdjudication
        );
        assert_eq!(unplayed.len(), usize::from(adjudicated), "game {id}");
        if let Some(last) = unplayed.first() {
            assert_eq!(last.position, stored(&position), "game {id}");
            assert_eq!(last.labels.ply, Some(game.moves.len() as u16));
        }
        let scores: Vec<i32> = stored_game
            .iter()
            .map(|r| r.labels.score.unwrap())
            .collect();

        let draw = GameResult::Draw;
        match termination {
            Termination::Checkmate => {
                assert!(position.is_checkmate(), "game {id}");
                let winner = match position.turn() {
                    shakmaty::Color::White => GameResult::BlackWin,
                    shakmaty::Color::Black => GameResult::WhiteWin,
                };
                assert_eq!(result, winner);
                // The mating side's search saw the mate, stored from White's view.
                let last = *scores.last().unwrap();
                let white_mates = result == GameResult::WhiteWin;
                assert!(
                    if white_mates {
                        last >= MATE_BOUND
                    } else {
                        last <= -MATE_BOUND
                    },
                    "game {id}: {last}"
                );
            }
            Termination::Stalemate => {
                assert!(position.is_stalemate());
                assert_eq!(result, draw);
            }
            Termination::InsufficientMaterial => {
                assert!(position.is_insufficient_material());
                assert_eq!(result, draw);
            }
            Termination::Repetition => {
                let last = *keys.last().unwrap();
                assert!(keys.iter().filter(|&&k| k == last).count() >= 3);
                assert_eq!(result, draw);
            }
            Termination::FiftyMoves => {
                assert!(position.halfmoves() >= 100);
                assert_eq!(result, draw);
            }
            Termination::Syzygy => {
                assert_eq!(position.halfmoves(), 0);
                let wdl = tables.probe_wdl_after_zeroing(&position).unwrap();
                let mover_wins = match position.turn() {
                    shakmaty::Color::White => GameResult::WhiteWin,
                    shakmaty::Color::Black => GameResult::BlackWin,
                };
                let expected = match wdl {
                    Wdl::Win => mover_wins,
                    Wdl::Loss if mover_wins == GameResult::WhiteWin => GameResult::BlackWin,
                    Wdl::Loss => GameResult::WhiteWin,
                    _ => draw,
                };
                assert_eq!(result, expected, "game {id}");
            }
            Termination::ScoreAdjudication => {
                let run = &scores[scores.len() - 8..];
                let sign = if result == GameResult::WhiteWin {
                    1
                } else {
                    -1
                };
                assert!(run.iter().all(|&s| s * sign >= 1000), "game {id}: {run:?}");
            }
            Termination::DrawAdjudication => {
                let run = &stored_game[stored_game.len() - 20..];
                assert!(run.iter().all(|r| r.labels.score.unwrap().abs() <= 10));
                assert!(run[0].labels.ply.unwrap() >= 80);
                assert_eq!(result, draw);
            }
            Termination::MaxPlies => {
                assert_eq!(game.moves.len(), max_plies);
                assert_eq!(result, draw);
            }
        }
        if !matches!(termination, Termination::Checkmate | Termination::Syzygy) {
            assert!(
                !position.is_checkmate(),
                "game {id} ended {termination:?} in mate"
            );
        }
    }
    terminations
}

#[test]
fn games_are_legal_labelled_and_end_as_their_final_positions_say() {
    let dir = tempfile::tempdir().unwrap();
    let syzygy = fixture("syzygy");
    let mut seen = Vec::new();
    // Adjudicated as by default, then played out to the end (no win adjudication), which
    // brings mates and the rules' draws.
    for (name, extra) in [
        ("adjudicated", &["--max-plies", "300"][..]),
        (
            "played-out",
            &["--win-plies", "1000", "--max-plies", "300"][..],
        ),
    ] {
        let db = dir.path().join(format!("{name}.psdb"));
        let pgn = dir.path().join(format!("{name}.pgn"));
        let mut args = vec![
            "datagen",
            "-o",
            s(&db),
            "--games",
            "8",
            "--nodes",
            "500",
            "--threads",
            "2",
            "--pgn",
            s(&pgn),
            "--syzygy",
            &syzygy,
        ];
        args.extend_from_slice(extra);
        let summary = ok(&args);
        assert!(summary.contains("played 8 games (ids 0..7)"), "{summary}");
        let info = String::from_utf8(pawnstorm(&["info", s(&db)]).stdout).unwrap();
        for column in ["result", "score", "game_id", "ply"] {
            assert!(info.contains(column), "{info}");
        }
        seen.extend(check_games(&db, &pgn, 300));
    }
    assert!(seen.contains(&Termination::ScoreAdjudication), "{seen:?}");
    assert!(seen.contains(&Termination::Checkmate), "{seen:?}");
}

#[test]
fn append_adds_games_after_the_last_id_and_keeps_the_first_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.psdb");
    let pgn = dir.path().join("a.pgn");
    let run = |more: &[&str]| {
        let mut args = vec![
            "datagen",
            "-o",
            s(&db),
            "--games",
            "2",
            "--nodes",
            "300",
            "--threads",
            "2",
            "--max-plies",
            "120",
            "--pgn",
            s(&pgn),
        ];
        args.extend_from_slice(more);
        ok(&args)
    };
    run(&[]);
    let first = records(&db);
    let summary = run(&["--append"]);
    assert!(summary.contains("(ids 2..3)"), "{summary}");
    assert!(summary.contains(&format!("appended to {} already there", first.len())));
    let all = records(&db);
    assert_eq!(&all[..first.len()], &first[..]);
    let mut ids: Vec<u32> = all.iter().map(|r| r.labels.game_id.unwrap()).collect();
    ids.dedup();
    assert_eq!(ids, [0, 1, 2, 3]);
    // New ids, new openings: no appended game starts where an earlier one did.
    let opening = |id: u32| {
        all.iter()
            .find(|r| r.labels.game_id == Some(id))
            .unwrap()
            .position
            .clone()
    };
    let openings: Vec<Position> = (0..4).map(opening).collect();
    for i in 0..4 {
        for j in i + 1..4 {
            assert_ne!(openings[i], openings[j], "games {i} and {j}");
        }
    }
    let games = read_pgn(&pgn);
    let pgn_ids: Vec<&str> = games.iter().map(|g| g.tag("GameId")).collect();
    assert_eq!(pgn_ids, ["0", "1", "2", "3"]);
    check_games(&db, &pgn, 120);
}

#[test]
fn the_db_is_the_same_on_one_thread_or_two() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.psdb");
    let two = dir.path().join("two.psdb");
    for (path, threads) in [(&one, "1"), (&two, "2")] {
        ok(&[
            "datagen",
            "-o",
            s(path),
            "--games",
            "4",
            "--nodes",
            "300",
            "--threads",
            threads,
            "--max-plies",
            "100",
            "--seed",
            "42",
        ]);
    }
    assert_eq!(psdb_contents(&one), psdb_contents(&two));
    let other_seed = dir.path().join("seed.psdb");
    ok(&[
        "datagen",
        "-o",
        s(&other_seed),
        "--games",
        "4",
        "--nodes",
        "300",
        "--max-plies",
        "100",
        "--seed",
        "43",
    ]);
    assert_ne!(records(&one)[0].position, records(&other_seed)[0].position);
}

#[test]
fn bad_arguments_are_errors_that_name_the_culprit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.psdb");
    let missing = dir.path().join("no-tables");
    let error = fails(&[
        "datagen",
        "-o",
        s(&db),
        "--games",
        "1",
        "--syzygy",
        s(&missing),
    ]);
    assert!(error.contains("no-tables"), "{error}");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let error = fails(&[
        "datagen",
        "-o",
        s(&db),
        "--games",
        "1",
        "--syzygy",
        s(&empty),
    ]);
    assert!(error.contains("no Syzygy tables"), "{error}");
    let not_a_db = dir.path().join("text.psdb");
    std::fs::write(&not_a_db, "not a database\n").unwrap();
    let error = fails(&["datagen", "-o", s(&not_a_db), "--games", "1", "--append"]);
    assert!(error.contains("text.psdb"), "{error}");
    let error = fails(&[
        "datagen",
        "-o",
        s(&db),
        "--games",
        "1",
        "--random-plies",
        "10",
        "--max-plies",
        "10",
    ]);
    assert!(error.contains("--random-plies"), "{error}");
    fails(&["datagen", "-o", s(&db), "--games", "0"]);
    // Nothing was written by any of them.
    assert!(!db.exists());
}

/// `datagen --weights` plays with the file's weights: with a file that values a knight as
/// nine pawns the games differ from those of the default weights, and each DB holds, row
/// for row, the games the library plays (`datagen::play_game`, engines set up as the CLI
/// sets them up) with the same weights (the file's, or the defaults without `--weights`).
#[test]
fn weights_file_changes_the_games_as_the_library_plays_them() {
    use pawnstorm::engine::search::Engine;
    use pawnstorm::eval::{Prepared, Weights};
    use pawnstorm::training::datagen::{Config, play_game};

    let dir = tempfile::tempdir().unwrap();
    let weights = dir.path().join("knights.txt");
    let defaults = String::from_utf8(pawnstorm(&["weights"]).stdout).unwrap();
    let mut changed = 0;
    let text: String = defaults
        .lines()
        .map(|line| {
            if line.starts_with("material.knight ") {
                changed += 1;
                "material.knight 900 900\n".to_string()
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    assert_eq!(changed, 1, "{defaults}");
    std::fs::write(&weights, text).unwrap();

    let (games, nodes, max_plies, seed) = (3u32, 300u64, 80u16, 7u64);
    let run = |out: &Path, extra: &[&str]| {
        let (games, nodes, max_plies, seed) = (
            games.to_string(),
            nodes.to_string(),
            max_plies.to_string(),
            seed.to_string(),
        );
        let mut args = vec![
            "datagen",
            "-o",
            s(out),
            "--games",
            &games,
            "--nodes",
            &nodes,
            "--max-plies",
            &max_plies,
            "--seed",
            &seed,
            "--threads",
            "2",
        ];
        args.extend_from_slice(extra);
        ok(&args);
        records(out)
    };
    let with = run(&dir.path().join("with.psdb"), &["--weights", s(&weights)]);
    let without = run(&dir.path().join("without.psdb"), &[]);
    assert_ne!(with, without, "the weights file changed no game");

    let config = Config {
        nodes,
        max_plies,
        seed,
        ..Config::default()
    };
    let library = |weights: Weights| -> Vec<Record> {
        let mut engine = Engine::new(1);
        engine.set_weights(Prepared::new(weights));
        assert!(engine.resize_hash(16));
        (0..games)
            .flat_map(|id| play_game(&mut engine, &config, id).records)
            .collect()
    };
    let file_weights = Weights::read(&weights).unwrap();
    assert_ne!(file_weights, Weights::default());
    assert_eq!(
        with,
        library(file_weights),
        "--weights: the library's games"
    );
    assert_eq!(
        without,
        library(Weights::default()),
        "defaults: the library's games"
    );
}
