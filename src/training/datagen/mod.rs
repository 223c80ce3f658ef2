//! Self-play data generation: the engine plays itself at a fixed node count per move from
//! random openings, and every position it searched is kept with the game's result and the
//! search's score. Games end by the rules, by the Syzygy tables, or by adjudication on long
//! one-sided or long level scores.
//!
//! A game is a function of its id, the seed and the configuration: its random generator is
//! seeded from the seed and the game id, the engine forgets everything between games, and
//! a search to a fixed node count reads no clock. So games come out the same whichever
//! thread plays them, and [`generate`] hands them over in game-id order.

mod pgn;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc;

use crate::engine::search::tb::Outcome as TbOutcome;
use crate::engine::search::{Control, Engine, Limits, SearchResult};
use crate::movegen::{Board, Game, Move, MoveList, Outcome, legal_moves};
use crate::position::board::{PieceType, Position};
use crate::position::labels::{GameResult, Labels, Record, white_pov};

/// Nodes searched per move unless told otherwise.
pub const DEFAULT_NODES: u64 = 5000;
/// Random legal moves from the start position before the engine takes over.
pub const DEFAULT_RANDOM_PLIES: u16 = 8;
/// An opening whose search score is further from level than this (centipawns) is drawn
/// again: a lost-at-once opening teaches nothing but the loss.
pub const DEFAULT_OPENING_WINDOW: i32 = 200;
/// Openings drawn before the one nearest to level is taken, window or not (a window of 0
/// would otherwise draw for ever).
pub const MAX_OPENING_DRAWS: u32 = 100;
/// A game still going after this many plies from the start position is a draw.
pub const DEFAULT_MAX_PLIES: u16 = 400;

/// When a game is decided before the rules decide it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Adjudication {
    /// A win: White's-view scores at least this far from 0 (centipawns), all of one sign...
    pub win_score: i32,
    /// ...for this many consecutive plies, so both sides' searches agree on the winner.
    pub win_plies: u32,
    /// A draw: White's-view scores within this of 0...
    pub draw_score: i32,
    /// ...for this many consecutive plies...
    pub draw_plies: u32,
    /// ...counting only positions at or after this ply (openings are often level and
    /// still full of play).
    pub draw_from_ply: u16,
}

impl Default for Adjudication {
    fn default() -> Adjudication {
        Adjudication {
            win_score: 1000,
            win_plies: 8,
            draw_score: 10,
            draw_plies: 20,
            draw_from_ply: 80,
        }
    }
}

/// How every game is played.
#[derive(Clone, Debug)]
pub struct Config {
    pub nodes: u64,
    /// Start no iteration forecast not to finish within `nodes` ([`Limits::forecast_nodes`]):
    /// the same labels (the deepest iteration that finishes) for fewer nodes.
    pub forecast_nodes: bool,
    pub random_plies: u16,
    pub opening_window: i32,
    pub max_plies: u16,
    pub seed: u64,
    pub adjudication: Adjudication,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            nodes: DEFAULT_NODES,
            forecast_nodes: true,
            random_plies: DEFAULT_RANDOM_PLIES,
            opening_window: DEFAULT_OPENING_WINDOW,
            max_plies: DEFAULT_MAX_PLIES,
            seed: 0,
            adjudication: Adjudication::default(),
        }
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Termination {
    Checkmate,
    Stalemate,
    Repetition,
    FiftyMoves,
    InsufficientMaterial,
    /// The position is in the Syzygy tables: their result, cursed wins drawn.
    Syzygy,
    /// Long one-sided scores.
    ScoreAdjudication,
    /// Long level scores late in the game.
    DrawAdjudication,
    MaxPlies,
}

impl Termination {
    pub const ALL: [Termination; 9] = [
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::Repetition,
        Termination::FiftyMoves,
        Termination::InsufficientMaterial,
        Termination::Syzygy,
        Termination::ScoreAdjudication,
        Termination::DrawAdjudication,
        Termination::MaxPlies,
    ];

    /// What the PGN `Termination` tag and the summary say.
    pub fn name(self) -> &'static str {
        match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::Repetition => "repetition",
            Termination::FiftyMoves => "fifty moves",
            Termination::InsufficientMaterial => "insufficient material",
            Termination::Syzygy => "syzygy",
            Termination::ScoreAdjudication => "score adjudication",
            Termination::DrawAdjudication => "draw adjudication",
            Termination::MaxPlies => "max plies",
        }
    }

    pub fn from_name(name: &str) -> Option<Termination> {
        Termination::ALL.into_iter().find(|t| t.name() == name)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    pub game_id: u32,
    /// Where the moves start (the standard start position for generated games).
    pub start: Board,
    /// Every move from `start`, the random ones included.
    pub moves: Vec<Move>,
    /// How many of `moves` were random: the first searched position is at this ply.
    pub random_plies: u16,
    /// Each searched position, in order, labelled with the result, its score (centipawns,
    /// White's view; mates and tablebase wins as the engine scores them), the game id and
    /// its ply from `start`.
    pub records: Vec<Record>,
    pub result: GameResult,
    pub termination: Termination,
}

impl GameRecord {
    /// The game as PGN, with `Result` and `Termination` tags; see `pgn.rs`.
    pub fn write_pgn(&self, out: &mut String) {
        pgn::write(self, out);
    }
}

/// Totals over games.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub games: u64,
    pub positions: u64,
    /// White wins, draws, Black wins.
    pub results: [u64; 3],
    /// Games per [`Termination`], in the order of [`Termination::ALL`].
    pub terminations: [u64; Termination::ALL.len()],
}

impl Summary {
    pub fn add(&mut self, game: &GameRecord) {
        self.games += 1;
        self.positions += game.records.len() as u64;
        self.results[(1 - game.result.to_i8()) as usize] += 1;
        self.terminations[game.termination.index()] += 1;
    }

    pub fn count(&self, termination: Termination) -> u64 {
        self.terminations[termination.index()]
    }
}

/// A splitmix64 generator: tiny, and good enough to pick moves.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    /// The generator of game `game_id` under `seed`: games of one run differ, and so do
    /// the games an appending run adds (their ids are new).
    fn for_game(seed: u64, game_id: u32) -> Rng {
        let mut mixer = Rng(u64::from(game_id));
        Rng(seed ^ mixer.next())
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0), by the high half of a 128-bit product.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

/// Whether neither side can ever mate, by any sequence of moves: bare kings, one minor
/// piece, or bishops all on squares of one colour (as FIDE's dead positions and
/// shakmaty's `is_insufficient_material` count them).
pub fn is_insufficient_material(position: &Position) -> bool {
    const LIGHT_SQUARES: u64 = 0x55aa_55aa_55aa_55aa;
    let heavy = position.piece_type(PieceType::Pawn)
        | position.piece_type(PieceType::Rook)
        | position.piece_type(PieceType::Queen);
    if !heavy.is_empty() {
        return false;
    }
    let knights = position.piece_type(PieceType::Knight).count();
    let bishops = position.piece_type(PieceType::Bishop).0;
    if knights == 0 {
        bishops & LIGHT_SQUARES == 0 || bishops & !LIGHT_SQUARES == 0
    } else {
        knights == 1 && bishops == 0
    }
}

/// Counts runs of scores toward the two adjudications.
#[derive(Clone, Debug, Default)]
struct Adjudicator {
    win_run: u32,
    win_sign: i32,
    draw_run: u32,
}

impl Adjudicator {
    /// Takes the White's-view score of the position at `ply`; the adjudicated result, if
    /// this score completes a run.
    fn update(
        &mut self,
        rules: &Adjudication,
        ply: u16,
        score: i32,
    ) -> Option<(GameResult, Termination)> {
        if score.abs() >= rules.win_score {
            let sign = score.signum();
            self.win_run = if sign == self.win_sign {
                self.win_run + 1
            } else {
                1
            };
            self.win_sign = sign;
        } else {
            self.win_run = 0;
        }
        if ply >= rules.draw_from_ply && score.abs() <= rules.draw_score {
            self.draw_run += 1;
        } else {
            self.draw_run = 0;
        }
        if self.win_run >= rules.win_plies {
            let winner = if self.win_sign > 0 {
                GameResult::WhiteWin
            } else {
                GameResult::BlackWin
            };
            return Some((winner, Termination::ScoreAdjudication));
        }
        if self.draw_run >= rules.draw_plies {
            return Some((GameResult::Draw, Termination::DrawAdjudication));
        }
        None
    }
}

/// A game being played: the moves so far, and the keys of the positions before the
/// current one (what the search needs for repetitions).
struct Playing {
    start: Board,
    game: Game,
    moves: Vec<Move>,
    keys: Vec<u64>,
}

impl Playing {
    fn new(start: Board) -> Playing {
        Playing {
            game: Game::new(start.clone()),
            start,
            moves: Vec::new(),
            keys: Vec::new(),
        }
    }

    fn board(&self) -> &Board {
        self.game.board()
    }

    fn play(&mut self, mv: Move) {
        self.keys.push(self.board().key());
        self.game.play(mv);
        self.moves.push(mv);
    }

    /// How the rules end the game here, if they do.
    fn rules_outcome(&self) -> Option<(GameResult, Termination)> {
        let board = self.board();
        let loser = board.side_to_move();
        match self.game.outcome() {
            Some(Outcome::Checkmate) => Some((
                match loser {
                    pawnstorm_kernels::Color::White => GameResult::BlackWin,
                    pawnstorm_kernels::Color::Black => GameResult::WhiteWin,
                },
                Termination::Checkmate,
            )),
            Some(Outcome::Stalemate) => Some((GameResult::Draw, Termination::Stalemate)),
            Some(Outcome::ThreefoldRepetition) => Some((GameResult::Draw, Termination::Repetition)),
            Some(Outcome::FiftyMoves) => Some((GameResult::Draw, Termination::FiftyMoves)),
            None if is_insufficient_material(board.position()) => {
                Some((GameResult::Draw, Termination::InsufficientMaterial))
            }
            None => None,
        }
    }
}

/// Searches the current position to the configured node count.
fn search(engine: &mut Engine, playing: &Playing, config: &Config) -> SearchResult {
    let control = Control::default();
    let limits = Limits {
        nodes: Some(config.nodes),
        forecast_nodes: config.forecast_nodes,
        ..Limits::default()
    };
    let board = playing.board();
    let result = engine.search(board, &playing.keys, &[], &limits, &control, &mut |_| {});
    if result.depth > 0 {
        return result;
    }
    // So few nodes that not even depth 1 finished: its score would be a partial one.
    engine.search(
        board,
        &playing.keys,
        &[],
        &Limits::depth(1),
        &control,
        &mut |_| {},
    )
}

/// Draws random openings until one is level enough by the search (see
/// [`DEFAULT_OPENING_WINDOW`]); returns it with its search.
fn draw_opening(
    engine: &mut Engine,
    config: &Config,
    rng: &mut Rng,
) -> (Playing, Option<SearchResult>) {
    let mut nearest: Option<(Playing, SearchResult)> = None;
    let mut draws = 0;
    while draws < MAX_OPENING_DRAWS {
        let mut playing = Playing::new(Board::startpos());
        let mut moves = MoveList::new();
        let mut dead_end = false;
        for _ in 0..config.random_plies {
            moves.clear();
            legal_moves(playing.board(), &mut moves);
            if moves.is_empty() {
                dead_end = true;
                break;
            }
            playing.play(moves[rng.below(moves.len())]);
        }
        // A random walk into mate, stalemate or a repetition is no opening.
        if dead_end || playing.rules_outcome().is_some() {
            continue;
        }
        draws += 1;
        let result = search(engine, &playing, config);
        if result.score.abs() <= config.opening_window {
            return (playing, Some(result));
        }
        if nearest
            .as_ref()
            .is_none_or(|(_, best)| result.score.abs() < best.score.abs())
        {
            nearest = Some((playing, result));
        }
    }
    match nearest {
        Some((playing, result)) => (playing, Some(result)),
        // Every walk was a dead end (only with absurd numbers of random plies): play
        // from the start position.
        None => (Playing::new(Board::startpos()), None),
    }
}

/// Plays game `game_id`: a random opening, then the engine against itself. The engine's
/// tables are cleared first, so the game depends only on the seed, the id and `config`
/// (and the engine's weights and tables).
pub fn play_game(engine: &mut Engine, config: &Config, game_id: u32) -> GameRecord {
    engine.clear();
    let mut rng = Rng::for_game(config.seed, game_id);
    let (playing, first_search) = draw_opening(engine, config, &mut rng);
    let random_plies = playing.moves.len() as u16;
    play_out(engine, config, game_id, playing, random_plies, first_search)
}

/// Plays game `game_id` from `start` with no random moves (for set positions; the tests
/// use it for endgames).
pub fn play_from(engine: &mut Engine, config: &Config, game_id: u32, start: Board) -> GameRecord {
    engine.clear();
    play_out(engine, config, game_id, Playing::new(start), 0, None)
}

fn play_out(
    engine: &mut Engine,
    config: &Config,
    game_id: u32,
    mut playing: Playing,
    random_plies: u16,
    mut first_search: Option<SearchResult>,
) -> GameRecord {
    let mut adjudicator = Adjudicator::default();
    // (position, score, ply, the move played from it: none for the last, adjudicated one)
    let mut searched: Vec<(Position, i32, u16, Option<u16>)> = Vec::new();
    let (result, termination) = loop {
        let ply = playing.moves.len() as u16;
        if let Some(end) = playing.rules_outcome() {
            break end;
        }
        if let Some(end) = syzygy_outcome(engine, playing.board()) {
            break end;
        }
        if ply >= config.max_plies {
            break (GameResult::Draw, Termination::MaxPlies);
        }
        let result = first_search
            .take()
            .unwrap_or_else(|| search(engine, &playing, config));
        let board = playing.board();
        let score = white_pov(result.score, board.side_to_move());
        searched.push((board.position().clone(), score, ply, None));
        if let Some(end) = adjudicator.update(&config.adjudication, ply, score) {
            break end;
        }
        let best = result
            .best
            .expect("a position with a legal move has a best move");
        if let Some(last) = searched.last_mut() {
            last.3 = Some(best.label_code());
        }
        playing.play(best);
    };
    let records = searched
        .into_iter()
        .map(|(position, score, ply, move_played)| Record {
            position,
            labels: Labels {
                result: Some(result),
                score: Some(score),
                game_id: Some(game_id),
                ply: Some(ply),
                move_played,
                ..Labels::default()
            },
        })
        .collect();
    GameRecord {
        game_id,
        start: playing.start,
        moves: playing.moves,
        random_plies,
        records,
        result,
        termination,
    }
}

/// The tables' result for `board`, when the engine has tables that hold it. Only right
/// after a capture or pawn move (halfmove clock 0), where the WDL value is exact with no
/// DTZ table; the first position a capture brings into the tables is such a one.
fn syzygy_outcome(engine: &Engine, board: &Board) -> Option<(GameResult, Termination)> {
    if board.position().halfmove_clock() != 0 {
        return None;
    }
    let outcome = engine.syzygy()?.probe_wdl(board)?;
    let side = board.side_to_move();
    let result = match outcome {
        TbOutcome::Draw => GameResult::Draw,
        TbOutcome::Win if side == pawnstorm_kernels::Color::White => GameResult::WhiteWin,
        TbOutcome::Loss if side == pawnstorm_kernels::Color::Black => GameResult::WhiteWin,
        _ => GameResult::BlackWin,
    };
    Some((result, Termination::Syzygy))
}

/// Plays games `first_game_id..first_game_id + games`, one thread per engine, and hands
/// each finished game to `on_game` in game-id order (games finished early wait for those
/// before them). The first error from `on_game` stops the run: the threads finish the game
/// they are playing and start no other.
pub fn generate<E>(
    engines: Vec<Engine>,
    config: &Config,
    first_game_id: u32,
    games: u32,
    mut on_game: impl FnMut(GameRecord) -> Result<(), E>,
) -> Result<Summary, E> {
    let next = AtomicU32::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel::<GameRecord>();
        for mut engine in engines.into_iter().take(games.max(1) as usize) {
            let sender = sender.clone();
            let (next, stop) = (&next, &stop);
            std::thread::Builder::new()
                .name("datagen".into())
                // The search recurses up to its maximum ply with a move list on each frame.
                .stack_size(64 << 20)
                .spawn_scoped(scope, move || {
                    while !stop.load(Ordering::Relaxed) {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        if index >= games {
                            break;
                        }
                        let game = play_game(&mut engine, config, first_game_id + index);
                        if sender.send(game).is_err() {
                            break;
                        }
                    }
                })
                .expect("a thread can be started");
        }
        drop(sender);
        let mut summary = Summary::default();
        let mut waiting = BTreeMap::new();
        let mut due = first_game_id;
        for game in receiver {
            waiting.insert(game.game_id, game);
            while let Some(game) = waiting.remove(&due) {
                summary.add(&game);
                if let Err(e) = on_game(game) {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
                due += 1;
            }
        }
        Ok(summary)
    })
}

#[cfg(test)]
mod tests;
