//! Every command the README shows, run as it is shown (docs/TESTING.md, "The README's
//! commands"): the set-up block's `cargo run --release -- ARGS`, and in its `console` blocks
//! each `$ pawnstorm ...` line and each `$ printf '...' | pawnstorm` UCI session. Each must
//! succeed, and the output lines the README shows must be in what it prints, compared with
//! every figure masked: timings, speeds, thread counts and the SIMD path vary from run to run
//! and machine to machine, the shape of the output does not. The `$ python ...` lines and
//! the Python snippet are run by `python/tests/test_readme.py`.
//!
//! Commands run from the crate root; their paths under `target/` go to a temporary directory
//! instead (and back again in the output compared), so that a run leaves nothing behind.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::uci_session::Engine;

/// The README's text.
fn readme() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A fenced block of the README: its info string (`sh`, `console`, ...), its lines, and the
/// line number of its opening fence.
struct Block {
    lang: String,
    lines: Vec<String>,
    at: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (number, line) in text.lines().enumerate() {
        match (line.strip_prefix("```"), open.take()) {
            (Some(_), Some(block)) => blocks.push(block),
            (Some(lang), None) => {
                open = Some(Block {
                    lang: lang.trim().to_string(),
                    lines: Vec::new(),
                    at: number + 1,
                })
            }
            (None, Some(mut block)) => {
                block.lines.push(line.to_string());
                open = Some(block);
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README: a code block is never closed");
    blocks
}

/// A command line split into words as a POSIX shell splits it, for the quoting the README
/// uses: single quotes, double quotes, backslashes outside quotes.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// `word` with a leading `target/` moved into `dir`.
fn relocate(word: &str, dir: &Path) -> String {
    match word.strip_prefix("target/") {
        Some(rest) => dir.join(rest).to_string_lossy().into_owned(),
        None => word.to_string(),
    }
}

/// Level names that differ between machines (`PAWNSTORM_SIMD`, the NNUE kernels).
const SIMD_WORDS: [&str; 6] = ["avx512", "avx2", "sse4", "scalar", "portable", "neon"];

/// A line as the comparison sees it: the binary and the temporary directory named as the
/// README names them,
/// parenthesised remarks left out, every word with a digit in it (a count, a time, a speed,
/// a move, `u64`), every SIMD level name and every bar of `#` as one `#`, runs of them as
/// one, and the spacing as single spaces.
fn shape(line: &str, dir: &Path) -> String {
    // The binary names itself as it was started (`info --net`'s provenance): as typed, `pawnstorm`.
    let line = line.replace(env!("CARGO_BIN_EXE_pawnstorm"), "pawnstorm");
    let line = line.replace(&*dir.to_string_lossy(), "target");
    let mut depth = 0usize;
    let mut bare = String::new();
    for c in line.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            c if depth == 0 => bare.push(c),
            _ => {}
        }
    }
    let mut words: Vec<&str> = Vec::new();
    for word in bare.split_whitespace() {
        let name = word.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '.'));
        let figure = word.chars().any(|c| c.is_ascii_digit())
            || word.chars().all(|c| c == '#')
            || SIMD_WORDS.contains(&name);
        let word = if figure { "#" } else { word };
        if !(word == "#" && words.last() == Some(&"#")) {
            words.push(word);
        }
    }
    words.join(" ")
}

/// Checks what a command printed against what the README shows after it: every line shown
/// must be printed (in shape); a block without a `...` line must show every line printed.
fn check_output(command: &str, shown: &[String], printed: &[String], dir: &Path) {
    let printed: Vec<String> = printed.iter().map(|l| shape(l, dir)).collect();
    let elided = shown.iter().any(|l| l.trim() == "...");
    let mut shown: Vec<String> = shown
        .iter()
        .filter(|l| l.trim() != "...")
        .map(|l| shape(l, dir))
        .collect();
    for line in &shown {
        assert!(
            printed.contains(line),
            "README: `{command}` shows a line it does not print (in shape):\n  {line}\nIt printed:\n  {}",
            printed.join("\n  ")
        );
    }
    if !elided {
        let mut printed = printed;
        printed.sort();
        shown.sort();
        assert_eq!(
            shown, printed,
            "README: `{command}` shows no `...`, so it must show every line it prints"
        );
    }
}

/// Runs `pawnstorm ARGS` from the crate root, `target/` paths in `dir`; its output lines
/// (standard output, then standard error).
fn run(command: &str, args: &[String], dir: &Path) -> Vec<String> {
    let args: Vec<String> = args.iter().map(|a| relocate(a, dir)).collect();
    let output = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("the binary starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "README: `{command}` failed ({}):\n{stderr}",
        output.status
    );
    stdout
        .lines()
        .chain(stderr.lines())
        .map(str::to_string)
        .collect()
}

/// The text a `printf` format gives, for the escapes the README uses.
fn printf(format: &str) -> String {
    assert!(
        !format.contains('%'),
        "README: a printf format with `%` is not read here: {format}"
    );
    let mut text = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => text.push('\n'),
            Some('t') => text.push('\t'),
            Some('\\') => text.push('\\'),
            other => panic!("README: printf escape \\{other:?} is not read here: {format}"),
        }
    }
    text
}

/// The input of a UCI session written as `printf 'A' | pawnstorm` or `(printf 'A'; sleep N;
/// printf 'B') | pawnstorm`: the printf texts, in order. Anything else in the pipeline's
/// left side fails, so that a README command this test does not understand is not passed
/// over.
fn session_input(left: &str) -> String {
    let mut input = String::new();
    let mut rest = String::new();
    let mut parts = left.split("printf '");
    rest.push_str(parts.next().unwrap_or(""));
    for part in parts {
        let (format, after) = part
            .split_once('\'')
            .unwrap_or_else(|| panic!("README: unterminated printf text in `{left}`"));
        input.push_str(&printf(format));
        rest.push_str(after);
    }
    for word in rest
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ';'))
        .filter(|w| !w.is_empty())
    {
        assert!(
            word == "sleep" || word.parse::<f64>().is_ok(),
            "README: `{word}` in the session `{left}` is not understood here"
        );
    }
    input
}

/// Plays a UCI session as a GUI would, and as the README's `sleep` does: each line sent in
/// turn, and after a `go` nothing more until its `bestmove`. The lines the engine printed.
fn session(command: &str, input: &str, args: &[String], dir: &Path) -> Vec<String> {
    let args: Vec<String> = args.iter().map(|a| relocate(a, dir)).collect();
    let mut binary = Command::new(env!("CARGO_BIN_EXE_pawnstorm"));
    binary.args(&args).current_dir(env!("CARGO_MANIFEST_DIR"));
    let mut engine = Engine::spawn(binary);
    let mut printed = Vec::new();
    for line in input.lines() {
        let line: Vec<String> = line.split(' ').map(|w| relocate(w, dir)).collect();
        engine.send(&line.join(" "));
        if line.first().is_some_and(|w| w == "go") {
            printed.extend(engine.until("bestmove"));
        }
    }
    drop(engine.stdin);
    let status = engine.child.wait().expect("the engine exits");
    printed.extend(engine.lines.iter());
    printed.extend(engine.errors.iter());
    assert!(status.success(), "README: `{command}` failed ({status})");
    printed
}

#[test]
fn the_set_up_commands_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let text = readme();
    let setup = blocks(&text)
        .into_iter()
        .find(|b| {
            b.lines
                .iter()
                .any(|l| l.contains("cargo run --release -- "))
        })
        .expect("README: the set-up block with `cargo run --release -- ...`");
    let mut ran = 0;
    for line in setup.lines.iter().filter(|l| !l.starts_with('#')) {
        for part in line.split(" && ") {
            if let Some(args) = part.trim().strip_prefix("cargo run --release -- ") {
                run(part, &shell_words(args), dir.path());
                ran += 1;
            }
        }
    }
    assert_eq!(ran, 3, "README: the set-up's import and two evals");
}

#[test]
fn every_console_command_runs_and_prints_what_is_shown() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let text = readme();
    let (mut commands, mut sessions) = (0, 0);
    for block in blocks(&text).into_iter().filter(|b| b.lang == "console") {
        assert!(
            block.lines.first().is_some_and(|l| l.starts_with("$ ")),
            "README line {}: a console block starts with a `$ ` command",
            block.at
        );
        // Each command with the lines shown after it.
        let mut steps: Vec<(String, Vec<String>)> = Vec::new();
        for line in &block.lines {
            match line.strip_prefix("$ ") {
                Some(command) => steps.push((command.to_string(), Vec::new())),
                None => steps.last_mut().expect("a command").1.push(line.clone()),
            }
        }
        for (command, shown) in steps {
            let printed = if let Some(args) = command.strip_prefix("pawnstorm ") {
                commands += 1;
                run(&command, &shell_words(args), dir.path())
            } else if let Some((left, right)) = command.rsplit_once("| pawnstorm") {
                sessions += 1;
                let input = session_input(left);
                session(&command, &input, &shell_words(right), dir.path())
            } else if command.starts_with("python ") {
                // python/tests/test_readme.py runs it and checks its output, with the
                // package and Ray installed.
                continue;
            } else {
                panic!("README: `{command}` is not run by any test (tests/readme.rs)");
            };
            check_output(&command, &shown, &printed, dir.path());
        }
    }
    assert!(
        commands >= 10 && sessions >= 2,
        "README: {commands} pawnstorm commands and {sessions} UCI sessions found"
    );
}

#[test]
fn the_comparison_masks_figures_and_keeps_words() {
    let dir = Path::new("/tmp/x");
    let a = "eval: 2268 positions, 0.00 s, 498542 positions/s, path SIMD 8 x u64, avx512 \
             (VPOPCNTDQ popcount), 2 threads -> /tmp/x/s.csv";
    let b = "eval: 2268 positions, 0.01 s, 1206417 positions/s, path SIMD 4 x u64, avx2 \
             (nibble-table popcount), 2 threads -> target/s.csv";
    assert_eq!(shape(a, dir), shape(b, dir));
    assert_ne!(
        shape(a, dir),
        shape(&b.replace("positions/s", "pos/s"), dir)
    );
    assert_eq!(
        shape("   -500 .. -301         789   2.7% ####", dir),
        shape("   -500 .. -301         12   0.1% #", dir)
    );
    assert_eq!(
        shell_words(r#"eval --fen 'a b' "c \"d\"" e\ f"#),
        ["eval", "--fen", "a b", "c \"d\"", "e f"]
    );
    assert_eq!(
        session_input("(printf 'uci\\ngo depth 1\\n'; sleep 1; printf 'quit\\n') "),
        "uci\ngo depth 1\nquit\n"
    );
}
