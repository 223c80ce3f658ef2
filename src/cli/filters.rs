//! The filter options shared by `features`, `tune` and `export`.

use anyhow::Result;

use pawnstorm::eval::Prepared;
use pawnstorm::export::filters::{Filter, parse_piece_range};

#[derive(clap::Args, Clone, Debug, Default)]
#[command(next_help_heading = "Filters")]
pub struct FilterArgs {
    /// Drop positions whose side to move is in check
    #[arg(long)]
    pub skip_check: bool,
    /// Drop the first N plies of each game (the ply label, else the fullmove number)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub skip_plies: u32,
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
        })
    }
}
