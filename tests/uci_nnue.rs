//! The network in the engine through UCI: `EvalFile` and `Use NNUE` change what the
//! search evaluates, `eval` shows both evaluations, and a bad file leaves the engine
//! playing with what it had.

use crate::common;

use std::sync::Arc;

use common::uci_session::Engine;
use pawnstorm::movegen::Board;
use pawnstorm::nnue::{Network, NnueEvaluator, boards_of};

const FEN: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 5 4";

/// The network's score of `FEN`, White's view, from the library's reference.
fn reference_white(net: &Network) -> i32 {
    let board = Board::from_fen(FEN).expect("fen");
    let stm = net.evaluate_reference(&boards_of(board.position()), true);
    -stm
}

fn nnue_line(lines: &[String]) -> String {
    lines
        .iter()
        .find(|l| l.starts_with("NNUE evaluation"))
        .unwrap_or_else(|| panic!("no NNUE line: {lines:?}"))
        .clone()
}

#[test]
fn eval_file_and_use_nnue_switch_the_search_to_the_network() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("random.nnue");
    let net = Network::random(64, 17).expect("net");
    net.save(&path).expect("save");

    let mut engine = Engine::start(&[]);
    engine.send("uci");
    let lines = engine.until("uciok");
    for option in [
        "option name EvalFile type string default <empty>",
        "option name Use NNUE type check default true",
    ] {
        assert!(lines.iter().any(|l| l.starts_with(option)), "{option}");
    }
    engine.send(&format!("setoption name EvalFile value {}", path.display()));
    let loaded = engine.until("info string EvalFile");
    assert!(
        loaded.last().unwrap().contains("network of 64 hidden"),
        "{loaded:?}"
    );
    engine.send(&format!("position fen {FEN}"));

    // Not yet in use: `eval` shows the network's view beside the terms'.
    engine.send("setoption name Use NNUE value false");
    engine.send("eval");
    let lines = engine.until("NNUE evaluation");
    let line = nnue_line(&lines);
    assert!(line.contains("not in use"), "{line}");
    let expected = format!("NNUE evaluation: {} (white side)", reference_white(&net));
    assert!(line.starts_with(&expected), "{line} / {expected}");
    engine.send("ucinewgame");
    engine.send("go depth 6");
    let hce = engine.until("bestmove");

    engine.send("setoption name Use NNUE value true");
    engine.send("eval");
    let line = nnue_line(&engine.until("NNUE evaluation"));
    assert!(line.contains(", in use"), "{line}");
    engine.send("ucinewgame");
    engine.send("go depth 6");
    let nnue = engine.until("bestmove");
    // A random network searches a different tree from the terms': other node counts.
    let nodes = |lines: &[String]| {
        lines
            .iter()
            .rev()
            .find(|l| l.starts_with("info depth 6 "))
            .map(|l| {
                l.split(" nodes ")
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .unwrap_or_else(|| panic!("{lines:?}"))
    };
    assert_ne!(nodes(&hce), nodes(&nnue));
    // Back to the terms: the same tree as before (ucinewgame clears what searches learn).
    engine.send("setoption name Use NNUE value false");
    engine.send("ucinewgame");
    engine.send("go depth 6");
    assert_eq!(nodes(&engine.until("bestmove")), nodes(&hce));
    engine.ready();
    engine.quit();
}

#[test]
fn a_bad_eval_file_is_refused_and_the_engine_keeps_playing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("good.nnue");
    let net = Network::random(32, 4).expect("net");
    net.save(&good).expect("save");
    let mut damaged = std::fs::read(&good).expect("read");
    let last = damaged.len() - 1;
    damaged[last] ^= 0x40;
    let damaged_path = dir.path().join("damaged.nnue");
    std::fs::write(&damaged_path, &damaged).expect("write");
    let short_path = dir.path().join("short.bin");
    std::fs::write(&short_path, vec![0u8; 1000]).expect("write");

    let mut engine = Engine::start(&[]);
    engine.send(&format!("setoption name EvalFile value {}", good.display()));
    engine.until("info string EvalFile");
    engine.send("setoption name Use NNUE value true");
    engine.send(&format!("position fen {FEN}"));
    engine.send("eval");
    let before = nnue_line(&engine.until("NNUE evaluation"));

    for (path, reason) in [
        (dir.path().join("missing.nnue"), "No such file"),
        (damaged_path, "checksum"),
        (short_path, "1542"),
    ] {
        engine.send(&format!("setoption name EvalFile value {}", path.display()));
        let lines = engine.until("info string EvalFile");
        let line = lines.last().unwrap();
        assert!(
            line.contains(&path.display().to_string())
                && line.contains(reason)
                && line.contains("the network loaded before stays in use"),
            "{line}"
        );
        engine.send("eval");
        assert_eq!(nnue_line(&engine.until("NNUE evaluation")), before);
        engine.send("go depth 4");
        let lines = engine.until("bestmove");
        assert!(lines.last().unwrap().len() > "bestmove ".len());
    }
    engine.quit();
}

#[test]
fn the_search_evaluates_with_the_network_exactly() {
    // The evaluator the search calls, at changing plies, gives the reference's values.
    let net = Arc::new(Network::random(32, 9).expect("net"));
    let mut evaluator = pawnstorm::engine::search::SearchEvaluator::default();
    evaluator.set_network(Some(net.clone()));
    let mut nnue = NnueEvaluator::new(net.clone());
    let mut board = Board::startpos();
    for (ply, text) in [
        "e2e4", "c7c5", "g1f3", "d7d6", "d2d4", "c5d4", "f3d4", "g8f6",
    ]
    .iter()
    .enumerate()
    {
        board = board.play(pawnstorm::movegen::Move::from_uci(text, &board, false).unwrap());
        let white = evaluator.evaluate_at(board.position(), board.pawn_key(), ply % 3);
        let black = board.side_to_move() == pawnstorm::Color::Black;
        let boards = boards_of(board.position());
        let stm = net.evaluate_reference(&boards, black);
        assert_eq!(white, if black { -stm } else { stm });
        assert_eq!(nnue.score(&boards, black, 0), stm);
    }
}

/// A raw bullet file of a king-bucketed net plays through `EvalArch` (listed before
/// `EvalFile`, so a GUI sends it first); set after the file, the file is read again with
/// it. Without it the raw file is refused, saying why.
#[test]
fn eval_arch_loads_a_raw_king_bucketed_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = pawnstorm::nnue::InputLayout::standard(8).expect("map");
    let net = Network::random_with(inputs, 48, 8, 23).expect("net");
    let raw = dir.path().join("bullet.bin");
    let mut bytes = net.raw_bytes();
    bytes.resize(bytes.len().div_ceil(64) * 64, 0);
    std::fs::write(&raw, &bytes).expect("write");
    let arch = "king-buckets=8,output-buckets=8";

    let mut engine = Engine::start(&[]);
    engine.send("uci");
    let lines = engine.until("uciok");
    let at = |name: &str| lines.iter().position(|l| l.starts_with(name));
    assert!(
        at("option name EvalArch type string default <empty>").unwrap()
            < at("option name EvalFile").unwrap()
    );
    // The file first, without its architecture: refused by its size.
    engine.send(&format!("setoption name EvalFile value {}", raw.display()));
    let refused = engine.until("info string EvalFile");
    assert!(refused.last().unwrap().contains("--arch"), "{refused:?}");
    // Then the architecture: the file asked for is read again, now as what it is.
    engine.send(&format!("setoption name EvalArch value {arch}"));
    let loaded = engine.until("info string EvalFile");
    assert!(
        loaded.last().unwrap().contains("768x8hm inputs"),
        "{loaded:?}"
    );
    engine.send(&format!("position fen {FEN}"));
    engine.send("eval");
    let line = nnue_line(&engine.until("NNUE evaluation"));
    let expected = format!("NNUE evaluation: {} (white side)", reference_white(&net));
    assert!(line.starts_with(&expected), "{line} / {expected}");
    // A bad architecture is refused and the net stays.
    engine.send("setoption name EvalArch value king-buckets=3");
    let refused = engine.until("info string EvalArch");
    assert!(
        refused.last().unwrap().contains("standard map"),
        "{refused:?}"
    );
    engine.send("go depth 5");
    engine.until("bestmove");
    engine.ready();
    engine.quit();
}
