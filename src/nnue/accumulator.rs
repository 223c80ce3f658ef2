//! The first layer's sums (accumulators), kept from one position to the next.
//!
//! A position's accumulators follow from any other position's by the pieces that differ
//! between the two: add the rows of the pieces that appeared, subtract those of the pieces
//! that left. [`Changes`] finds them by comparing the twelve piece boards, so one mechanism
//! serves every move (captures, castling, en passant, promotions, null moves) and the bulk
//! passes' consecutive rows alike, and the result is exact whatever the base was: the
//! choice of base only decides the cost. [`NnueEvaluator`] keeps one slot per search ply and
//! evaluates a position from the cheapest of its own ply's last position (a sibling, two or
//! four pieces away) and its parent's, refreshing from the biases when a full sum is
//! cheaper.

use std::sync::Arc;

use pawnstorm_kernels::simd::{LevelFn, Path, dispatch_level};

use super::inputs::{Orientation, oriented_feature};
use super::network::{Chunk, Network};
use super::simd::{self, Level};

/// The most rows one side of an update holds: a position has at most 32 pieces.
const MAX_ROWS: usize = 32;

/// Both perspectives' first-layer sums for one position: White's, then Black's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accumulators {
    chunks: usize,
    data: Vec<Chunk>,
}

/// The feature rows to add and subtract, per perspective, to go from one position to
/// another.
#[derive(Clone, Copy, Debug)]
pub struct Changes {
    adds: [[u16; MAX_ROWS]; 2],
    subs: [[u16; MAX_ROWS]; 2],
    added: usize,
    removed: usize,
}

impl Changes {
    /// The pieces that differ between `from` and `to` (piece boards colour × 6 + type),
    /// if at most `limit` rows change per perspective, as rows of each perspective's
    /// orientation `orient` (a perspective whose orientation differs between the two
    /// positions is summed again instead, see [`NnueEvaluator::accumulate`]).
    #[inline(always)]
    pub fn between(
        from: &[u64; 12],
        to: &[u64; 12],
        limit: usize,
        orient: &[Orientation; 2],
    ) -> Option<Changes> {
        let mut changes = Changes::none();
        changes.find(from, to, limit, orient).then_some(changes)
    }

    /// No changes: room for [`Self::find`] to fill.
    #[inline(always)]
    fn none() -> Changes {
        Changes {
            adds: [[0; MAX_ROWS]; 2],
            subs: [[0; MAX_ROWS]; 2],
            added: 0,
            removed: 0,
        }
    }

    /// [`Self::between`] into `self` (which holds none yet), in place: the accumulators
    /// update once a row in the bulk passes, and moving the 260-byte result about cost
    /// more than finding it. Whether at most `limit` rows change.
    #[inline(always)]
    fn find(
        &mut self,
        from: &[u64; 12],
        to: &[u64; 12],
        limit: usize,
        orient: &[Orientation; 2],
    ) -> bool {
        let limit = limit.min(MAX_ROWS);
        // The boards that changed as a mask first (branch-free), then only those: which of
        // the twelve changed differs row by row, and a test per board was mispredicted.
        // The count is checked before any row is written: between unrelated positions
        // (a shuffled DB) nearly every board differs, and finding that out row by row cost
        // as much as the refresh that follows.
        let mut changed = 0u32;
        let mut total = 0;
        for piece in 0..12 {
            changed |= ((from[piece] != to[piece]) as u32) << piece;
            total += (from[piece] ^ to[piece]).count_ones() as usize;
        }
        if total > limit {
            return false;
        }
        while changed != 0 {
            let piece = changed.trailing_zeros() as usize;
            changed &= changed - 1;
            let (old, new) = (from[piece], to[piece]);
            let (colour, kind) = (piece / 6, piece % 6);
            let mut appeared = new & !old;
            while appeared != 0 {
                let square = appeared.trailing_zeros() as usize;
                appeared &= appeared - 1;
                for (p, &o) in orient.iter().enumerate() {
                    self.adds[p][self.added] = oriented_feature(o, p, colour, kind, square) as u16;
                }
                self.added += 1;
            }
            let mut left = old & !new;
            while left != 0 {
                let square = left.trailing_zeros() as usize;
                left &= left - 1;
                for (p, &o) in orient.iter().enumerate() {
                    self.subs[p][self.removed] =
                        oriented_feature(o, p, colour, kind, square) as u16;
                }
                self.removed += 1;
            }
        }
        true
    }

    /// Rows touched per perspective.
    pub fn len(&self) -> usize {
        self.added + self.removed
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The pieces of `boards` as rows of both perspectives (each in its orientation), and how
/// many: one pass over the pieces for a full refresh (two passes, one a perspective, made
/// the shuffled bulk pass 20% slower).
#[inline(always)]
fn all_rows_both(boards: &[u64; 12], orient: &[Orientation; 2]) -> ([[u16; MAX_ROWS]; 2], usize) {
    let mut rows = [[0u16; MAX_ROWS]; 2];
    let mut n = 0;
    for (piece, &board) in boards.iter().enumerate() {
        let mut bits = board;
        while bits != 0 && n < MAX_ROWS {
            let square = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            for (p, perspective) in rows.iter_mut().enumerate() {
                perspective[n] =
                    oriented_feature(orient[p], p, piece / 6, piece % 6, square) as u16;
            }
            n += 1;
        }
    }
    (rows, n)
}

impl Accumulators {
    /// Zeroed accumulators for `net`'s width (a position's come from [`Self::refresh`]).
    pub fn new(net: &Network) -> Accumulators {
        Accumulators {
            chunks: net.chunks(),
            data: vec![Chunk::default(); 2 * net.chunks()],
        }
    }

    /// `perspective` 0 White, 1 Black.
    pub fn perspective(&self, perspective: usize) -> &[Chunk] {
        &self.data[perspective * self.chunks..(perspective + 1) * self.chunks]
    }

    fn perspective_mut(&mut self, perspective: usize) -> &mut [Chunk] {
        &mut self.data[perspective * self.chunks..(perspective + 1) * self.chunks]
    }

    /// The sums of `boards` from scratch: the biases plus every piece's row.
    #[inline(always)]
    pub fn refresh(&mut self, net: &Network, level: Level, boards: &[u64; 12]) {
        self.refresh_both(net, level, boards, &net.orientations(boards));
    }

    /// [`Self::refresh`] with the orientations given.
    #[inline(always)]
    fn refresh_both(
        &mut self,
        net: &Network,
        level: Level,
        boards: &[u64; 12],
        orient: &[Orientation; 2],
    ) {
        let (rows, n) = all_rows_both(boards, orient);
        let (white, black) = self.data.split_at_mut(self.chunks);
        for (acc, rows) in [(white, &rows[0]), (black, &rows[1])] {
            simd::apply_from(level, acc, net.bias(), net.weights(), &rows[..n], &[]);
        }
    }

    /// Moves these sums to another position by `changes`.
    #[inline(always)]
    pub fn update(&mut self, net: &Network, level: Level, changes: &Changes) {
        let (white, black) = self.data.split_at_mut(self.chunks);
        for (p, acc) in [white, black].into_iter().enumerate() {
            simd::apply_in_place(
                level,
                acc,
                net.weights(),
                &changes.adds[p][..changes.added],
                &changes.subs[p][..changes.removed],
            );
        }
    }

    /// These sums are `base`'s moved by `changes`.
    #[inline(always)]
    pub fn update_from(
        &mut self,
        net: &Network,
        level: Level,
        base: &Accumulators,
        changes: &Changes,
    ) {
        let (white, black) = self.data.split_at_mut(self.chunks);
        for (p, acc) in [white, black].into_iter().enumerate() {
            simd::apply_from(
                level,
                acc,
                base.perspective(p),
                net.weights(),
                &changes.adds[p][..changes.added],
                &changes.subs[p][..changes.removed],
            );
        }
    }

    /// Moves `perspective`'s sums to another position by `changes`.
    #[inline(always)]
    fn update_perspective(
        &mut self,
        net: &Network,
        level: Level,
        perspective: usize,
        changes: &Changes,
    ) {
        simd::apply_in_place(
            level,
            self.perspective_mut(perspective),
            net.weights(),
            &changes.adds[perspective][..changes.added],
            &changes.subs[perspective][..changes.removed],
        );
    }

    /// `perspective`'s sums are `base`'s moved by `changes`.
    #[inline(always)]
    fn update_perspective_from(
        &mut self,
        net: &Network,
        level: Level,
        base: &Accumulators,
        perspective: usize,
        changes: &Changes,
    ) {
        simd::apply_from(
            level,
            self.perspective_mut(perspective),
            base.perspective(perspective),
            net.weights(),
            &changes.adds[perspective][..changes.added],
            &changes.subs[perspective][..changes.removed],
        );
    }

    /// The evaluation through output bucket `bucket` ([`Network::bucket`]), centipawns
    /// from the side to move's view (no endgame rules).
    #[inline(always)]
    pub fn output(&self, net: &Network, level: Level, black_to_move: bool, bucket: usize) -> i32 {
        let (ours, theirs) = net.output_weights(bucket);
        let (us, them) = if black_to_move { (1, 0) } else { (0, 1) };
        let small = net.small_output_weights();
        let sum = simd::screlu_sum_pair(
            level,
            self.perspective(us),
            ours,
            self.perspective(them),
            theirs,
            small,
        );
        net.finish(sum, bucket)
    }
}

/// `Chess768`'s orientations: no bucket, Black's view flipped vertically.
const PLAIN: [Orientation; 2] = [
    Orientation { base: 0, flip: 0 },
    Orientation { base: 0, flip: 56 },
];

#[derive(Clone, Debug)]
struct Slot {
    boards: [u64; 12],
    /// How each perspective read `boards` (its king bucket and mirroring).
    orient: [Orientation; 2],
    /// The accumulators hold `boards`' sums.
    valid: bool,
    acc: Accumulators,
}

/// How an evaluation's accumulators were found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccumulatorStats {
    /// Updated from another position by its few changed pieces.
    pub updates: u64,
    /// Summed from scratch.
    pub refreshes: u64,
    /// Of the updates, those where one perspective was summed from scratch instead (its
    /// king crossed a king bucket boundary or the mirror line).
    pub king_refreshes: u64,
}

/// Evaluates positions one after another with a network, one slot of accumulators per
/// search ply (the bulk passes use ply 0 throughout, each row the base of the next).
#[derive(Clone, Debug)]
pub struct NnueEvaluator {
    net: Arc<Network>,
    level: Level,
    slots: Vec<Slot>,
    stats: AccumulatorStats,
    /// With king buckets: the refresh cache ([`RefreshCache`]), made at first use.
    cache: Option<RefreshCache>,
}

/// A perspective's sums of the last position it was summed for in each orientation (king
/// bucket and mirror half), as Stockfish's "Finny tables": a king that crosses into an
/// orientation starts from the position last seen there, a few pieces away, rather than
/// from the biases and every piece.
#[derive(Clone, Debug)]
struct RefreshCache {
    chunks: usize,
    /// `[perspective][bucket][mirrored]`: the boards (`None`: never filled) and the sums.
    entries: Vec<(Option<[u64; 12]>, Vec<Chunk>)>,
}

impl RefreshCache {
    fn new(net: &Network) -> RefreshCache {
        let count = 2 * net.inputs().king_buckets() * 2;
        RefreshCache {
            chunks: net.chunks(),
            entries: vec![(None, vec![Chunk::default(); net.chunks()]); count],
        }
    }

    /// `perspective`'s sums of `boards` in orientation `orient[perspective]` into `out`,
    /// from the cached position of that orientation, which becomes `boards`.
    #[inline(always)]
    fn refresh(
        &mut self,
        net: &Network,
        level: Level,
        boards: &[u64; 12],
        perspective: usize,
        orient: &[Orientation; 2],
        out: &mut [Chunk],
    ) {
        let o = orient[perspective];
        let buckets = net.inputs().king_buckets();
        let bucket = o.base as usize / super::INPUTS;
        let index = (perspective * buckets + bucket) * 2 + (o.flip & 7 != 0) as usize;
        let (cached, acc) = &mut self.entries[index];
        let mut changes = Changes::none();
        match cached {
            Some(before) if changes.find(before, boards, MAX_ROWS, orient) => {
                simd::apply_in_place(
                    level,
                    acc,
                    net.weights(),
                    &changes.adds[perspective][..changes.added],
                    &changes.subs[perspective][..changes.removed],
                );
            }
            _ => {
                let (rows, n) = all_rows_both(boards, orient);
                let rows = &rows[perspective][..n];
                simd::apply_from(level, acc, net.bias(), net.weights(), rows, &[]);
            }
        }
        *cached = Some(*boards);
        debug_assert_eq!(out.len(), self.chunks);
        out.copy_from_slice(acc);
    }
}

impl NnueEvaluator {
    pub fn new(net: Arc<Network>) -> NnueEvaluator {
        NnueEvaluator::with_level(net, Level::best())
    }

    /// An evaluator on a given path (the tests compare them).
    pub fn with_level(net: Arc<Network>, level: Level) -> NnueEvaluator {
        assert!(
            level <= Level::best(),
            "{} is not in this build",
            level.name()
        );
        NnueEvaluator {
            net,
            level,
            slots: Vec::new(),
            stats: AccumulatorStats::default(),
            cache: None,
        }
    }

    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }

    pub fn level(&self) -> Level {
        self.level
    }

    pub fn stats(&self) -> AccumulatorStats {
        self.stats
    }

    /// The network's evaluation of `boards` (colour × 6 + type, White first), centipawns
    /// from the side to move's view, its accumulators kept in `ply`'s slot.
    #[inline(always)]
    pub fn evaluate(&mut self, boards: &[u64; 12], black_to_move: bool, ply: usize) -> i32 {
        let bucket = self.net.bucket(boards);
        if ply == 0
            && let Some(score) = self.evaluate_moved(boards, black_to_move, bucket)
        {
            return score;
        }
        self.accumulate(boards, ply);
        self.slots[ply]
            .acc
            .output(&self.net, self.level, black_to_move, bucket)
    }

    /// [`Self::evaluate`] at ply 0 (the bulk passes' rows, each from the one before) for a
    /// plain net whose slot holds a position: where it is a few pieces away, the update and
    /// the output layer in one pass ([`simd::update_and_screlu_pair`]); otherwise a refresh,
    /// as [`Self::accumulate`] would. `None` for a king-bucketed net or an empty slot.
    #[inline(always)]
    fn evaluate_moved(
        &mut self,
        boards: &[u64; 12],
        black_to_move: bool,
        bucket: usize,
    ) -> Option<i32> {
        let net = &*self.net;
        let slot = self.slots.first_mut().filter(|slot| slot.valid)?;
        if net.inputs().is_mirrored() {
            return None;
        }
        let pieces: usize = boards.iter().map(|b| b.count_ones() as usize).sum();
        let mut changes = Changes::none();
        if !changes.find(&slot.boards, boards, pieces.saturating_sub(1), &PLAIN) {
            // As `accumulate` would, without finding the changes a second time.
            slot.acc.refresh_both(net, self.level, boards, &PLAIN);
            slot.boards = *boards;
            self.stats.refreshes += 1;
            return Some(slot.acc.output(net, self.level, black_to_move, bucket));
        }
        if changes.is_empty() {
            return Some(slot.acc.output(net, self.level, black_to_move, bucket));
        }
        let (us, them) = if black_to_move { (1, 0) } else { (0, 1) };
        let (ours, theirs) = net.output_weights(bucket);
        let chunks = net.chunks();
        let (white, black) = slot.acc.data.split_at_mut(chunks);
        let mut accs = [Some(white), Some(black)];
        let mut side = |p: usize| simd::PerspectiveUpdate {
            acc: accs[p].take().expect("each perspective once"),
            adds: &changes.adds[p][..changes.added],
            subs: &changes.subs[p][..changes.removed],
        };
        let (us, them) = (side(us), side(them));
        let sum = simd::update_and_screlu_pair(
            self.level,
            net.weights(),
            us,
            ours,
            them,
            theirs,
            net.small_output_weights(),
        );
        slot.boards = *boards;
        self.stats.updates += 1;
        Some(net.finish(sum, bucket))
    }

    /// [`Self::evaluate`] with the exact endgame rules on top ([`super::exact_rule`]): the
    /// score the engine and the bulk passes use. The network's part runs through
    /// [`dispatch`], compiled per SIMD level with its kernels inlined: the search calls
    /// this at every leaf from code compiled for plain x86-64.
    #[inline]
    pub fn score(&mut self, boards: &[u64; 12], black_to_move: bool, ply: usize) -> i32 {
        if let Some(score) = super::exact_rule(boards, black_to_move) {
            return score;
        }
        struct Evaluate<'a> {
            evaluator: &'a mut NnueEvaluator,
            boards: &'a [u64; 12],
            black_to_move: bool,
            ply: usize,
        }
        impl LevelFn for Evaluate<'_> {
            type Output = i32;
            #[inline(always)]
            fn call(self) -> i32 {
                self.evaluator
                    .evaluate(self.boards, self.black_to_move, self.ply)
            }
        }
        let evaluate = Evaluate {
            evaluator: self,
            boards,
            black_to_move,
            ply,
        };
        dispatch_level(Path::scalar(), evaluate)
    }

    /// Brings `ply`'s slot to `boards`: from itself or the ply before, whichever is fewer
    /// changes away, if that is fewer rows than a refresh adds. A perspective whose
    /// orientation (king bucket, mirroring) differs from the base's is summed from scratch.
    #[inline(always)]
    pub fn accumulate(&mut self, boards: &[u64; 12], ply: usize) -> &Accumulators {
        // Compiled twice: a plain `Chess768` net's orientations are constants, and the bulk
        // pass measured 8% slower working them out and comparing them at every row.
        if self.net.inputs().is_mirrored() {
            self.accumulate_as::<true>(boards, ply)
        } else {
            self.accumulate_as::<false>(boards, ply)
        }
    }

    #[inline(always)]
    fn accumulate_as<const KING_BUCKETS: bool>(
        &mut self,
        boards: &[u64; 12],
        ply: usize,
    ) -> &Accumulators {
        while self.slots.len() <= ply {
            self.slots.push(Slot {
                boards: [0; 12],
                orient: [Orientation::default(); 2],
                valid: false,
                acc: Accumulators::new(&self.net),
            });
        }
        let pieces: usize = boards.iter().map(|b| b.count_ones() as usize).sum();
        let orient = if KING_BUCKETS {
            self.net.orientations(boards)
        } else {
            PLAIN
        };
        let here = &self.slots[ply];
        // A refresh adds `pieces` rows to the bias; an update adds and removes `len` rows.
        // The changes are found in place (see `Changes::find`), board by board: comparing
        // the arrays whole first (wide loads of boards the caller has just stored one by
        // one, which the CPU cannot forward from its stores) was the bulk pass's hottest
        // instruction.
        let mut changes = Changes::none();
        let mut from_here =
            here.valid && changes.find(&here.boards, boards, pieces.saturating_sub(1), &orient);
        if from_here && changes.is_empty() {
            return &self.slots[ply].acc;
        }
        let mut from_parent = false;
        if ply > 0 && self.slots[ply - 1].valid {
            // With king buckets a base is chosen by its whole cost: a perspective whose
            // orientation differs from it is summed again (`pieces` rows). Choosing by the
            // changed pieces alone took a sibling whose king had moved over a parent whose
            // had not, and summed a side again at 16% of a bench's evaluations.
            let limit = if from_here && !KING_BUCKETS {
                changes.len().saturating_sub(1)
            } else {
                pieces.saturating_sub(1)
            };
            let mut other = Changes::none();
            let parent = &self.slots[ply - 1];
            if other.find(&parent.boards, boards, limit, &orient) {
                let better = !(KING_BUCKETS && from_here) || {
                    let cost = |base: &[Orientation; 2], len: usize| -> usize {
                        (0..2)
                            .map(|p| if base[p] == orient[p] { len } else { pieces })
                            .sum()
                    };
                    cost(&parent.orient, other.len()) < cost(&here.orient, changes.len())
                };
                if better {
                    changes = other;
                    (from_here, from_parent) = (false, true);
                }
            }
        }
        let net = &*self.net;
        let level = self.level;
        let crossed = KING_BUCKETS && {
            let base = if from_parent { ply - 1 } else { ply };
            (from_here || from_parent) && self.slots[base].orient != orient
        };
        if crossed {
            self.cross(boards, ply, from_parent, &changes, &orient);
        } else if from_here {
            self.slots[ply].acc.update(net, level, &changes);
            self.stats.updates += 1;
        } else if from_parent {
            let (before, rest) = self.slots.split_at_mut(ply);
            rest[0]
                .acc
                .update_from(net, level, &before[ply - 1].acc, &changes);
            self.stats.updates += 1;
        } else {
            self.slots[ply]
                .acc
                .refresh_both(net, level, boards, &orient);
            self.stats.refreshes += 1;
        }
        let slot = &mut self.slots[ply];
        slot.boards = *boards;
        slot.orient = orient;
        slot.valid = true;
        &slot.acc
    }

    /// [`Self::accumulate`]'s update where a king crossed a bucket boundary or the mirror
    /// line since the base: the perspectives whose orientation changed are summed from
    /// scratch, the other is updated by `changes`.
    #[cold]
    fn cross(
        &mut self,
        boards: &[u64; 12],
        ply: usize,
        from_parent: bool,
        changes: &Changes,
        orient: &[Orientation; 2],
    ) {
        let (net, level) = (&*self.net, self.level);
        let cache = self.cache.get_or_insert_with(|| RefreshCache::new(net));
        let (before, rest) = self.slots.split_at_mut(ply);
        let slot = &mut rest[0];
        let base_orient = if from_parent {
            before[ply - 1].orient
        } else {
            slot.orient
        };
        for (p, &o) in orient.iter().enumerate() {
            if base_orient[p] != o {
                cache.refresh(net, level, boards, p, orient, slot.acc.perspective_mut(p));
            } else if from_parent {
                slot.acc
                    .update_perspective_from(net, level, &before[ply - 1].acc, p, changes);
            } else {
                slot.acc.update_perspective(net, level, p, changes);
            }
        }
        self.stats.updates += 1;
        self.stats.king_refreshes += 1;
    }
}
