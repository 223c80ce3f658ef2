//! The UCI loop: what a GUI, cutechess, python-chess or lichess-bot talks to. Commands are
//! read on this thread while a search runs on another, so `stop`, `ponderhit`, `isready`
//! and `quit` are answered during a search. Malformed commands, bad FENs and illegal moves
//! are reported on standard error and otherwise ignored: the loop never panics on input.

use std::io::{self, BufRead, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use crate::engine::perft;
use crate::engine::search::{Control, Engine, Info, Limits, MAX_THREADS, SearchResult, Syzygy};
use crate::eval::wdl;
use crate::eval::{self, Prepared, Weights, terms::Term};
use crate::movegen::{Board, Move, MoveList, legal_moves};
use crate::nnue::Network;
use crate::position::score;

const NAME: &str = concat!("pawnstorm ", env!("CARGO_PKG_VERSION"));
mod network;
mod tune;

const AUTHOR: &str = "the pawnstorm developers";
const DEFAULT_HASH_MB: usize = 16;
const MAX_HASH_MB: usize = 65_536;
const MAX_MULTIPV: usize = 256;
const MAX_MOVE_OVERHEAD: u64 = 5_000;
const MAX_NODES_PER_MS: u64 = 100_000;
/// `Use NNUE`: the compiled-in network won its SPRT against the terms at 10 s + 0.1 s
/// (nets/default.md), so the engine plays with it unless told otherwise.
const USE_NNUE_DEFAULT: bool = true;

/// Runs the loop on standard input and output until `quit` or the end of input; with
/// `tune`, the search's tunables are UCI options (`engine::search::tunables`).
pub fn run(tune: bool) {
    let stdin = io::stdin();
    let mut uci = Uci::new();
    uci.tune = tune;
    for line in stdin.lock().lines() {
        let Ok(line) = line else {
            break;
        };
        if !uci.command(&line) {
            break;
        }
    }
    uci.finish_search(true);
}

/// Limits a driven loop keeps to whatever its commands ask ([`drive`]), so that a fuzzer's
/// arbitrary sessions stay fast and small: every search stops by this many nodes, perft and
/// `bench` go no deeper than these, the hash and thread counts are capped, and no file named
/// by an option is read (`/dev/zero` as a weights file would never end).
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub nodes: u64,
    pub perft_depth: u32,
    pub bench_depth: i32,
    pub hash_mb: usize,
    pub threads: usize,
}

impl Bounds {
    pub const FUZZING: Bounds = Bounds {
        nodes: 2_000,
        perft_depth: 3,
        bench_depth: 1,
        hash_mb: 1,
        threads: 2,
    };
}

/// Runs the loop on `lines` (as standard input would give them) within `bounds`, then stops
/// any search still running and waits for it.
pub fn drive<'a>(lines: impl IntoIterator<Item = &'a str>, bounds: Bounds) {
    let mut uci = Uci::with_hash(bounds.hash_mb.min(DEFAULT_HASH_MB));
    uci.bounds = Some(bounds);
    for line in lines {
        if !uci.command(line) {
            break;
        }
    }
    uci.finish_search(true);
}

/// Prints a line to standard output, flushed (a GUI waits for whole lines). A closed
/// output is not an error worth dying for: the end of input follows.
fn say(text: &str) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

fn complain(text: &str) {
    eprintln!("{text}");
}

struct Uci {
    /// `None` while a search thread holds it.
    engine: Option<Engine>,
    search: Option<JoinHandle<Engine>>,
    control: Arc<Control>,
    board: Board,
    /// Keys of the positions before `board` in the game, oldest first.
    history: Vec<u64>,
    hash_mb: usize,
    chess960: bool,
    /// `UCI_ShowWDL`: `info` lines carry `wdl W D L`.
    show_wdl: bool,
    /// Set when driven by [`drive`].
    bounds: Option<Bounds>,
    /// Why the last `position` command set no position, if it did not.
    position_refused: Option<String>,
    /// `Use NNUE`.
    use_nnue: bool,
    /// The network `EvalFile` loaded; `None`: the compiled-in one.
    eval_file: Option<Arc<Network>>,
    /// The last `EvalFile` asked for (loaded or not), read again when `EvalArch` changes.
    eval_file_asked: Option<String>,
    /// `EvalArch`: the architecture of a raw `EvalFile`.
    eval_arch: Option<crate::nnue::Arch>,
    /// `uci --tune`: the tunables are options.
    tune: bool,
}

impl Uci {
    fn new() -> Uci {
        Uci::with_hash(DEFAULT_HASH_MB)
    }

    fn with_hash(hash_mb: usize) -> Uci {
        let mut engine = Engine::new(hash_mb);
        // For the test of the failure path only (tests/uci.rs): every helper panics as it starts.
        engine.options.helpers_panic = std::env::var_os("PAWNSTORM_TEST_HELPERS_PANIC").is_some();
        Uci {
            engine: Some(engine),
            search: None,
            control: Control::new(),
            board: Board::startpos(),
            history: Vec::new(),
            hash_mb,
            chess960: false,
            show_wdl: false,
            bounds: None,
            position_refused: None,
            use_nnue: USE_NNUE_DEFAULT,
            eval_file: None,
            eval_file_asked: None,
            eval_arch: None,
            tune: false,
        }
        .with_evaluator()
    }

    /// The engine with the evaluator `Use NNUE` and `EvalFile` ask for (`uci/network.rs`).
    fn with_evaluator(mut self) -> Uci {
        self.apply_evaluator();
        self
    }

    /// Handles one line; false on `quit`.
    fn command(&mut self, line: &str) -> bool {
        let mut words = line.split_whitespace();
        let Some(word) = words.next() else {
            return true;
        };
        let rest: Vec<&str> = words.collect();
        match word {
            "uci" => self.identify(),
            "isready" => say("readyok"),
            "setoption" => self.set_option(&rest),
            "ucinewgame" => {
                if let Some(engine) = self.engine_idle() {
                    engine.clear();
                }
            }
            "position" => self.position(&rest),
            "go" => self.go(&rest),
            "stop" => self.finish_search(true),
            "ponderhit" => self.control.pondering.store(false, Ordering::Relaxed),
            "quit" => return false,
            "d" => say(&format!(
                "{}\nCheckers: {}",
                self.board.position(),
                checkers(&self.board)
            )),
            "eval" => self.eval(),
            "bench" => {
                let depth = rest.first().and_then(|d| d.parse().ok());
                self.bench(depth);
            }
            _ => complain(&format!("unknown command: {line}")),
        }
        true
    }

    fn identify(&self) {
        say(&format!("id name {NAME}"));
        say(&format!("id author {AUTHOR}"));
        say(&format!(
            "option name Hash type spin default {DEFAULT_HASH_MB} min 1 max {MAX_HASH_MB}"
        ));
        say(&format!(
            "option name Threads type spin default 1 min 1 max {MAX_THREADS}"
        ));
        say("option name Clear Hash type button");
        say(&format!(
            "option name Move Overhead type spin default 30 min 0 max {MAX_MOVE_OVERHEAD}"
        ));
        say(&format!(
            "option name nodestime type spin default 0 min 0 max {MAX_NODES_PER_MS}"
        ));
        say("option name SyzygyPath type string default <empty>");
        say(&format!(
            "option name MultiPV type spin default 1 min 1 max {MAX_MULTIPV}"
        ));
        say("option name Weights type string default <empty>");
        // Before EvalFile: GUIs send options in the order listed, and a raw file needs its
        // architecture when it loads.
        say("option name EvalArch type string default <empty>");
        say("option name EvalFile type string default <empty>");
        say(&format!(
            "option name Use NNUE type check default {USE_NNUE_DEFAULT}"
        ));
        say("option name Ponder type check default false");
        say("option name UCI_Chess960 type check default false");
        say("option name UCI_ShowWDL type check default false");
        if self.tune {
            tune::say_options();
        }
        say("uciok");
    }

    /// The engine, once no search holds it (a finished search is joined; a running one
    /// makes this `None` with a complaint).
    fn engine_idle(&mut self) -> Option<&mut Engine> {
        if self.searching() {
            complain("busy: the search is running (send stop first)");
            return None;
        }
        self.finish_search(false);
        self.engine.as_mut()
    }

    /// Whether a search is under way (it has not yet found its answer).
    fn searching(&self) -> bool {
        self.search.is_some() && !self.control.done.load(Ordering::Acquire)
    }

    /// Waits for the search thread (stopping it first if `stop`) and takes the engine back.
    fn finish_search(&mut self, stop: bool) {
        let Some(handle) = self.search.take() else {
            return;
        };
        if stop {
            self.control.stop.store(true, Ordering::Relaxed);
            self.control.pondering.store(false, Ordering::Relaxed);
        }
        match handle.join() {
            Ok(engine) => self.engine = Some(engine),
            Err(_) => {
                complain("the search failed; starting with a fresh engine");
                self.engine = Some(Engine::new(self.hash_mb));
                self.apply_evaluator();
            }
        }
    }

    fn set_option(&mut self, args: &[&str]) {
        // setoption name <name words> [value <value words>]
        let Some(("name", args)) = args.split_first().map(|(w, r)| (*w, r)) else {
            complain("setoption: expected `setoption name NAME [value VALUE]`");
            return;
        };
        let value_at = args.iter().position(|w| *w == "value");
        let name = args[..value_at.unwrap_or(args.len())].join(" ");
        let value = value_at
            .map(|i| args[i + 1..].join(" "))
            .unwrap_or_default();
        if self.searching() {
            complain("setoption: ignored while searching");
            return;
        }
        self.finish_search(false);
        match name.to_ascii_lowercase().as_str() {
            "use nnue" => {
                self.use_nnue = value.eq_ignore_ascii_case("true");
                self.apply_evaluator();
                return;
            }
            "evalfile" => {
                self.set_eval_file(&value);
                return;
            }
            "evalarch" => {
                self.set_eval_arch(&value);
                return;
            }
            tunable if self.tune && crate::engine::search::tunables::find(tunable).is_some() => {
                tune::set(&name, &value);
                return;
            }
            _ => {}
        }
        let bounds = self.bounds;
        let chess960 = &mut self.chess960;
        let show_wdl = &mut self.show_wdl;
        let hash_mb = &mut self.hash_mb;
        let Some(engine) = self.engine.as_mut() else {
            return;
        };
        let number = |max: u64, min: u64| -> Option<u64> {
            match value.parse::<u64>() {
                Ok(n) if (min..=max).contains(&n) => Some(n),
                _ => {
                    complain(&format!(
                        "setoption {name}: expected a whole number from {min} to {max}, got {value:?}"
                    ));
                    None
                }
            }
        };
        match name.to_ascii_lowercase().as_str() {
            "hash" => {
                if let Some(mb) = number(MAX_HASH_MB as u64, 1) {
                    let mb = bounds.map_or(mb, |b| mb.min(b.hash_mb as u64));
                    if engine.resize_hash(mb as usize) {
                        *hash_mb = mb as usize;
                    } else {
                        let machine = crate::engine::search::tt::available_memory()
                            .map(|b| format!(" (this process may use {} MiB)", b >> 20))
                            .unwrap_or_default();
                        let text =
                            format!("Hash: {mb} MiB cannot be allocated{machine}; 1 MiB in use");
                        say(&format!("info string {text}"));
                        complain(&text);
                        *hash_mb = 1;
                    }
                }
            }
            "threads" => {
                if let Some(n) = number(MAX_THREADS as u64, 1) {
                    engine.set_threads(bounds.map_or(n as usize, |b| (n as usize).min(b.threads)));
                }
            }
            "clear hash" => engine.clear(),
            "move overhead" => {
                if let Some(ms) = number(MAX_MOVE_OVERHEAD, 0) {
                    engine.options.move_overhead = ms;
                }
            }
            "nodestime" => {
                if let Some(n) = number(MAX_NODES_PER_MS, 0) {
                    engine.options.nodes_per_ms = n;
                }
            }
            "multipv" => {
                if let Some(n) = number(MAX_MULTIPV as u64, 1) {
                    engine.options.multipv = n as usize;
                }
            }
            "syzygypath" | "weights" if bounds.is_some() => {
                complain(&format!(
                    "setoption {name}: no file is read in a bounded session"
                ));
            }
            "syzygypath" => {
                if value.is_empty() || value == "<empty>" {
                    engine.set_syzygy(None);
                } else {
                    // One missing directory does not cost the others: the ones that exist
                    // are used, and the GUI is told which were not.
                    let (present, missing): (Vec<&str>, Vec<&str>) =
                        crate::engine::search::tb::directories(&value)
                            .partition(|d| Path::new(d).is_dir());
                    if !missing.is_empty() {
                        let text = format!(
                            "SyzygyPath: no such directory: {}{}",
                            missing.join(", "),
                            if present.is_empty() {
                                ""
                            } else {
                                "; using the others"
                            }
                        );
                        say(&format!("info string {text}"));
                        complain(&text);
                    }
                    let value = present.join(":");
                    match Syzygy::open(&value) {
                        Ok(Some(tables)) => {
                            say(&format!(
                                "info string Syzygy tables up to {} pieces from {value}",
                                tables.max_pieces()
                            ));
                            engine.set_syzygy(Some(tables));
                        }
                        Ok(None) => {
                            let text = format!("SyzygyPath: no tables found in {value:?}");
                            say(&format!("info string {text}"));
                            complain(&text);
                            engine.set_syzygy(None);
                        }
                        Err(e) => {
                            let text = format!("SyzygyPath: {value}: {e}; no tables in use");
                            say(&format!("info string {text}"));
                            complain(&text);
                            engine.set_syzygy(None);
                        }
                    }
                }
            }
            "weights" => {
                if value.is_empty() || value == "<empty>" {
                    engine.set_weights(Prepared::default());
                } else {
                    match Weights::read(Path::new(&value)) {
                        Ok(weights) => engine.set_weights(Prepared::new(weights)),
                        Err(e) => complain(&format!("Weights: {e}")),
                    }
                }
            }
            "ponder" => {}
            "uci_chess960" => *chess960 = value.eq_ignore_ascii_case("true"),
            "uci_showwdl" => *show_wdl = value.eq_ignore_ascii_case("true"),
            _ => complain(&format!("setoption: unknown option {name:?}")),
        }
    }

    fn position(&mut self, args: &[&str]) {
        let moves_at = args.iter().position(|w| *w == "moves");
        let (setup, moves) = match moves_at {
            Some(i) => (&args[..i], &args[i + 1..]),
            None => (args, &[][..]),
        };
        let board = match setup.split_first() {
            Some((&"startpos", [])) => Board::startpos(),
            Some((&"fen", fields)) if !fields.is_empty() => {
                match Board::from_fen(&fields.join(" ")) {
                    Ok(board) => board,
                    Err(e) => {
                        self.refuse_position(&format!(
                            "position: bad FEN {:?}: {e}",
                            fields.join(" ")
                        ));
                        return;
                    }
                }
            }
            _ => {
                self.refuse_position("position: expected `position startpos|fen FEN [moves ...]`");
                return;
            }
        };
        let chess960 = self.chess960 || board.has_chess960_castling();
        let mut board = board;
        let mut history = Vec::with_capacity(moves.len());
        for text in moves {
            match Move::from_uci(text, &board, chess960) {
                Ok(mv) => {
                    history.push(board.key());
                    board = board.play(mv);
                }
                Err(e) => {
                    // As Stockfish: the moves before it stand.
                    complain(&format!("position: {e}; the moves after it are ignored"));
                    break;
                }
            }
        }
        self.board = board;
        self.history = history;
        self.position_refused = None;
    }

    /// A `position` command that sets no position: the previous one is not searched in its
    /// place (its move would be illegal in the GUI's game); `go` answers `bestmove 0000`
    /// with the reason until a good `position` comes.
    fn refuse_position(&mut self, reason: &str) {
        say(&format!("info string error: {reason}"));
        complain(reason);
        self.position_refused = Some(reason.to_string());
    }

    fn go(&mut self, args: &[&str]) {
        if let Some(("perft", rest)) = args.split_first().map(|(w, r)| (*w, r)) {
            match rest.first().map(|d| d.parse::<u32>()) {
                Some(Ok(depth)) => {
                    self.perft(self.bounds.map_or(depth, |b| depth.min(b.perft_depth)))
                }
                _ => complain("go perft: expected a depth"),
            }
            return;
        }
        if self.engine_idle().is_none() {
            return;
        }
        if let Some(reason) = &self.position_refused {
            say(&format!(
                "info string error: no position to search ({reason})"
            ));
            say("bestmove 0000");
            return;
        }
        let (mut limits, search_moves) = parse_go(args, &self.board, self.chess960);
        if let Some(bounds) = self.bounds {
            limits.nodes = Some(limits.nodes.map_or(bounds.nodes, |n| n.min(bounds.nodes)));
        }
        let Some(mut engine) = self.engine.take() else {
            return;
        };
        self.control = Control::new();
        self.control
            .pondering
            .store(limits.ponder, Ordering::Relaxed);
        let control = Arc::clone(&self.control);
        let board = self.board.clone();
        let history = self.history.clone();
        let chess960 = self.chess960 || board.has_chess960_castling();
        let wdl_material = self.show_wdl.then(|| wdl::material_of(board.position()));
        let spawned = std::thread::Builder::new()
            .name("search".into())
            // The search recurses up to MAX_PLY with a move list on each frame.
            .stack_size(64 << 20)
            .spawn(move || {
                let result = engine.search(
                    &board,
                    &history,
                    &search_moves,
                    &limits,
                    &control,
                    &mut |info| say(&info_line(info, chess960, wdl_material)),
                );
                if let Some(failure) = &result.helper_failure {
                    // The main thread's move stands; the failure is said where a GUI shows it
                    // and where a log keeps it.
                    say(&format!("info string error: {failure}"));
                    complain(&format!("error: {failure}"));
                }
                control.done.store(true, Ordering::Release);
                say(&bestmove_line(&result, chess960));
                engine
            });
        match spawned {
            Ok(handle) => self.search = Some(handle),
            Err(e) => {
                complain(&format!("go: could not start the search: {e}"));
                self.engine = Some(Engine::new(self.hash_mb));
            }
        }
    }

    fn perft(&self, depth: u32) {
        let chess960 = self.chess960 || self.board.has_chess960_castling();
        let divided = perft::divide(&self.board, depth);
        let nodes = if depth == 0 {
            1
        } else {
            divided.iter().map(|(_, n)| n).sum()
        };
        let mut text = Vec::new();
        if perft::write_perft_report(&mut text, Some((&divided, chess960)), nodes).is_ok() {
            say(String::from_utf8_lossy(&text).trim_end());
            say("");
        }
    }

    fn eval(&mut self) {
        let Some(engine) = self.engine_idle() else {
            return;
        };
        let weights = engine.evaluator_mut().weights().clone();
        let engine_network = engine.network().cloned();
        let breakdown = eval::breakdown(&weights, self.board.position());
        say(&format!(
            "{:>22} | {:>6} {:>6} | {:>6}",
            "term", "mg", "eg", "final"
        ));
        for term in Term::ALL {
            let i = term as usize;
            say(&format!(
                "{:>22} | {:>6} {:>6} | {:>6}",
                term.name(),
                breakdown.mg[i],
                breakdown.eg[i],
                breakdown.term_final(term)
            ));
        }
        say(&format!(
            "{:>22} | {:>6} {:>6} | {:>6}",
            "total", breakdown.total_mg, breakdown.total_eg, breakdown.finished.score
        ));
        say(&format!(
            "Final evaluation: {} (white side), phase {}, scale {}/64",
            breakdown.finished.score, breakdown.finished.phase, breakdown.finished.scale
        ));
        self.say_network_eval(engine_network);
    }

    fn bench(&mut self, depth: Option<i32>) {
        if self.engine_idle().is_none() {
            return;
        }
        let depth = depth.unwrap_or(crate::engine::search::bench::DEFAULT_DEPTH);
        let depth = self.bounds.map_or(depth, |b| depth.min(b.bench_depth));
        let network = self.engine.as_ref().and_then(|e| e.network().cloned());
        match crate::engine::search::bench::run(depth, network, |_, _| {}) {
            Ok(result) => say(&format!(
                "Nodes searched: {}\nNodes/second: {}",
                result.nodes,
                result.nps()
            )),
            Err(e) => complain(&format!("bench: {e}")),
        }
    }
}

fn checkers(board: &Board) -> String {
    board
        .checkers()
        .squares()
        .map(|square| square.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads `go`'s parameters. Never refuses: a client waiting for `bestmove` must get one,
/// so a malformed value is complained about and left out (the search goes on without it).
fn parse_go(args: &[&str], board: &Board, chess960: bool) -> (Limits, Vec<Move>) {
    let mut limits = Limits::default();
    let mut search_moves = Vec::new();
    let mut i = 0;
    // A value that cannot be read counts as 0 (the least: a move at once, after the first
    // iteration): searching without the limit the client asked for could go on forever.
    let number = |i: usize| -> i64 {
        let text = args.get(i + 1).copied().unwrap_or("");
        let parsed = lenient_number(text);
        if parsed.is_none() {
            complain(&format!(
                "go {}: expected a number, got {text:?}; taken as 0",
                args[i]
            ));
        }
        parsed.unwrap_or(0)
    };
    let millis = |n: i64| n.max(0) as u64;
    let mut legal = MoveList::new();
    legal_moves(board, &mut legal);
    while i < args.len() {
        let mut takes_value = true;
        match args[i] {
            "wtime" => limits.wtime = Some(millis(number(i))),
            "btime" => limits.btime = Some(millis(number(i))),
            "winc" => limits.winc = Some(millis(number(i))),
            "binc" => limits.binc = Some(millis(number(i))),
            "movestogo" => limits.movestogo = Some(millis(number(i)).max(1)),
            "movetime" => limits.movetime = Some(millis(number(i))),
            "depth" => limits.depth = Some(number(i).clamp(1, 100) as i32),
            "nodes" => limits.nodes = Some(millis(number(i)).max(1)),
            "mate" => limits.mate = Some(number(i).clamp(1, 60) as u32),
            "infinite" => {
                limits.infinite = true;
                takes_value = false;
            }
            "ponder" => {
                limits.ponder = true;
                takes_value = false;
            }
            "searchmoves" => {
                takes_value = false;
                while let Some(text) = args.get(i + 1) {
                    match Move::from_uci(text, board, chess960) {
                        Ok(mv) if legal.contains(&mv) => {
                            search_moves.push(mv);
                            i += 1;
                        }
                        _ => break,
                    }
                }
            }
            other => {
                complain(&format!("go: unknown parameter {other:?} ignored"));
                takes_value = false;
            }
        }
        i += 1 + takes_value as usize;
    }
    (limits, search_moves)
}

/// A number as clients write them: whole, or with a fraction (`100.0`, `1000.5`: the
/// fraction dropped), or longer than 64 bits (held at the largest or smallest); `None` for
/// anything else (`abc`, `nan`, an empty word).
fn lenient_number(text: &str) -> Option<i64> {
    if let Ok(n) = text.parse::<i64>() {
        return Some(n);
    }
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let plain = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.chars().filter(|&c| c == '.').count() <= 1
        && digits.chars().any(|c| c.is_ascii_digit());
    if !plain {
        return None;
    }
    // f64 → i64 saturates: an overlong number becomes the largest (or smallest) one.
    text.parse::<f64>().ok().map(|x| x as i64)
}

/// `info depth ... pv ...` as UCI defines it.
/// An `info` line; with `wdl_material` (the root's material, as [`wdl::material_of`]
/// counts it) the score's win/draw/loss per mille too, after the score as Stockfish puts it.
pub fn info_line(info: &Info, chess960: bool, wdl_material: Option<u32>) -> String {
    let nps = info.nodes * 1000 / info.millis.max(1);
    let bound = match info.bound {
        Some(true) => " lowerbound",
        Some(false) => " upperbound",
        None => "",
    };
    let wdl = wdl_material.map_or(String::new(), |material| {
        let w = if info.proven_draw {
            wdl::Wdl {
                win: 0,
                draw: 1000,
                loss: 0,
            }
        } else {
            wdl::wdl(info.score, material)
        };
        format!(" wdl {} {} {}", w.win, w.draw, w.loss)
    });
    let mut line = format!(
        "info depth {} seldepth {} multipv {} score {}{wdl}{bound} nodes {} nps {nps} hashfull {} tbhits {} time {}",
        info.depth,
        info.seldepth,
        info.multipv,
        score::uci(info.score),
        info.nodes,
        info.hashfull,
        info.tbhits,
        info.millis
    );
    if !info.pv.is_empty() {
        line.push_str(" pv");
        for mv in &info.pv {
            line.push(' ');
            line.push_str(&mv.uci(chess960).to_string());
        }
    }
    line
}

/// `bestmove X [ponder Y]`; `bestmove 0000` when there is no legal move, as Stockfish.
pub fn bestmove_line(result: &SearchResult, chess960: bool) -> String {
    match (result.best, result.ponder) {
        (Some(best), Some(ponder)) => format!(
            "bestmove {} ponder {}",
            best.uci(chess960),
            ponder.uci(chess960)
        ),
        (Some(best), None) => format!("bestmove {}", best.uci(chess960)),
        (None, _) => "bestmove 0000".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::lenient_number;

    #[test]
    fn numbers_as_clients_write_them() {
        for (text, expected) in [
            ("100", Some(100)),
            ("100.0", Some(100)),
            ("1000.5", Some(1000)),
            ("10.25", Some(10)),
            ("+7", Some(7)),
            ("-100", Some(-100)),
            ("-2.9", Some(-2)),
            (".5", Some(0)),
            ("5.", Some(5)),
            ("99999999999999999999999", Some(i64::MAX)),
            ("-99999999999999999999999", Some(i64::MIN)),
            ("99999999999999999999999.5", Some(i64::MAX)),
        ] {
            assert_eq!(lenient_number(text), expected, "{text:?}");
        }
        for text in [
            "", "abc", "nan", "inf", "1e3", "1.2.3", ".", "-", "+", "12abc", "0x10",
        ] {
            assert_eq!(lenient_number(text), None, "{text:?}");
        }
    }
}
