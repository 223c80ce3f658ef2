//! The pawn hash table: the pawn-only terms and the passed pawns, cached by the pawn-only
//! Zobrist key. Pawn structures repeat across a search tree far more than whole positions
//! do, so most evaluations skip the pawn-structure kernels.

/// One cached pawn structure.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    key: u64,
    filled: bool,
    mg: i32,
    eg: i32,
    passed: [u64; 2],
}

/// What the table holds for a pawn structure: the sum of the pawn-only terms and the passed
/// pawns of White and Black.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PawnEval {
    pub mg: i32,
    pub eg: i32,
    pub passed: [u64; 2],
}

/// A direct-mapped table of a power-of-two number of entries; a new structure replaces the
/// old one in its slot.
#[derive(Clone, Debug)]
pub struct PawnTable {
    entries: Vec<Entry>,
    probes: u64,
    hits: u64,
}

impl PawnTable {
    /// A table of `entries` slots, rounded up to a power of two (at least one).
    pub fn new(entries: usize) -> PawnTable {
        PawnTable {
            entries: vec![Entry::default(); entries.max(1).next_power_of_two()],
            probes: 0,
            hits: 0,
        }
    }

    /// The cached value for `key`, or `compute`'s, which is then stored. Inlined into the
    /// evaluation, which is compiled per SIMD level (see `Evaluator::evaluate_keyed`).
    #[inline(always)]
    pub fn probe(&mut self, key: u64, compute: impl FnOnce() -> PawnEval) -> PawnEval {
        self.probes += 1;
        let slot = (key as usize) & (self.entries.len() - 1);
        let entry = &mut self.entries[slot];
        if entry.filled && entry.key == key {
            self.hits += 1;
            return PawnEval {
                mg: entry.mg,
                eg: entry.eg,
                passed: entry.passed,
            };
        }
        let value = compute();
        *entry = Entry {
            key,
            filled: true,
            mg: value.mg,
            eg: value.eg,
            passed: value.passed,
        };
        value
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn probes(&self) -> u64 {
        self.probes
    }

    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Empties the table and its counters.
    pub fn clear(&mut self) {
        self.entries.fill(Entry::default());
        self.probes = 0;
        self.hits = 0;
    }
}
