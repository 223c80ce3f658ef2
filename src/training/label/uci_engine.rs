//! Any UCI engine as a labeller: one child process, spoken to as a GUI would (`uci`,
//! `setoption`, `isready`; then per run `ucinewgame`, and per position `position fen`,
//! `go`). The score is that of the last complete iteration: the last `info` line with a
//! `score` that is not a bound (and of the first PV when the engine prints several).
//!
//! Every wait has a time limit. An engine that exits, does not answer in time, or answers
//! what cannot be read is killed and started again, and the position is a failure: its
//! label would be a guess.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::{Labeller, Limit, Scored};
use crate::position::board::Position;
use crate::position::score::MATE;

/// How to start and set up the engine.
#[derive(Clone, Debug)]
pub struct EngineSpec {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// `setoption name N value V`, in order.
    pub options: Vec<(String, String)>,
    pub limit: Limit,
    /// The longest a position (or the start-up handshake) may take.
    pub timeout: Duration,
}

/// A running engine.
struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        // A polite `quit` first; an engine that ignores it is killed.
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct UciLabeller {
    spec: EngineSpec,
    process: Option<Process>,
    /// The engine's `id name`, once it has said it.
    name: Option<String>,
    /// Times the engine was started again after a failure.
    pub restarts: u64,
}

impl UciLabeller {
    /// Starts the engine and completes the handshake, or says why it cannot.
    pub fn start(spec: EngineSpec) -> Result<UciLabeller, String> {
        let mut labeller = UciLabeller {
            spec,
            process: None,
            name: None,
            restarts: 0,
        };
        labeller.ensure_started()?;
        Ok(labeller)
    }

    /// What the engine calls itself (`id name`), or its command.
    pub fn name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| self.spec.command.join(" "))
    }

    fn ensure_started(&mut self) -> Result<(), String> {
        if self.process.is_some() {
            return Ok(());
        }
        let (program, arguments) = self
            .spec
            .command
            .split_first()
            .ok_or_else(|| "the engine command is empty".to_string())?;
        let mut child = Command::new(program)
            .args(arguments)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start engine `{program}`: {e}"))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        self.process = Some(Process {
            child,
            stdin,
            lines,
        });
        let handshake = self.handshake();
        if handshake.is_err() {
            self.process = None;
        }
        handshake
    }

    fn handshake(&mut self) -> Result<(), String> {
        self.send("uci")?;
        let deadline = Instant::now() + self.spec.timeout;
        loop {
            let line = self.receive(deadline)?;
            if let Some(name) = line.strip_prefix("id name ") {
                self.name = Some(name.trim().to_string());
            }
            if line.trim() == "uciok" {
                break;
            }
        }
        for (name, value) in self.spec.options.clone() {
            self.send(&format!("setoption name {name} value {value}"))?;
        }
        self.ready()
    }

    /// `isready`, waiting for `readyok`.
    fn ready(&mut self) -> Result<(), String> {
        self.send("isready")?;
        let deadline = Instant::now() + self.spec.timeout;
        while self.receive(deadline)?.trim() != "readyok" {}
        Ok(())
    }

    fn send(&mut self, command: &str) -> Result<(), String> {
        let process = self.process.as_mut().ok_or("the engine is not running")?;
        writeln!(process.stdin, "{command}")
            .and_then(|()| process.stdin.flush())
            .map_err(|e| format!("the engine stopped reading its input: {e}"))
    }

    fn receive(&mut self, deadline: Instant) -> Result<String, String> {
        let process = self.process.as_mut().ok_or("the engine is not running")?;
        let wait = deadline.saturating_duration_since(Instant::now());
        match process.lines.recv_timeout(wait) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "the engine did not answer within {:.1} s",
                self.spec.timeout.as_secs_f64()
            )),
            Err(RecvTimeoutError::Disconnected) => {
                let status = process
                    .child
                    .try_wait()
                    .ok()
                    .flatten()
                    .map_or("closed its output".to_string(), |s| format!("exited ({s})"));
                Err(format!("the engine {status}"))
            }
        }
    }

    /// After a failure: the process is killed, started again for the next position.
    fn restart(&mut self) {
        self.process = None;
        self.restarts += 1;
    }

    fn search(&mut self, position: &Position) -> Scored {
        self.ensure_started()?;
        self.send(&format!("position fen {}", position.to_fen()))?;
        self.send(&format!("go {}", self.spec.limit.go_arguments()))?;
        let deadline = Instant::now() + self.spec.timeout;
        let mut score = None;
        loop {
            let line = self.receive(deadline)?;
            let mut words = line.split_ascii_whitespace();
            match words.next() {
                Some("bestmove") => {
                    return score.ok_or_else(|| {
                        "the engine gave a bestmove without a score before it".to_string()
                    });
                }
                Some("info") => {
                    if let Some(found) = info_score(&line)? {
                        score = Some(found);
                    }
                }
                _ => {}
            }
        }
    }
}

impl Labeller for UciLabeller {
    fn new_run(&mut self) -> Result<(), String> {
        let outcome = self
            .ensure_started()
            .and_then(|()| self.send("ucinewgame"))
            .and_then(|()| self.ready());
        if outcome.is_err() {
            self.restart();
        }
        outcome
    }

    fn score(&mut self, position: &Position) -> Scored {
        let outcome = self.search(position);
        if outcome.is_err() {
            self.restart();
        }
        outcome
    }
}

/// The exact score of an `info` line, side to move's view, mates as the DB stores them;
/// `Ok(None)` for a line without one (a bound, a PV other than the first, `currmove`
/// lines); an error for a score that cannot be read.
pub fn info_score(line: &str) -> Result<Option<i32>, String> {
    let words: Vec<&str> = line.split_ascii_whitespace().collect();
    let Some(at) = words.iter().position(|&w| w == "score") else {
        return Ok(None);
    };
    if words
        .iter()
        .any(|&w| w == "lowerbound" || w == "upperbound")
    {
        return Ok(None);
    }
    if let Some(i) = words.iter().position(|&w| w == "multipv")
        && words.get(i + 1) != Some(&"1")
    {
        return Ok(None);
    }
    let garbage = || format!("unreadable score in `{}`", line.trim());
    let value = words
        .get(at + 2)
        .and_then(|v| v.parse::<i32>().ok())
        .ok_or_else(garbage)?;
    match words.get(at + 1) {
        // Centipawns beyond any mate score would be read as mates.
        Some(&"cp") if value.abs() < MATE - 1000 => Ok(Some(value)),
        // Mate in n moves: 2n - 1 plies when the side to move mates, 2n when it is mated.
        Some(&"mate") if value.abs() < 500 => Ok(Some(if value > 0 {
            MATE - (2 * value - 1)
        } else {
            -(MATE + 2 * value)
        })),
        _ => Err(garbage()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_of_info_lines() {
        let read = |line: &str| info_score(line);
        assert_eq!(
            read("info depth 10 seldepth 14 multipv 1 score cp 35 nodes 9000 pv e2e4"),
            Ok(Some(35))
        );
        assert_eq!(read("info depth 3 score cp -120 pv a2a3"), Ok(Some(-120)));
        assert_eq!(
            read("info depth 9 score cp 40 lowerbound nodes 1"),
            Ok(None)
        );
        assert_eq!(
            read("info depth 9 score cp 40 upperbound nodes 1"),
            Ok(None)
        );
        assert_eq!(read("info depth 9 multipv 2 score cp 10 pv e2e4"), Ok(None));
        assert_eq!(
            read("info depth 9 currmove e2e4 currmovenumber 1"),
            Ok(None)
        );
        assert_eq!(read("info string NNUE evaluation enabled"), Ok(None));
        // Mate in 1 move: 1 ply; mated in 2 moves: 4 plies; mated now: 0.
        assert_eq!(
            read("info depth 5 score mate 1 pv d1h5"),
            Ok(Some(MATE - 1))
        );
        assert_eq!(read("info depth 5 score mate 3"), Ok(Some(MATE - 5)));
        assert_eq!(read("info depth 5 score mate -2"), Ok(Some(-(MATE - 4))));
        assert_eq!(read("info depth 0 score mate 0"), Ok(Some(-MATE)));
        for bad in [
            "info depth 5 score",
            "info depth 5 score cp x",
            "info depth 5 score pawns 3",
            "info depth 5 score cp 99999",
            "info depth 5 score mate 10000",
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }
}
