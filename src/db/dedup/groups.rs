//! Grouping rows by key: a position's rows so far, and the table from key to them.

use super::{Keep, Marks, Mean};
use crate::db::layout::{NO_RESULT, NO_SCORE};

/// A row as a group takes it.
#[derive(Clone, Copy)]
pub(super) struct Seen {
    pub(super) key: u64,
    pub(super) row: u64,
    pub(super) score: i32,
    pub(super) result: i8,
}

/// The rows of one position so far.
#[derive(Clone, Copy)]
pub(super) struct Group {
    first: u64,
    last: u64,
    count: u64,
    score_sum: i64,
    scores: u64,
    result_sum: i64,
    results: u64,
}

impl Group {
    pub(super) fn new(e: Seen) -> Group {
        let mut group = Group {
            first: e.row,
            last: e.row,
            count: 1,
            score_sum: 0,
            scores: 0,
            result_sum: 0,
            results: 0,
        };
        group.add_labels(e);
        group
    }

    pub(super) fn add(&mut self, e: Seen) {
        self.last = e.row;
        self.count += 1;
        self.add_labels(e);
    }

    #[inline]
    pub(super) fn add_labels(&mut self, e: Seen) {
        if e.score != NO_SCORE {
            self.score_sum += i64::from(e.score);
            self.scores += 1;
        }
        if e.result != NO_RESULT {
            self.result_sum += i64::from(e.result);
            self.results += 1;
        }
    }

    /// The mean score, rounded half away from zero (so that White's and Black's views
    /// round alike); "none" when no row has a score.
    pub(super) fn mean_score(&self) -> i32 {
        if self.scores == 0 {
            return NO_SCORE;
        }
        let (sum, n) = (self.score_sum.unsigned_abs(), self.scores);
        let rounded = ((2 * sum as u128 + n as u128) / (2 * n as u128)) as i64;
        // The mean of i32s other than i32::MIN stays among them.
        (rounded * self.score_sum.signum()) as i32
    }

    /// The mean result rounded to the nearest of -1, 0, 1: decisive only when more than
    /// half the way there, so an exact tie (one win, one draw) is a draw.
    pub(super) fn mean_result(&self) -> i8 {
        if self.results == 0 {
            return NO_RESULT;
        }
        if 2 * self.result_sum.unsigned_abs() > self.results {
            self.result_sum.signum() as i8
        } else {
            0
        }
    }
}

/// An open-addressing table from key to the rows of its position: keeping the first or
/// the last, the row itself sits in the slot; keeping the mean, a [`Group`] of the rows.
pub(super) struct Groups {
    keep: Keep,
    /// (key, row + 1 or group index + 1); 0 marks an empty slot.
    slots: Vec<(u64, u64)>,
    distinct: usize,
    groups: Vec<Group>,
}

impl Groups {
    pub(super) fn new(keep: Keep) -> Groups {
        Groups {
            keep,
            slots: Vec::new(),
            distinct: 0,
            groups: Vec::new(),
        }
    }

    /// Empties the table, sized for `expected` keys without growing.
    pub(super) fn reset(&mut self, expected: usize) {
        let capacity = (expected * 2).next_power_of_two().max(16);
        self.slots.clear();
        self.slots.resize(capacity, (0, 0));
        self.distinct = 0;
        self.groups.clear();
    }

    #[inline]
    pub(super) fn add(&mut self, e: Seen) {
        if (self.distinct + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let key = e.key;
        let mask = self.slots.len() - 1;
        // The keys' low bits: the top ones chose the bucket or partition.
        let mut i = key as usize & mask;
        loop {
            let (k, value) = self.slots[i];
            if value == 0 {
                self.distinct += 1;
                self.slots[i] = (
                    key,
                    if self.keep == Keep::Mean {
                        self.groups.push(Group::new(e));
                        self.groups.len() as u64
                    } else {
                        e.row + 1
                    },
                );
                return;
            }
            if k == key {
                match self.keep {
                    Keep::First => {}
                    Keep::Last => self.slots[i].1 = e.row + 1,
                    Keep::Mean => self.groups[value as usize - 1].add(e),
                }
                return;
            }
            i = (i + 1) & mask;
        }
    }

    pub(super) fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![(0, 0); (old.len() * 2).max(16)];
        let mask = self.slots.len() - 1;
        for (key, value) in old.into_iter().filter(|&(_, value)| value != 0) {
            let mut i = key as usize & mask;
            while self.slots[i].1 != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = (key, value);
        }
    }

    /// Marks each position's kept row; keeping the mean, adds the means of positions of
    /// more than one row.
    pub(super) fn finish(&self, marks: &Marks, means: &mut Vec<Mean>) {
        if self.keep != Keep::Mean {
            for &(_, value) in &self.slots {
                if value != 0 {
                    marks.set(value - 1);
                }
            }
            return;
        }
        for group in &self.groups {
            marks.set(group.first);
            if group.count > 1 {
                means.push(Mean {
                    row: group.first,
                    score: group.mean_score(),
                    result: group.mean_result(),
                    _padding: [0; 3],
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::super::{Entry, KeyRowLabels};
    use super::*;

    fn group(scores: &[i32], results: &[i8]) -> Group {
        let entries: Vec<KeyRowLabels> = (0..scores.len().max(results.len()))
            .map(|i| {
                KeyRowLabels::new(
                    7,
                    i as u64,
                    scores.get(i).copied().unwrap_or(NO_SCORE),
                    results.get(i).copied().unwrap_or(NO_RESULT),
                )
            })
            .collect();
        let mut group = Group::new(entries[0].seen());
        for e in &entries[1..] {
            group.add(e.seen());
        }
        group
    }

    #[test]
    fn mean_score_rounds_half_away_from_zero() {
        assert_eq!(group(&[10, 11], &[]).mean_score(), 11);
        assert_eq!(group(&[-10, -11], &[]).mean_score(), -11);
        assert_eq!(group(&[10, 10, 11], &[]).mean_score(), 10);
        assert_eq!(group(&[NO_SCORE, 30], &[]).mean_score(), 30);
        assert_eq!(group(&[NO_SCORE, NO_SCORE], &[]).mean_score(), NO_SCORE);
        assert_eq!(group(&[i32::MAX, i32::MAX], &[]).mean_score(), i32::MAX);
        assert_eq!(
            group(&[i32::MIN + 1, i32::MIN + 1], &[]).mean_score(),
            i32::MIN + 1
        );
    }

    #[test]
    fn mean_result_is_decisive_only_past_half_way() {
        assert_eq!(group(&[], &[1, 0]).mean_result(), 0);
        assert_eq!(group(&[], &[1, 1, 0]).mean_result(), 1);
        assert_eq!(group(&[], &[-1, -1, 0]).mean_result(), -1);
        assert_eq!(group(&[], &[1, -1]).mean_result(), 0);
        assert_eq!(group(&[], &[NO_RESULT, -1]).mean_result(), -1);
        assert_eq!(group(&[], &[NO_RESULT, NO_RESULT]).mean_result(), NO_RESULT);
    }

    #[test]
    fn the_table_groups_keys_through_growth_and_collisions() {
        // Keys equal in their low bits collide in every table size; key i % 300 at row i.
        let keys: Vec<u64> = (0..1000u64).map(|i| (i % 300) << 40).collect();
        let last = |i: u64| if i < 100 { 900 + i } else { 600 + i };
        for keep in [Keep::First, Keep::Last, Keep::Mean] {
            let mut groups = Groups::new(keep);
            groups.reset(0);
            for (row, &key) in keys.iter().enumerate() {
                groups.add(KeyRowLabels::new(key, row as u64, row as i32, 0).seen());
            }
            let marks = Marks((0..16).map(|_| AtomicU64::new(0)).collect());
            let mut means = Vec::new();
            groups.finish(&marks, &mut means);
            let marked: Vec<u64> = (0..1000)
                .filter(|&r| marks.0[r as usize / 64].load(Ordering::Relaxed) >> (r % 64) & 1 != 0)
                .collect();
            let expected: Vec<u64> = match keep {
                Keep::First | Keep::Mean => (0..300).collect(),
                Keep::Last => {
                    let mut rows: Vec<u64> = (0..300).map(last).collect();
                    rows.sort();
                    rows
                }
            };
            assert_eq!(marked, expected, "{keep:?}");
            if keep == Keep::Mean {
                assert_eq!(means.len(), 300);
                for m in &means {
                    let rows: Vec<i64> = (m.row as i64..1000).step_by(300).collect();
                    let mean = rows.iter().sum::<i64>() as f64 / rows.len() as f64;
                    assert_eq!(m.score, mean.round() as i32, "row {}", m.row);
                }
            }
        }
    }
}
