//! The UCI soak: 2,000 random command sequences against the binary, as a careless or
//! hostile GUI might send them: positions with legal and illegal moves and bad FENs, `go`
//! with every limit (and malformed ones), `stop` at random delays, `setoption` with odd
//! values, `ucinewgame`, `isready`, `ponderhit` and garbage. Every `go` that names a search
//! must get its `bestmove`, every `isready` its `readyok`, within a generous bound; the
//! engine must never exit or panic. Seeded: the same sequences on every run.

use crate::common;

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use common::uci_session::reader;
use common::{Rng, read_fixture};
use pawnstorm::movegen::{Board, MoveList, legal_moves};

/// Sequences in all, over the engines below.
const SEQUENCES: usize = 2_000;
/// Engines run side by side (the CI machine has two cores), each restarted every
/// `PER_PROCESS` sequences so that start-up is soaked too.
const ENGINES: usize = 2;
const PER_PROCESS: usize = 250;
/// Only a hang takes this long: every search below is bounded or stopped.
const PATIENCE: Duration = Duration::from_secs(30);

struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    errors: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let stdin = child.stdin.take().expect("stdin");
        let lines = reader(child.stdout.take().expect("stdout"));
        let errors = reader(child.stderr.take().expect("stderr"));
        Engine {
            child,
            stdin,
            lines,
            errors,
        }
    }

    fn send(&mut self, line: &str, log: &mut Vec<String>) {
        log.push(line.to_string());
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .unwrap_or_else(|e| panic!("the engine stopped reading ({e}); sent {log:#?}"));
    }

    /// Waits for a line starting with `prefix`; how long it took.
    fn answer(&mut self, prefix: &str, log: &[String]) -> Duration {
        let start = Instant::now();
        loop {
            let left = (start + PATIENCE).saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with(prefix) => return start.elapsed(),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no {prefix:?} within {PATIENCE:?}; sent {log:#?}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let complaints: Vec<String> = self.errors.try_iter().collect();
                    panic!("the engine exited; sent {log:#?}; stderr {complaints:#?}")
                }
            }
        }
    }

    /// Standard error so far must hold no panic.
    fn check_stderr(&self, log: &[String]) {
        for line in self.errors.try_iter() {
            assert!(!line.contains("panicked"), "{line}; sent {log:#?}");
        }
    }

    fn quit(mut self, log: &mut Vec<String>) {
        self.send("quit", log);
        let status = self.child.wait().expect("exits");
        assert!(status.success(), "{status}; sent {log:#?}");
    }
}

fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len())]
}

/// A `position` command: the start position or a test-suite FEN, some legal moves, now and
/// then an illegal one; or a malformed command.
fn position(rng: &mut Rng, fens: &[String]) -> String {
    match rng.below(10) {
        0 => pick(
            rng,
            &[
                "position",
                "position fen",
                "position fen 8/8/8/8 w - - 0 1",
                "position startpos moves",
                "position fen 8/8/8/4k3/8/8/8/Q3K3 w - - 0 1",
                "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1",
                "position startpos moves e2e4 e7e5 e1e3",
                "position startpos moves zz",
            ],
        )
        .to_string(),
        k => {
            let (mut board, mut text) = if k < 5 {
                (Board::startpos(), "position startpos".to_string())
            } else {
                let fen = &fens[rng.below(fens.len())];
                (
                    Board::from_fen(fen).expect("a suite FEN"),
                    format!("position fen {fen}"),
                )
            };
            let plies = rng.below(12);
            let mut moves = Vec::new();
            for _ in 0..plies {
                let mut list = MoveList::new();
                legal_moves(&board, &mut list);
                if list.is_empty() {
                    break;
                }
                let mv = list[rng.below(list.len())];
                moves.push(mv.uci(false).to_string());
                board = board.play(mv);
            }
            if rng.below(6) == 0 {
                moves.push(pick(rng, &["e2e5", "a1a1", "e1g1", "h7h8q", "xyz"]).to_string());
            }
            if !moves.is_empty() {
                text.push_str(" moves ");
                text.push_str(&moves.join(" "));
            }
            text
        }
    }
}

/// A `go` command and whether it must be stopped (it has no bound of its own); `None` for
/// the bound: a malformed `go`, which starts no search.
fn go(rng: &mut Rng) -> (String, Option<bool>) {
    let n = |rng: &mut Rng, lo: usize, hi: usize| lo + rng.below(hi - lo + 1);
    match rng.below(11) {
        0 => (format!("go depth {}", n(rng, 1, 5)), Some(false)),
        1 => (format!("go nodes {}", n(rng, 1, 20_000)), Some(false)),
        2 => (format!("go movetime {}", n(rng, 0, 40)), Some(false)),
        3 => {
            let (w, b) = (n(rng, 0, 3_000), n(rng, 0, 3_000));
            let tail = match rng.below(3) {
                0 => String::new(),
                1 => format!(" winc {} binc {}", n(rng, 0, 50), n(rng, 0, 50)),
                _ => format!(" movestogo {}", n(rng, 1, 40)),
            };
            (format!("go wtime {w} btime {b}{tail}"), Some(false))
        }
        4 => ("go infinite".to_string(), Some(true)),
        5 => (format!("go mate {}", n(rng, 1, 3)), Some(true)),
        6 => ("go ponder wtime 1000 btime 1000".to_string(), Some(true)),
        7 => (
            format!("go depth {} searchmoves e2e4 d2d4 a7a6", n(rng, 1, 4)),
            Some(false),
        ),
        8 => (format!("go perft {}", n(rng, 1, 3)), Some(false)),
        9 => ("go nodes 500 wtime -5 btime x".to_string(), None),
        _ => (
            pick(rng, &["go depth x", "go nodes", "go movetime -"]).to_string(),
            None,
        ),
    }
}

fn setoption(rng: &mut Rng) -> String {
    let (name, values): (&str, &[&str]) = match rng.below(7) {
        0 => ("Hash", &["1", "2", "8", "16", "0", "-1", "abc", ""]),
        1 => ("Threads", &["1", "2", "3", "0", "999", "two"]),
        2 => ("MultiPV", &["1", "2", "3", "0", "500"]),
        3 => ("Move Overhead", &["0", "10", "5000", "x"]),
        4 => ("UCI_Chess960", &["true", "false", "maybe"]),
        5 => ("Clear Hash", &[""]),
        _ => ("NoSuchOption", &["1", ""]),
    };
    match pick(rng, values) {
        "" => format!("setoption name {name}"),
        value => format!("setoption name {name} value {value}"),
    }
}

fn garbage(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => String::new(),
        1 => pick(
            rng,
            &["ponderhit", "stop", "debug on", "register later", "uci"],
        )
        .to_string(),
        _ => (0..rng.below(40))
            .map(|_| (b' ' + rng.below(95) as u8) as char)
            .collect(),
    }
}

/// Runs `count` sequences on fresh engines; (commands sent, the longest answer).
fn soak(seed: u64, count: usize, fens: &[String]) -> (usize, Duration) {
    let mut rng = Rng(seed);
    let mut sent = 0;
    let mut longest = Duration::ZERO;
    let mut done = 0;
    while done < count {
        let mut engine = Engine::start();
        let mut log = Vec::new();
        for _ in 0..PER_PROCESS.min(count - done) {
            log.clear();
            for _ in 0..2 + rng.below(9) {
                match rng.below(12) {
                    0 => engine.send("ucinewgame", &mut log),
                    1 => {
                        engine.send("isready", &mut log);
                        longest = longest.max(engine.answer("readyok", &log));
                    }
                    2..=4 => {
                        let line = position(&mut rng, fens);
                        engine.send(&line, &mut log);
                    }
                    5..=8 => {
                        let (line, unbounded) = go(&mut rng);
                        engine.send(&line, &mut log);
                        let Some(unbounded) = unbounded else { continue };
                        let wanted = if line.starts_with("go perft") {
                            "Nodes searched"
                        } else {
                            "bestmove"
                        };
                        if unbounded || rng.below(4) == 0 {
                            std::thread::sleep(Duration::from_millis(rng.below(20) as u64));
                            engine.send("stop", &mut log);
                        }
                        longest = longest.max(engine.answer(wanted, &log));
                    }
                    9 => {
                        let line = setoption(&mut rng);
                        engine.send(&line, &mut log);
                    }
                    _ => {
                        let line = garbage(&mut rng);
                        engine.send(&line, &mut log);
                    }
                }
            }
            // Every sequence ends answered: the engine is alive and idle.
            engine.send("isready", &mut log);
            longest = longest.max(engine.answer("readyok", &log));
            engine.check_stderr(&log);
            sent += log.len();
            done += 1;
        }
        engine.quit(&mut log);
    }
    (sent, longest)
}

#[test]
fn two_thousand_random_sequences_are_each_answered() {
    let fens: Vec<String> = read_fixture("epd/wac.epd")
        .lines()
        .take(100)
        .map(|l| l.split_whitespace().take(4).collect::<Vec<_>>().join(" ") + " 0 1")
        .collect();
    let start = Instant::now();
    let results: Vec<(usize, Duration)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..ENGINES)
            .map(|i| {
                let fens = &fens;
                scope.spawn(move || soak(0x50a4 + i as u64, SEQUENCES / ENGINES, fens))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a soak"))
            .collect()
    });
    let commands: usize = results.iter().map(|r| r.0).sum();
    let longest = results.iter().map(|r| r.1).max().unwrap_or_default();
    assert!(commands > SEQUENCES * 4, "{commands}");
    eprintln!(
        "UCI soak: {SEQUENCES} sequences, {commands} commands, longest answer {:.3} s, {:.1} s in all",
        longest.as_secs_f64(),
        start.elapsed().as_secs_f64()
    );
}
