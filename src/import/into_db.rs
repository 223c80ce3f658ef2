//! A whole import into a DB file, as `pawnstorm import` and the Python package's
//! `import_files` run it: the DB created or appended to, every source fed in, game ids
//! continued, the file finished (written whole or not at all).

use std::path::PathBuf;

use crate::db::{Columns, Database, DbWriter};

use super::{
    AfterRejection, Counts, Format, Handlers, ImportError, ImportOptions, Rejection, Source,
};

/// What to import and where.
#[derive(Clone, Debug)]
pub struct IntoDb {
    pub sources: Vec<Source>,
    /// `None`: each source's format from its name.
    pub format: Option<Format>,
    pub options: ImportOptions,
    /// Stop at the first bad record (nothing is written).
    pub strict: bool,
    pub output: PathBuf,
    /// Add to the DB at `output` instead of replacing it.
    pub append: bool,
    /// Positions per block of a new DB (an appended one keeps its own).
    pub block_size: u32,
}

/// What an import did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Imported {
    pub counts: Counts,
    /// Positions in the DB now.
    pub total: u64,
    /// Positions that were there before (with `append`).
    pub appended_to: u64,
}

/// How an import reports what it meets besides good records.
pub struct Observers<'a> {
    /// A record rejected (not called with `strict`: the import stops instead).
    pub reject: &'a mut dyn FnMut(&Rejection),
    /// The source being read, then how many of its (compressed) bytes are read so far.
    pub source: &'a mut dyn FnMut(&Source),
    pub progress: &'a mut dyn FnMut(u64),
}

impl IntoDb {
    /// Standard input (`-`) may appear once among the sources.
    pub fn check(&self) -> Result<(), String> {
        if self.sources.iter().filter(|s| **s == Source::Stdin).count() > 1 {
            return Err("standard input (-) can be read only once".to_string());
        }
        if self.options.every == 0 {
            return Err("--every must be at least 1".to_string());
        }
        // A DB read as text is a rejection on every "line" (millions of them, for minutes)
        // and an empty output: say what it is and what to use instead.
        for source in &self.sources {
            if let Source::File(path) = source
                && is_database(path)
            {
                return Err(format!(
                    "{}: a position DB (.psdb), not positions to import: `pawnstorm merge` \
                     joins DBs into one, `pawnstorm export` writes one as EPD, PGN or binpack",
                    path.display()
                ));
            }
        }
        Ok(())
    }

    /// Runs the import. On an error (or a bad record with `strict`) the DB at `output` is
    /// left as it was.
    pub fn run(&self, observers: &mut Observers<'_>) -> Result<Imported, ImportError> {
        let (mut writer, mut next_game_id) = if self.append && self.output.exists() {
            // The writer locks the DB first: the game ids are read from the DB it appends
            // to, not from one another writer is about to replace. Checked whatever
            // --no-verify says: the new file gets fresh checksums, which would make damage
            // read in now look whole.
            let writer = DbWriter::append_to(&self.output)?;
            let existing = Database::open(&self.output)?;
            let next = existing.max_game_id()?.map_or(0, |id| id.saturating_add(1));
            (writer, next)
        } else {
            (
                DbWriter::create(&self.output, self.block_size, Columns::NONE, false)?,
                0,
            )
        };
        let appended_to = writer.len();
        let counts = import_sources(
            &self.sources,
            self.format,
            &self.options,
            self.strict,
            &mut next_game_id,
            &mut writer,
            observers,
        )?;
        let total = writer.finish()?;
        Ok(Imported {
            counts,
            total,
            appended_to,
        })
    }
}

/// Feeds every source into `writer`. `format: None` takes each source's format from its
/// name. `next_game_id` numbers the games and is advanced past them.
pub fn import_sources(
    sources: &[Source],
    format: Option<Format>,
    options: &ImportOptions,
    strict: bool,
    next_game_id: &mut u32,
    writer: &mut DbWriter,
    observers: &mut Observers<'_>,
) -> Result<Counts, ImportError> {
    let mut totals = Counts::default();
    for source in sources {
        let format = format.unwrap_or_else(|| source.format());
        (observers.source)(source);
        let counts = super::import(
            source,
            format,
            options,
            next_game_id,
            &mut Handlers {
                records: &mut |records| writer.push_all(records),
                reject: &mut |rejection| {
                    if strict {
                        return AfterRejection::Stop;
                    }
                    (observers.reject)(rejection);
                    AfterRejection::Continue
                },
                progress: &mut *observers.progress,
            },
        )?;
        totals.add(&counts);
    }
    Ok(totals)
}

/// Whether `path` starts as a position DB does (its magic); false for anything unreadable,
/// which the import then reports in its own words.
fn is_database(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; crate::db::MAGIC.len()];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut head))
        .is_ok_and(|()| head == crate::db::MAGIC)
}
