//! The command line, one file per command. Each file holds its clap arguments and turns them
//! into what the library takes (resolved sources, a SIMD path, a thread pool, weights);
//! nothing in the library sees clap. `main.rs` only parses and dispatches.

pub mod bench;
pub mod datagen;
pub mod dedup;
pub mod eval;
pub mod evaluator;
pub mod export;
pub mod features;
pub mod filters;
pub mod import;
pub mod info;
pub mod label;
pub mod merge;
pub mod output;
pub mod perft;
pub mod progress;
pub mod report;
pub mod show;
pub mod split;
pub mod train_net;
pub mod tune;
pub mod uci;
pub mod weights;

use anyhow::anyhow;
use clap::{Parser, Subcommand};

use pawnstorm::db::Verify;
use pawnstorm::position::fen::FenError;

#[derive(Parser)]
#[command(
    name = "pawnstorm",
    version,
    about = "Bulk chess-position evaluation over memory-mapped bitboards"
)]
pub struct Cli {
    /// Run batch kernels one position at a time instead of in SIMD lanes (for comparisons)
    #[arg(long, global = true)]
    pub scalar: bool,
    /// Read position DBs without checking their checksums (for damaged files, or for those
    /// who know). Every position read is still checked to be one. `import --append` checks
    /// always: it writes new checksums over what it reads
    #[arg(long, global = true)]
    pub no_verify: bool,
    /// Optional so that `pawnstorm` alone can speak UCI to a GUI, which starts engines with
    /// no arguments.
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand)]
pub enum Command {
    /// Import EPD/FEN lines, PGN games and lichess evaluation JSONL into a position DB (.psdb)
    ///
    /// Inputs may be compressed with gzip, zstd or bzip2 (told by their first bytes, whatever
    /// the name; standard input too); the format comes from the name with the compression
    /// suffix looked through (games.pgn.zst is PGN).
    ///
    /// PGN: every position of every game, labelled with the game's result, its ply, the move
    /// played from it, the players' ratings (WhiteElo, BlackElo) and the time control
    /// (TimeControl 300+3: base 300 s, increment 3 s). A lichess [%eval 0.17] or [%eval #-3]
    /// comment after a move is the score of the position after it: pawns to centipawns,
    /// White's point of view; a mate "#N" (White mates in N moves; "#-N" Black does) is the
    /// engine's mate score 32000 - p, p the plies to mate from that position (2N-1 if the
    /// mating side is to move there, 2N if not), negated when Black mates.
    ///
    /// JSONL (lichess's evaluation database): each line's FEN (clocks 0 1) with the first PV
    /// of its deepest evaluation as the score (cp, or mate as above; White's point of view).
    Import(import::Args),
    /// Describe a position DB: positions, blocks, columns, size
    Info(info::Args),
    /// Write a DB's positions as EPD lines, Parquet, Stockfish .plain or .binpack, or bullet records
    Export(export::Args),
    /// Compute per-position features (pawn-structure masks, king distances) into .npy or .csv
    Features(features::Args),
    /// Evaluate every position of a DB or EPD/FEN/PGN/JSONL file, or one position in detail (--fen)
    Eval(eval::Args),
    /// Print the evaluation weights in the --weights file format (the defaults, or FILE's)
    Weights(weights::Args),
    /// Fit the evaluation weights to labelled positions (Texel tuning) into a weights file
    Tune(tune::Args),
    /// Train a (768 → N) × 2 → 1 SCReLU network (NNUE) on labelled positions, on the CPU
    TrainNet(train_net::Args),
    /// Draw a position: from a FEN, or position N of a DB
    Show(show::Args),
    /// One self-contained HTML page about a DB: counts, histograms, calibration, terms
    Report(report::Args),
    /// Split a DB into N shard DBs of contiguous rows (for evaluating them on a cluster)
    Split(split::Args),
    /// Concatenate DBs into one (the counterpart of split), renumbering game ids so that
    /// they stay unique
    Merge(merge::Args),
    /// Remove duplicate positions: one row per position (board, side to move, castling
    /// rights, en-passant square as stored), the first, the last or the mean of its rows
    ///
    /// Two rows are the same position when their 64-bit Zobrist keys are equal (among 100
    /// million distinct positions, the chance that any two share a key is about 3 in
    /// 10,000). The output keeps DB order and the input's label columns and block size.
    /// Prints the rows in, the unique positions and the duplicates removed.
    Dedup(dedup::Args),
    /// Count the leaf nodes of the legal move tree (move generator test), or run a suite
    Perft(perft::Args),
    /// Play through the UCI protocol on standard input and output (what no arguments do)
    Uci(uci::Args),
    /// Self-play games at a fixed node count into a labelled position DB (training data)
    Datagen(datagen::Args),
    /// Score every position with a deeper search (pawnstorm's own, or any UCI engine's) into
    /// a labelled DB, for training targets
    ///
    /// Scores are stored from White's point of view, mates as 32000 - plies (negated when
    /// Black mates), as every DB score is. The input's other labels (result, game, ply, move)
    /// travel unchanged. SIGINT or SIGTERM ends the run with a valid DB of the positions
    /// labelled so far (or none at all); --resume continues it.
    Label(label::Args),
    /// Search a fixed set of positions to a fixed depth: total nodes (a signature of the
    /// search), nodes per second, pawn hash hit rate
    Bench(bench::Args),
}

/// The global flags: which batch kernels `--scalar` selects, for the commands that have
/// both; which checksums the commands that read DBs check.
#[derive(Clone, Copy)]
pub struct Global {
    pub scalar: bool,
    pub verify: Verify,
}

/// The error, the FEN, and a caret under the offending character.
pub fn fen_error_with_caret(text: &str, error: &FenError) -> anyhow::Error {
    let caret = " ".repeat(error.column.saturating_sub(1));
    anyhow!("invalid FEN: {error}\n  {text}\n  {caret}^")
}
