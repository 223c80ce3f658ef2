//! A streaming batch loader for network trainers: positions from DBs, binpacks and anything
//! `import` reads, filtered, shuffled through a bounded buffer, cut into batches of NNUE
//! features with the side to move's score and result, built ahead of the consumer by
//! worker threads. Memory is bounded by the shuffle buffer and the batches in flight, not by
//! the data — unless the caller keeps a pass in a [`PassCache`] (the trainer does: 32 bytes
//! a position, up to [`CACHED_POSITIONS`]).
//!
//! One reader thread reads the inputs as [`super::mix`] says (one after the other, or
//! interleaved at their weights' rates; a DB's blocks in a seeded random order when
//! shuffling), applies the filters and feeds the shuffle buffer; what leaves the buffer is
//! cut into batches, numbered, and handed to the workers, which compute the features; the
//! consumer takes the batches back in their numbers' order. So without weights every
//! position kept by the filters appears once per pass, and the same seed gives the same
//! batches whatever the thread count.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use pawnstorm_kernels::Color;

use crate::export::filters::Filter;
use crate::position::labels::{GameResult, Record};
use crate::training::arrays::UNKNOWN_SCORE;
use crate::training::mix::{self, Input, InputCounts, Item, MixConfig, Split};
use crate::training::nnue::{FeatureSet, MAX_ACTIVE};

mod cache;
use cache::CachedPass;
pub use cache::{CACHED_POSITIONS, PassCache};

/// What a loader reads and how it cuts it.
#[derive(Clone, Debug)]
pub struct LoaderConfig {
    pub inputs: Vec<Input>,
    /// Interleave the inputs at their weights' rates, each cycling ([`super::mix`]);
    /// otherwise read them one after the other, each once.
    pub mixing: bool,
    pub batch_size: usize,
    pub set: FeatureSet,
    pub shuffle: bool,
    /// Positions held for shuffling (0: no buffer; only the order of DB blocks is shuffled).
    pub shuffle_buffer: usize,
    pub seed: u64,
    /// Worker threads computing features.
    pub threads: usize,
    pub filter: Filter,
    /// The side of the held-out split read (`Split::All`: every position).
    pub split: Split,
}

/// One batch: `len` positions, the arrays row-major.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Batch {
    pub len: usize,
    /// (len, 32) active inputs from the side to move's perspective, -1 padded.
    pub stm_features: Vec<i32>,
    /// (len, 32) the same from the other side's.
    pub nstm_features: Vec<i32>,
    /// 0 White to move, 1 Black.
    pub stm: Vec<u8>,
    /// Centipawns, side to move's view; `i32::MIN` unknown.
    pub score: Vec<i32>,
    /// The side to move's result: 1, 0.5, 0; NaN unknown.
    pub result: Vec<f32>,
}

/// A position as the pipeline carries it: 32 bytes, so that the shuffle buffer is a
/// quarter of the size of full records and its random accesses miss the cache less.
/// Aligned to its size so that no slot of the shuffle buffer straddles two cache lines
/// (one prefetch brings a whole slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(32))]
pub struct Packed {
    occupied: u64,
    /// One nibble per occupied square in ascending order: colour × 6 + type (the first
    /// sixteen in the first word, lowest nibble first).
    pieces: [u64; 2],
    /// Side to move's view; `i32::MIN` unknown.
    score: i32,
    /// 0 White to move, 1 Black.
    stm: u8,
    /// Side to move's result: 2 won, 1 draw, 0 lost, 255 unknown.
    result: u8,
    /// The kings' squares, White's first (the feature sets' king buckets).
    kings: [u8; 2],
}

impl Packed {
    fn new(
        boards: &[u64; 12],
        black_to_move: bool,
        white_score: Option<i32>,
        white_result: Option<i8>,
    ) -> Packed {
        let (occupied, pieces) = crate::training::nnue::pack(boards);
        let kings = [
            boards[5].trailing_zeros() as u8,
            boards[11].trailing_zeros() as u8,
        ];
        Packed {
            occupied,
            pieces,
            score: match white_score {
                Some(s) if black_to_move => -s,
                Some(s) => s,
                None => UNKNOWN_SCORE,
            },
            stm: black_to_move as u8,
            result: match white_result {
                None => 255,
                Some(r) => {
                    let r = if black_to_move { -r } else { r };
                    (r + 1) as u8
                }
            },
            kings,
        }
    }

    /// The side to move.
    fn side_to_move(&self) -> Color {
        if self.stm == 0 {
            Color::White
        } else {
            Color::Black
        }
    }

    /// The features from the side to move's perspective and the other side's, one
    /// position at a time (the reference of the batches' AVX2 path).
    fn features(&self, set: FeatureSet) -> ([i32; MAX_ACTIVE], [i32; MAX_ACTIVE]) {
        let (mut ours, mut theirs) = ([0; MAX_ACTIVE], [0; MAX_ACTIVE]);
        set.active_packed(
            self.occupied,
            self.pieces,
            self.kings,
            self.side_to_move(),
            &mut ours,
            &mut theirs,
        );
        (ours, theirs)
    }

    /// The packed form of a record (as the shuffle buffer holds it).
    pub fn of_record(record: &Record) -> Packed {
        let p = &record.position;
        let mut boards = [0u64; 12];
        for color in [Color::White, Color::Black] {
            for kind in crate::position::board::PieceType::ALL {
                boards[6 * color.index() + kind.index()] = p.pieces(color, kind).0;
            }
        }
        Packed::new(
            &boards,
            p.side_to_move() == Color::Black,
            record.labels.score,
            record.labels.result.map(GameResult::to_i8),
        )
    }

    fn of_block_row(block: &crate::db::Block<'_>, row: usize) -> Packed {
        let mut boards = [0u64; 12];
        for (i, board) in boards.iter_mut().enumerate() {
            *board = block.pieces[i % 6][row].0 & block.colors[i / 6][row].0;
        }
        let score = block
            .score
            .map(|c| c[row])
            .filter(|&s| s != crate::db::NO_SCORE);
        let result = block
            .result
            .map(|c| c[row])
            .filter(|&r| r != crate::db::NO_RESULT);
        Packed::new(&boards, block.side_to_move[row] != 0, score, result)
    }

    #[cfg(test)]
    fn boards(&self) -> [u64; 12] {
        crate::training::nnue::unpack(self.occupied, self.pieces)
    }
}

/// What the reader met besides good positions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadCounts {
    /// Positions that passed the filters.
    pub kept: u64,
    pub dropped: u64,
    /// Bad records in text or binpack inputs (skipped, as `import` skips them).
    pub rejected: u64,
    /// Each input's part, in the order given.
    pub inputs: Vec<InputCounts>,
    /// What each filter dropped.
    pub dropped_by: crate::export::filters::Dropped,
}

/// A running pass over the inputs: an iterator of batches.
pub struct Loader {
    batches: Receiver<Result<(u64, Batch), String>>,
    waiting: BTreeMap<u64, Batch>,
    next: u64,
    finished: bool,
    stop: Arc<AtomicBool>,
    counts: Arc<Mutex<ReadCounts>>,
    threads: Vec<JoinHandle<()>>,
    recycler: Recycler,
}

/// Feature arrays their consumer is done with, kept for the workers to fill again: a batch's
/// two 2 MiB arrays, freshly allocated, cost page faults and zeroed pages in the kernel (a
/// tenth of the loader's time), and glibc hands large blocks back to the system on free.
#[derive(Clone, Debug, Default)]
pub struct Recycler(Arc<Mutex<Vec<Vec<i32>>>>);

/// Arrays the recycler keeps at most; the rest are freed.
const RECYCLED_ARRAYS: usize = 16;

impl Recycler {
    /// Takes back an array (its contents are not read again).
    pub fn give(&self, array: Vec<i32>) {
        if let Ok(mut pool) = self.0.lock()
            && pool.len() < RECYCLED_ARRAYS
        {
            pool.push(array);
        }
    }

    /// An empty array with room for `capacity` values.
    fn take(&self, capacity: usize) -> Vec<i32> {
        let mut array = self
            .0
            .lock()
            .ok()
            .and_then(|mut pool| pool.pop())
            .unwrap_or_default();
        array.clear();
        array.reserve(capacity);
        array
    }
}

/// Batches each worker may have built ahead of the consumer.
const AHEAD_PER_THREAD: usize = 2;

impl Loader {
    /// Starts the threads of one pass.
    pub fn start(config: LoaderConfig) -> Result<Loader, String> {
        Loader::start_cached(config, None)
    }

    /// [`Loader::start`], the pass's positions kept in `cache` for passes after it, or
    /// replayed from it when a pass before it filled it. Only for passes whose positions
    /// (before the shuffle buffer) do not depend on their seed: see [`PassCache`].
    pub fn start_cached(
        config: LoaderConfig,
        cache: Option<Arc<PassCache>>,
    ) -> Result<Loader, String> {
        if config.batch_size == 0 {
            return Err("batch_size must be at least 1".to_string());
        }
        if config.inputs.is_empty() {
            return Err("no inputs".to_string());
        }
        let threads = config.threads.max(1);
        let (work_tx, work_rx) = sync_channel::<(u64, Vec<Packed>)>(threads * AHEAD_PER_THREAD);
        let (out_tx, out_rx) = sync_channel(threads * AHEAD_PER_THREAD);
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Mutex::new(ReadCounts::default()));
        let recycler = Recycler::default();
        let mut handles = Vec::new();
        let work_rx = Arc::new(Mutex::new(work_rx));
        for _ in 0..threads {
            let work_rx = Arc::clone(&work_rx);
            let out_tx = out_tx.clone();
            let set = config.set;
            let recycler = recycler.clone();
            handles.push(std::thread::spawn(move || {
                loop {
                    let job = match work_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((seq, records)) = job else { return };
                    let batch = build_batch(&records, set, &recycler);
                    if out_tx.send(Ok((seq, batch))).is_err() {
                        return;
                    }
                }
            }));
        }
        {
            let stop = Arc::clone(&stop);
            let counts = Arc::clone(&counts);
            handles.push(std::thread::spawn(move || {
                let mut batcher = Batcher {
                    tx: work_tx,
                    pending: Vec::with_capacity(config.batch_size),
                    batch_size: config.batch_size,
                    seq: 0,
                    stop: &stop,
                };
                let outcome = read_all(&config, cache.as_deref(), &mut batcher, &counts);
                let outcome = outcome.and_then(|()| batcher.flush());
                if let Err(message) = outcome {
                    // The consumer may be gone: then nobody needs the message.
                    let _ = out_tx.send(Err(message));
                }
            }));
        }
        Ok(Loader {
            batches: out_rx,
            waiting: BTreeMap::new(),
            next: 0,
            finished: false,
            stop,
            counts,
            threads: handles,
            recycler,
        })
    }

    /// Where spent feature arrays go back to be filled again.
    pub fn recycler(&self) -> Recycler {
        self.recycler.clone()
    }

    /// What the reader has read so far (all of it once the pass is over).
    pub fn counts(&self) -> ReadCounts {
        self.counts.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// The counts as the reader updates them, readable without the loader (which its
    /// consumer may be holding while it waits for a batch).
    pub fn counts_handle(&self) -> Arc<Mutex<ReadCounts>> {
        Arc::clone(&self.counts)
    }
}

impl Iterator for Loader {
    type Item = Result<Batch, String>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(batch) = self.waiting.remove(&self.next) {
                self.next += 1;
                return Some(Ok(batch));
            }
            if self.finished {
                return None;
            }
            match self.batches.recv() {
                Ok(Ok((seq, batch))) => {
                    self.waiting.insert(seq, batch);
                }
                Ok(Err(message)) => {
                    self.finished = true;
                    self.waiting.clear();
                    return Some(Err(message));
                }
                // Every sender gone: the reader and the workers are done.
                Err(_) => {
                    self.finished = true;
                    if self.waiting.is_empty() {
                        return None;
                    }
                }
            }
        }
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Unblock the workers (their sends fail once the receiver is gone), then wait.
        let (_, dead) = sync_channel(0);
        drop(std::mem::replace(&mut self.batches, dead));
        for handle in self.threads.drain(..) {
            let _ = handle.join();
        }
    }
}

/// Cuts the shuffled stream into numbered batches for the workers.
struct Batcher<'a> {
    tx: SyncSender<(u64, Vec<Packed>)>,
    pending: Vec<Packed>,
    batch_size: usize,
    seq: u64,
    stop: &'a AtomicBool,
}

impl Batcher<'_> {
    fn push(&mut self, record: Packed) -> Result<(), String> {
        self.pending.push(record);
        if self.pending.len() == self.batch_size {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> Result<(), String> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(STOPPED.to_string());
        }
        let records = std::mem::replace(&mut self.pending, Vec::with_capacity(self.batch_size));
        self.tx
            .send((self.seq, records))
            .map_err(|_| STOPPED.to_string())?;
        self.seq += 1;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        if !self.pending.is_empty() {
            self.send()?;
        }
        Ok(())
    }
}

const STOPPED: &str = "the loader was dropped";

/// splitmix64: the loader's only randomness, seeded.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        ((self.next() as u128 * n as u128) >> 64) as usize
    }
}

/// The shuffle buffer: full, each new position takes the place of a random one, which
/// leaves; at the end the rest leave in a random order. Each position leaves once.
struct Shuffler<'a, 'b> {
    buffer: Vec<Packed>,
    capacity: usize,
    rng: Rng,
    /// The slots the next positions replace, drawn [`SLOTS_AHEAD`] pushes ahead so that
    /// they can be prefetched: a random slot of a large buffer is a cache miss (a memory
    /// latency, several times one push's work), the loader's main cost.
    upcoming: [usize; SLOTS_AHEAD],
    pushes: usize,
    out: &'a mut Batcher<'b>,
}

const SLOTS_AHEAD: usize = 16;

impl Shuffler<'_, '_> {
    fn push(&mut self, record: Packed) -> Result<(), String> {
        if self.capacity == 0 {
            return self.out.push(record);
        }
        if self.buffer.len() < self.capacity {
            self.buffer.push(record);
            if self.buffer.len() == self.capacity {
                for slot in &mut self.upcoming {
                    *slot = self.rng.below(self.capacity);
                }
            }
            return Ok(());
        }
        let k = self.pushes % SLOTS_AHEAD;
        self.pushes += 1;
        let j = self.upcoming[k];
        self.upcoming[k] = self.rng.below(self.capacity);
        prefetch(&self.buffer[self.upcoming[k]]);
        let leaving = std::mem::replace(&mut self.buffer[j], record);
        self.out.push(leaving)
    }

    fn finish(&mut self) -> Result<(), String> {
        let mut rest = std::mem::take(&mut self.buffer);
        for i in (1..rest.len()).rev() {
            let j = self.rng.below(i + 1);
            rest.swap(i, j);
        }
        for record in rest {
            self.out.push(record)?;
        }
        Ok(())
    }
}

/// The shuffle buffer's storage, asked for in huge pages where the system gives them on
/// request: its accesses are random, and with 4 KiB pages nearly each one also misses the
/// TLB.
fn shuffle_buffer(capacity: usize) -> Vec<Packed> {
    let buffer: Vec<Packed> = Vec::with_capacity(capacity);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = buffer.as_ptr() as usize;
        let end = start + capacity * std::mem::size_of::<Packed>();
        let aligned = start.next_multiple_of(HUGE);
        if aligned + HUGE <= end {
            // SAFETY: advice over memory this vector owns (whole pages inside its
            // allocation); it changes how the pages are backed, never their contents.
            unsafe {
                libc::madvise(
                    aligned as *mut libc::c_void,
                    (end - aligned) / HUGE * HUGE,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    buffer
}

#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing architecturally and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            (value as *const T).cast::<i8>(),
            std::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

impl Item for Packed {
    fn of_block_row(block: &crate::db::Block<'_>, row: usize) -> Result<Packed, String> {
        Ok(Packed::of_block_row(block, row))
    }
    fn of_record(record: &Record) -> Packed {
        Packed::of_record(record)
    }
}

fn read_all(
    config: &LoaderConfig,
    cache: Option<&PassCache>,
    batcher: &mut Batcher<'_>,
    counts: &Mutex<ReadCounts>,
) -> Result<(), String> {
    let mut rng = Rng(config.seed ^ 0x005e_ed0f_10ad);
    let capacity = if config.shuffle {
        config.shuffle_buffer
    } else {
        0
    };
    let blocks_seed = rng.next();
    let mut shuffler = Shuffler {
        buffer: shuffle_buffer(capacity),
        capacity,
        rng,
        upcoming: [0; SLOTS_AHEAD],
        pushes: 0,
        out: batcher,
    };
    if let Some(pass) = cache.and_then(|c| c.pass.get()) {
        for &packed in &pass.positions {
            shuffler.push(packed)?;
        }
        shuffler.finish()?;
        publish(counts, &pass.inputs, &pass.dropped);
        return Ok(());
    }
    // One pass fills the cache; a pass started beside it reads without keeping.
    let filling = cache.filter(|c| !c.claimed.swap(true, Ordering::AcqRel));
    let limit = filling.map_or(0, |c| c.limit);
    let mut kept = filling.map(|_| Vec::new());
    let mut filter = config.filter.clone();
    filter.seed ^= config.seed;
    let mix_config = MixConfig {
        inputs: config.inputs.clone(),
        mixing: config.mixing,
        filter,
        shuffle_blocks: config.shuffle,
        seed: blocks_seed,
        split: config.split,
    };
    let outcome = mix::run(
        &mix_config,
        |packed: Packed| {
            if let Some(positions) = kept.as_mut() {
                if positions.len() < limit {
                    positions.push(packed);
                } else {
                    kept = None;
                }
            }
            shuffler.push(packed)
        },
        |inputs, dropped| publish(counts, inputs, dropped),
    )
    .and_then(|(inputs, dropped)| shuffler.finish().map(|()| (inputs, dropped)));
    let (inputs, dropped) = match outcome {
        Ok(read) => read,
        Err(message) => {
            if let Some(cache) = filling {
                cache.claimed.store(false, Ordering::Release);
            }
            return Err(message);
        }
    };
    publish(counts, &inputs, &dropped);
    match (filling, kept) {
        (Some(cache), Some(positions)) => {
            let _ = cache.pass.set(CachedPass {
                positions,
                inputs,
                dropped,
            });
        }
        // Too many to keep: later passes read again.
        (Some(cache), None) => cache.claimed.store(false, Ordering::Release),
        _ => {}
    }
    Ok(())
}

fn publish(
    counts: &Mutex<ReadCounts>,
    inputs: &[InputCounts],
    dropped: &crate::export::filters::Dropped,
) {
    if let Ok(mut c) = counts.lock() {
        *c = ReadCounts {
            kept: inputs.iter().map(|i| i.given).sum(),
            dropped: inputs.iter().map(|i| i.dropped).sum(),
            rejected: inputs.iter().map(|i| i.rejected).sum(),
            inputs: inputs.to_vec(),
            dropped_by: *dropped,
        };
    }
}

/// The features and labels of `positions`.
pub fn build_batch(positions: &[Packed], set: FeatureSet, recycler: &Recycler) -> Batch {
    let n = positions.len();
    let mut batch = Batch {
        len: n,
        stm_features: recycler.take(n * MAX_ACTIVE),
        nstm_features: recycler.take(n * MAX_ACTIVE),
        stm: Vec::with_capacity(n),
        score: Vec::with_capacity(n),
        result: Vec::with_capacity(n),
    };
    // The positions left to the scalar path: all of them unless the AVX2 path took them.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut rest = positions;
    #[cfg(target_arch = "x86_64")]
    if let Some(wide) = crate::training::nnue::wide::Wide::new(set) {
        let unpacked = |packed: &Packed| {
            let us = packed.side_to_move();
            (packed.occupied, packed.pieces, packed.kings, us)
        };
        let (stm_features, nstm_features) = (&mut batch.stm_features, &mut batch.nstm_features);
        let each = |ours: &[i32; MAX_ACTIVE], theirs: &[i32; MAX_ACTIVE]| {
            stm_features.extend_from_slice(ours);
            nstm_features.extend_from_slice(theirs);
        };
        // SAFETY: `Wide::new` found AVX2.
        if unsafe { wide.fill_packed_rows(positions, unpacked, each) }.is_some() {
            for packed in positions {
                push_labels(&mut batch, packed);
            }
            rest = &[];
        }
    }
    for packed in rest {
        // Built on the stack and appended: the arrays are not zeroed first.
        let (ours, theirs) = packed.features(set);
        batch.stm_features.extend_from_slice(&ours);
        batch.nstm_features.extend_from_slice(&theirs);
        push_labels(&mut batch, packed);
    }
    batch
}

/// A position's side to move, score and result, appended to `batch`.
fn push_labels(batch: &mut Batch, packed: &Packed) {
    batch.stm.push(packed.stm);
    batch.score.push(packed.score);
    batch.result.push(match packed.result {
        2 => 1.0,
        1 => 0.5,
        0 => 0.0,
        _ => f32::NAN,
    });
}

#[cfg(test)]
mod tests;
