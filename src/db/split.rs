//! Splitting a DB into shards of contiguous rows, for running one pass over many machines
//! (the Python package's Ray example evaluates one shard a task).

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{Database, DbError, DbWriter};

/// The file name of shard `index`: zero-padded, so that sorting the names sorts the shards
/// in row order.
pub fn shard_name(index: usize) -> String {
    format!("shard-{index:05}.psdb")
}

/// Whether `name` is a shard's file name as [`shard_name`] makes them.
pub fn is_shard_name(name: &str) -> bool {
    name.strip_prefix("shard-")
        .and_then(|rest| rest.strip_suffix(".psdb"))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The rows of shard `index` of `shards` over `count` rows: contiguous, in order, sizes
/// differing by at most one.
pub fn shard_rows(count: u64, shards: usize, index: usize) -> std::ops::Range<u64> {
    let at = |i: usize| (count as u128 * i as u128 / shards as u128) as u64;
    at(index)..at(index + 1)
}

/// Writes `db` as `shards` DBs in `dir` (which must exist), named by [`shard_name`], each
/// with the rows of [`shard_rows`], the source's label columns and block size. Shards are
/// written in parallel on the current rayon pool, each whole or not at all; if one fails,
/// those already written are removed. `done(rows)` reports progress. Returns the paths.
pub fn split(
    db: &Database,
    shards: usize,
    dir: &Path,
    done: impl Fn(u64) + Sync,
) -> Result<Vec<PathBuf>, DbError> {
    if shards == 0 {
        return Err(DbError::Invalid {
            path: dir.to_path_buf(),
            what: "cannot split into 0 shards".to_string(),
        });
    }
    let paths: Vec<PathBuf> = (0..shards).map(|i| dir.join(shard_name(i))).collect();
    let written: Vec<Result<(), DbError>> = paths
        .par_iter()
        .enumerate()
        .map(|(index, path)| write_shard(db, shard_rows(db.len(), shards, index), path, &done))
        .collect();
    if written.iter().any(Result::is_err) {
        // A partial set of shards would pass for the whole DB: none or all.
        for (path, result) in paths.iter().zip(&written) {
            if result.is_ok() {
                let _ = std::fs::remove_file(path);
            }
        }
        return Err(written
            .into_iter()
            .find_map(Result::err)
            .expect("an error was found"));
    }
    Ok(paths)
}

fn write_shard(
    db: &Database,
    rows: std::ops::Range<u64>,
    path: &Path,
    done: &(impl Fn(u64) + Sync),
) -> Result<(), DbError> {
    let mut writer = DbWriter::create(path, db.header().block_size, db.columns(), false)?;
    let mut pending = 0;
    for record in db.records(rows) {
        writer.push(&record?)?;
        pending += 1;
        if pending == db.block_size() as u64 {
            done(pending);
            pending = 0;
        }
    }
    done(pending);
    writer.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_rows_cover_every_row_once_in_order_and_balanced() {
        for (count, shards) in [
            (0u64, 3usize),
            (10, 3),
            (10, 10),
            (7, 9),
            (4096 * 5 + 17, 8),
        ] {
            let ranges: Vec<_> = (0..shards).map(|i| shard_rows(count, shards, i)).collect();
            assert_eq!(ranges[0].start, 0);
            assert_eq!(ranges[shards - 1].end, count);
            for pair in ranges.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
            }
            let sizes: Vec<u64> = ranges.iter().map(|r| r.end - r.start).collect();
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(max - min <= 1, "{count} rows in {shards}: {sizes:?}");
        }
    }

    #[test]
    fn shard_names_sort_in_row_order() {
        let mut names: Vec<String> = (0..120).rev().map(shard_name).collect();
        names.sort();
        assert_eq!(names, (0..120).map(shard_name).collect::<Vec<_>>());
        assert!(names.iter().all(|n| is_shard_name(n)));
        for other in [
            "shard-.psdb",
            "shard-12.psdbx",
            "shard-1a.psdb",
            "x-00001.psdb",
        ] {
            assert!(!is_shard_name(other), "{other}");
        }
    }
}
