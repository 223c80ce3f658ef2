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

/// Temporary files being written and the targets they will become, for the interrupt
/// handler to remove: a signal ends the process without running destructors.
static PENDING: std::sync::Mutex<Vec<(std::path::PathBuf, std::path::PathBuf)>> =
    std::sync::Mutex::new(Vec::new());

/// Outputs a command has said it will write, before their temporary files exist (`tune`
/// writes its weights only at the end): an interrupt names them as not written.
static ANNOUNCED: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Says that `target` will be written (see [`ANNOUNCED`]); renaming a file into place there
/// takes it off the list.
pub fn announce(target: &Path) {
    if let Ok(mut list) = ANNOUNCED.lock() {
        list.push(target.to_path_buf());
    }
}

fn pending() -> std::sync::MutexGuard<'static, Vec<(std::path::PathBuf, std::path::PathBuf)>> {
    // A panic elsewhere while the list was held leaves it as it was: still usable.
    PENDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A temporary file that will be renamed over `target`, known to the interrupt handler
/// (see [`remove_pending_on_signals`]) until it is renamed into place or dropped.
#[derive(Debug)]
pub struct Pending {
    temp: std::path::PathBuf,
}

/// A temporary file for `target` in its directory (so that renaming it into place is
/// atomic), named `PREFIX...SUFFIX`, registered as pending ([`Pending::create`]), and with
/// the mode of an ordinary file (0644, less the umask) rather than a temporary file's
/// private 0600, which the rename would keep.
pub fn temp_file_for(
    target: &Path,
    prefix: &str,
    suffix: &str,
) -> io::Result<(tempfile::NamedTempFile, Pending)> {
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix).suffix(suffix);
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    Pending::create(target, || builder.tempfile_in(dir))
}

impl Pending {
    /// Creates the temporary file (`create`) and registers it in one step, the list held
    /// throughout: an interrupt cannot fall between the file's creation and its
    /// registration and leave it behind.
    pub fn create<T: AsRef<Path>, E>(
        target: &Path,
        create: impl FnOnce() -> Result<T, E>,
    ) -> Result<(T, Pending), E> {
        let mut list = pending();
        let temp = create()?;
        let path = temp.as_ref().to_path_buf();
        list.push((path.clone(), target.to_path_buf()));
        Ok((temp, Pending { temp: path }))
    }

    /// Runs `rename` (which puts the temporary file in place) with the list held, so that
    /// an interrupt either removes the file before it or finds it no longer pending.
    pub fn commit<T>(self, rename: impl FnOnce() -> T) -> T {
        let mut list = pending();
        let outcome = rename();
        if let Some((_, target)) = list.iter().find(|(temp, _)| *temp == self.temp)
            && let Ok(mut announced) = ANNOUNCED.lock()
        {
            announced.retain(|t| t != target);
        }
        list.retain(|(temp, _)| *temp != self.temp);
        // `self` drops after the list is released; its own removal then finds nothing.
        drop(list);
        outcome
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        pending().retain(|(temp, _)| *temp != self.temp);
    }
}

/// From now on SIGINT and SIGTERM remove every pending temporary file, say on standard
/// error which outputs were not written, and end the process with 128 + the signal (130,
/// 143), as shells report a process a signal ended.
pub fn remove_pending_on_signals() -> io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let list = pending();
            for (temp, _) in list.iter() {
                let _ = std::fs::remove_file(temp);
            }
            let name = if signal == SIGINT {
                "SIGINT"
            } else {
                "SIGTERM"
            };
            let mut targets: Vec<String> = list
                .iter()
                .map(|(_, target)| target.display().to_string())
                .collect();
            if let Ok(announced) = ANNOUNCED.lock() {
                targets.extend(announced.iter().map(|t| t.display().to_string()));
            }
            targets.sort();
            targets.dedup();
            if targets.is_empty() {
                eprintln!("interrupted by {name}: no output was being written");
            } else {
                eprintln!(
                    "interrupted by {name}: {} not written (nothing left behind)",
                    targets.join(", ")
                );
            }
            std::process::exit(128 + signal);
        }
    });
    Ok(())
}
