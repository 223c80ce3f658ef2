//! Boards as plain SVG text, with marked squares, arrows, a legend and the side to move:
//! what `show --svg` writes and the Python package's reprs show. No font or browser is
//! needed to make one: the pieces are paths drawn here, and every square, mark and piece
//! carries an id (`sq-e4`, `mark-0-e4`, `piece-e4`) so tests can check a picture's
//! structure without rendering it.

use std::fmt::Write;

use pawnstorm_kernels::geometry::{forward, pawn_attacks};
use pawnstorm_kernels::setwise::{bishop_attacks, king_attacks, knight_attacks, rook_attacks};

use crate::eval::features::{COLOR_MASKS, column_names, is_distance_column, position_features};
use crate::position::board::{PieceType, Position};
use crate::{Bitboard, Color, Square};

/// A square's side in pixels (python-chess's size).
pub const SQUARE: u32 = 45;
/// The margin around the board, where the coordinates are.
pub const MARGIN: u32 = 20;
const LEGEND_LINE: u32 = 22;
pub const LIGHT: &str = "#f0d9b5";
pub const DARK: &str = "#b58863";
/// The colours of marks, in order (a mark past the last takes the first again).
pub const MARK_COLORS: [&str; 6] = [
    "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4",
];
const ARROW: &str = "#15781b";

/// A set of squares to mark, with the name the legend gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub name: String,
    pub squares: Bitboard,
}

/// Every mask a board can show: the 24 pawn-structure masks (`white_passed` ...
/// `black_passed_enemy_rook_behind`), each side's attacked squares (`white_attacks`) and
/// each king's zone (`white_king_zone`: the king's square, its neighbours and the rank
/// beyond them toward the enemy, as the king-safety term counts it).
pub fn mask_names() -> Vec<String> {
    let mut names = Vec::new();
    for color in ["white", "black"] {
        for mask in COLOR_MASKS {
            names.push(format!("{color}_{mask}"));
        }
    }
    for color in ["white", "black"] {
        names.push(format!("{color}_attacks"));
        names.push(format!("{color}_king_zone"));
    }
    names
}

/// The mask `name` (see [`mask_names`]) of `position`; `None` for an unknown name.
pub fn mask(position: &Position, name: &str) -> Option<Bitboard> {
    let (color, rest) = if let Some(rest) = name.strip_prefix("white_") {
        (Color::White, rest)
    } else {
        (Color::Black, name.strip_prefix("black_")?)
    };
    match rest {
        "attacks" => return Some(attacks(position, color)),
        "king_zone" => {
            let king = position.pieces(color, PieceType::King).0;
            let near = king | king_attacks(king);
            return Some(Bitboard(near | forward(color, near)));
        }
        _ => {}
    }
    // A pawn-structure mask is the `features` column of the same name.
    let column = column_names().iter().position(|n| n == name)?;
    if is_distance_column(column) {
        return None;
    }
    let features = position_features::<u64>(
        position.piece_boards().map(|b| b.0),
        position.color_boards().map(|b| b.0),
    );
    Some(Bitboard(features[column]))
}

/// The marks `names` name on `position`; the first unknown name is an error that lists
/// the known ones.
pub fn marks(position: &Position, names: &[String]) -> Result<Vec<Mark>, String> {
    names
        .iter()
        .map(|name| {
            mask(position, name)
                .map(|squares| Mark {
                    name: name.clone(),
                    squares,
                })
                .ok_or_else(|| {
                    format!(
                        "no such mask {name:?} (one of: {})",
                        mask_names().join(", ")
                    )
                })
        })
        .collect()
}

/// An arrow from a UCI move's text (`e2e4`; a promotion's letter is ignored): any two
/// squares, legal move or not (an arrow may show a plan).
pub fn parse_arrow(text: &str) -> Result<(Square, Square), String> {
    let square = |at: usize| text.get(at..at + 2).and_then(Square::from_name);
    match (square(0), square(2)) {
        (Some(from), Some(to)) if text.len() <= 5 => Ok((from, to)),
        _ => Err(format!("arrow {text:?} is not a move like e2e4")),
    }
}

/// The squares `color`'s pieces attack (pawns diagonally; sliders stop at the first piece).
pub fn attacks(position: &Position, color: Color) -> Bitboard {
    let empty = !position.occupied().0;
    let of = |kind| position.pieces(color, kind).0;
    let diagonal = of(PieceType::Bishop) | of(PieceType::Queen);
    let straight = of(PieceType::Rook) | of(PieceType::Queen);
    Bitboard(
        pawn_attacks(color, of(PieceType::Pawn))
            | knight_attacks(of(PieceType::Knight))
            | bishop_attacks(diagonal, empty)
            | rook_attacks(straight, empty)
            | king_attacks(of(PieceType::King)),
    )
}

/// The picture of `position` with `marks` and `arrows` (from, to), White at the bottom.
pub fn board(position: &Position, marks: &[Mark], arrows: &[(Square, Square)]) -> String {
    let side = 8 * SQUARE;
    let width = side + 2 * MARGIN;
    let legend_lines = marks.len() as u32 + 1;
    let height = side + 2 * MARGIN + legend_lines * LEGEND_LINE + 6;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1" width="{width}" height="{height}" viewBox="0 0 {width} {height}">"#
    );
    svg.push_str(&format!("<title>{}</title>", escape(&position.to_fen())));
    svg.push_str("<defs>");
    svg.push_str(PIECE_DEFS);
    let _ = write!(
        svg,
        r#"<marker id="arrowhead" markerWidth="4" markerHeight="4" refX="2.2" refY="2" orient="auto"><path d="M0,0 L4,2 L0,4 Z" fill="{ARROW}"/></marker>"#
    );
    svg.push_str("</defs>");
    let _ = write!(
        svg,
        r##"<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>"##
    );
    for square in Square::all() {
        let (x, y) = corner(square);
        let light = (square.file().index() + square.rank().index()) % 2 == 1;
        let _ = write!(
            svg,
            r#"<rect id="sq-{square}" class="square {}" x="{x}" y="{y}" width="{SQUARE}" height="{SQUARE}" fill="{}"/>"#,
            if light { "light" } else { "dark" },
            if light { LIGHT } else { DARK }
        );
    }
    for (i, mark) in marks.iter().enumerate() {
        let color = MARK_COLORS[i % MARK_COLORS.len()];
        // Later marks are drawn inset so that every mark on a square stays visible.
        let inset = (i as u32 * 4).min(16);
        for square in mark.squares.squares() {
            let (x, y) = corner(square);
            let _ = write!(
                svg,
                r#"<rect id="mark-{i}-{square}" class="mark" data-mark="{}" x="{}" y="{}" width="{}" height="{}" fill="{color}" fill-opacity="0.6"/>"#,
                escape(&mark.name),
                x + inset,
                y + inset,
                SQUARE - 2 * inset,
                SQUARE - 2 * inset
            );
        }
    }
    for square in Square::all() {
        if let Some(piece) = position.piece_at(square) {
            let (x, y) = corner(square);
            let color = piece.color.name();
            let kind = kind_name(piece.kind);
            let _ = write!(
                svg,
                r##"<use id="piece-{square}" class="piece {color} {kind}" href="#{color}-{kind}" xlink:href="#{color}-{kind}" x="{x}" y="{y}"/>"##
            );
        }
    }
    for (from, to) in arrows {
        let (x1, y1) = centre(*from);
        let (x2, y2) = centre(*to);
        let _ = write!(
            svg,
            r#"<line class="arrow" id="arrow-{from}{to}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{ARROW}" stroke-width="8" stroke-opacity="0.8" marker-end="url(#arrowhead)"/>"#
        );
    }
    for i in 0..8u32 {
        let file = (b'a' + i as u8) as char;
        let rank = (b'8' - i as u8) as char;
        let x = MARGIN + i * SQUARE + SQUARE / 2;
        let y = MARGIN + i * SQUARE + SQUARE / 2 + 5;
        let _ = write!(
            svg,
            r##"<text class="coordinate" x="{x}" y="{}" font-family="sans-serif" font-size="13" text-anchor="middle" fill="#555555">{file}</text><text class="coordinate" x="{}" y="{y}" font-family="sans-serif" font-size="13" text-anchor="middle" fill="#555555">{rank}</text>"##,
            MARGIN + side + 15,
            MARGIN / 2
        );
    }
    let mut y = MARGIN + side + MARGIN + 4;
    let mover = position.side_to_move().name();
    let _ = write!(
        svg,
        r##"<g id="side-to-move" class="{mover}"><circle cx="{}" cy="{}" r="7" fill="{}" stroke="#000000" stroke-width="1.5"/><text x="{}" y="{}" font-family="sans-serif" font-size="14" fill="#000000">{} to move</text></g>"##,
        MARGIN + 7,
        y + 7,
        if mover == "white" {
            "#ffffff"
        } else {
            "#000000"
        },
        MARGIN + 22,
        y + 12,
        if mover == "white" { "White" } else { "Black" }
    );
    for (i, mark) in marks.iter().enumerate() {
        y += LEGEND_LINE;
        let color = MARK_COLORS[i % MARK_COLORS.len()];
        let count = mark.squares.0.count_ones();
        let _ = write!(
            svg,
            r##"<g id="legend-{i}" class="legend"><rect x="{}" y="{y}" width="14" height="14" fill="{color}" fill-opacity="0.6" stroke="#000000" stroke-width="0.5"/><text x="{}" y="{}" font-family="sans-serif" font-size="14" fill="#000000">{} ({count} square{})</text></g>"##,
            MARGIN,
            MARGIN + 22,
            y + 12,
            escape(&mark.name),
            if count == 1 { "" } else { "s" }
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// One term's contribution for [`breakdown_chart`]: its name and mg, eg and tapered values
/// (White's point of view, centipawns).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermBar {
    pub name: String,
    pub mg: i32,
    pub eg: i32,
    pub tapered: i32,
}

const BAR_ROW: u32 = 30;
const CHART_WIDTH: u32 = 520;
const NAME_WIDTH: u32 = 150;

/// The board beside a bar chart of each term's contribution: three bars a term (mg, eg,
/// tapered), terms sorted by the size of their tapered value, bars for White light and
/// for Black dark on either side of a zero line; the total, the phase and the scale
/// written above. Terms that are zero in all three are left out.
pub fn breakdown_chart(
    position: &Position,
    terms: &[TermBar],
    total: i32,
    phase: i32,
    scale: i32,
) -> String {
    let mut shown: Vec<&TermBar> = terms
        .iter()
        .filter(|t| (t.mg, t.eg, t.tapered) != (0, 0, 0))
        .collect();
    shown.sort_by_key(|t| (std::cmp::Reverse(t.tapered.unsigned_abs()), t.name.clone()));
    let board_svg = board(position, &[], &[]);
    let board_width = 8 * SQUARE + 2 * MARGIN;
    let board_height = 8 * SQUARE + 2 * MARGIN + LEGEND_LINE + 6;
    let header = 70;
    let chart_height = header + shown.len() as u32 * BAR_ROW + 40;
    let width = board_width + CHART_WIDTH + MARGIN;
    let height = board_height.max(chart_height);
    let largest = shown
        .iter()
        .flat_map(|t| [t.mg, t.eg, t.tapered])
        .map(i32::unsigned_abs)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let x0 = board_width + NAME_WIDTH;
    let half = (CHART_WIDTH - NAME_WIDTH - 20) as f64 / 2.0;
    let zero = x0 as f64 + half;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1" width="{width}" height="{height}" viewBox="0 0 {width} {height}"><title>{}</title><rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>"##,
        escape(&position.to_fen())
    );
    // The board as a nested picture: its ids stay as `board` makes them.
    let _ = write!(svg, r#"<g id="board">{}</g>"#, board_svg.trim_end());
    let pawns = |cp: i32| format!("{:+.2}", cp as f64 / 100.0);
    let _ = write!(
        svg,
        r##"<g id="summary" font-family="sans-serif" fill="#000000"><text id="total" x="{x0}" y="28" font-size="18" font-weight="bold">Total {} ({total} cp, White's view)</text><text id="phase" x="{x0}" y="50" font-size="14">phase {phase}/24 (24 = middlegame), endgame scale {scale}/64</text></g>"##,
        pawns(total)
    );
    let _ = write!(
        svg,
        r##"<line x1="{zero}" y1="{}" x2="{zero}" y2="{}" stroke="#000000" stroke-width="1"/>"##,
        header - 8,
        header + shown.len() as u32 * BAR_ROW
    );
    for (row, term) in shown.iter().enumerate() {
        let top = header + row as u32 * BAR_ROW;
        let _ = write!(
            svg,
            r##"<g id="term-{}" class="term"><text x="{}" y="{}" font-family="sans-serif" font-size="13" text-anchor="end" fill="#000000">{}</text>"##,
            escape(&term.name),
            x0 - 8,
            top + 17,
            escape(&term.name)
        );
        for (k, (what, value)) in [("mg", term.mg), ("eg", term.eg), ("tapered", term.tapered)]
            .into_iter()
            .enumerate()
        {
            let length = value.unsigned_abs() as f64 / largest * half;
            let x = if value >= 0 { zero } else { zero - length };
            let (fill, side) = if value >= 0 {
                ("#f4f4f4", "white")
            } else {
                ("#333333", "black")
            };
            let height = if what == "tapered" { 10 } else { 7 };
            let y = top + [3, 11, 19][k];
            let _ = write!(
                svg,
                r##"<rect class="bar {what} {side}" data-value="{value}" x="{x:.1}" y="{y}" width="{length:.1}" height="{height}" fill="{fill}" stroke="#000000" stroke-width="0.7"><title>{} {what} {value}</title></rect>"##,
                escape(&term.name)
            );
        }
        let _ = write!(
            svg,
            r##"<text x="{}" y="{}" font-family="sans-serif" font-size="12" fill="#000000">{}</text></g>"##,
            x0 + CHART_WIDTH - NAME_WIDTH - 12,
            top + 19,
            term.tapered
        );
    }
    let legend_y = header + shown.len() as u32 * BAR_ROW + 18;
    let _ = write!(
        svg,
        r##"<text id="chart-legend" x="{}" y="{legend_y}" font-family="sans-serif" font-size="12" fill="#000000">bars: mg, eg, tapered (thick); light, right: for White; dark, left: for Black</text>"##,
        board_width + 10
    );
    svg.push_str("</svg>\n");
    svg
}

/// The top-left corner of a square's cell (White at the bottom).
pub fn corner(square: Square) -> (u32, u32) {
    (
        MARGIN + square.file().index() as u32 * SQUARE,
        MARGIN + (7 - square.rank().index() as u32) * SQUARE,
    )
}

fn centre(square: Square) -> (u32, u32) {
    let (x, y) = corner(square);
    (x + SQUARE / 2, y + SQUARE / 2)
}

fn kind_name(kind: PieceType) -> &'static str {
    match kind {
        PieceType::Pawn => "pawn",
        PieceType::Knight => "knight",
        PieceType::Bishop => "bishop",
        PieceType::Rook => "rook",
        PieceType::Queen => "queen",
        PieceType::King => "king",
    }
}

/// Text for SVG: `&`, `<`, `>` and quotes escaped.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The pieces, each a group in a 45 x 45 cell, drawn for this project: simple silhouettes
/// (white ones filled white, black ones black, both outlined) that read at a glance.
const PIECE_DEFS: &str = concat!(
    r##"<g id="white-pawn" fill="#ffffff" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><circle cx="22.5" cy="14" r="5.5"/><path d="M18.5 19.5 h8 l3 12 h-14 z"/><path d="M12 36.5 h21 v-4 h-21 z"/></g>"##,
    r##"<g id="black-pawn" fill="#000000" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><circle cx="22.5" cy="14" r="5.5"/><path d="M18.5 19.5 h8 l3 12 h-14 z"/><path d="M12 36.5 h21 v-4 h-21 z"/></g>"##,
    r##"<g id="white-knight" fill="#ffffff" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><path d="M13 36.5 h20 c0-9-2-17-6-22 l-1-5 l-3 3 c-5 1-10 6-11 11 l3 2 l5-3 c1 4-6 8-7 14 z"/><circle cx="20" cy="16" r="1.3" fill="#000000"/></g>"##,
    r##"<g id="black-knight" fill="#000000" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><path d="M13 36.5 h20 c0-9-2-17-6-22 l-1-5 l-3 3 c-5 1-10 6-11 11 l3 2 l5-3 c1 4-6 8-7 14 z"/><circle cx="20" cy="16" r="1.3" fill="#ffffff" stroke="#ffffff"/></g>"##,
    r##"<g id="white-bishop" fill="#ffffff" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><circle cx="22.5" cy="8.5" r="2.5"/><path d="M22.5 11 c-6 4-8 10-5 17 h10 c3-7 1-13-5-17 z"/><path d="M12 36.5 h21 v-4 c-4-2-17-2-21 0 z"/><path d="M20 19 h5 M22.5 16.5 v5" fill="none"/></g>"##,
    r##"<g id="black-bishop" fill="#000000" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><circle cx="22.5" cy="8.5" r="2.5"/><path d="M22.5 11 c-6 4-8 10-5 17 h10 c3-7 1-13-5-17 z"/><path d="M12 36.5 h21 v-4 c-4-2-17-2-21 0 z"/><path d="M20 19 h5 M22.5 16.5 v5" fill="none" stroke="#ffffff"/></g>"##,
    r##"<g id="white-rook" fill="#ffffff" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><path d="M11 36.5 h23 v-4 h-23 z"/><path d="M14 32.5 l1.5-17 h14 l1.5 17 z"/><path d="M12 15.5 v-6 h4 v3 h4.5 v-3 h5 v3 h4.5 v-3 h4 v6 z"/></g>"##,
    r##"<g id="black-rook" fill="#000000" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><path d="M11 36.5 h23 v-4 h-23 z"/><path d="M14 32.5 l1.5-17 h14 l1.5 17 z"/><path d="M12 15.5 v-6 h4 v3 h4.5 v-3 h5 v3 h4.5 v-3 h4 v6 z"/><path d="M15 16 h15" fill="none" stroke="#ffffff"/></g>"##,
    r##"<g id="white-queen" fill="#ffffff" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><path d="M9 14 l5 16 h17 l5-16 l-7 9 l-2-11 l-4.5 10 l-4.5-10 l-2 11 z"/><path d="M11 36.5 h23 v-6.5 h-23 z"/><circle cx="9" cy="13" r="2"/><circle cx="16" cy="11" r="2"/><circle cx="22.5" cy="10" r="2"/><circle cx="29" cy="11" r="2"/><circle cx="36" cy="13" r="2"/></g>"##,
    r##"<g id="black-queen" fill="#000000" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><path d="M9 14 l5 16 h17 l5-16 l-7 9 l-2-11 l-4.5 10 l-4.5-10 l-2 11 z"/><path d="M11 36.5 h23 v-6.5 h-23 z"/><circle cx="9" cy="13" r="2"/><circle cx="16" cy="11" r="2"/><circle cx="22.5" cy="10" r="2"/><circle cx="29" cy="11" r="2"/><circle cx="36" cy="13" r="2"/></g>"##,
    r##"<g id="white-king" fill="#ffffff" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><path d="M22.5 5 v8 M18.5 9 h8" fill="none"/><path d="M22.5 14 c-3 0-5 3-4 7 c-6-4-12 0-10 6 l3 6 h22 l3-6 c2-6-4-10-10-6 c1-4-1-7-4-7 z"/><path d="M11 36.5 h23 v-3.5 h-23 z"/></g>"##,
    r##"<g id="black-king" fill="#000000" stroke="#000000" stroke-width="1.5" stroke-linejoin="round"><path d="M22.5 5 v8 M18.5 9 h8" fill="none"/><path d="M22.5 14 c-3 0-5 3-4 7 c-6-4-12 0-10 6 l3 6 h22 l3-6 c2-6-4-10-10-6 c1-4-1-7-4-7 z"/><path d="M11 36.5 h23 v-3.5 h-23 z"/><path d="M15 29 h15" fill="none" stroke="#ffffff"/></g>"##,
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::fen::parse_fen;

    #[test]
    fn every_mask_name_gives_a_mask_and_unknown_names_none() {
        let position = parse_fen("4k3/pp3p2/8/3P4/8/8/PPP2P1P/4K3 w - - 0 1").unwrap();
        let names = mask_names();
        assert_eq!(names.len(), 28);
        for name in &names {
            assert!(mask(&position, name).is_some(), "{name}");
        }
        assert_eq!(mask(&position, "white_nothing"), None);
        assert_eq!(mask(&position, "green_passed"), None);
        let square = |name| Square::from_name(name).unwrap();
        let passed = mask(&position, "white_passed").unwrap();
        assert!(passed.squares().any(|s| s == square("d5")));
        let zone = mask(&position, "white_king_zone").unwrap();
        let expected = ["d1", "e1", "f1", "d2", "e2", "f2", "d3", "e3", "f3"];
        assert_eq!(
            zone,
            expected
                .iter()
                .fold(Bitboard::EMPTY, |b, s| b | Bitboard(1 << square(s).index()))
        );
    }
}
