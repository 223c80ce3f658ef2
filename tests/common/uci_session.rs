//! A UCI session with the real binary over pipes: send lines, wait for answers.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// A generous bound for answers that should come at once: only a hang fails it.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub struct Engine {
    pub child: Child,
    pub stdin: ChildStdin,
    pub lines: Receiver<String>,
    pub errors: Receiver<String>,
}

/// The lines of `stream`, read on a thread of their own.
pub fn reader(stream: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Engine {
    pub fn start(args: &[&str]) -> Engine {
        Engine::start_with_env(args, &[])
    }

    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Engine {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pawnstorm"));
        command.args(args).envs(env.iter().copied());
        Engine::spawn(command)
    }

    pub fn spawn(mut command: Command) -> Engine {
        let mut child = command
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

    pub fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("the engine reads");
        self.stdin.flush().expect("flush");
    }

    /// Lines up to and including the first that starts with `prefix`.
    pub fn until(&mut self, prefix: &str) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = line.starts_with(prefix);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("no {prefix:?} in time; saw {seen:?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("engine exited; saw {seen:?}"),
            }
        }
    }

    /// Everything standard error has said for the commands sent so far. Deterministic on a
    /// loaded machine (no sleep): an unknown command is sent as a marker, and standard
    /// error, one ordered pipe, is read up to the engine's complaint about it.
    pub fn stderr(&mut self) -> Vec<String> {
        const MARKER: &str = "end-of-stderr-marker";
        self.send(MARKER);
        let deadline = Instant::now() + PATIENCE;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.errors.recv_timeout(left) {
                Ok(line) if line.contains(MARKER) => return seen,
                Ok(line) => seen.push(line),
                Err(e) => panic!("no complaint about {MARKER:?} ({e:?}); saw {seen:?}"),
            }
        }
    }

    pub fn ready(&mut self) {
        self.send("isready");
        self.until("readyok");
    }

    pub fn quit(mut self) {
        self.send("quit");
        let status = self.child.wait().expect("exits");
        assert!(status.success(), "{status}");
    }
}
