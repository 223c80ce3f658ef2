//! What the fuzz targets (`fuzz/`) run on each input, and the regression tests
//! (`tests/fuzz_corpus.rs`) run on every seed and every input a fuzzer once found: each
//! function takes arbitrary bytes, must neither panic nor hang on any of them, and asserts
//! what must hold of every input it accepts (a position read back from its own FEN is the
//! same position; a position shakmaty also accepts has the same legal moves; the lichess
//! scanner reads what serde_json reads; a weights file the loader takes evaluates without
//! overflow). Not part of the library's interface.

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use crate::Position;
use crate::db::{BlockStream, Database, Verify};
use crate::eval::{Prepared, Weights};
use crate::import::{AfterRejection, Format, Handlers, ImportOptions};
use crate::movegen::{Board, MoveList, legal_moves};
use crate::position::fen::parse_fen;
use crate::position::labels::{self, Record};

/// The fuzz targets, by the name of their directory under `fuzz/corpus`.
pub const TARGETS: [&str; 7] = ["fen", "pgn", "jsonl", "db", "weights", "uci", "binpack"];

/// Runs target `name` on `data`; false if there is no such target.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "fen" => fen_line(data),
        "pgn" => import_bytes(Format::Pgn, data),
        "jsonl" => jsonl_line(data),
        "db" => db_file(data),
        "weights" => weights_file(data),
        "uci" => uci_session(data),
        "binpack" => import_bytes(Format::Binpack, data),
        _ => return false,
    }
    true
}

/// An EPD/FEN line as `import` reads it, and as a FEN and as an EPD alone.
pub fn fen_line(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let text = text.lines().next().unwrap_or("");
    if let Ok(Some(record)) = labels::parse_line(text) {
        check_position(&record.position);
    }
    if let Ok(position) = parse_fen(text) {
        check_position(&position);
        check_moves_against_shakmaty(&position);
    }
    if let Ok(epd) = crate::position::epd::parse_epd(text) {
        let written = epd.to_string();
        let again = crate::position::epd::parse_epd(&written)
            .unwrap_or_else(|e| panic!("EPD {written:?} written from {text:?} is refused: {e}"));
        assert_eq!(again.position, epd.position, "{text:?} -> {written:?}");
    }
}

/// A whole input of `format` imported from memory, every record checked.
pub fn import_bytes(format: Format, data: &[u8]) {
    let mut records = 0u64;
    let mut on_records = |batch: &[Record]| {
        for record in batch {
            check_position(&record.position);
            records += 1;
        }
        Ok(())
    };
    let mut on_reject = |_: &crate::import::Rejection| AfterRejection::Continue;
    let mut on_progress = |_: u64| {};
    let mut handlers = Handlers {
        records: &mut on_records,
        reject: &mut on_reject,
        progress: &mut on_progress,
    };
    let mut next_game_id = 0;
    let counts = crate::import::import_reader(
        "fuzz".to_string(),
        Box::new(Cursor::new(data.to_vec())),
        Arc::new(AtomicU64::new(0)),
        format,
        // One thread: the same cutting and replay as with more, without starting a pool
        // of threads for every input.
        &ImportOptions {
            threads: Some(1),
            ..ImportOptions::default()
        },
        &mut next_game_id,
        &mut handlers,
    );
    if let Ok(counts) = counts {
        assert_eq!(
            counts.positions, records,
            "positions counted and handed over"
        );
    }
}

/// A lichess evaluation line: the scanner against serde_json.
pub fn jsonl_line(data: &[u8]) {
    let line = data.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    crate::import::jsonl::agrees_with_serde(line);
}

/// Arbitrary bytes as a DB file: opened with and without checksums, every block and record
/// read. When the first byte is odd the header's own checksum is set right first (the
/// rest is `data[1..]`), so that mutations reach what lies behind it.
pub fn db_file(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = rest.to_vec();
    if flags & 1 == 1 && bytes.len() >= crate::db::HEADER_SIZE {
        crate::db::set_header_crc(&mut bytes);
    }
    let path = scratch_file("db");
    if std::fs::File::create(&path)
        .and_then(|mut file| file.write_all(&bytes))
        .is_err()
    {
        return;
    }
    for verify in [Verify::Off, Verify::Checksums] {
        let Ok(db) = Database::open_with(&path, verify) else {
            continue;
        };
        let _ = db.verify();
        let _ = db.max_game_id();
        for index in 0..db.block_count() {
            let _ = db.block(index);
        }
        let mapped: Vec<_> = db.records(0..db.len()).collect();
        if let Ok(stream) = BlockStream::open(&path) {
            let mut streamed = Vec::new();
            if stream
                .for_each_record(|record| {
                    streamed.push(record);
                    Ok(())
                })
                .is_ok()
            {
                // A stream reads only whole files whose every checksum holds: the mapped
                // reads must then give the same records.
                let mapped: Vec<Record> = mapped
                    .into_iter()
                    .collect::<Result<_, _>>()
                    .expect("a file that streams whole reads whole through its map");
                assert_eq!(mapped, streamed);
            }
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// A weights file: if the loader takes it, its text form reads back as the same weights,
/// and positions that push the counts up evaluate (in builds with overflow checks, without
/// overflowing) to the same score through every path.
pub fn weights_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(weights) = Weights::from_text(text, Path::new("fuzz")) else {
        return;
    };
    let written = weights.to_text();
    let again = Weights::from_text(&written, Path::new("written"))
        .unwrap_or_else(|e| panic!("the weights' own text is refused: {e}"));
    assert!(again == weights, "the weights' text reads back differently");
    let positions: Vec<Position> = EXTREME_FENS
        .iter()
        .map(|fen| parse_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}")))
        .collect();
    check_paths_agree(&Prepared::new(weights), &positions);
}

/// Positions whose counts run high (a side has at most 16 pieces): a side of queens, of
/// knights, of bishops behind their own pawns, rooks on the seventh, fifteen pawns doubled, eight passers each
/// with the kings far away, and bare kings in the corners.
pub const EXTREME_FENS: [&str; 10] = [
    "QQQQQQQQ/QQQQQQQ1/8/8/8/8/8/K6k b - - 0 1",
    "K6k/8/8/8/8/8/qqqqqqq1/qqqqqqqq w - - 0 1",
    "K7/NNNNNNNN/NNNNNNN1/8/8/1nnnnnnn/nnnnnnnn/7k w - - 0 1",
    "kbbbbbbb/pppppppp/8/8/8/8/PPPPPPPP/KBBBBBBB w - - 0 1",
    "7k/RRRRRRR1/8/8/8/8/1rrrrrrr/K7 w - - 0 1",
    "k7/pppppppp/ppppppp1/8/8/PPPPPPP1/PPPPPPPP/K7 w - - 0 1",
    "8/PPPPPPPP/8/4k3/8/8/pppppppp/K7 w - - 0 1",
    "7k/P7/8/8/8/8/7p/K7 w - - 0 1",
    "K7/8/8/8/8/8/8/7k b - - 0 1",
    "r1bq1rk1/pp2ppbp/2np1np1/8/3NP3/2N1BP2/PPPQ2PP/R3KB1R w KQ - 3 9",
];

/// Every path of the evaluation gives each position the same score: `evaluate_with`, the
/// breakdown, the evaluator with its pawn table, and the batch on every lane width; and the
/// breakdown's sums and taper, done again in i64, show that no i32 sum wrapped.
pub fn check_paths_agree(prepared: &Prepared, positions: &[Position]) {
    use crate::eval::batch::rows_scores;
    use crate::eval::features::Path as Lanes;
    use crate::eval::{Evaluator, breakdown, endgame, evaluate_with};
    const ROWS: usize = 64;
    let mut evaluator = Evaluator::new(prepared.clone(), 64);
    let expected: Vec<i32> = positions
        .iter()
        .map(|position| {
            let score = evaluate_with(prepared, position);
            let parts = breakdown(prepared, position);
            let fen = position.to_fen();
            assert_eq!(parts.finished.score, score, "breakdown of {fen}");
            assert_eq!(evaluator.evaluate(position), score, "evaluator on {fen}");
            let mg: i64 = parts.mg.iter().map(|&v| v as i64).sum();
            let eg: i64 = parts.eg.iter().map(|&v| v as i64).sum();
            assert_eq!(
                (mg, eg),
                (parts.total_mg as i64, parts.total_eg as i64),
                "{fen}"
            );
            let (phase, scale) = (parts.finished.phase as i64, parts.finished.scale as i64);
            let max_phase = endgame::MAX_PHASE as i64;
            let tapered =
                mg * phase + eg * (max_phase - phase) * scale / endgame::SCALE_NORMAL as i64;
            assert!(
                i32::try_from(tapered).is_ok() && i32::try_from(eg * max_phase * scale).is_ok(),
                "the taper of {fen} leaves i32: mg {mg} eg {eg}"
            );
            score
        })
        .collect();
    // One block of positions, cycled to fill it (padding rows are positions too).
    let boards = |i: usize| &positions[i % positions.len()];
    let pieces: [Vec<crate::Bitboard>; 6] =
        std::array::from_fn(|kind| (0..ROWS).map(|i| boards(i).piece_boards()[kind]).collect());
    let colors: [Vec<crate::Bitboard>; 2] =
        std::array::from_fn(|color| (0..ROWS).map(|i| boards(i).color_boards()[color]).collect());
    let side_to_move: Vec<u8> = (0..ROWS).map(|i| boards(i).side_to_move() as u8).collect();
    let zeros16 = vec![0u16; ROWS];
    let no_squares = vec![crate::db::NO_SQUARE; ROWS];
    let block = crate::db::Block {
        len: ROWS,
        pieces: std::array::from_fn(|kind| &pieces[kind][..]),
        colors: [&colors[0][..], &colors[1][..]],
        side_to_move: &side_to_move,
        castling: &zeros16,
        en_passant: &no_squares,
        halfmove_clock: &zeros16,
        fullmove_number: &zeros16,
        result: None,
        score: None,
        game_id: None,
        ply: None,
        u16_labels: [None; crate::db::U16_LABEL_COUNT],
    };
    for lanes in Lanes::every() {
        let mut scores = vec![0i32; ROWS];
        rows_scores(lanes, prepared, &block, 0..ROWS, &mut scores);
        for (i, score) in scores.iter().enumerate() {
            assert_eq!(
                *score,
                expected[i % positions.len()],
                "{lanes:?} on {}",
                boards(i).to_fen()
            );
        }
    }
}

/// A UCI session: the input's lines fed to the loop in-process, searches and perft
/// bounded so that no input makes it slow, and any search still running stopped at the end.
pub fn uci_session(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    crate::engine::uci::drive(text.lines(), crate::engine::uci::Bounds::FUZZING);
}

/// A position read back from its own FEN is the same position.
fn check_position(position: &Position) {
    let fen = position.to_fen();
    let again = parse_fen(&fen).unwrap_or_else(|e| panic!("its own FEN {fen:?} is refused: {e}"));
    assert_eq!(&again, position, "{fen}");
}

/// Where shakmaty accepts the position too, both generate the same legal moves.
fn check_moves_against_shakmaty(position: &Position) {
    use shakmaty::{CastlingMode, Chess, Position as _, fen::Fen, uci::UciMove};
    let fen = position.to_fen();
    let Ok(setup) = Fen::from_ascii(fen.as_bytes()) else {
        return;
    };
    let board = Board::new(position.clone());
    let chess960 = board.has_chess960_castling();
    let mode = if chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    let Ok(theirs) = setup.into_position::<Chess>(mode) else {
        return;
    };
    let mut ours = MoveList::new();
    legal_moves(&board, &mut ours);
    let mut ours: Vec<String> = ours.iter().map(|mv| mv.uci(chess960).to_string()).collect();
    let mut theirs: Vec<String> = theirs
        .legal_moves()
        .iter()
        .map(|mv| UciMove::from_move(*mv, mode).to_string())
        .collect();
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs, "legal moves of {fen}");
}

/// A file of this process's own for the input at hand (a fuzzer runs one at a time),
/// removed after it.
fn scratch_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("pawnstorm-fuzz-{name}-{}", std::process::id()))
}
