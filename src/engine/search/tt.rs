//! The transposition table: buckets of four 16-byte entries (one cache line), replacement
//! by depth and age, mate scores stored relative to the node so they stay right at any
//! ply they are read back at.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::movegen::Move;

use crate::position::score::{MATE_BOUND, MAX_PLY};

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

/// One entry: two words, `data` and `key ^ data`. Threads read and write entries without
/// locks (Lazy SMP), so a reader may see one word of one write and the other of another;
/// such a torn entry fails the key check (the XOR no longer gives the key) and is not used.
/// The full 64-bit key is checked, so a false hit also needs a 64-bit collision.
#[derive(Default)]
#[repr(C)]
struct Entry {
    key_xor_data: AtomicU64,
    data: AtomicU64,
}

/// What an entry holds, packed into its data word.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Data {
    mv: Move,
    score: i16,
    eval: i16,
    depth: u8,
    /// Bound in bits 0-1 (0 = empty), age in bits 2-7.
    bound_age: u8,
}

impl Data {
    fn pack(self) -> u64 {
        u64::from(self.mv.bits())
            | u64::from(self.score as u16) << 16
            | u64::from(self.eval as u16) << 32
            | u64::from(self.depth) << 48
            | u64::from(self.bound_age) << 56
    }

    fn unpack(word: u64) -> Data {
        Data {
            mv: Move::from_bits(word as u16),
            score: (word >> 16) as u16 as i16,
            eval: (word >> 32) as u16 as i16,
            depth: (word >> 48) as u8,
            bound_age: (word >> 56) as u8,
        }
    }

    fn is_empty(self) -> bool {
        self.bound_age & 3 == 0
    }
}

impl Entry {
    /// The entry's key and data as one consistent pair (a torn pair gives a key that matches
    /// no probe).
    #[inline(always)]
    fn load(&self) -> (u64, Data) {
        let data = self.data.load(Ordering::Relaxed);
        let key = self.key_xor_data.load(Ordering::Relaxed) ^ data;
        (key, Data::unpack(data))
    }

    #[inline(always)]
    fn save(&self, key: u64, data: Data) {
        let word = data.pack();
        self.key_xor_data.store(key ^ word, Ordering::Relaxed);
        self.data.store(word, Ordering::Relaxed);
    }
}

const BUCKET: usize = 4;
const AGE_MASK: u8 = 0xfc;
const AGE_STEP: u8 = 4;

#[derive(Default)]
#[repr(C, align(64))]
struct Bucket([Entry; BUCKET]);

/// A table of a power-of-two number of buckets that fits in the megabytes asked for; probed
/// and written through `&self` by every search thread at once.
pub struct TranspositionTable {
    buckets: Vec<Bucket>,
    age: u8,
}

/// The machine's physical memory in bytes, where the system tells it.
pub fn physical_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf reads system constants; it has no preconditions.
        let (pages, page_size) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        (pages > 0 && page_size > 0).then(|| pages as u64 * page_size as u64)
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// The memory this process may have, in bytes: the machine's physical memory, or less
/// where the process's address-space limit (`ulimit -v`) or its cgroup's `memory.max` (a
/// container's limit) says less.
pub fn available_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let mut limit = physical_memory();
        let mut lower = |bytes: u64| limit = Some(limit.map_or(bytes, |l| l.min(bytes)));
        let mut rlimit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given and nothing else.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rlimit) } == 0
            && rlimit.rlim_cur != libc::RLIM_INFINITY
        {
            lower(rlimit.rlim_cur);
        }
        if let Ok(max) = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
            && let Ok(bytes) = max.trim().parse::<u64>()
        {
            lower(bytes);
        }
        limit
    }
    #[cfg(not(target_os = "linux"))]
    physical_memory()
}

/// Asks Linux to back the whole 2 MiB pages of `len` bytes at `start` with transparent
/// huge pages (where they are on `madvise`, as Debian's kernels have them): a probe lands
/// on a random bucket, and with 4 KiB pages nearly every one also missed the TLB, a page
/// walk on top of the cache miss (the probe's load was a sixth of datagen's time in
/// `perf`). A hint only: refused or unsupported, the table works the same.
fn advise_huge_pages(start: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let begin = (start as usize).next_multiple_of(HUGE);
        let end = (start as usize + len) / HUGE * HUGE;
        if end > begin {
            // SAFETY: the range lies inside the allocation just reserved; madvise only
            // changes how its pages are backed, never their contents.
            unsafe {
                libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
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
        // More than the machine's memory is refused before anything is allocated: with
        // overcommit the allocation could succeed and the zeroing below would then touch
        // it all (or the searches fault it in later) until the system kills the engine.
        if available_memory().is_some_and(|total| bytes as u64 > total) {
            return None;
        }
        let count = (bytes / size_of::<Bucket>()).max(1);
        // Round down to a power of two so the index is a mask.
        let count = 1usize << (usize::BITS - 1 - count.leading_zeros());
        let mut buckets: Vec<Bucket> = Vec::new();
        buckets.try_reserve_exact(count).ok()?;
        // Before the first touch, so that the zeroing faults the pages in large.
        advise_huge_pages(buckets.as_mut_ptr().cast(), count * size_of::<Bucket>());
        buckets.resize_with(count, Bucket::default);
        Some(TranspositionTable { buckets, age: 0 })
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        for bucket in &mut self.buckets {
            *bucket = Bucket::default();
        }
        self.age = 0;
    }

    /// Starts a new search: older entries become the first to be replaced.
    pub fn new_search(&mut self) {
        self.age = self.age.wrapping_add(AGE_STEP) & AGE_MASK;
    }

    #[inline(always)]
    fn bucket(&self, key: u64) -> &Bucket {
        &self.buckets[(key as usize) & (self.buckets.len() - 1)]
    }

    /// Hints the CPU to load the bucket of `key` (called right after a move is made).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let pointer = self.bucket(key) as *const Bucket as *const i8;
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
        self.bucket(key).0.iter().find_map(|entry| {
            let (stored, e) = entry.load();
            (stored == key && !e.is_empty()).then(|| Hit {
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
        })
    }

    /// Stores a result. An entry of the same position keeps its move when the new result has
    /// none; otherwise the slot chosen is the same position's, or the one of least worth
    /// (shallow and old).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn store(
        &self,
        key: u64,
        ply: usize,
        mv: Move,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
    ) {
        let age = self.age;
        let bucket = &self.bucket(key).0;
        let loaded: [(u64, Data); BUCKET] = std::array::from_fn(|i| bucket[i].load());
        let worth = |e: &Data| {
            let age_distance = (age.wrapping_sub(e.bound_age & AGE_MASK) & AGE_MASK) / AGE_STEP;
            e.depth as i32 - 8 * age_distance as i32
        };
        let slot = match loaded
            .iter()
            .position(|(stored, e)| *stored == key && !e.is_empty())
        {
            Some(same) => same,
            None => (0..BUCKET)
                .min_by_key(|&i| {
                    if loaded[i].1.is_empty() {
                        i32::MIN
                    } else {
                        worth(&loaded[i].1)
                    }
                })
                .unwrap_or(0),
        };
        let (stored, old) = loaded[slot];
        let same = stored == key && !old.is_empty();
        // A shallower non-exact result does not overwrite a deeper one of the same position.
        if same && bound != Bound::Exact && depth + 3 < old.depth as i32 {
            return;
        }
        let mv = if mv == Move::NULL && same { old.mv } else { mv };
        let data = Data {
            mv,
            score: score_to_tt(score, ply) as i16,
            eval: eval.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
            depth: depth.clamp(0, 255) as u8,
            bound_age: age | bound as u8,
        };
        bucket[slot].save(key, data);
    }

    /// Per mille of the first thousand entries filled in this search, as UCI's `hashfull`.
    pub fn hashfull(&self) -> u32 {
        let sample = self.buckets.iter().flat_map(|b| b.0.iter()).take(1000);
        let mut seen = 0u32;
        let mut used = 0u32;
        for entry in sample {
            seen += 1;
            let (_, e) = entry.load();
            if !e.is_empty() && e.bound_age & AGE_MASK == self.age {
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
    use crate::position::score::mated_in;

    /// The table's memory is marked for huge pages (smaps's `hg` flag: the kernel's record
    /// of the advice, whether or not it has found 2 MiB pages for it yet), where the kernel
    /// has transparent huge pages at all.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_table_asks_for_huge_pages() {
        let modes = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if modes.is_err() {
            eprintln!("skipped: this kernel has no transparent huge pages");
            return;
        }
        let table = TranspositionTable::new(64);
        let inside = &table.buckets[table.buckets.len() / 2] as *const Bucket as usize;
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
        let mut in_mapping = false;
        let mut flags = None;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((low, high)) = range.split_once('-')
                && let (Ok(low), Ok(high)) = (
                    usize::from_str_radix(low, 16),
                    usize::from_str_radix(high, 16),
                )
            {
                in_mapping = (low..high).contains(&inside);
            } else if in_mapping && let Some(rest) = line.strip_prefix("VmFlags:") {
                flags = Some(
                    rest.split_whitespace()
                        .map(str::to_string)
                        .collect::<Vec<_>>(),
                );
            }
        }
        let flags = flags.expect("the table's mapping in /proc/self/smaps");
        assert!(flags.iter().any(|f| f == "hg"), "{flags:?}");
    }

    #[test]
    fn mate_scores_are_stored_relative_to_the_node() {
        let tt = TranspositionTable::new(1);
        // Mated 5 plies from the root, stored at ply 3: 2 plies below that node.
        tt.store(42, 3, Move::NULL, mated_in(5), 0, 4, Bound::Exact);
        // Read at ply 7 (another path to the same node): mated 9 plies from that root.
        assert_eq!(tt.probe(42, 7).map(|h| h.score), Some(mated_in(9)));
        assert_eq!(tt.probe(42, 3).map(|h| h.score), Some(mated_in(5)));
    }

    #[test]
    fn deeper_entries_survive_a_full_bucket_of_shallow_ones() {
        let tt = TranspositionTable::new(1);
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

    #[test]
    fn data_words_round_trip() {
        let data = Data {
            mv: Move::from_bits(0xbeef),
            score: -31_000,
            eval: 1234,
            depth: 200,
            bound_age: 0xfe,
        };
        assert_eq!(Data::unpack(data.pack()), data);
    }

    #[test]
    fn a_torn_entry_is_never_a_hit() {
        let tt = TranspositionTable::new(1);
        tt.store(7 << 32, 0, Move::from_bits(77), 50, 0, 9, Bound::Exact);
        tt.store(9 << 32, 0, Move::from_bits(99), -50, 0, 9, Bound::Exact);
        // Tear them: the data word of one with the key word of the other.
        let bucket = &tt.bucket(0).0;
        let slot_7 = bucket.iter().position(|e| e.load().0 == 7 << 32).unwrap();
        let slot_9 = bucket.iter().position(|e| e.load().0 == 9 << 32).unwrap();
        let data_9 = bucket[slot_9].data.load(Ordering::Relaxed);
        bucket[slot_7].data.store(data_9, Ordering::Relaxed);
        assert!(tt.probe(7 << 32, 0).is_none());
        assert!(tt.probe(9 << 32, 0).is_some_and(|h| h.score == -50));
    }

    #[test]
    fn threads_writing_one_bucket_never_read_a_mixed_entry() {
        // Every writer stores, for its key, a score derived from the key; a reader that ever
        // got a hit whose score belongs to another key would have read a torn entry.
        let tt = TranspositionTable::new(1);
        let keys: Vec<u64> = (1..=16u64).map(|i| i << 40).collect();
        let score_of = |key: u64| (key >> 40) as i32 * 10;
        std::thread::scope(|scope| {
            for t in 0..4 {
                let (tt, keys) = (&tt, &keys);
                scope.spawn(move || {
                    for round in 0..20_000i32 {
                        let key = keys[(round as usize * 7 + t) % keys.len()];
                        tt.store(
                            key,
                            0,
                            Move::NULL,
                            score_of(key),
                            0,
                            round % 20,
                            Bound::Exact,
                        );
                        for &probe in keys {
                            if let Some(hit) = tt.probe(probe, 0) {
                                assert_eq!(hit.score, score_of(probe));
                            }
                        }
                    }
                });
            }
        });
    }
}
