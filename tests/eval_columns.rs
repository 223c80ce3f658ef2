//! The evaluation of positions outside a DB (`scoring::columns`, behind the Python package's
//! `evaluate_boards` and `evaluate_fens`) gives the DB pass's scores: over a DB's own
//! block columns cut into runs of every awkward length, and over the positions' FENs.

use crate::common;

use pawnstorm::Bitboard;
use pawnstorm::db::{Database, NO_SCORE};
use pawnstorm::eval::batch::db_scores;
use pawnstorm::eval::default_weights;
use pawnstorm::eval::features::Path;
use pawnstorm::scoring::columns::{BoardColumns, Scorer, board_scores, fen_scores};

fn fixture_db(dir: &std::path::Path) -> Database {
    let path = dir.join("games.psdb");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(["import", &common::fixture("pgn/famous-games.pgn")])
        .args(["--block-size", "1024", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(status.status.success());
    Database::open(&path).unwrap()
}

#[test]
fn runs_of_columns_and_fens_score_as_the_db_pass() {
    let dir = tempfile::tempdir().unwrap();
    let db = fixture_db(dir.path());
    let prepared = default_weights();
    for path in [Path::scalar(), Path::native()] {
        let expected = db_scores(&db, path, prepared).unwrap();
        // Every block cut into runs of 1, 7, 9, 4095 ... rows: tails past multiples of 8.
        let blocks: Vec<_> = (0..db.block_count())
            .map(|i| db.block(i).unwrap())
            .collect();
        let mut runs = Vec::new();
        let lengths = [1usize, 7, 9, 300, 4095];
        for (b, block) in blocks.iter().enumerate() {
            let mut start = 0;
            let mut k = b;
            while start < block.len {
                let end = (start + lengths[k % lengths.len()]).min(block.len);
                k += 1;
                runs.push(BoardColumns {
                    pieces: block.pieces.map(|c| &c[start..end]),
                    colors: block.colors.map(|c| &c[start..end]),
                    side_to_move: &block.side_to_move[start..end],
                    castling: Some(&block.castling[start..end]),
                    en_passant: Some(&block.en_passant[start..end]),
                });
                start = end;
            }
        }
        let mut out = vec![0; expected.len()];
        board_scores(Scorer::Terms { path, prepared }, &runs, false, &mut out).unwrap();
        assert_eq!(out, expected);

        let fens: Vec<String> = db
            .records(0..db.len())
            .map(|r| r.unwrap().position.to_fen())
            .collect();
        let mut out = vec![0; fens.len()];
        let bad = fen_scores(
            Scorer::Terms { path, prepared },
            &|i| Some(fens[i].as_bytes()),
            false,
            &mut out,
        );
        assert!(bad.is_empty());
        assert_eq!(out, expected);
    }
}

#[test]
fn a_bad_row_is_named_and_a_bad_fen_marked() {
    let dir = tempfile::tempdir().unwrap();
    let db = fixture_db(dir.path());
    let block = db.block(1).unwrap();
    let mut kings = block.pieces[5][..100].to_vec();
    kings[37] = Bitboard(0);
    let mut pieces = block.pieces.map(|c| &c[..100]);
    pieces[5] = &kings;
    let run = BoardColumns {
        pieces,
        colors: block.colors.map(|c| &c[..100]),
        side_to_move: &block.side_to_move[..100],
        castling: None,
        en_passant: None,
    };
    let mut out = vec![0; 200];
    let error = board_scores(
        Scorer::Terms {
            path: Path::native(),
            prepared: default_weights(),
        },
        &[run, run],
        false,
        &mut out,
    )
    .unwrap_err();
    assert_eq!(error.index, 37, "the first bad row of all");
    // No king board: the colour boards then hold squares no piece board does.
    assert!(
        error.reason.contains("do not cover exactly the pieces"),
        "{}",
        error.reason
    );

    let fens = [
        "8/8/8/8/8/8/8/8 w - - 0 1",
        "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
        "x",
    ];
    let mut out = vec![0; 4];
    let bad = fen_scores(
        Scorer::Terms {
            path: Path::native(),
            prepared: default_weights(),
        },
        &|i| fens.get(i).map(|f| f.as_bytes()),
        false,
        &mut out,
    );
    let indexes: Vec<u64> = bad.iter().map(|b| b.index).collect();
    assert_eq!(indexes, [0, 2, 3]);
    assert_eq!(bad[2].reason, "no FEN (None)");
    assert_eq!([out[0], out[2], out[3]], [NO_SCORE; 3]);
    assert_ne!(out[1], NO_SCORE);
}
