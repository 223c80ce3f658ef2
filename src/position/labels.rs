//! Labels that travel with positions (game result, score, game id, ply) and the line
//! formats that tuners and trainers write them in.
//!
//! Points of view: every label is stored from White's point of view. EPD `ce` is from the
//! side to move (as the EPD standard defines it) and is turned round on reading and writing;
//! `c9` results, `[1.0]` markers and `FEN | score | result` lines are White's already.

use pawnstorm_kernels::Color;
use thiserror::Error;

use crate::position::board::{Position, PositionParts};
use crate::position::epd::{self, EpdError};
use crate::position::fen::{self, FenError};

/// A game's result, from White's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    WhiteWin,
    Draw,
    BlackWin,
}

impl GameResult {
    /// Reads `1-0`, `0-1`, `1/2-1/2` (also `1/2`), and the numeric `1.0`, `0.5`, `0.0`
    /// (also `1`, `0`).
    pub fn parse(text: &str) -> Option<GameResult> {
        match text.trim() {
            "1-0" | "1.0" | "1" => Some(GameResult::WhiteWin),
            "0-1" | "0.0" | "0" => Some(GameResult::BlackWin),
            "1/2-1/2" | "1/2" | "0.5" | ".5" => Some(GameResult::Draw),
            _ => None,
        }
    }

    /// `1-0`, `1/2-1/2` or `0-1`.
    pub fn as_pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWin => "1-0",
            GameResult::Draw => "1/2-1/2",
            GameResult::BlackWin => "0-1",
        }
    }

    /// 1 for a White win, 0 for a draw, -1 for a Black win (the DB's encoding).
    pub fn to_i8(self) -> i8 {
        match self {
            GameResult::WhiteWin => 1,
            GameResult::Draw => 0,
            GameResult::BlackWin => -1,
        }
    }

    pub fn from_i8(value: i8) -> Option<GameResult> {
        match value {
            1 => Some(GameResult::WhiteWin),
            0 => Some(GameResult::Draw),
            -1 => Some(GameResult::BlackWin),
            _ => None,
        }
    }
}

/// What is known about a position besides the position itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    pub result: Option<GameResult>,
    /// Centipawns, White's point of view.
    pub score: Option<i32>,
    pub game_id: Option<u32>,
    pub ply: Option<u16>,
    pub white_elo: Option<u16>,
    pub black_elo: Option<u16>,
    /// The time control's base time, seconds (PGN `TimeControl` `300+3` gives 300).
    pub base_seconds: Option<u16>,
    /// The time control's increment, seconds per move.
    pub increment: Option<u16>,
    /// The move played from this position in its game, as [`encode_move`] gives it.
    pub move_played: Option<u16>,
    /// The mover's time left in whole seconds after the move played from this position
    /// (lichess `[%clk]`), clamped to [`MAX_CLOCK`].
    pub clock: Option<u16>,
}

/// How many labels [`Labels::u16_labels`] gives: the DB's `u16` label columns.
pub const U16_LABEL_COUNT: usize = 6;

/// The largest clock label: `u16::MAX` is the DB's "unknown".
pub const MAX_CLOCK: u16 = u16::MAX - 1;

impl Labels {
    /// The labels stored in the DB's `u16` columns (`db::U16_LABELS`), in that order.
    pub fn u16_labels(&self) -> [Option<u16>; U16_LABEL_COUNT] {
        [
            self.white_elo,
            self.black_elo,
            self.base_seconds,
            self.increment,
            self.move_played,
            self.clock,
        ]
    }

    pub fn set_u16_labels(&mut self, values: [Option<u16>; U16_LABEL_COUNT]) {
        [
            self.white_elo,
            self.black_elo,
            self.base_seconds,
            self.increment,
            self.move_played,
            self.clock,
        ] = values;
    }
}

/// A move as the DB's `move` column stores it: from-square | to-square << 6 |
/// promotion << 12, squares a1 = 0 .. h8 = 63, promotion 0 none, 1 knight, 2 bishop,
/// 3 rook, 4 queen. Castling is the king's move (e1g1), as UCI writes it; in Chess960, when
/// the king is already on that square, the king taking its own rook (UCI_Chess960's g1h1).
pub fn encode_move(from: u8, to: u8, promotion: u8) -> u16 {
    from as u16 | (to as u16) << 6 | (promotion as u16) << 12
}

/// The move's UCI text (`e2e4`, `e7e8q`), or `None` if `code` is no move.
pub fn move_to_uci(code: u16) -> Option<String> {
    let (from, to, promotion) = (code & 63, (code >> 6) & 63, code >> 12);
    if from == to || promotion > 4 {
        return None;
    }
    let square = |s: u16| {
        [
            (b'a' + (s % 8) as u8) as char,
            (b'1' + (s / 8) as u8) as char,
        ]
    };
    let mut text: String = square(from).into_iter().chain(square(to)).collect();
    if promotion > 0 {
        text.push(['n', 'b', 'r', 'q'][promotion as usize - 1]);
    }
    Some(text)
}

/// The label code of UCI text (`e2e4`, `e7e8q`, castling as `e1g1`), checking only its
/// form: the inverse of [`move_to_uci`].
pub fn move_from_uci(text: &str) -> Option<u16> {
    let bytes = text.as_bytes();
    if !(4..=5).contains(&bytes.len()) {
        return None;
    }
    let square = |file: u8, rank: u8| {
        ((b'a'..=b'h').contains(&file) && (b'1'..=b'8').contains(&rank))
            .then(|| (rank - b'1') * 8 + (file - b'a'))
    };
    let from = square(bytes[0], bytes[1])?;
    let to = square(bytes[2], bytes[3])?;
    let promotion = match bytes.get(4) {
        None => 0,
        Some(&p) => 1 + b"nbrq".iter().position(|&c| c == p)? as u8,
    };
    (from != to).then(|| encode_move(from, to, promotion))
}

/// A position with its labels: one row of a position DB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub position: Position,
    pub labels: Labels,
}

impl Record {
    /// The ply of the position: the label, else what the fullmove number and side to move
    /// say.
    pub fn ply(&self) -> u32 {
        match self.labels.ply {
            Some(ply) => ply as u32,
            None => {
                let p = &self.position;
                2 * (p.fullmove_number().max(1) as u32 - 1)
                    + (p.side_to_move() == pawnstorm_kernels::Color::Black) as u32
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum LineError {
    #[error(transparent)]
    Fen(#[from] FenError),
    #[error(transparent)]
    Epd(#[from] EpdError),
    #[error("{0}")]
    Label(String),
}

/// Reads one line of EPD/FEN text with its labels. Blank lines and `#` comments give
/// `Ok(None)`. Accepted forms:
/// - EPD or FEN, then operations: `c9 "1-0"` (result), `ce 35` (score, side to move),
///   `game 7`, `ply 12`, `hmvc`/`fmvn` (clocks), `white_elo 2100`, `black_elo 2050`,
///   `base_seconds 300`, `increment 3`, `move e2e4` (the move played, UCI), `clk 180`
///   (the mover's clock after that move, seconds); other operations are allowed and
///   ignored;
/// - a FEN or EPD with a trailing result marker `[1.0]`, `[0.5]`, `[0.0]` (or `[1-0]` ...);
/// - `FEN | score | result`, score in centipawns from White's side.
pub fn parse_line(line: &str) -> Result<Option<Record>, LineError> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    // The position first: what follows it tells the format, with no scan of the whole line.
    let (position, rest_at) = match epd::parse_position(line) {
        Ok(parsed) => parsed,
        Err(e) if line.contains('|') => {
            return parse_pipe_line(line).map_err(|pipe_error| match pipe_error {
                LineError::Fen(_) => LineError::Fen(e),
                other => other,
            });
        }
        Err(e) => return Err(e.into()),
    };
    let rest = &line[rest_at..];
    if rest.starts_with('|') {
        return parse_pipe_line(line);
    }
    if let Some(open) = rest.strip_suffix(']').and_then(|r| r.rfind('[')) {
        let marker = &rest[open + 1..rest.len() - 1];
        let result = GameResult::parse(marker).ok_or_else(|| {
            LineError::Label(format!("result marker [{marker}] is not 1.0, 0.5 or 0.0"))
        })?;
        let mut record = labels_from_operations(position, &line[..rest_at + open], rest_at)?;
        record.labels.result = Some(result);
        return Ok(Some(record));
    }
    labels_from_operations(position, line, rest_at).map(Some)
}

fn parse_pipe_line(line: &str) -> Result<Option<Record>, LineError> {
    let fields: Vec<&str> = line.split('|').map(str::trim).collect();
    let [fen_text, score, result] = fields[..] else {
        return Err(LineError::Label(format!(
            "expected `FEN | score | result`, found {} fields separated by '|'",
            fields.len()
        )));
    };
    let position = fen::parse_fen(fen_text)?;
    let score = score
        .parse::<i32>()
        .ok()
        .filter(|&s| s != i32::MIN)
        .ok_or_else(|| LineError::Label(format!("score {score:?} is not an integer")))?;
    let result = GameResult::parse(result).ok_or_else(|| {
        LineError::Label(format!(
            "result {result:?} is not 1.0, 0.5, 0.0, 1-0, 1/2-1/2 or 0-1"
        ))
    })?;
    Ok(Some(Record {
        position,
        labels: Labels {
            result: Some(result),
            score: Some(score),
            ..Labels::default()
        },
    }))
}

/// Reads the labels among the EPD operations of `text` from byte `ops_at` on.
fn labels_from_operations(
    position: Position,
    text: &str,
    ops_at: usize,
) -> Result<Record, LineError> {
    let mut labels = Labels::default();
    let mut stm_score = None;
    let mut clocks = (None, None);
    for op in epd::raw_operations(text, ops_at) {
        let op = op?;
        let operand = op.first_operand();
        let bad = |what: &str| {
            LineError::Label(format!(
                "operation {} {:?}: {what}",
                op.opcode,
                operand.unwrap_or("")
            ))
        };
        match op.opcode {
            // c9 also holds other things in some suites (STS keeps UCI moves there): only
            // a result is a label, anything else is a comment like any other.
            "c9" => {
                if let Some(result) = operand.and_then(GameResult::parse) {
                    labels.result = Some(result);
                }
            }
            "ce" => {
                stm_score = Some(
                    operand
                        .and_then(|s| s.parse::<i32>().ok())
                        .filter(|&s| s != i32::MIN)
                        .ok_or_else(|| bad("not an integer"))?,
                );
            }
            "game" => {
                labels.game_id = Some(
                    operand
                        .and_then(|s| s.parse::<u32>().ok())
                        .filter(|&id| id != u32::MAX)
                        .ok_or_else(|| bad("not a game number"))?,
                );
            }
            "ply" => {
                labels.ply = Some(
                    operand
                        .and_then(|s| s.parse::<u16>().ok())
                        .filter(|&ply| ply != u16::MAX)
                        .ok_or_else(|| bad("not a ply number"))?,
                );
            }
            "white_elo" | "black_elo" | "base_seconds" | "increment" | "clk" => {
                let value = Some(
                    operand
                        .and_then(|s| s.parse::<u16>().ok())
                        .filter(|&v| v != u16::MAX)
                        .ok_or_else(|| bad("not a number below 65535"))?,
                );
                match op.opcode {
                    "white_elo" => labels.white_elo = value,
                    "black_elo" => labels.black_elo = value,
                    "base_seconds" => labels.base_seconds = value,
                    "increment" => labels.increment = value,
                    _ => labels.clock = value,
                }
            }
            "move" => {
                labels.move_played = Some(
                    operand
                        .and_then(move_from_uci)
                        .ok_or_else(|| bad("not a UCI move"))?,
                );
            }
            "hmvc" => {
                clocks.0 = Some(
                    operand
                        .and_then(|s| s.parse::<u16>().ok())
                        .ok_or_else(|| bad("not a halfmove count"))?,
                );
            }
            "fmvn" => {
                clocks.1 = Some(
                    operand
                        .and_then(|s| s.parse::<u16>().ok())
                        .filter(|&n| n > 0)
                        .ok_or_else(|| bad("not a fullmove number"))?,
                );
            }
            _ => {}
        }
    }
    labels.score = stm_score.map(|score| white_pov(score, position.side_to_move()));
    let position = if clocks == (None, None) {
        position
    } else {
        let parts = position.parts();
        Position::from_parts(PositionParts {
            halfmove_clock: clocks.0.unwrap_or(parts.halfmove_clock),
            fullmove_number: clocks.1.unwrap_or(parts.fullmove_number),
            ..parts
        })
        .map_err(|e| LineError::Label(e.to_string()))?
    };
    Ok(Record { position, labels })
}

/// Turns a score from `side`'s point of view into White's (and back: it is its own inverse).
pub fn white_pov(score: i32, side: Color) -> i32 {
    match side {
        Color::White => score,
        Color::Black => score.saturating_neg(),
    }
}

/// Writes a record as an EPD line with a six-field FEN and its labels as operations:
/// `c9 "1-0"`, `ce` (side to move's point of view), `game`, `ply`, `white_elo`,
/// `black_elo`, `base_seconds`, `increment`, `move` (UCI), `clk` (seconds).
pub fn write_line(record: &Record, out: &mut String) {
    out.push_str(&record.position.to_fen());
    let labels = &record.labels;
    if let Some(result) = labels.result {
        epd::write_operation(out, "c9", &[result.as_pgn()]);
    }
    if let Some(score) = labels.score {
        let stm = white_pov(score, record.position.side_to_move());
        epd::write_operation(out, "ce", &[&stm.to_string()]);
    }
    if let Some(game) = labels.game_id {
        epd::write_operation(out, "game", &[&game.to_string()]);
    }
    if let Some(ply) = labels.ply {
        epd::write_operation(out, "ply", &[&ply.to_string()]);
    }
    for (opcode, value) in [
        ("white_elo", labels.white_elo),
        ("black_elo", labels.black_elo),
        ("base_seconds", labels.base_seconds),
        ("increment", labels.increment),
    ] {
        if let Some(value) = value {
            epd::write_operation(out, opcode, &[&value.to_string()]);
        }
    }
    if let Some(uci) = labels.move_played.and_then(move_to_uci) {
        epd::write_operation(out, "move", &[&uci]);
    }
    if let Some(clock) = labels.clock {
        epd::write_operation(out, "clk", &[&clock.to_string()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(line: &str) -> Labels {
        parse_line(line).unwrap().unwrap().labels
    }

    #[test]
    fn blank_and_comment_lines_are_not_records() {
        assert_eq!(parse_line("").unwrap(), None);
        assert_eq!(parse_line("   \t").unwrap(), None);
        assert_eq!(parse_line("# a comment").unwrap(), None);
    }

    #[test]
    fn each_line_format_gives_its_labels_from_whites_view() {
        let black_to_move = "4k3/8/8/8/8/8/8/4K3 b - -";
        assert_eq!(
            labels(&format!("{black_to_move} c9 \"0-1\"; ce 50;")),
            Labels {
                result: Some(GameResult::BlackWin),
                score: Some(-50),
                ..Labels::default()
            }
        );
        assert_eq!(
            labels(&format!("{black_to_move} 3 40 [0.5]")).result,
            Some(GameResult::Draw)
        );
        assert_eq!(
            labels(&format!("{black_to_move} 0 1 | -120 | 1.0")),
            Labels {
                result: Some(GameResult::WhiteWin),
                score: Some(-120),
                ..Labels::default()
            }
        );
        assert_eq!(
            labels(&format!("{black_to_move} 0 1 | 7 | 1/2-1/2")).result,
            Some(GameResult::Draw)
        );
        assert_eq!(
            labels(&format!("{black_to_move} 0 1 c9 \"1-0\"; game 7; ply 33;")),
            Labels {
                result: Some(GameResult::WhiteWin),
                score: None,
                game_id: Some(7),
                ply: Some(33),
                ..Labels::default()
            }
        );
        // STS keeps UCI moves in c9: not a result, and not an error either.
        assert_eq!(
            labels(&format!("{black_to_move} bm Kd7; c9 \"e8d7 e8f7\";")),
            Labels::default()
        );
    }

    #[test]
    fn uci_text_reads_back_to_every_move_code() {
        for from in 0..64u8 {
            for to in (0..64u8).filter(|&to| to != from) {
                for promotion in 0..5u8 {
                    let code = encode_move(from, to, promotion);
                    let uci = move_to_uci(code).unwrap();
                    assert_eq!(move_from_uci(&uci), Some(code), "{uci}");
                }
            }
        }
        for bad in ["", "e2", "e2e2", "e2e9", "i2e4", "e7e8k", "e2e4qq"] {
            assert_eq!(move_from_uci(bad), None, "{bad}");
        }
    }

    #[test]
    fn epd_clock_operations_set_the_clocks() {
        let record = parse_line("4k3/8/8/8/8/8/8/4K3 w - - hmvc 12; fmvn 40;")
            .unwrap()
            .unwrap();
        assert_eq!(record.position.to_fen(), "4k3/8/8/8/8/8/8/4K3 w - - 12 40");
    }

    #[test]
    fn bad_labels_are_errors_that_say_what() {
        let bad = [
            ("4k3/8/8/8/8/8/8/4K3 w - - [2.0]", "result marker"),
            ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | x | 1-0", "score"),
            ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 10 | 2-0", "result"),
            ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 10", "fields"),
            ("4k3/8/8/8/8/8/8/4K3 w - - ce abc;", "ce"),
            ("4k3/8/8/8/8/8/8/4K3 w - - ce -2147483648;", "ce"),
            ("4k3/8/8/8/8/8/8/4K3 w - - game -1;", "game"),
            (
                "4k3/8/8/8/8/8/8/4K3 w - - c0 \"unterminated;",
                "unterminated",
            ),
            ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 5 x;", "opcode"),
            ("4k3/8/8/8/8/8/8/4K3 w - - fmvn 0;", "fullmove"),
            ("4k3/8/8/8/8/8/8/4K3 w - - clk 65535;", "clk"),
            ("4k3/8/8/8/8/8/8/4K3 w - - clk 1:05;", "clk"),
        ];
        for (line, expected) in bad {
            let error = parse_line(line).expect_err(line).to_string();
            assert!(error.contains(expected), "{line}: {error}");
        }
    }

    #[test]
    fn written_lines_read_back_to_the_same_record() {
        for line in [
            "4k3/8/8/8/8/8/8/4K3 b - - 0 1 c9 \"0-1\"; ce -31; game 4; ply 9;",
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1 ce 0;",
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1 white_elo 2100; black_elo 1999; base_seconds 300; increment 2; move e1d1;",
            "4k3/8/8/8/8/8/8/4K3 b - - 0 1 game 3; move e8d8; clk 65534;",
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1 clk 0;",
            "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1 move b7b8n;",
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
        ] {
            let record = parse_line(line).unwrap().unwrap();
            let mut written = String::new();
            write_line(&record, &mut written);
            assert_eq!(written, line);
        }
    }
}
