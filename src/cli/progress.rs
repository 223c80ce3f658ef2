//! Progress bars on standard error, drawn only when it is a terminal (so that logs and tests
//! see the summary lines alone).

use std::io::{self, IsTerminal};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar counting bytes of `total`, or a spinner when the total is unknown (standard input).
pub fn bytes_bar(total: Option<u64>) -> ProgressBar {
    let bar = match total {
        Some(total) => ProgressBar::new(total).with_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({eta}) {msg}",
            )
            .expect("valid template"),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bytes} {msg}")
                .expect("valid template"),
        ),
    };
    if io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(5));
        bar.enable_steady_tick(Duration::from_millis(200));
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}

/// A bar counting positions of `total`.
pub fn positions_bar(total: u64) -> ProgressBar {
    count_bar(total, "positions")
}

/// A bar counting `total` things called `unit`.
pub fn count_bar(total: u64, unit: &str) -> ProgressBar {
    let bar = bytes_bar(None);
    bar.set_length(total);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} {unit} ({{eta}})"
        ))
        .expect("valid template"),
    );
    bar
}

/// A bar counting `total` epochs, its message the losses so far.
pub fn epochs_bar(total: u64) -> ProgressBar {
    let bar = bytes_bar(None);
    bar.set_length(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} epoch {pos}/{len} ({eta}) {msg}",
        )
        .expect("valid template"),
    );
    bar
}

/// A bar counting games of `total`, with a message (positions so far, their rate).
pub fn games_bar(total: u64) -> ProgressBar {
    let bar = bytes_bar(None);
    bar.set_length(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} games ({eta}) {msg}",
        )
        .expect("valid template"),
    );
    bar
}

/// A bar counting an epoch's positions (`total` once known), its message the running loss
/// and rate.
pub fn training_bar(total: u64) -> ProgressBar {
    let bar = bytes_bar(None);
    bar.set_length(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} positions {msg}",
        )
        .expect("valid template"),
    );
    bar
}
