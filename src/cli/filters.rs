//! The filter options shared by `features`, `tune` and `export`: the trainers' skip rules.
//! Each option's help names the trainer it comes from; `src/export/skips.rs` cites the
//! source files.

use anyhow::Result;

use pawnstorm::eval::Prepared;
use pawnstorm::export::filters::{Filter, parse_piece_range};
use pawnstorm::export::skips::parse_piece_weights;

#[derive(clap::Args, Clone, Debug, Default)]
#[command(next_help_heading = "Filters")]
pub struct FilterArgs {
    /// Drop positions whose side to move is in check (nnue-pytorch's and Stockfish's
    /// learner's smart FEN skipping, with --skip-capture)
    #[arg(long)]
    pub skip_check: bool,
    /// Drop positions whose move played is a capture (en passant included) or a promotion:
    /// the move label, else the next row of the same game (same game id, ply + 1); kept when
    /// neither is known (Stockfish's learner, smart_fen_skipping)
    #[arg(long)]
    pub skip_capture: bool,
    /// Drop the first N plies of each game (the ply label, else the fullmove number;
    /// nnue-pytorch's early_fen_skipping)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub skip_plies: u32,
    /// Drop positions whose score label is beyond CP centipawns either way (Stockfish's
    /// learner, eval_limit)
    #[arg(long, value_name = "CP")]
    pub max_score: Option<u32>,
    /// Drop each position with probability N/(N+1), at random (nnue-pytorch's
    /// random_fen_skipping)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub random_skip: u32,
    /// Skip at random so that wins, draws and losses (the game result) come out in equal
    /// shares; the rarest keeps all its positions (nnue-pytorch's piece-count skipping,
    /// applied to the result)
    #[arg(long)]
    pub wdl_skip: bool,
    /// Skip at random so that the piece counts follow nnue-pytorch's desired distribution,
    /// the parabola through (0 pieces, Y0), (16, Y16), (32, Y32) (its pc_y1..pc_y3); no
    /// value: 1,1,1 (flat)
    #[arg(long, value_name = "Y0,Y16,Y32", num_args = 0..=1, default_missing_value = "1,1,1",
          value_parser = parse_piece_weights)]
    pub piece_skip: Option<[f64; 3]>,
    /// Drop a position already kept (same board, side to move, castling and en passant:
    /// its Zobrist key), keeping the first; costs a hash set of 8-byte keys, 9 to 18 bytes a
    /// kept position
    #[arg(long)]
    pub unique: bool,
    /// Seed of the random rules (--random-skip, --wdl-skip, --piece-skip): the same seed
    /// keeps the same positions, whatever the thread count
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub skip_seed: u64,
    /// Keep positions with MIN..MAX pieces, kings and pawns included (`6..20`, `..10`, `12..`)
    #[arg(long, value_name = "MIN..MAX", value_parser = parse_piece_range)]
    pub pieces: Option<std::ops::RangeInclusive<u32>>,
    /// Drop positions whose score label is a mate score
    #[arg(long)]
    pub drop_mates: bool,
    /// Drop positions without a score label
    #[arg(long)]
    pub require_score: bool,
    /// Drop positions without a result label
    #[arg(long)]
    pub require_result: bool,
    /// Keep only quiet positions: no capture or promotion beats the static evaluation in a
    /// quiescence search (and not in check)
    #[arg(long)]
    pub quiet_only: bool,
}

impl FilterArgs {
    /// Whether any filter was asked for.
    pub fn is_active(&self) -> bool {
        self.skip_check
            || self.skip_plies > 0
            || self.pieces.is_some()
            || self.drop_mates
            || self.require_score
            || self.require_result
            || self.quiet_only
            || self.skip_capture
            || self.max_score.is_some()
            || self.random_skip > 0
            || self.wdl_skip
            || self.piece_skip.is_some()
            || self.unique
    }

    /// Refuses the rules that look at earlier rows, for a command that decides each row on
    /// its own.
    pub fn refuse_ordered(&self, command: &str) -> Result<()> {
        if self.unique || self.wdl_skip || self.piece_skip.is_some() {
            anyhow::bail!(
                "{command} decides each position on its own: --unique, --wdl-skip and --piece-skip are for export, features and the Python Loader (export a filtered DB first)"
            );
        }
        Ok(())
    }

    /// The library's filter; the quiet test evaluates with `prepared`.
    pub fn filter(&self, prepared: &Prepared) -> Result<Filter> {
        Ok(Filter {
            require_result: self.require_result,
            require_score: self.require_score,
            drop_mates: self.drop_mates,
            skip_plies: self.skip_plies,
            pieces: self.pieces.clone(),
            skip_check: self.skip_check,
            quiet_only: self.quiet_only.then(|| prepared.clone()),
            max_score: self.max_score,
            skip_capture: self.skip_capture,
            random_skip: self.random_skip,
            unique: self.unique,
            wdl_skip: self.wdl_skip,
            piece_skip: self.piece_skip,
            seed: self.skip_seed,
        })
    }
}
