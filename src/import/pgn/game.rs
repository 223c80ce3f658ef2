//! One game's text into records: its tags read and filtered, its movetext replayed as
//! python-chess replays it (`san`), labels from its tags and comments.

use pawnstorm_kernels::Color;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};

use super::cut::{GameSpan, is_blank, next_line, tag_pair};
use super::san::{self, SanToken};
use crate::import::ImportOptions;
use crate::import::lichess::{self, BadEval};
use crate::movegen::{Board, Move};
use crate::position::board::{CastlingSide, PieceType};
use crate::position::labels::{self, GameResult, Labels, Record};

/// What became of one game.
pub(super) enum Outcome {
    /// Kept: how many records it added.
    Kept(usize),
    Dropped(Filter),
    /// Refused: the reason (with the line of the fault when it is not the first).
    Rejected(String),
}

/// The filter that left a well-formed game out (the first that failed, in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Filter {
    MinElo,
    MaxElo,
    MinBaseSeconds,
    Speed,
    Date,
    Termination,
    RatedOnly,
    RequireEval,
}

#[derive(Default)]
struct Tags<'a> {
    any: bool,
    fen: Option<&'a [u8]>,
    variant: Option<&'a [u8]>,
    result: Option<GameResult>,
    white_elo: Option<u16>,
    black_elo: Option<u16>,
    time_control: Option<&'a [u8]>,
    utc_date: Option<&'a [u8]>,
    date: Option<&'a [u8]>,
    termination: Option<&'a [u8]>,
    event: Option<&'a [u8]>,
}

fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// Reads the game `span` of `batch`, its records added to `records` if it is kept.
pub(super) fn read_game(
    batch: &[u8],
    span: &GameSpan,
    options: &ImportOptions,
    records: &mut Vec<Record>,
) -> Outcome {
    let before = records.len();
    match read(batch, span, options, records) {
        Ok(Outcome::Kept(_)) => Outcome::Kept(records.len() - before),
        Ok(outcome) => {
            records.truncate(before);
            outcome
        }
        Err(reason) => {
            records.truncate(before);
            Outcome::Rejected(reason)
        }
    }
}

fn read(
    batch: &[u8],
    span: &GameSpan,
    options: &ImportOptions,
    records: &mut Vec<Record>,
) -> Result<Outcome, String> {
    let mut tags = Tags::default();
    let header = &batch[span.start..span.movetext];
    let mut at = 0;
    let mut line_number = span.first_line;
    while let Some((line, next)) = next_line(header, at, true) {
        if line.starts_with(b"[") {
            let (name, value) = tag_pair(line).ok_or_else(|| {
                format!(
                    "at line {line_number}: malformed tag {:?} (a tag is [Name \"value\"])",
                    text(line)
                )
            })?;
            tags.any = true;
            read_tag(&mut tags, name, value);
        }
        at = next;
        line_number += 1;
    }
    if let Some(filter) = filtered_by_tags(&tags, options) {
        return Ok(Outcome::Dropped(filter));
    }
    let (start, chess960) = starting_position(&tags)?;
    let mut game = Replay {
        options,
        board: Board::new(super::from_shakmaty(&start)?),
        chess960,
        ply: 0,
        first: records.len(),
        records,
        current: None,
        previous: None,
        outcome: None,
        has_eval: false,
        has_moves: false,
        line: span.movetext_line,
        game_labels: game_labels(&tags),
    };
    game.emit()?;
    game.movetext(&batch[span.movetext..span.end])?;
    if !tags.any && !game.has_moves {
        return Err("no tags and no moves: not a game".to_string());
    }
    if options.require_eval && !game.has_eval {
        return Ok(Outcome::Dropped(Filter::RequireEval));
    }
    // The termination marker is the game's own word; the tag stands in for a `*`.
    let result = game.outcome.flatten().or(tags.result);
    for record in &mut game.records[game.first..] {
        record.labels.result = result;
    }
    Ok(Outcome::Kept(game.records.len() - game.first))
}

fn read_tag<'a>(tags: &mut Tags<'a>, name: &[u8], value: &'a [u8]) {
    match name {
        b"FEN" => tags.fen = Some(value),
        b"Variant" => tags.variant = Some(value),
        b"Result" => tags.result = GameResult::parse(&text(value)),
        b"WhiteElo" => tags.white_elo = lichess::parse_elo(&text(value)),
        b"BlackElo" => tags.black_elo = lichess::parse_elo(&text(value)),
        b"TimeControl" => tags.time_control = Some(value),
        b"UTCDate" => tags.utc_date = Some(value),
        b"Date" => tags.date = Some(value),
        b"Termination" => tags.termination = Some(value),
        b"Event" => tags.event = Some(value),
        _ => {}
    }
}

fn filtered_by_tags(tags: &Tags, options: &ImportOptions) -> Option<Filter> {
    let both_rated =
        |ok: &dyn Fn(u16) -> bool| tags.white_elo.is_some_and(ok) && tags.black_elo.is_some_and(ok);
    if let Some(min) = options.min_elo
        && !both_rated(&|e| e >= min)
    {
        return Some(Filter::MinElo);
    }
    if let Some(max) = options.max_elo
        && !both_rated(&|e| e <= max)
    {
        return Some(Filter::MaxElo);
    }
    let time_control = tags.time_control.map(|t| text(t));
    if let Some(min) = options.min_base_seconds
        && time_control
            .as_deref()
            .and_then(lichess::parse_time_control)
            .is_none_or(|(base, _)| base < min)
    {
        return Some(Filter::MinBaseSeconds);
    }
    if options.speeds != 0
        && time_control
            .as_deref()
            .and_then(lichess::Speed::of_time_control)
            .is_none_or(|speed| options.speeds & speed.bit() == 0)
    {
        return Some(Filter::Speed);
    }
    if let Some((first, last)) = options.dates {
        let date = tags.utc_date.or(tags.date).and_then(lichess::parse_date);
        if date.is_none_or(|d| d < first || d > last) {
            return Some(Filter::Date);
        }
    }
    if !options.terminations.is_empty() {
        let termination = tags
            .termination
            .map(|t| text(t).trim().to_ascii_lowercase());
        if termination.is_none_or(|t| !options.terminations.contains(&t)) {
            return Some(Filter::Termination);
        }
    }
    if options.rated_only
        && !tags
            .event
            .is_some_and(|e| e.len() >= 6 && e[..6].eq_ignore_ascii_case(b"rated "))
    {
        return Some(Filter::RatedOnly);
    }
    None
}

/// The position the game starts from and whether it is Chess960 (the `Variant` tag, or
/// castling rights only Chess960 has, as python-chess decides).
fn starting_position(tags: &Tags) -> Result<(Chess, bool), String> {
    let variant = tags
        .variant
        .map(|v| text(v).trim().to_ascii_lowercase())
        .unwrap_or_default();
    let tagged_960 = match variant.as_str() {
        "" | "standard" | "chess" | "classical" | "normal" | "illegal" | "from position" => false,
        "chess960" | "chess 960" | "fischerandom" | "fischerrandom" | "fischer random" => true,
        _ => return Err(format!("variant {variant:?} is not supported")),
    };
    let Some(fen) = tags.fen else {
        return Ok((Chess::default(), tagged_960));
    };
    let bad = |e: &dyn std::fmt::Display| format!("FEN tag {:?}: {e}", text(fen));
    let parsed = Fen::from_ascii(fen.trim_ascii()).map_err(|e| bad(&e))?;
    let mode = if tagged_960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    };
    // Some files leave out the Variant tag of a Chess960 game.
    let position = match parsed.clone().into_position(mode) {
        Ok(position) => position,
        Err(_) => parsed
            .into_position(CastlingMode::Chess960)
            .map_err(|e| bad(&e))?,
    };
    let chess960 = tagged_960 || san::is_chess960(&position);
    Ok((position, chess960))
}

fn game_labels(tags: &Tags) -> Labels {
    let time_control = tags
        .time_control
        .and_then(|t| lichess::parse_time_control(&text(t)));
    Labels {
        white_elo: tags.white_elo,
        black_elo: tags.black_elo,
        base_seconds: time_control.map(|(base, _)| lichess::seconds_label(base)),
        increment: time_control.map(|(_, increment)| lichess::seconds_label(increment)),
        ..Labels::default()
    }
}

/// The bytes a movetext token can start with (`MOVETEXT_REGEX`'s alternatives); any other
/// byte is passed over.
const STARTS_TOKEN: [bool; 256] = {
    let mut table = [false; 256];
    let starts = b"NBKRQabcdefgh12345678-x@PZ0O$*?!";
    let mut i = 0;
    while i < starts.len() {
        table[starts[i] as usize] = true;
        i += 1;
    }
    table
};

/// A game being replayed.
struct Replay<'a> {
    options: &'a ImportOptions,
    board: Board,
    chess960: bool,
    ply: u32,
    /// This game's records start at `first`.
    first: usize,
    records: &'a mut Vec<Record>,
    /// The record of the current position, if it is kept.
    current: Option<usize>,
    /// The record of the position before the last move, if it is kept.
    previous: Option<usize>,
    /// The termination marker, if any: `Some(None)` is `*`.
    outcome: Option<Option<GameResult>>,
    has_eval: bool,
    has_moves: bool,
    /// The line being read.
    line: u64,
    game_labels: Labels,
}

impl Replay<'_> {
    fn keep(&self) -> bool {
        let options = self.options;
        // `every` is nearly always 1: no division for it on every ply.
        self.ply >= options.skip_plies
            && (options.every <= 1 || (self.ply - options.skip_plies).is_multiple_of(options.every))
    }

    fn emit(&mut self) -> Result<(), String> {
        self.previous = self.current;
        self.current = None;
        if !self.keep() {
            return Ok(());
        }
        // The starting position was checked whole; each one after it follows by a legal
        // move. Its en-passant square is kept only when a capture there is legal, as
        // python-chess writes FENs.
        let mut position = self.board.position().clone();
        if position.en_passant().is_some() && !san::legal_en_passant(&self.board) {
            position.set_en_passant(None);
        }
        let ply = u16::try_from(self.ply)
            .ok()
            .filter(|&p| p != u16::MAX)
            .ok_or("game longer than 65,534 plies")?;
        self.current = Some(self.records.len());
        self.records.push(Record {
            position,
            labels: Labels {
                ply: Some(ply),
                ..self.game_labels
            },
        });
        Ok(())
    }

    fn fault(&self, what: impl std::fmt::Display) -> String {
        format!("at line {}: {what}", self.line)
    }

    fn play(&mut self, mv: Move) -> Result<(), String> {
        if let Some(current) = self.current {
            self.records[current].labels.move_played = Some(move_label(mv));
        }
        // The DB's clocks are 16 bits: a game that runs past them is refused, not wrapped.
        let before = self.board.position();
        if before.side_to_move() == Color::Black && before.fullmove_number() == u16::MAX {
            return Err("fullmove number too large".to_string());
        }
        let halfmove_clock = before.halfmove_clock();
        self.board.make_move(mv);
        if halfmove_clock == u16::MAX && self.board.position().halfmove_clock() != 0 {
            return Err("halfmove clock too large".to_string());
        }
        self.ply += 1;
        self.has_moves = true;
        self.emit()
    }

    fn move_name(&self, token: &[u8]) -> String {
        let full = self.board.position().fullmove_number();
        let dots = if self.board.side_to_move() == Color::White {
            "."
        } else {
            "..."
        };
        format!("move {full}{dots} {}", text(token))
    }

    /// A comment's `[%eval]` scores the position after the last move; its `[%clk]` is the
    /// clock of the side that played it, a label of the position it was played from.
    fn comment(&mut self, comment: &[u8]) -> Result<(), String> {
        if lichess::find_byte(comment, b'%').is_none() {
            return Ok(());
        }
        let side = self.board.side_to_move();
        let eval = lichess::eval_in_comment(comment, side)
            .map_err(|BadEval(reason)| self.fault(reason))?;
        let clock = lichess::clock_in_comment(comment).map_err(|reason| self.fault(reason))?;
        self.label_from_comment(eval, clock);
        Ok(())
    }

    fn label_from_comment(&mut self, eval: Option<i32>, clock: Option<u32>) {
        if let Some(score) = eval {
            self.has_eval = true;
            if let Some(current) = self.current {
                self.records[current].labels.score = Some(score);
            }
        }
        if let Some(seconds) = clock
            && self.ply > 0
            && let Some(previous) = self.previous
        {
            self.records[previous].labels.clock = Some(lichess::seconds_label(seconds));
        }
    }

    /// Reads the movetext as python-chess's `MOVETEXT_REGEX` tokenises it: a token where
    /// one of its patterns matches, any other byte passed over.
    fn movetext(&mut self, text_bytes: &[u8]) -> Result<(), String> {
        let mut at = 0;
        let mut in_comment = false;
        let mut comment = Vec::new();
        let mut comment_line = self.line;
        // Depth of the variation being passed over (variations are not replayed).
        let mut depth = 0u32;
        while let Some((line, next)) = next_line(text_bytes, at, true) {
            at = next;
            let mut i = 0;
            if in_comment {
                match memchr::memchr(b'}', line) {
                    None => {
                        comment.extend_from_slice(line);
                        comment.push(b'\n');
                        self.line += 1;
                        continue;
                    }
                    Some(end) => {
                        comment.extend_from_slice(&line[..end]);
                        in_comment = false;
                        if depth == 0 {
                            let whole = std::mem::take(&mut comment);
                            self.comment(&whole)?;
                        }
                        comment.clear();
                        i = end + 1;
                    }
                }
            } else if line.starts_with(b"%") || line.starts_with(b";") || is_blank(line) {
                self.line += 1;
                continue;
            }
            while i < line.len() {
                match line[i] {
                    b'{' if depth == 0
                        && let Some(read) =
                            lichess::lichess_comment(&line[i + 1..], self.board.side_to_move()) =>
                    {
                        self.label_from_comment(read.eval, read.clock);
                        i += read.len + 1;
                    }
                    b'{' => match memchr::memchr(b'}', &line[i + 1..]) {
                        Some(len) => {
                            if depth == 0 {
                                self.comment(&line[i + 1..i + 1 + len])?;
                            }
                            i += len + 2;
                        }
                        None => {
                            in_comment = true;
                            comment_line = self.line;
                            comment.extend_from_slice(&line[i + 1..]);
                            comment.push(b'\n');
                            break;
                        }
                    },
                    b';' => break,
                    b'(' => {
                        // python-chess opens a variation only once a move is played.
                        if depth > 0 || self.has_moves {
                            depth += 1;
                        }
                        i += 1;
                    }
                    b')' => {
                        depth = depth.saturating_sub(1);
                        i += 1;
                    }
                    _ if depth > 0 => i += 1,
                    b if !STARTS_TOKEN[usize::from(b)] => i += 1,
                    _ => i += self.token(&line[i..])?,
                }
            }
            self.line += 1;
        }
        if in_comment {
            self.line = comment_line;
            return Err(self.fault("unterminated comment ({ without })"));
        }
        Ok(())
    }

    /// Reads the token at the start of `rest` (in the main line), if one is there; returns
    /// how many bytes to pass.
    fn token(&mut self, rest: &[u8]) -> Result<usize, String> {
        let b = rest[0];
        // A move number (`12.`, `3...`) is passed over whole: a digit then a digit or a
        // dot starts no token (a rank digit needs `-`, `x` or a file after it; a result
        // `-` or `/`), nor does a dot; only a `0` then a digit might (`0000`).
        let starts_nothing = |at: usize| match rest.get(at) {
            Some(b'.') => true,
            Some(&digit @ b'0'..=b'9') => rest
                .get(at + 1)
                .is_some_and(|n| *n == b'.' || (digit != b'0' && n.is_ascii_digit())),
            _ => false,
        };
        if matches!(b, b'1'..=b'9') && starts_nothing(0) {
            let mut len = 1;
            while starts_nothing(len) {
                len += 1;
            }
            return Ok(len);
        }
        if matches!(b, b'N' | b'B' | b'K' | b'R' | b'Q' | b'a'..=b'h' | b'1'..=b'8' | b'-' | b'x')
            && let Some(token) = san::move_token(rest)
        {
            return self.san_move(&token, &rest[..token.len]);
        }
        let starts = |p: &[u8]| rest.starts_with(p);
        let square_at = |i: usize| {
            rest.get(i).is_some_and(|f| (b'a'..=b'h').contains(f))
                && rest.get(i + 1).is_some_and(|r| (b'1'..=b'8').contains(r))
        };
        if (b == b'@' && square_at(1))
            || (matches!(b, b'P' | b'N' | b'B' | b'R' | b'Q' | b'K')
                && rest.get(1) == Some(&b'@')
                && square_at(2))
        {
            return Err(self.fault(format!(
                "{}: piece drops are not chess",
                self.move_name(&rest[..if b == b'@' { 3 } else { 4 }])
            )));
        }
        for null in [&b"--"[..], b"Z0", b"0000", b"@@@@"] {
            if starts(null) {
                return Err(self.fault(format!(
                    "{}: null moves are not supported",
                    self.move_name(null)
                )));
            }
        }
        for (long, short) in [(&b"O-O-O"[..], &b"O-O"[..]), (b"0-0-0", b"0-0")] {
            let (side, len) = if starts(long) {
                (CastlingSide::Queen, long.len())
            } else if starts(short) {
                (CastlingSide::King, short.len())
            } else {
                continue;
            };
            let mv = san::castle(&self.board, side)
                .map_err(|e| self.fault(format!("{}: {e}", self.move_name(&rest[..len]))))?;
            self.play(mv)?;
            return Ok(len);
        }
        for (marker, result) in [
            (&b"1-0"[..], Some(GameResult::WhiteWin)),
            (b"0-1", Some(GameResult::BlackWin)),
            (b"1/2-1/2", Some(GameResult::Draw)),
            (b"*", None),
        ] {
            if starts(marker) {
                self.outcome = Some(result);
                return Ok(marker.len());
            }
        }
        if b == b'$' {
            let digits = rest[1..].iter().take_while(|d| d.is_ascii_digit()).count();
            return Ok(1 + digits);
        }
        Ok(1)
    }

    fn san_move(&mut self, token: &SanToken, token_text: &[u8]) -> Result<usize, String> {
        let mv = san::to_move(&self.board, token, self.chess960)
            .map_err(|e| self.fault(format!("{}: {e}", self.move_name(token_text))))?;
        self.play(mv)?;
        Ok(token.len)
    }
}

/// The move as the DB's `move` label stores it (`labels::encode_move`): castling as the
/// king's move to the g- or c-file, or, in Chess960 when the king is already there, as
/// the king taking its own rook (UCI_Chess960's way), so that the king always moves.
pub(super) fn move_label(mv: Move) -> u16 {
    let to = if mv.is_castle() {
        let target = mv.castle_king_destination();
        if target == mv.from() { mv.to() } else { target }
    } else {
        mv.to()
    };
    let promotion = match mv.promotion() {
        None => 0,
        Some(PieceType::Knight) => 1,
        Some(PieceType::Bishop) => 2,
        Some(PieceType::Rook) => 3,
        Some(_) => 4,
    };
    labels::encode_move(mv.from().index(), to.index(), promotion)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The games of `text`: for each, the moves kept (UCI) or the reason it was refused.
    fn games(text: &str) -> Vec<Result<Vec<String>, String>> {
        let mut spans = Vec::new();
        super::super::cut::cut_games(text.as_bytes(), 1, true, &mut spans);
        let options = ImportOptions::default();
        spans
            .iter()
            .map(|span| {
                let mut records = Vec::new();
                match read_game(text.as_bytes(), span, &options, &mut records) {
                    Outcome::Kept(_) => Ok(records
                        .iter()
                        .filter_map(|r| r.labels.move_played)
                        .filter_map(labels::move_to_uci)
                        .collect()),
                    Outcome::Rejected(reason) => Err(reason),
                    Outcome::Dropped(_) => Err("dropped".to_string()),
                }
            })
            .collect()
    }

    #[test]
    fn move_numbers_are_passed_over_and_what_follows_them_read() {
        let read = games(
            "1.e4 e5 2.Nf3 10...Nc6 1-0\n\n\
             1. d4 1.0-1\n\n\
             1. e4 10000\n",
        );
        assert_eq!(
            read[0],
            Ok(vec![
                "e2e4".into(),
                "e7e5".into(),
                "g1f3".into(),
                "b8c6".into()
            ])
        );
        assert_eq!(read[1], Ok(vec!["d2d4".into()]));
        let refused = read[2].as_ref().expect_err("a null move");
        assert!(
            refused.contains("null moves are not supported"),
            "{refused}"
        );
    }
}
