//! What makes a finished file durable and its writers exclusive: after a temporary file is
//! renamed over its target, the directory is synced too (without it the new name can be
//! lost in a crash though the file's bytes were synced), and a writer that reads a DB it
//! will replace (`import --append`, `label`, `datagen --append`) holds an advisory lock on
//! it, so that two of them run one after the other instead of one losing the other's rows.

use std::fs::File;
use std::io;
use std::path::Path;

/// Syncs the directory that holds `path`, so that a rename into it survives a crash.
pub fn sync_parent_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

/// An exclusive advisory lock (`flock`) on the file at `path`, held until the returned file
/// is dropped; `None` if there is no file. Another process holding it is waited for, with
/// one line on standard error. Since the holder replaces the file by renaming a new one
/// over it, the lock is taken again until it is on the file the path names now.
pub fn lock_existing(path: &Path) -> io::Result<Option<File>> {
    loop {
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                eprintln!(
                    "waiting for {}: another process is writing it",
                    path.display()
                );
                file.lock()?;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        if still_named(&file, path)? {
            return Ok(Some(file));
        }
    }
}

/// Whether `path` still names the file `file` has open.
fn still_named(file: &File, path: &Path) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let held = file.metadata()?;
        match std::fs::metadata(path) {
            Ok(now) => Ok(now.dev() == held.dev() && now.ino() == held.ino()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        Ok(true)
    }
}
