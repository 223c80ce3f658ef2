//! The pass cache: one pass's positions, kept by the loader's first pass that reads them
//! all, replayed by the passes after it.

use std::sync::atomic::AtomicBool;

use super::{LoaderConfig, Packed};
use crate::training::mix::InputCounts;

/// Positions a [`PassCache`] keeps at most by default (32 bytes each: 2 GiB; `train-net
/// --memory` sets another bound); a pass with more is read again each time.
pub const CACHED_POSITIONS: usize = 1 << 26;

/// A pass's positions as they entered the shuffle buffer, and its counts, kept by the first
/// pass that reads them all for the passes after it: reading the inputs again (decoding,
/// building and checking each position, the filters) was about a fifth of a trainer's
/// CPU time on each pass. Replayed into a shuffle buffer seeded as the pass's own, they
/// give the batches a read would: valid only while the positions a pass reads do not
/// depend on its seed (no random filters, no DB's blocks in a seeded order), which the
/// caller decides ([`PassCache::suits`]).
#[derive(Debug)]
pub struct PassCache {
    pub(super) claimed: AtomicBool,
    pub(super) pass: std::sync::OnceLock<CachedPass>,
    /// The most positions it keeps; a pass with more is read again each time.
    pub(super) limit: usize,
}

impl Default for PassCache {
    fn default() -> PassCache {
        PassCache::with_limit(CACHED_POSITIONS)
    }
}

/// Whether the file begins with a position DB's magic bytes (unreadable: no).
fn starts_as_db(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == crate::db::MAGIC)
}

#[derive(Debug)]
pub(super) struct CachedPass {
    pub(super) positions: Vec<Packed>,
    pub(super) inputs: Vec<InputCounts>,
    pub(super) dropped: crate::export::filters::Dropped,
}

impl PassCache {
    /// A cache of at most `limit` positions (32 bytes each).
    pub fn with_limit(limit: usize) -> PassCache {
        PassCache {
            claimed: AtomicBool::new(false),
            pass: std::sync::OnceLock::new(),
            limit,
        }
    }

    /// Whether passes of `config` at any seed read the same positions, so that one can be
    /// kept for the others: inputs read one after the other, none a position DB (whose
    /// blocks a shuffled pass reads in an order of its seed), no random filter rules.
    pub fn suits(config: &LoaderConfig) -> bool {
        let f = &config.filter;
        let random_rules = f.random_skip > 0 || f.wdl_skip || f.piece_skip.is_some();
        let any_db = config.inputs.iter().any(|input| starts_as_db(&input.path));
        !config.mixing && !random_rules && !any_db
    }

    /// Whether a pass has been kept.
    pub fn is_filled(&self) -> bool {
        self.pass.get().is_some()
    }

    /// The positions kept, once a pass has been.
    pub fn kept(&self) -> Option<usize> {
        self.pass.get().map(|pass| pass.positions.len())
    }
}
