//! The SVG pictures, without a browser: each parses as XML, and its structure says what it
//! shows: one piece element per piece (by square id, colour and kind), one mark element per
//! square of each mask (against the masks computed on their own), the legend's names and
//! counts, the side to move and the arrows. `show --svg` writes the same text as the
//! library, and refuses unknown masks and bad arrows.

use crate::common;

use std::collections::BTreeSet;

use pawnstorm::Position;
use pawnstorm::pictures::svg::{self, Mark};
use pawnstorm::position::fen::parse_fen;
use pawnstorm::{Bitboard, Square};

use common::{fixture, fixture_positions};

fn square_names(board: Bitboard) -> BTreeSet<String> {
    board.squares().map(|s| s.to_string()).collect()
}

/// The text inside the element with id `id`.
fn text_of(doc: &roxmltree::Document<'_>, id: &str) -> String {
    doc.descendants()
        .find(|n| n.attribute("id") == Some(id))
        .unwrap_or_else(|| panic!("no element {id}"))
        .descendants()
        .filter_map(|n| n.text())
        .collect()
}

/// Checks the structure of `text` against the position, marks and arrows it was made of.
fn check(text: &str, position: &Position, marks: &[Mark], arrows: &[(Square, Square)]) {
    let doc = roxmltree::Document::parse(text).unwrap_or_else(|e| panic!("not XML: {e}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let with_class = |class: &str| -> Vec<roxmltree::Node<'_, '_>> {
        doc.descendants()
            .filter(|n| {
                n.attribute("class")
                    .is_some_and(|c| c.split(' ').any(|w| w == class))
            })
            .collect()
    };
    assert_eq!(with_class("square").len(), 64);
    let pieces = with_class("piece");
    assert_eq!(
        pieces.len() as u32,
        position.occupied().0.count_ones(),
        "{}",
        position.to_fen()
    );
    for node in &pieces {
        let id = node.attribute("id").expect("a piece has an id");
        let square =
            Square::from_name(id.strip_prefix("piece-").expect("piece-SQUARE")).expect("a square");
        let piece = position
            .piece_at(square)
            .expect("a piece where one is drawn");
        let class = node.attribute("class").unwrap_or("");
        let color = if piece.color == pawnstorm::Color::White {
            "white"
        } else {
            "black"
        };
        assert!(class.contains(color), "{id}: {class}");
        assert!(
            node.attribute("href")
                .is_some_and(|h| h.starts_with(&format!("#{color}-"))),
            "{id}"
        );
    }
    for (i, mark) in marks.iter().enumerate() {
        let drawn: BTreeSet<String> = doc
            .descendants()
            .filter_map(|n| n.attribute("id"))
            .filter_map(|id| id.strip_prefix(&format!("mark-{i}-")))
            .map(str::to_string)
            .collect();
        assert_eq!(drawn, square_names(mark.squares), "{}", mark.name);
        let words = text_of(&doc, &format!("legend-{i}"));
        assert!(words.contains(&mark.name), "{words}");
        assert!(
            words.contains(&format!("({} square", mark.squares.0.count_ones())),
            "{words}"
        );
    }
    let mover = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("side-to-move"))
        .expect("the side to move");
    let expected = if position.side_to_move() == pawnstorm::Color::White {
        "white"
    } else {
        "black"
    };
    assert_eq!(mover.attribute("class"), Some(expected));
    let drawn_arrows: Vec<&str> = with_class("arrow")
        .iter()
        .filter_map(|n| n.attribute("id"))
        .collect();
    let expected_arrows: Vec<String> = arrows
        .iter()
        .map(|(from, to)| format!("arrow-{from}{to}"))
        .collect();
    assert_eq!(drawn_arrows, expected_arrows);
}

#[test]
fn boards_with_every_mask_have_the_structure_they_show() {
    let positions = fixture_positions();
    let names = svg::mask_names();
    let mut marked = 0;
    for (i, position) in positions.iter().step_by(97).enumerate() {
        // Every mask, three at a time, over the positions in turn.
        let marks: Vec<Mark> = (0..3)
            .map(|k| {
                let name = &names[(3 * i + k) % names.len()];
                Mark {
                    name: name.clone(),
                    squares: svg::mask(position, name).expect("a known mask"),
                }
            })
            .collect();
        marked += marks.iter().map(|m| m.squares.0.count_ones()).sum::<u32>();
        let arrows = [(
            Square::from_name("e2").unwrap(),
            Square::from_name("e4").unwrap(),
        )];
        check(
            &svg::board(position, &marks, &arrows),
            position,
            &marks,
            &arrows,
        );
    }
    assert!(marked > 1000, "the masks mark squares: {marked}");
}

#[test]
fn attacks_and_king_zones_are_the_squares_a_plain_walk_finds() {
    // Independent of the kernels: walk each piece's moves square by square.
    let directions = |kind: char| -> (Vec<(i32, i32)>, bool) {
        let rook = vec![(1, 0), (-1, 0), (0, 1), (0, -1)];
        let bishop = vec![(1, 1), (1, -1), (-1, 1), (-1, -1)];
        match kind {
            'n' => (
                vec![
                    (1, 2),
                    (2, 1),
                    (2, -1),
                    (1, -2),
                    (-1, -2),
                    (-2, -1),
                    (-2, 1),
                    (-1, 2),
                ],
                false,
            ),
            'b' => (bishop, true),
            'r' => (rook, true),
            'q' => ([rook, bishop].concat(), true),
            _ => ([rook, bishop].concat(), false),
        }
    };
    for position in fixture_positions().iter().step_by(211) {
        for (color, name) in [
            (pawnstorm::Color::White, "white_attacks"),
            (pawnstorm::Color::Black, "black_attacks"),
        ] {
            let mut expected = 0u64;
            for square in Square::all() {
                let Some(piece) = position.piece_at(square) else {
                    continue;
                };
                if piece.color != color {
                    continue;
                }
                let (file, rank) = (square.file().index() as i32, square.rank().index() as i32);
                let on = |f: i32, r: i32| (0..8).contains(&f) && (0..8).contains(&r);
                let kind = piece.fen_char().to_ascii_lowercase();
                if kind == 'p' {
                    let ahead = if color == pawnstorm::Color::White {
                        1
                    } else {
                        -1
                    };
                    for df in [-1, 1] {
                        if on(file + df, rank + ahead) {
                            expected |= 1 << ((rank + ahead) * 8 + file + df);
                        }
                    }
                    continue;
                }
                let (steps, slides) = directions(kind);
                for (df, dr) in steps {
                    let (mut f, mut r) = (file + df, rank + dr);
                    while on(f, r) {
                        expected |= 1 << (r * 8 + f);
                        if !slides
                            || position
                                .piece_at(Square::new((r * 8 + f) as u8).unwrap())
                                .is_some()
                        {
                            break;
                        }
                        f += df;
                        r += dr;
                    }
                }
            }
            assert_eq!(
                svg::mask(position, name),
                Some(Bitboard(expected)),
                "{name} of {}",
                position.to_fen()
            );
            // The king zone: the king's square and neighbours, and one rank beyond them
            // toward the enemy.
            let king = position.king(color);
            let (file, rank) = (king.file().index() as i32, king.rank().index() as i32);
            let ahead = if color == pawnstorm::Color::White {
                1
            } else {
                -1
            };
            let mut zone = 0u64;
            for df in -1..=1 {
                for dr in [-1, 0, 1, 1 + ahead, -1 + ahead] {
                    let (f, r) = (file + df, rank + dr);
                    let reach = if ahead == 1 { -1..=2 } else { -2..=1 };
                    if (0..8).contains(&f) && (0..8).contains(&r) && reach.contains(&dr) {
                        zone |= 1 << (r * 8 + f);
                    }
                }
            }
            let zone_name = name.replace("attacks", "king_zone");
            assert_eq!(
                svg::mask(position, &zone_name),
                Some(Bitboard(zone)),
                "{zone_name} of {}",
                position.to_fen()
            );
        }
    }
}

#[test]
fn show_writes_the_library_picture_and_refuses_bad_masks_and_arrows() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("board.svg");
    let fen = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4";
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
            .args(args)
            .output()
            .unwrap()
    };
    let done = run(&[
        "show",
        fen,
        "--svg",
        out.to_str().unwrap(),
        "--mask",
        "white_attacks,black_king_zone",
        "--arrows",
        "h5f7",
    ]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let position = parse_fen(fen).unwrap();
    let marks: Vec<Mark> = ["white_attacks", "black_king_zone"]
        .iter()
        .map(|name| Mark {
            name: name.to_string(),
            squares: svg::mask(&position, name).unwrap(),
        })
        .collect();
    let arrows = [(
        Square::from_name("h5").unwrap(),
        Square::from_name("f7").unwrap(),
    )];
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text, svg::board(&position, &marks, &arrows));
    check(&text, &position, &marks, &arrows);

    // From a DB row too.
    let db = dir.path().join("wac.psdb");
    assert!(
        run(&[
            "import",
            &fixture("epd/wac.epd"),
            "-o",
            db.to_str().unwrap()
        ])
        .status
        .success()
    );
    let from_db = dir.path().join("row.svg");
    let done = run(&[
        "show",
        db.to_str().unwrap(),
        "--index",
        "3",
        "--svg",
        from_db.to_str().unwrap(),
    ]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // Every output is an ordinary file (0644 less the umask, as the DB is), not a
    // temporary file's private 0600.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&from_db), mode(&db));
    assert_eq!(mode(&out), mode(&db));
    let row = pawnstorm::db::Database::open(&db)
        .unwrap()
        .record(3)
        .unwrap()
        .position;
    check(&std::fs::read_to_string(&from_db).unwrap(), &row, &[], &[]);

    for (flag, value, words) in [
        ("--mask", "white_nothing", "no such mask"),
        ("--arrows", "e2", "not a move"),
        ("--arrows", "e9e4", "not a move"),
    ] {
        let bad = dir.path().join("bad.svg");
        let done = run(&["show", fen, "--svg", bad.to_str().unwrap(), flag, value]);
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(!done.status.success() && stderr.contains(words), "{stderr}");
        assert!(!bad.exists(), "nothing written on an error");
    }
}

#[test]
fn the_breakdown_chart_has_a_bar_per_term_value_sorted_and_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval.svg");
    let fen = "r1bq1rk1/pp2ppbp/2np1np1/8/3NP3/2N1BP2/PPPQ2PP/R3KB1R w KQ - 3 9";
    let done = std::process::Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(["eval", "--fen", fen, "--svg", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("XML");
    let position = parse_fen(fen).unwrap();
    let breakdown = pawnstorm::eval::breakdown(pawnstorm::eval::default_weights(), &position);
    // The board, whole.
    assert_eq!(
        doc.descendants()
            .filter(|n| n
                .attribute("class")
                .is_some_and(|c| c.starts_with("piece ")))
            .count() as u32,
        position.occupied().0.count_ones()
    );
    // Every term with a value has its three bars, valued as the breakdown says, in order
    // of the tapered value's size; the others are left out.
    let terms: Vec<roxmltree::Node<'_, '_>> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("term"))
        .collect();
    let mut previous = u32::MAX;
    let mut named = BTreeSet::new();
    for node in &terms {
        let name = node.attribute("id").unwrap().strip_prefix("term-").unwrap();
        let term = pawnstorm::eval::terms::Term::ALL
            .into_iter()
            .find(|t| t.name() == name)
            .expect("a term's name");
        let values: Vec<i32> = node
            .children()
            .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("bar ")))
            .map(|n| n.attribute("data-value").unwrap().parse().unwrap())
            .collect();
        let expected = vec![
            breakdown.mg[term as usize],
            breakdown.eg[term as usize],
            breakdown.term_final(term),
        ];
        assert_eq!(values, expected, "{name}");
        assert!(
            expected[2].unsigned_abs() <= previous,
            "{name} out of order"
        );
        previous = expected[2].unsigned_abs();
        named.insert(term as usize);
        // A bar for White is light, one for Black dark.
        for bar in node
            .children()
            .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("bar ")))
        {
            let value: i32 = bar.attribute("data-value").unwrap().parse().unwrap();
            let side = if value >= 0 { "white" } else { "black" };
            assert!(bar.attribute("class").unwrap().ends_with(side));
        }
    }
    for term in pawnstorm::eval::terms::Term::ALL {
        let i = term as usize;
        let nonzero = (breakdown.mg[i], breakdown.eg[i], breakdown.term_final(term)) != (0, 0, 0);
        assert_eq!(named.contains(&i), nonzero, "{}", term.name());
    }
    assert!(terms.len() >= 5);
    let total = text_of(&doc, "total");
    assert!(
        total.contains(&format!("({} cp", breakdown.finished.score)),
        "{total}"
    );
    let phase = text_of(&doc, "phase");
    assert!(
        phase.contains(&format!("phase {}/24", breakdown.finished.phase)),
        "{phase}"
    );
}
