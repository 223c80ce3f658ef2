//! The commands that search, with a network: `datagen --net` plays the games the library
//! plays with that network, `label --net` gives the scores of the library's search with it,
//! and `--eval nnue` without a network, or beside `--engine`, is a clear error.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::{fails, fixture, ok, s};
use pawnstorm::db::Database;
use pawnstorm::engine::search::{Control, Engine, Limits};
use pawnstorm::movegen::Board;
use pawnstorm::nnue::Network;
use pawnstorm::position::labels::Record;

fn records(path: &Path) -> Vec<Record> {
    let db = Database::open(path).unwrap();
    db.records(0..db.len()).map(Result::unwrap).collect()
}

fn random_net(dir: &Path) -> (std::path::PathBuf, Arc<Network>) {
    let path = dir.join("random.nnue");
    let net = Network::random(32, 23).unwrap();
    net.save(&path).unwrap();
    (path, Arc::new(net))
}

#[test]
fn datagen_with_a_network_plays_the_games_the_library_plays_with_it() {
    use pawnstorm::training::datagen::{Config, play_game};
    let dir = tempfile::tempdir().unwrap();
    let (net_path, net) = random_net(dir.path());
    let (games, nodes, max_plies, seed) = (2u32, 300u64, 60u16, 11u64);
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
            "1",
        ];
        args.extend_from_slice(extra);
        ok(&args);
        records(out)
    };
    let with = run(&dir.path().join("with.psdb"), &["--net", s(&net_path)]);
    let without = run(&dir.path().join("without.psdb"), &[]);
    assert_ne!(with, without, "the network changed no game");

    let config = Config {
        nodes,
        max_plies,
        seed,
        ..Config::default()
    };
    let mut engine = Engine::new(1);
    engine.set_network(Some(net));
    assert!(engine.resize_hash(16));
    let library: Vec<Record> = (0..games)
        .flat_map(|id| play_game(&mut engine, &config, id).records)
        .collect();
    assert_eq!(with, library);
}

#[test]
fn label_with_a_network_scores_as_the_librarys_search_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let (net_path, net) = random_net(dir.path());
    let games = dir.path().join("games.psdb");
    ok(&["import", &fixture("pgn/famous-games.pgn"), "-o", s(&games)]);
    let labelled = dir.path().join("labelled.psdb");
    ok(&[
        "label",
        s(&games),
        "-o",
        s(&labelled),
        "--depth",
        "2",
        "--threads",
        "1",
        "--net",
        s(&net_path),
    ]);
    let labelled = records(&labelled);
    // The labeller's engine keeps what it learns from one position to the next; the first
    // position is searched as a fresh engine searches it.
    let first = &labelled[0].position;
    let mut engine = Engine::new(16);
    engine.set_network(Some(net));
    let score = engine
        .search(
            &Board::new(first.clone()),
            &[],
            &[],
            &Limits::depth(2),
            &Control::default(),
            &mut |_| {},
        )
        .score;
    let white = match first.side_to_move() {
        pawnstorm::Color::White => score,
        pawnstorm::Color::Black => -score,
    };
    assert_eq!(labelled[0].labels.score, Some(white));

    let by_terms = dir.path().join("terms.psdb");
    ok(&[
        "label",
        s(&games),
        "-o",
        s(&by_terms),
        "--depth",
        "2",
        "--threads",
        "1",
    ]);
    let by_terms = records(&by_terms);
    let differing = labelled
        .iter()
        .zip(&by_terms)
        .filter(|(a, b)| a.labels.score != b.labels.score)
        .count();
    assert!(
        differing > labelled.len() / 2,
        "only {differing} of {} scores changed with the network",
        labelled.len()
    );
}

#[test]
fn a_network_where_none_can_be_had_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games.psdb");
    ok(&["import", &fixture("pgn/famous-games.pgn"), "-o", s(&games)]);
    let out = dir.path().join("out.psdb");
    let message = fails(&[
        "label",
        s(&games),
        "-o",
        s(&out),
        "--engine",
        "stockfish",
        "--net",
        "x.nnue",
    ]);
    assert!(
        message.contains("--engine evaluates as it does"),
        "{message}"
    );
    let message = fails(&[
        "datagen",
        "-o",
        s(&out),
        "--games",
        "1",
        "--net",
        s(&dir.path().join("missing.nnue")),
    ]);
    assert!(message.contains("missing.nnue"), "{message}");
    assert!(!out.exists());
}
