//! Standard output for the commands. `println!` panics when the reader has gone (`| head`);
//! writes through `stdout()` return the error instead, and `main` ends quietly on it, as
//! ripgrep does.

use std::io::{self, BufWriter, StdoutLock, Write};
use std::path::Path;

use anyhow::{Context, Result};

/// Buffered standard output whose writes return their errors. Flush it before returning:
/// dropping a `BufWriter` swallows the error of its last write.
pub fn stdout() -> BufWriter<StdoutLock<'static>> {
    BufWriter::new(io::stdout().lock())
}

/// Whether `error`, or anything in its chain of causes, is a write to a closed pipe.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Writes `path` through a temporary file in its directory, renamed into place when `fill`
/// succeeds, so that a failed or interrupted write leaves no half-written file.
pub fn write_atomically<T>(
    path: &Path,
    fill: impl FnOnce(&mut (dyn Write + Send)) -> Result<T>,
) -> Result<T> {
    let (temp, pending) = pawnstorm::io::durable::temp_file_for(path, ".out-", ".tmp")
        .with_context(|| format!("{}: creating a temporary file", path.display()))?;
    let mut sink = BufWriter::new(temp.as_file());
    let value = fill(&mut sink).with_context(|| format!("writing {}", path.display()))?;
    sink.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    drop(sink);
    pending
        .commit(|| temp.persist(path))
        .with_context(|| format!("{}: renaming into place", path.display()))?;
    pawnstorm::io::durable::sync_parent_dir(path)
        .with_context(|| format!("{}: syncing its directory", path.display()))?;
    Ok(value)
}
