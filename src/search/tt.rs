//! The transposition table: buckets of four 16-byte entries (one cache line), replacement
//! by depth and age, mate scores stored relative to the node so they stay right at any
//! ply they are read back at.

use crate::movegen::Move;

use super::score::{MATE_BOUND, MAX_PLY};

/// What a stored score says about the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true value is at most the score (fail-low).
    Upper = 1,
    /// The true value is at least the score (fail-high).
    Lower = 2,
    /// The score is the true value (a PV node).
    Exact = 3,
}

/// One probe's answer.
#[derive(Clone, Copy, Debug)]
pub struct Hit {
    pub mv: Move,
    pub score: i32,
    pub eval: i32,
    pub depth: i32,
    pub bound: Bound,
}

#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Entry {
    /// The upper 32 bits of the key: the lower bits chose the bucket.
    check: u32,
    mv: Move,
    score: i16,
    eval: i16,
    depth: u8,
    /// Bound in bits 0-1 (0 = empty), age in bits 2-7.
    bound_age: u8,
    _pad: [u8; 4],
}

const BUCKET: usize = 4;
const AGE_MASK: u8 = 0xfc;
const AGE_STEP: u8 = 4;

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket([Entry; BUCKET]);

/// A table of a power-of-two number of buckets that fits in the megabytes asked for.
pub struct TranspositionTable {
    buckets: Vec<Bucket>,
    age: u8,
}

impl TranspositionTable {
    /// A table of at most `megabytes` MiB (at least one bucket).
    pub fn new(megabytes: usize) -> TranspositionTable {
        TranspositionTable::try_new(megabytes)
            .unwrap_or_else(|| TranspositionTable::try_new(1).expect("a 1 MiB table"))
    }

    /// A table of at most `megabytes` MiB, or `None` when the memory cannot be had (a GUI
    /// may ask for more than the machine has: that must not abort the engine).
    pub fn try_new(megabytes: usize) -> Option<TranspositionTable> {
        let bytes = megabytes.max(1).checked_mul(1 << 20)?;
        let count = (bytes / size_of::<Bucket>()).max(1);
        // Round down to a power of two so the index is a mask.
        let count = 1usize << (usize::BITS - 1 - count.leading_zeros());
        let mut buckets = Vec::new();
        buckets.try_reserve_exact(count).ok()?;
        buckets.resize(count, Bucket::default());
        Some(TranspositionTable { buckets, age: 0 })
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.buckets.fill(Bucket::default());
        self.age = 0;
    }

    /// Starts a new search: older entries become the first to be replaced.
    pub fn new_search(&mut self) {
        self.age = self.age.wrapping_add(AGE_STEP) & AGE_MASK;
    }

    #[inline(always)]
    fn bucket(&self, key: u64) -> usize {
        (key as usize) & (self.buckets.len() - 1)
    }

    /// Hints the CPU to load the bucket of `key` (called right after a move is made).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let pointer = &self.buckets[self.bucket(key)] as *const Bucket as *const i8;
            // SAFETY: a prefetch is only a hint; the pointer is to a live bucket.
            unsafe {
                std::arch::x86_64::_mm_prefetch(pointer, std::arch::x86_64::_MM_HINT_T0);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// The entry for `key`, its score made relative to the root at `ply`.
    #[inline]
    pub fn probe(&self, key: u64, ply: usize) -> Option<Hit> {
        let check = (key >> 32) as u32;
        let bucket = &self.buckets[self.bucket(key)];
        bucket
            .0
            .iter()
            .find(|e| e.check == check && e.bound_age & 3 != 0)
            .map(|e| Hit {
                mv: e.mv,
                score: score_from_tt(e.score as i32, ply),
                eval: e.eval as i32,
                depth: e.depth as i32,
                bound: match e.bound_age & 3 {
                    1 => Bound::Upper,
                    2 => Bound::Lower,
                    _ => Bound::Exact,
                },
            })
    }

    /// Stores a result. An entry of the same position keeps its move when the new result has
    /// none; otherwise the slot chosen is the same position's, or the one of least worth
    /// (shallow and old).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn store(
        &mut self,
        key: u64,
        ply: usize,
        mv: Move,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
    ) {
        let check = (key >> 32) as u32;
        let age = self.age;
        let index = self.bucket(key);
        let bucket = &mut self.buckets[index].0;
        let worth = |e: &Entry| {
            let age_distance = (age.wrapping_sub(e.bound_age & AGE_MASK) & AGE_MASK) / AGE_STEP;
            e.depth as i32 - 8 * age_distance as i32
        };
        let slot = match bucket.iter().position(|e| e.check == check) {
            Some(same) => same,
            None => (0..BUCKET)
                .min_by_key(|&i| {
                    if bucket[i].bound_age & 3 == 0 {
                        i32::MIN
                    } else {
                        worth(&bucket[i])
                    }
                })
                .unwrap_or(0),
        };
        let entry = &mut bucket[slot];
        let same = entry.check == check && entry.bound_age & 3 != 0;
        // A shallower non-exact result does not overwrite a deeper one of the same position.
        if same && bound != Bound::Exact && depth + 3 < entry.depth as i32 {
            return;
        }
        let mv = if mv == Move::NULL && same {
            entry.mv
        } else {
            mv
        };
        *entry = Entry {
            check,
            mv,
            score: score_to_tt(score, ply) as i16,
            eval: eval.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
            depth: depth.clamp(0, 255) as u8,
            bound_age: age | bound as u8,
            _pad: [0; 4],
        };
    }

    /// Per mille of the first thousand entries filled in this search, as UCI's `hashfull`.
    pub fn hashfull(&self) -> u32 {
        let sample = self.buckets.iter().flat_map(|b| b.0.iter()).take(1000);
        let mut seen = 0u32;
        let mut used = 0u32;
        for entry in sample {
            seen += 1;
            if entry.bound_age & 3 != 0 && entry.bound_age & AGE_MASK == self.age {
                used += 1;
            }
        }
        (used * 1000).checked_div(seen).unwrap_or(0)
    }
}

/// Mate scores are stored as distance from the node, not from the root.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    debug_assert!(ply <= MAX_PLY);
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::score::mated_in;

    #[test]
    fn mate_scores_are_stored_relative_to_the_node() {
        let mut tt = TranspositionTable::new(1);
        // Mated 5 plies from the root, stored at ply 3: 2 plies below that node.
        tt.store(42, 3, Move::NULL, mated_in(5), 0, 4, Bound::Exact);
        // Read at ply 7 (another path to the same node): mated 9 plies from that root.
        assert_eq!(tt.probe(42, 7).map(|h| h.score), Some(mated_in(9)));
        assert_eq!(tt.probe(42, 3).map(|h| h.score), Some(mated_in(5)));
    }

    #[test]
    fn deeper_entries_survive_a_full_bucket_of_shallow_ones() {
        let mut tt = TranspositionTable::new(1);
        // Keys whose low bits are zero all go to bucket 0.
        tt.store(1 << 32, 0, Move::NULL, 10, 0, 20, Bound::Exact);
        for i in 2..=5u64 {
            tt.store(i << 32, 0, Move::NULL, 1, 0, 1, Bound::Lower);
        }
        assert_eq!(tt.probe(1 << 32, 0).map(|h| h.depth), Some(20));
        assert!(tt.probe(5 << 32, 0).is_some());
    }

    #[test]
    fn old_entries_give_way_to_new_ones() {
        let mut tt = TranspositionTable::new(1);
        tt.store(1 << 32, 0, Move::NULL, 10, 0, 20, Bound::Exact);
        for _ in 0..4 {
            tt.new_search();
        }
        for i in 2..=4u64 {
            tt.store(i << 32, 0, Move::NULL, 1, 0, 1, Bound::Lower);
        }
        tt.store(5 << 32, 0, Move::NULL, 1, 0, 1, Bound::Lower);
        assert!(tt.probe(1 << 32, 0).is_none());
        assert!((2..=5u64).all(|i| tt.probe(i << 32, 0).is_some()));
    }

    #[test]
    fn hashfull_counts_this_search_only() {
        let mut tt = TranspositionTable::new(1);
        // Four times as many keys as entries, spread by an odd multiplier.
        for i in 0..(1u64 << 18) {
            let key = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            tt.store(key, 0, Move::NULL, 0, 0, 1, Bound::Exact);
        }
        assert!(tt.hashfull() > 900);
        tt.new_search();
        assert_eq!(tt.hashfull(), 0);
    }
}
