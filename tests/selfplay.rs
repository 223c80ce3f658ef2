//! Twenty fast self-play games over pipes, as a GUI plays them: clocks of 1 s + 0.01 s a
//! move kept by this test, every move checked legal, nobody over its clock. Two games at a
//! time (one engine thinks at a time in each, so one core a game, as a match at concurrency
//! 2 plays them), and alone: `scripts/test` runs the other tests with `--skip selfplay::`
//! and this one last (`--test integration -- selfplay::`), so that no other test competes
//! for the cores (beside the Python tests and the rest of this binary's it lost on time by
//! 250-270 ms in 7 of 20 games).

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use common::read_fixture;
use pawnstorm::movegen::{Board, Game, Move};

const BASE_MS: f64 = 1000.0;
const INC_MS: f64 = 10.0;
/// Allowance for this test's own reading and a loaded CI machine's scheduler (the engine
/// keeps its own 30 ms Move Overhead; matches measure time losses at a 100 ms margin).
/// Measured (the test prints it): the lowest clock after a move was -11 ms on an idle
/// 2-core machine and -16 ms beside `stress --cpu 8` (a load of about 10).
const MARGIN_MS: f64 = 250.0;
/// Longer games are adjudicated drawn: the test is about legality and the clock.
const MAX_PLIES: usize = 240;

struct Player {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Player {
    fn start() -> Player {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut player = Player {
            child,
            stdin,
            stdout,
        };
        player.send("uci");
        player.wait_for("uciok");
        player
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write");
        self.stdin.flush().expect("flush");
    }

    fn wait_for(&mut self, prefix: &str) -> String {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "engine exited while we waited for {prefix}");
            if line.starts_with(prefix) {
                return line.trim().to_string();
            }
        }
    }
}

/// Plays one game; returns a description of the first fault, if any. `lowest` keeps the
/// lowest clock any side had after a move (negative: over its time, within the margin).
fn play(players: &mut [Player; 2], opening: &str, lowest: &mut f64) -> Result<(), String> {
    let start = Board::from_fen(opening).map_err(|e| format!("{opening}: {e}"))?;
    let mut game = Game::new(start.clone());
    let mut moves: Vec<String> = Vec::new();
    let mut clocks = [BASE_MS, BASE_MS];
    for player in players.iter_mut() {
        player.send("ucinewgame");
    }
    for _ in 0..MAX_PLIES {
        if game.outcome().is_some() {
            return Ok(());
        }
        let side = game.board().side_to_move().index();
        // White's engine is players[0] in the first game of a pair, but the colours are
        // fixed by which player is asked: side 0 asks players[0].
        let player = &mut players[side];
        let position = if moves.is_empty() {
            format!("position fen {opening}")
        } else {
            format!("position fen {opening} moves {}", moves.join(" "))
        };
        player.send(&position);
        let asked = Instant::now();
        player.send(&format!(
            "go wtime {:.0} btime {:.0} winc {INC_MS:.0} binc {INC_MS:.0}",
            clocks[0], clocks[1]
        ));
        let line = player.wait_for("bestmove");
        let spent = asked.elapsed().as_secs_f64() * 1000.0;
        clocks[side] -= spent;
        *lowest = lowest.min(clocks[side]);
        if clocks[side] < -MARGIN_MS {
            return Err(format!(
                "{opening} after {moves:?}: side {side} lost on time ({:.0} ms over)",
                -clocks[side]
            ));
        }
        clocks[side] += INC_MS;
        let text = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mv = Move::from_uci(&text, game.board(), false)
            .map_err(|e| format!("{opening} after {moves:?}: {line}: {e}"))?;
        game.play(mv);
        moves.push(text);
    }
    Ok(())
}

#[test]
fn twenty_fast_games_without_an_illegal_move_or_a_time_loss() {
    let text = read_fixture("openings/balanced-8ply.epd");
    let openings: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(10)
        .map(|l| l.split_whitespace().take(4).collect::<Vec<_>>().join(" ") + " 0 1")
        .collect();
    assert_eq!(openings.len(), 10);
    let halves: Vec<Vec<String>> = openings.chunks(5).map(<[String]>::to_vec).collect();
    let faults: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = halves
            .iter()
            .map(|half| {
                scope.spawn(move || {
                    let mut faults = Vec::new();
                    let mut lowest = BASE_MS;
                    let mut players = [Player::start(), Player::start()];
                    for opening in half {
                        // Each opening twice, the engines swapping colours.
                        for _ in 0..2 {
                            if let Err(fault) = play(&mut players, opening, &mut lowest) {
                                faults.push(fault);
                            }
                            players.swap(0, 1);
                        }
                    }
                    for mut player in players {
                        player.send("quit");
                        let _ = player.child.wait();
                    }
                    eprintln!("the lowest clock after a move: {lowest:.0} ms");
                    faults
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("no panic"))
            .collect()
    });
    assert!(faults.is_empty(), "{faults:#?}");
}
