//! A reader that closes its end of the pipe early (`pawnstorm ... | head`) ends the command
//! quietly: exit status 0, no panic, no error message. The pipe is closed before the binary
//! starts, so every write to standard output fails with EPIPE, not just some.

use crate::common;

use std::process::{Command, Stdio};

use assert_cmd::prelude::*;

use common::fixture;

fn with_stdout_closed(args: &[&str]) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let output = Command::cargo_bin("pawnstorm")
        .expect("binary built")
        .args(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{args:?}: status {}: {stderr}",
        output.status
    );
    for bad in ["panicked", "error", "Broken pipe"] {
        assert!(
            !stderr.contains(bad),
            "{args:?}: {bad:?} on stderr: {stderr}"
        );
    }
}

#[test]
fn every_command_that_writes_to_stdout_ends_quietly_on_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wac.psdb");
    let db = db.to_str().unwrap();
    let status = Command::cargo_bin("pawnstorm")
        .unwrap()
        .args(["import", &fixture("epd/wac.epd"), "-o", db])
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    let suite = fixture("perft/perftsuite.epd");
    for args in [
        &["eval", "--fen", fen][..],
        &["eval", db],
        &["export", db],
        &["weights"],
        &["info", db],
        &["show", fen],
        &["show", db, "--index", "3"],
        &["perft", "3", "--divide"],
        &["perft", "--epd", &suite, "--max-nodes", "1000"],
    ] {
        with_stdout_closed(args);
    }
}
