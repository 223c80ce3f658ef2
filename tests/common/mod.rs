//! Helpers the integration tests share: fixture paths, a seeded generator, board text, random
//! playouts beside shakmaty, the runners of the binary.
#![allow(dead_code)] // each test crate uses its own subset

pub mod uci_session;

/// The path of a file under `fixtures/`.
pub fn fixture(relative: &str) -> String {
    format!("{}/fixtures/{relative}", env!("CARGO_MANIFEST_DIR"))
}

/// The text of a file under `fixtures/`.
pub fn read_fixture(relative: &str) -> String {
    let path = fixture(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A Python with numpy for the tests that check files with it: `$PAWNSTORM_PYTHON` (the
/// project's virtual environment, which `scripts/test` makes and names), else `python3` if
/// it has numpy. Nothing is installed here. `None` (the caller skips, saying so) when
/// neither is there; with `$PAWNSTORM_REQUIRE_PYTHON` set (CI) that is a failure instead.
pub fn python_with_numpy() -> Option<String> {
    let has_numpy = |python: &str| {
        std::process::Command::new(python)
            .args(["-c", "import numpy"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let python = std::env::var("PAWNSTORM_PYTHON").unwrap_or_else(|_| "python3".to_string());
    if has_numpy(&python) {
        return Some(python);
    }
    assert!(
        std::env::var_os("PAWNSTORM_REQUIRE_PYTHON").is_none(),
        "{python} has no numpy, and PAWNSTORM_REQUIRE_PYTHON says these tests must run"
    );
    skip(&format!(
        "{python} has no numpy; run scripts/test (it makes target/python-venv and sets \
         PAWNSTORM_PYTHON) or point PAWNSTORM_PYTHON at a Python with numpy"
    ));
    None
}

/// Says that the calling test skips the rest of its work, and why: a line on standard
/// error and one in `target/skipped-tests.txt`, which `scripts/test` lists at the end (cargo
/// shows a passing test's output only with `--nocapture`). Under CI (`CI` set, as every CI
/// service sets it) nothing may skip: this panics instead.
pub fn skip(reason: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !ci,
        "{test}: would skip under CI, which runs everything: {reason}"
    );
    eprintln!("SKIPPED: {test}: {reason}");
    let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/skipped-tests.txt");
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        use std::io::Write;
        let _ = writeln!(file, "{} {test}: {reason}", env!("CARGO_CRATE_NAME"));
    }
}

/// A seeded xorshift* generator: the same positions on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Plays a random legal game from `start` for at most `plies` moves in shakmaty (reading
/// `start` in `mode`) and on a `Board` side by side: the move is drawn among shakmaty's legal
/// moves and passed to the `Board` as UCI text, so the oracle's position comes from its own
/// move making, and the two FENs are compared after every move. `check` sees every
/// position on the way, before its move; returns how many it saw.
pub fn random_playout(
    start: &str,
    mode: shakmaty::CastlingMode,
    plies: usize,
    rng: &mut Rng,
    check: &mut dyn FnMut(&pawnstorm::movegen::Board, &shakmaty::Chess),
) -> usize {
    use pawnstorm::movegen::{Board, Move};
    use shakmaty::fen::Fen;
    use shakmaty::uci::UciMove;
    use shakmaty::{CastlingMode, Chess, EnPassantMode, Position as _};

    let mut position: Chess = Fen::from_ascii(start.as_bytes())
        .unwrap_or_else(|e| panic!("{start}: {e}"))
        .into_position(mode)
        .unwrap_or_else(|e| panic!("{start}: {e}"));
    let mut board = Board::from_fen(start).unwrap_or_else(|e| panic!("{start}: {e}"));
    let mut line = Vec::new();
    let mut positions = 0;
    for _ in 0..plies {
        check(&board, &position);
        positions += 1;
        let moves = position.legal_moves();
        if moves.is_empty() {
            break;
        }
        let mv = moves[rng.below(moves.len())];
        let text = UciMove::from_move(mv, CastlingMode::Chess960).to_string();
        line.push(text.clone());
        let ours = Move::from_uci(&text, &board, true)
            .unwrap_or_else(|e| panic!("{start} moves {line:?}: pawnstorm refuses: {e:?}"));
        position.play_unchecked(mv);
        board = board.play(ours);
        // `Board` keeps an en-passant square when a pawn stands beside the pushed one,
        // legal capture or not: shakmaty's `PseudoLegal`.
        let theirs = Fen::from_position(&position, EnPassantMode::PseudoLegal).to_string();
        assert_eq!(board.to_fen(), theirs, "{start} moves {line:?}");
    }
    positions
}

/// The FEN board field of `board` (a1 = index 0), `empty` marking empty squares.
pub fn board_fen(board: &[char; 64], empty: char) -> String {
    let mut fen = String::new();
    for rank in (0..8).rev() {
        let mut run = 0;
        for file in 0..8 {
            match board[rank * 8 + file] {
                c if c == empty => run += 1,
                c => {
                    if run > 0 {
                        fen.push_str(&run.to_string());
                        run = 0;
                    }
                    fen.push(c);
                }
            }
        }
        if run > 0 {
            fen.push_str(&run.to_string());
        }
        if rank > 0 {
            fen.push('/');
        }
    }
    fen
}

/// The EPD files of `fixtures/` with one position a line: the test suites, the masks
/// positions and the positions of the fixture games.
pub const EPD_FIXTURES: [&str; 11] = [
    "epd/arasan21.epd",
    "epd/bk.epd",
    "epd/bt2630.epd",
    "epd/ecm.epd",
    "epd/eet.epd",
    "epd/sts.epd",
    "epd/tbtest.epd",
    "epd/wac-revised.epd",
    "epd/wac.epd",
    "masks/positions.epd",
    "texel/labeled-from-fixture-pgns.epd",
];

/// A random square for piece `c` (pawns on ranks 2-7), leaning to the a and h files when
/// `edge` is set, where wrap bugs live: (file, rank).
pub fn random_square(rng: &mut Rng, c: char, edge: bool) -> (usize, usize) {
    let file = if edge && rng.next() & 1 == 0 {
        [0, 7][rng.below(2)]
    } else {
        rng.below(8)
    };
    let rank = if c.eq_ignore_ascii_case(&'p') {
        1 + rng.below(6)
    } else {
        rng.below(8)
    };
    (file, rank)
}

/// CRC-32 (IEEE, reflected), as the `.psdb` checksums use: written here, apart from the
/// crate, so that a test that repairs a checksum does not trust the code it tests.
pub fn crc32(parts: &[&[u8]]) -> u32 {
    let mut crc = !0u32;
    for part in parts {
        for &byte in *part {
            crc ^= byte as u32;
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
    }
    !crc
}

/// The `.psdb` header size, and where its fields are (docs/FORMAT.md).
pub const PSDB_HEADER: usize = 128;

/// The block size in bytes of the `.psdb` file `bytes`, from its header.
pub fn psdb_block_bytes(bytes: &[u8]) -> usize {
    u64::from_le_bytes(bytes[32..40].try_into().unwrap()) as usize
}

/// Recomputes the header CRC of the `.psdb` file `bytes`.
pub fn fix_header_crc(bytes: &mut [u8]) {
    let crc = crc32(&[&bytes[..44], &bytes[48..PSDB_HEADER]]);
    bytes[44..48].copy_from_slice(&crc.to_le_bytes());
}

/// Recomputes every checksum of the `.psdb` file `bytes` (version 2 on), as
/// docs/FORMAT.md defines them: each block's (the file id from version 4, then the block's
/// index, then its bytes up to its last 4), the header's CRC of the block CRCs, and the
/// header's own.
pub fn fix_crcs(bytes: &mut [u8]) {
    let block_bytes = psdb_block_bytes(bytes);
    let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    let file_id: Vec<u8> = if version >= 4 {
        bytes[48..56].to_vec()
    } else {
        Vec::new()
    };
    let mut crcs = Vec::new();
    for (index, block) in bytes[PSDB_HEADER..]
        .chunks_exact_mut(block_bytes)
        .enumerate()
    {
        let crc = crc32(&[
            &file_id,
            &(index as u64).to_le_bytes(),
            &block[..block_bytes - 4],
        ]);
        block[block_bytes - 4..].copy_from_slice(&crc.to_le_bytes());
        crcs.extend_from_slice(&crc.to_le_bytes());
    }
    bytes[40..44].copy_from_slice(&crc32(&[&crcs]).to_le_bytes());
    fix_header_crc(bytes);
}

/// The bytes of the `.psdb` file at `path` (version 5) with what differs between two
/// writes of the same positions set to zero: the file id and every checksum (the header's,
/// the payload's and each block's, all of which cover the id). Two files with equal
/// contents hold the same positions and labels in the same layout, byte for byte.
pub fn psdb_contents(path: &std::path::Path) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        &bytes[8..12],
        &5u32.to_le_bytes(),
        "{}: version 5",
        path.display()
    );
    bytes[40..56].fill(0);
    let block_bytes = psdb_block_bytes(&bytes);
    for block in bytes[PSDB_HEADER..].chunks_exact_mut(block_bytes) {
        block[block_bytes - 4..].fill(0);
    }
    bytes
}

/// The positions of EPD text (`epd ` prefixes, comments and bad lines skipped).
pub fn positions_of(text: &str) -> impl Iterator<Item = pawnstorm::Position> + '_ {
    text.lines().filter_map(|line| {
        let line = line.trim();
        let line = line.strip_prefix("epd ").unwrap_or(line);
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let fen = line.split(';').next().unwrap_or(line);
        pawnstorm::position::epd::parse_position(fen)
            .ok()
            .map(|(p, _)| p)
    })
}

/// Every position of the EPD fixtures and the perft suites.
pub fn fixture_positions() -> Vec<pawnstorm::Position> {
    let mut positions = Vec::new();
    let more = [
        "perft/perftsuite.epd",
        "perft/frc-perftsuite.epd",
        "perft/cpw-tricky.perft",
    ];
    for file in EPD_FIXTURES.into_iter().chain(more) {
        let before = positions.len();
        positions.extend(positions_of(&read_fixture(file)));
        assert!(positions.len() > before, "no positions read from {file}");
    }
    positions
}

/// Every how many-th position the heaviest property tests walk: 1, all of them, unless
/// `PAWNSTORM_TEST_STRIDE` says otherwise. `scripts/test-cpus` sets it for its runs under
/// qemu, where a position costs tens of times what it costs natively and the native run
/// (`scripts/test`, before it in CI) has walked every one: there the question is whether
/// the code that CPU takes runs and agrees, which a share of the positions answers.
pub fn test_stride() -> usize {
    match std::env::var("PAWNSTORM_TEST_STRIDE") {
        Err(_) => 1,
        Ok(text) => text.parse().ok().filter(|&n| n >= 1).unwrap_or_else(|| {
            panic!("PAWNSTORM_TEST_STRIDE={text}: not a whole number from 1 up")
        }),
    }
}

/// Runs the `pawnstorm` binary with `args`.
pub fn pawnstorm(args: &[&str]) -> std::process::Output {
    use assert_cmd::prelude::*;
    std::process::Command::cargo_bin("pawnstorm")
        .expect("binary built")
        .args(args)
        .output()
        .expect("runs")
}

/// Runs `pawnstorm` with `args`, fails the test unless it succeeds; its stderr.
pub fn ok(args: &[&str]) -> String {
    let output = pawnstorm(args);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{args:?}: {stderr}");
    stderr
}

/// Runs `pawnstorm` with `args`, fails the test if it succeeds; its stderr.
pub fn fails(args: &[&str]) -> String {
    let output = pawnstorm(args);
    assert!(!output.status.success(), "{args:?} should fail");
    String::from_utf8_lossy(&output.stderr).to_string()
}

/// A path as a command-line argument.
pub fn s(path: &std::path::Path) -> &str {
    path.to_str().expect("utf-8 path")
}

/// A plain int32 .npy: header, then little-endian values.
pub fn npy_scores(path: &std::path::Path) -> Vec<i32> {
    let bytes = std::fs::read(path).expect("npy written");
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
    assert!(header.contains("'descr': '<i4'"), "{header}");
    bytes[10 + header_len..]
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}
