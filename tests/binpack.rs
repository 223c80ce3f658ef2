//! Stockfish `.binpack` in and out through the binary: a binpack made from the fixture
//! games round-trips, a binpack the `sfbinpack` crate writes from python-chess games (the
//! fixture `binpack/python-chess-games.txt`, made by `scripts/binpack_fixture.py`) imports
//! to what python-chess says, zstd-wrapped and damaged files.

use crate::common;

use std::path::{Path, PathBuf};

use pawnstorm::db::Database;
use pawnstorm::position::labels::{GameResult, Record, move_from_uci};
use sfbinpack::chess::coords::Square as SfSquare;
use sfbinpack::chess::r#move::Move as SfMove;
use sfbinpack::chess::piece::Piece as SfPiece;
use sfbinpack::chess::piecetype::PieceType as SfPieceType;
use sfbinpack::chess::position::Position as SfPosition;
use sfbinpack::{CompressedTrainingDataEntryWriter, TrainingDataEntry};

use common::{fixture, ok, pawnstorm, read_fixture, s};

fn records(db: &Path) -> Vec<Record> {
    let db = Database::open(db).unwrap();
    db.records(0..db.len()).map(|r| r.unwrap()).collect()
}

/// Self-play games (score, result, move on every position) and the lichess sample (scores
/// where lichess analysed), in blocks small enough that chunks cut games.
fn source_db(dir: &Path) -> PathBuf {
    let db = dir.join("source.psdb");
    ok(&[
        "datagen",
        "-o",
        s(&db),
        "--games",
        "12",
        "--nodes",
        "200",
        "--threads",
        "1",
        "--seed",
        "7",
    ]);
    ok(&[
        "import",
        &fixture("pgn/lichess-2025-05-sample.pgn"),
        "-o",
        s(&db),
        "--append",
    ]);
    db
}

#[test]
fn a_binpack_of_the_fixture_games_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let source = source_db(dir.path());
    let first = dir.path().join("first.binpack");
    let stderr = ok(&["export", s(&source), "-o", s(&first)]);
    assert!(stderr.contains("exported"), "{stderr}");
    let imported = dir.path().join("imported.psdb");
    ok(&["import", s(&first), "-o", s(&imported)]);
    let second = dir.path().join("second.binpack");
    ok(&["export", s(&imported), "-o", s(&second)]);
    let again = dir.path().join("again.psdb");
    ok(&["import", s(&second), "-o", s(&again)]);

    let (source, imported, again) = (records(&source), records(&imported), records(&again));
    assert_eq!(imported, again, "import -> export -> import changed the DB");
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(&second).unwrap(),
        "export of the imported binpack differs from the binpack"
    );
    // What was written is the source's positions with a score, a result and a move, each
    // with its labels (game ids renumbered: one per chain).
    let written: Vec<&Record> = source
        .iter()
        .filter(|r| {
            r.labels.score.is_some() && r.labels.result.is_some() && r.labels.move_played.is_some()
        })
        .collect();
    assert!(written.len() > 500, "{} positions written", written.len());
    assert_eq!(written.len(), imported.len());
    for (want, got) in written.iter().zip(&imported) {
        assert_eq!(got.position.to_fen(), want.position.to_fen());
        let mut labels = want.labels;
        labels.game_id = got.labels.game_id;
        labels.white_elo = None;
        labels.black_elo = None;
        labels.base_seconds = None;
        labels.increment = None;
        // Nor does it carry the clock.
        labels.clock = None;
        assert_eq!(got.labels, labels, "{}", want.position.to_fen());
    }
    // Each game is one chain: as many game ids as games with a written position.
    let games = |rs: &[&Record]| {
        let mut ids: Vec<u32> = rs.iter().filter_map(|r| r.labels.game_id).collect();
        ids.dedup();
        ids.len()
    };
    let imported_refs: Vec<&Record> = imported.iter().collect();
    assert_eq!(games(&written), games(&imported_refs));
}

/// One line of the python-chess fixture: FEN, move (UCI), score and result (side to move),
/// ply.
struct Line {
    fen: String,
    uci: String,
    score: i16,
    result: i16,
    ply: u16,
}

fn python_chess_lines() -> Vec<Line> {
    read_fixture("binpack/python-chess-games.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('|').map(str::trim).collect();
            Line {
                fen: f[0].to_string(),
                uci: f[1].to_string(),
                score: f[2].parse().unwrap(),
                result: f[3].parse().unwrap(),
                ply: f[4].parse().unwrap(),
            }
        })
        .collect()
}

/// The crate's move for python-chess's UCI move (castling as the king taking its rook).
fn crate_move(pos: &SfPosition, uci: &str) -> SfMove {
    let from = SfSquare::from_string(&uci[0..2]).unwrap();
    let to = SfSquare::from_string(&uci[2..4]).unwrap();
    let piece = pos.piece_at(from);
    if let Some(p) = uci.chars().nth(4) {
        let kind = match p {
            'n' => SfPieceType::Knight,
            'b' => SfPieceType::Bishop,
            'r' => SfPieceType::Rook,
            _ => SfPieceType::Queen,
        };
        return SfMove::promotion(from, to, SfPiece::new(kind, piece.color()));
    }
    let file = |sq: SfSquare| sq.index() % 8;
    if piece.piece_type() == SfPieceType::King && file(from).abs_diff(file(to)) == 2 {
        let rook = if file(to) > file(from) {
            from.index() + 3
        } else {
            from.index() - 4
        };
        return SfMove::castle(from, SfSquare::new(rook));
    }
    if piece.piece_type() == SfPieceType::Pawn
        && file(from) != file(to)
        && pos.piece_at(to) == SfPiece::none()
    {
        return SfMove::en_passant(from, to);
    }
    SfMove::normal(from, to)
}

#[test]
fn a_binpack_the_crate_writes_from_python_chess_games_imports_as_python_chess_says() {
    let lines = python_chess_lines();
    assert!(lines.len() > 300);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("python-chess.binpack");
    {
        let file = std::fs::File::create(&path).unwrap();
        let mut writer = CompressedTrainingDataEntryWriter::new(file).unwrap();
        for line in &lines {
            let pos = SfPosition::from_fen(&line.fen).unwrap();
            let entry = TrainingDataEntry {
                pos,
                mv: crate_move(&pos, &line.uci),
                score: line.score,
                ply: line.ply,
                result: line.result,
            };
            writer.write_entry(&entry).unwrap();
        }
    }
    let db = dir.path().join("python-chess.psdb");
    ok(&["import", s(&path), "-o", s(&db)]);
    let got = records(&db);
    assert_eq!(got.len(), lines.len());
    let mut games = 0;
    for (i, (line, record)) in lines.iter().zip(&got).enumerate() {
        // python-chess's FEN has the en-passant square only when a capture is legal, as
        // binpack keeps it; the clocks are binpack's (rule50, and the fullmove from the ply).
        let fen = record.position.to_fen();
        let want: Vec<&str> = line.fen.split(' ').collect();
        let have: Vec<&str> = fen.split(' ').collect();
        assert_eq!(have[..5], want[..5], "position {i}");
        assert_eq!(have[5], (line.ply / 2 + 1).to_string(), "position {i}");
        assert_eq!(
            record.labels.move_played,
            move_from_uci(&line.uci),
            "position {i}"
        );
        let white = record.position.side_to_move() == pawnstorm::Color::White;
        let stm_score = record.labels.score.map(|sc| if white { sc } else { -sc });
        assert_eq!(stm_score, Some(line.score as i32), "position {i}");
        let white_result = if white { line.result } else { -line.result };
        let want_result = match white_result {
            1 => GameResult::WhiteWin,
            0 => GameResult::Draw,
            _ => GameResult::BlackWin,
        };
        assert_eq!(record.labels.result, Some(want_result), "position {i}");
        assert_eq!(record.labels.ply, Some(line.ply), "position {i}");
        if line.ply == 0 || i == 0 {
            games += 1;
        }
    }
    // Every game of the fixture starts at ply 0 and is one chain: one game id each.
    let mut ids: Vec<u32> = got.iter().filter_map(|r| r.labels.game_id).collect();
    ids.dedup();
    assert_eq!(ids.len(), games);
}

#[test]
fn a_zstd_wrapped_binpack_reads_as_the_binpack() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.psdb");
    ok(&[
        "datagen",
        "-o",
        s(&db),
        "--games",
        "3",
        "--nodes",
        "200",
        "--threads",
        "1",
        "--seed",
        "3",
    ]);
    let binpack = dir.path().join("games.binpack");
    ok(&["export", s(&db), "-o", s(&binpack)]);
    let bytes = std::fs::read(&binpack).unwrap();
    let zst = dir.path().join("games.binpack.zst");
    std::fs::write(&zst, zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
    let (plain_db, zst_db) = (dir.path().join("plain.psdb"), dir.path().join("zst.psdb"));
    ok(&["import", s(&binpack), "-o", s(&plain_db)]);
    // Named neither: --format says it.
    let renamed = dir.path().join("games.data");
    std::fs::copy(&zst, &renamed).unwrap();
    ok(&[
        "import",
        s(&renamed),
        "--format",
        "binpack",
        "-o",
        s(&zst_db),
    ]);
    assert_eq!(records(&plain_db), records(&zst_db));
    assert!(!records(&plain_db).is_empty());
}

#[test]
fn a_damaged_block_is_reported_and_the_other_blocks_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.psdb");
    ok(&[
        "datagen",
        "-o",
        s(&db),
        "--games",
        "4",
        "--nodes",
        "200",
        "--threads",
        "1",
        "--seed",
        "5",
    ]);
    let binpack = dir.path().join("games.binpack");
    ok(&["export", s(&db), "-o", s(&binpack)]);
    let good = std::fs::read(&binpack).unwrap();
    let whole = records(&{
        let p = dir.path().join("whole.psdb");
        ok(&["import", s(&binpack), "-o", s(&p)]);
        p
    });
    // Three copies of the file's block, the middle one with its moves overwritten.
    let mut damaged = good.clone();
    let mut middle = good.clone();
    for byte in middle.iter_mut().skip(8 + 40).step_by(3) {
        *byte = 0xff;
    }
    damaged.extend_from_slice(&middle);
    damaged.extend_from_slice(&good);
    let path = dir.path().join("damaged.binpack");
    std::fs::write(&path, &damaged).unwrap();
    let out = dir.path().join("damaged.psdb");
    let stderr = ok(&["import", s(&path), "-o", s(&out)]);
    assert!(stderr.contains("damaged.binpack"), "{stderr}");
    assert!(stderr.contains("block 2"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let got = records(&out);
    // Both good blocks whole, in order, and what the damaged one gave before its damage.
    assert!(got.len() >= 2 * whole.len());
    let positions =
        |rs: &[Record]| -> Vec<String> { rs.iter().map(|r| r.position.to_fen()).collect() };
    assert_eq!(positions(&got[..whole.len()]), positions(&whole));
    assert_eq!(
        positions(&got[got.len() - whole.len()..]),
        positions(&whole)
    );
    // --strict stops at the damage and writes nothing.
    let strict = dir.path().join("strict.psdb");
    let output = pawnstorm(&["import", s(&path), "-o", s(&strict), "--strict"]);
    assert!(!output.status.success());
    assert!(!strict.exists());
    // A file cut inside a block is reported too.
    let cut = dir.path().join("cut.binpack");
    std::fs::write(&cut, &good[..good.len() - 5]).unwrap();
    let stderr = ok(&["import", s(&cut), "-o", s(&dir.path().join("cut.psdb"))]);
    assert!(stderr.contains("ends"), "{stderr}");
}
