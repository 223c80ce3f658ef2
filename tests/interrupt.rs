//! SIGINT and SIGTERM in the middle of every command that writes files: the process ends
//! with 128 + the signal (130, 143), says in one line which output was not written, and
//! leaves no temporary file and no output behind.
//!
//! To hit the middle deterministically the process is stopped (SIGSTOP) once its temporary
//! file exists, the temporary file is checked to be still there (the output not yet renamed
//! into place), and the signal is sent before it continues.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::read_fixture;

const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

fn hidden_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with('.'))
        .collect()
}

fn signal(pid: u32, number: i32) {
    // SAFETY: kill has no memory effects; the pid is our own child's.
    let done = unsafe { libc::kill(pid as i32, number) };
    assert_eq!(done, 0, "kill {number} {pid}");
}

/// Runs `pawnstorm args` in `dir`, signals it in mid-write (once a temporary file is in
/// `watch`), or after `delay` when the command has no temporary file until its end; its
/// exit code and standard error.
fn interrupted(
    args: &[&str],
    dir: &Path,
    watch: &Path,
    number: i32,
    delay: Option<Duration>,
) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let pid = child.id();
    match delay {
        Some(delay) => std::thread::sleep(delay),
        None => {
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                if !hidden_files(watch).is_empty() {
                    signal(pid, libc::SIGSTOP);
                    // Still there while stopped: the output is not in place yet.
                    if !hidden_files(watch).is_empty() {
                        break;
                    }
                    signal(pid, libc::SIGCONT);
                }
                assert!(
                    child.try_wait().unwrap().is_none(),
                    "{args:?} finished before it could be interrupted: give it more work"
                );
                assert!(Instant::now() < deadline, "{args:?}: no temporary file");
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }
    signal(pid, number);
    signal(pid, libc::SIGCONT);
    let output = child.wait_with_output().unwrap();
    let code = output.status.code().unwrap_or(-1);
    (code, String::from_utf8_lossy(&output.stderr).to_string())
}

fn check(what: &str, (code, stderr): (i32, String), number: i32, target: &str, dir: &Path) {
    assert_eq!(code, 128 + number, "{what}: {stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    let name = if number == SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    };
    assert!(
        last.starts_with(&format!("interrupted by {name}: "))
            && last.contains(target)
            && last.contains("not written"),
        "{what}: {stderr}"
    );
    assert!(
        hidden_files(dir).is_empty(),
        "{what}: {:?}",
        hidden_files(dir)
    );
    assert!(!dir.join(target).exists(), "{what}: {target} was written");
}

#[test]
fn every_writing_command_ends_cleanly_on_sigint_and_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    // 1M labelled positions (the labelled set 16 times): enough work for each command to
    // be caught in the middle.
    let texel = read_fixture("texel/labeled-from-fixture-pgns.epd");
    let big = work.join("big.epd");
    std::fs::write(&big, texel.repeat(16)).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(["import", "big.epd", "-o", "big.psdb"])
        .current_dir(work)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let small = work.join("small.psdb");
    std::fs::write(work.join("small.epd"), &texel).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(["import", "small.epd", "-o"])
        .arg(&small)
        .current_dir(work)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());

    let cases: [(&str, &[&str], &str, Option<Duration>); 9] = [
        (
            "import",
            &["import", "big.epd", "-o", "out.psdb"],
            "out.psdb",
            None,
        ),
        (
            "export",
            &["export", "big.psdb", "-o", "out.epd"],
            "out.epd",
            None,
        ),
        (
            "features",
            &["features", "big.psdb", "--kind", "planes", "-o", "out.npz"],
            "out.npz",
            None,
        ),
        (
            "eval",
            &["eval", "big.psdb", "-o", "out.csv"],
            "out.csv",
            None,
        ),
        (
            "split",
            &["split", "big.psdb", "--shards", "2", "-o", "shards"],
            "shard-",
            None,
        ),
        (
            "datagen",
            &[
                "datagen",
                "-o",
                "games.psdb",
                "--games",
                "400",
                "--nodes",
                "3000",
            ],
            "games.psdb",
            None,
        ),
        (
            "tune",
            &[
                "tune",
                "small.psdb",
                "-o",
                "tuned.txt",
                "--epochs",
                "1000",
                "--patience",
                "1000",
            ],
            "tuned.txt",
            Some(Duration::from_millis(700)),
        ),
        (
            "merge",
            &["merge", "big.psdb", "big.psdb", "-o", "merged.psdb"],
            "merged.psdb",
            None,
        ),
        (
            // The partition pass: partition files, then the output's temporary file.
            "dedup",
            &["dedup", "big.psdb", "-o", "unique.psdb", "--memory", "4M"],
            "unique.psdb",
            None,
        ),
    ];
    for (i, (what, args, target, delay)) in cases.into_iter().enumerate() {
        let number = if i % 2 == 0 { SIGINT } else { SIGTERM };
        let watch = if what == "split" {
            work.join("shards")
        } else {
            work.to_path_buf()
        };
        let outcome = interrupted(args, work, &watch, number, delay);
        if what == "split" {
            // The shard being written is named; the directory holds no half shard.
            let shards = work.join("shards");
            assert_eq!(outcome.0, 128 + number, "split: {}", outcome.1);
            assert!(outcome.1.contains("shard-"), "{}", outcome.1);
            assert!(
                hidden_files(&shards).is_empty(),
                "{:?}",
                hidden_files(&shards)
            );
            continue;
        }
        check(what, outcome, number, target, work);
    }
}
