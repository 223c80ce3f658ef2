//! PGN import: every position of every game (after the skip/every filter), labelled with
//! the game's result, its game id, its ply, the move played from it, the score of a
//! lichess `[%eval]` comment after the move that led to it, and the game's ratings and
//! time control. SAN moves are checked and played with `shakmaty`; `pgn-reader` parses
//! the movetext.
//!
//! Games are first cut out of the text line by line, so that a bad game can be reported
//! with the line it starts on, and skipped without losing the games around it.

use std::ops::ControlFlow;

use pgn_reader::{KnownOutcome, Outcome, RawComment, RawTag, Reader, SanPlus, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position as _, Role};

use super::lichess::{self, BadEval};
use super::{Counts, Handlers, ImportError, ImportOptions, Input, PROGRESS_EVERY};
use crate::position::board::{CastlingRights, CastlingSide, Position, PositionParts};
use crate::position::labels::{self, GameResult, Labels, Record};
use pawnstorm_kernels::{Bitboard, Color, Square};

pub(super) fn import_games(
    input: &mut Input,
    options: &ImportOptions,
    next_game_id: &mut u32,
    handlers: &mut Handlers<'_>,
) -> Result<Counts, ImportError> {
    let mut counts = Counts::default();
    let mut game = GameText::default();
    let mut visitor = GameVisitor {
        options: *options,
        records: Vec::new(),
    };
    let mut last_progress = 0;
    let mut line = Vec::new();
    while let Some(bytes) = input.next_line()? {
        // A copy, so that the input can be lent out again while this line is handled.
        line.clear();
        line.extend_from_slice(bytes);
        if input.line - last_progress >= PROGRESS_EVERY {
            last_progress = input.line;
            (handlers.progress)(input.bytes_read());
        }
        let trimmed = line.trim_ascii_start();
        // A tag line ends the movetext; inside a comment it is comment text, unless it
        // follows a blank line and reads as a whole tag pair: then the comment was never
        // closed, and the game it swallowed is rejected on its own instead of with the
        // games after it.
        let starts_game = trimmed.starts_with(b"[")
            && game.in_movetext
            && (!game.in_comment || (game.last_line_blank && is_tag_pair(trimmed)));
        if starts_game {
            finish_game(
                input,
                &mut game,
                &mut visitor,
                next_game_id,
                handlers,
                &mut counts,
            )?;
        }
        game.add_line(input.line, &line);
    }
    finish_game(
        input,
        &mut game,
        &mut visitor,
        next_game_id,
        handlers,
        &mut counts,
    )?;
    (handlers.progress)(input.bytes_read());
    Ok(counts)
}

/// The text of one game as it is gathered.
#[derive(Default)]
struct GameText {
    text: Vec<u8>,
    first_line: u64,
    in_movetext: bool,
    /// Inside a `{...}` comment (they do not nest).
    in_comment: bool,
    last_line_blank: bool,
    has_content: bool,
}

/// `[Name "value"]`, the whole line (a tag pair as PGN writes them).
fn is_tag_pair(line: &[u8]) -> bool {
    let line = line.trim_ascii();
    let Some(inner) = line.strip_prefix(b"[").and_then(|l| l.strip_suffix(b"]")) else {
        return false;
    };
    let name_len = inner
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    let value = inner[name_len..].trim_ascii_start();
    name_len > 0 && value.len() >= 2 && value.starts_with(b"\"") && value.ends_with(b"\"")
}

impl GameText {
    fn add_line(&mut self, number: u64, line: &[u8]) {
        let trimmed = line.trim_ascii();
        if !self.has_content {
            if trimmed.is_empty() {
                return;
            }
            self.first_line = number;
            self.has_content = true;
        }
        // `%` lines are PGN escape lines; they are neither tags nor moves.
        if !trimmed.is_empty()
            && !trimmed.starts_with(b"%")
            && (self.in_movetext || !trimmed.starts_with(b"["))
        {
            self.in_movetext = true;
        }
        for &b in line {
            match b {
                b'{' if !self.in_comment => self.in_comment = true,
                b'}' if self.in_comment => self.in_comment = false,
                // The rest of the line is a comment.
                b';' if !self.in_comment => break,
                _ => {}
            }
        }
        self.last_line_blank = trimmed.is_empty();
        self.text.extend_from_slice(line);
        self.text.push(b'\n');
    }

    fn first_line_text(&self) -> String {
        let end = self
            .text
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(self.text.len());
        String::from_utf8_lossy(&self.text[..end])
            .trim()
            .to_string()
    }

    fn clear(&mut self) {
        self.text.clear();
        self.in_movetext = false;
        self.in_comment = false;
        self.last_line_blank = false;
        self.has_content = false;
    }
}

fn finish_game(
    input: &Input,
    game: &mut GameText,
    visitor: &mut GameVisitor,
    next_game_id: &mut u32,
    handlers: &mut Handlers<'_>,
    counts: &mut Counts,
) -> Result<(), ImportError> {
    if !game.has_content {
        game.clear();
        return Ok(());
    }
    visitor.records.clear();
    // The game's text is in memory: an error reading it is the text's (an unterminated
    // comment), and rejects this game only.
    let outcome = match Reader::new(game.text.as_slice()).read_game(visitor) {
        Ok(outcome) => outcome.unwrap_or_else(|| Err("no game found".to_string())),
        Err(error) => Err(error.to_string()),
    };
    match outcome {
        Ok(Kept::No(filter)) => {
            let dropped = &mut counts.dropped;
            *match filter {
                Filter::MinElo => &mut dropped.min_elo,
                Filter::MinBaseSeconds => &mut dropped.min_base_seconds,
                Filter::RequireEval => &mut dropped.require_eval,
            } += 1;
        }
        Ok(Kept::Yes) => {
            counts.games += 1;
            let game_id = *next_game_id;
            *next_game_id = next_game_id.saturating_add(1);
            for record in &mut visitor.records {
                record.labels.game_id = Some(game_id);
                (handlers.record)(record)?;
                counts.positions += 1;
            }
        }
        Err(reason) => {
            let text = game.first_line_text();
            input.reject(handlers, game.first_line, reason, &text, counts)?;
        }
    }
    game.clear();
    Ok(())
}

struct GameVisitor {
    options: ImportOptions,
    records: Vec<Record>,
}

/// Whether a well-formed game is imported, and if not, which filter left it out.
enum Kept {
    Yes,
    No(Filter),
}

enum Filter {
    MinElo,
    MinBaseSeconds,
    RequireEval,
}

#[derive(Default)]
struct Tags {
    fen: Option<String>,
    chess960: bool,
    unsupported_variant: Option<String>,
    result: Option<GameResult>,
    white_elo: Option<u16>,
    black_elo: Option<u16>,
    time_control: Option<(u32, u32)>,
}

struct Movetext {
    position: Chess,
    ply: u32,
    tag_result: Option<GameResult>,
    outcome: Option<GameResult>,
    failed: Option<String>,
    /// The labels every position of the game shares (ratings, time control).
    game_labels: Labels,
    /// The index in `records` of the current position, if it is kept.
    current: Option<usize>,
    has_eval: bool,
}

impl GameVisitor {
    fn keep(&self, ply: u32) -> bool {
        ply >= self.options.skip_plies
            && (ply - self.options.skip_plies).is_multiple_of(self.options.every.max(1))
    }

    fn emit(&mut self, movetext: &mut Movetext) -> Result<(), String> {
        movetext.current = None;
        if !self.keep(movetext.ply) {
            return Ok(());
        }
        let position = from_shakmaty(&movetext.position)?;
        let ply = u16::try_from(movetext.ply)
            .ok()
            .filter(|&p| p != u16::MAX)
            .ok_or("game longer than 65,534 plies")?;
        movetext.current = Some(self.records.len());
        self.records.push(Record {
            position,
            labels: Labels {
                ply: Some(ply),
                ..movetext.game_labels
            },
        });
        Ok(())
    }

    /// Scores the current position (if it is kept); the game has an eval either way.
    fn record_eval(&mut self, movetext: &mut Movetext, score: i32) {
        movetext.has_eval = true;
        if let Some(current) = movetext.current {
            self.records[current].labels.score = Some(score);
        }
    }

    /// The filter on the tags that leaves this game out, if any.
    fn filtered_by_tags(&self, tags: &Tags) -> Option<Filter> {
        if let Some(min) = self.options.min_elo {
            let rated = |elo: Option<u16>| elo.is_some_and(|e| e >= min);
            if !(rated(tags.white_elo) && rated(tags.black_elo)) {
                return Some(Filter::MinElo);
            }
        }
        if let Some(min) = self.options.min_base_seconds
            && tags.time_control.is_none_or(|(base, _)| base < min)
        {
            return Some(Filter::MinBaseSeconds);
        }
        None
    }
}

fn side_to_move(position: &Chess) -> Color {
    match position.turn() {
        shakmaty::Color::White => Color::White,
        shakmaty::Color::Black => Color::Black,
    }
}

/// The move as the DB's `move` label stores it (`Move::label_code`): castling as the
/// king's move to the g- or c-file.
fn move_label(mv: &Move) -> u16 {
    let (from, to, promotion) = match *mv {
        Move::Normal {
            from,
            to,
            promotion,
            ..
        } => (from, to, promotion),
        Move::EnPassant { from, to } => (from, to, None),
        Move::Castle { king, rook } => {
            let file = if rook.file() > king.file() {
                shakmaty::File::G
            } else {
                shakmaty::File::C
            };
            (king, shakmaty::Square::from_coords(file, king.rank()), None)
        }
        Move::Put { to, .. } => (to, to, None),
    };
    let promotion = match promotion {
        None => 0,
        Some(Role::Knight) => 1,
        Some(Role::Bishop) => 2,
        Some(Role::Rook) => 3,
        Some(_) => 4,
    };
    labels::encode_move(u8::from(from), u8::from(to), promotion)
}

impl Visitor for GameVisitor {
    type Tags = Tags;
    type Movetext = Movetext;
    type Output = Result<Kept, String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Tags::default())
    }

    fn tag(
        &mut self,
        tags: &mut Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        match name {
            b"FEN" => tags.fen = Some(value.decode_utf8_lossy().into_owned()),
            b"Result" => tags.result = GameResult::parse(&value.decode_utf8_lossy()),
            b"WhiteElo" => tags.white_elo = lichess::parse_elo(&value.decode_utf8_lossy()),
            b"BlackElo" => tags.black_elo = lichess::parse_elo(&value.decode_utf8_lossy()),
            b"TimeControl" => {
                tags.time_control = lichess::parse_time_control(&value.decode_utf8_lossy())
            }
            b"Variant" => {
                let variant = value.decode_utf8_lossy().to_ascii_lowercase();
                match variant.as_str() {
                    "standard" | "from position" | "" => {}
                    "chess960" | "chess 960" | "fischerandom" | "fischer random" | "960" => {
                        tags.chess960 = true
                    }
                    _ => tags.unsupported_variant = Some(variant),
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<Self::Output, Movetext> {
        if let Some(variant) = tags.unsupported_variant {
            return ControlFlow::Break(Err(format!("variant {variant:?} is not supported")));
        }
        if let Some(filter) = self.filtered_by_tags(&tags) {
            return ControlFlow::Break(Ok(Kept::No(filter)));
        }
        let mode = if tags.chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        };
        let position = match &tags.fen {
            None => Chess::default(),
            Some(fen) => {
                let parsed = Fen::from_ascii(fen.as_bytes())
                    .map_err(|e| format!("FEN tag {fen:?}: {e}"))
                    .and_then(|f| {
                        f.into_position(mode)
                            .or_else(|_| {
                                // Some files leave out the Variant tag of a Chess960 game.
                                Fen::from_ascii(fen.as_bytes())
                                    .map_err(|e| e.to_string())?
                                    .into_position(CastlingMode::Chess960)
                                    .map_err(|e| e.to_string())
                            })
                            .map_err(|e| format!("FEN tag {fen:?}: {e}"))
                    });
                match parsed {
                    Ok(position) => position,
                    Err(e) => return ControlFlow::Break(Err(e)),
                }
            }
        };
        let mut movetext = Movetext {
            position,
            ply: 0,
            tag_result: tags.result,
            outcome: None,
            failed: None,
            game_labels: Labels {
                white_elo: tags.white_elo,
                black_elo: tags.black_elo,
                base_seconds: tags
                    .time_control
                    .map(|(base, _)| lichess::seconds_label(base)),
                increment: tags
                    .time_control
                    .map(|(_, increment)| lichess::seconds_label(increment)),
                ..Labels::default()
            },
            current: None,
            has_eval: false,
        };
        if let Err(e) = self.emit(&mut movetext) {
            return ControlFlow::Break(Err(e));
        }
        ControlFlow::Continue(movetext)
    }

    fn san(&mut self, movetext: &mut Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        let mv = match san_plus.san.to_move(&movetext.position) {
            Ok(mv) => mv,
            Err(e) => {
                let full = movetext.position.fullmoves().get();
                let dots = if movetext.position.turn() == shakmaty::Color::White {
                    "."
                } else {
                    "..."
                };
                let reason = format!("move {full}{dots} {san_plus}: {e}");
                movetext.failed = Some(reason.clone());
                return ControlFlow::Break(Err(reason));
            }
        };
        if let Some(current) = movetext.current {
            self.records[current].labels.move_played = Some(move_label(&mv));
        }
        movetext.position.play_unchecked(mv);
        movetext.ply += 1;
        if let Err(e) = self.emit(movetext) {
            return ControlFlow::Break(Err(e));
        }
        ControlFlow::Continue(())
    }

    /// A piece of a comment too long for the reader's buffer: an `[%eval]` may be cut in
    /// two at its end, so only a whole one counts here.
    fn partial_comment(
        &mut self,
        movetext: &mut Movetext,
        comment: RawComment<'_>,
    ) -> ControlFlow<Self::Output> {
        let side_to_move = side_to_move(&movetext.position);
        if let Ok(Some(score)) = lichess::eval_in_comment(comment.as_bytes(), side_to_move) {
            self.record_eval(movetext, score);
        }
        ControlFlow::Continue(())
    }

    /// A `[%eval]` scores the position the comment follows (after the last move played).
    fn comment(
        &mut self,
        movetext: &mut Movetext,
        comment: RawComment<'_>,
    ) -> ControlFlow<Self::Output> {
        let side_to_move = side_to_move(&movetext.position);
        match lichess::eval_in_comment(comment.as_bytes(), side_to_move) {
            Ok(None) => {}
            Ok(Some(score)) => self.record_eval(movetext, score),
            Err(BadEval(reason)) => {
                let reason = format!("after ply {}: {reason}", movetext.ply);
                movetext.failed = Some(reason.clone());
                return ControlFlow::Break(Err(reason));
            }
        }
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, movetext: &mut Movetext, outcome: Outcome) -> ControlFlow<Self::Output> {
        movetext.outcome = match outcome {
            Outcome::Known(KnownOutcome::Decisive { winner }) => Some(match winner {
                shakmaty::Color::White => GameResult::WhiteWin,
                shakmaty::Color::Black => GameResult::BlackWin,
            }),
            Outcome::Known(KnownOutcome::Draw) => Some(GameResult::Draw),
            Outcome::Unknown => None,
        };
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, movetext: Movetext) -> Self::Output {
        if let Some(reason) = movetext.failed {
            return Err(reason);
        }
        // The termination marker is the game's own word; the tag stands in for a `*`.
        let result = movetext.outcome.or(movetext.tag_result);
        if self.options.require_eval && !movetext.has_eval {
            return Ok(Kept::No(Filter::RequireEval));
        }
        for record in &mut self.records {
            record.labels.result = result;
        }
        Ok(Kept::Yes)
    }
}

/// Converts a shakmaty position into a pawnstorm one. The en-passant square is kept only
/// when a legal capture exists, as python-chess writes FENs.
pub(crate) fn from_shakmaty(position: &Chess) -> Result<Position, String> {
    let board = position.board();
    let role = |r: Role| Bitboard(board.by_role(r).0);
    let pieces = [
        role(Role::Pawn),
        role(Role::Knight),
        role(Role::Bishop),
        role(Role::Rook),
        role(Role::Queen),
        role(Role::King),
    ];
    let colors = [
        Bitboard(board.by_color(shakmaty::Color::White).0),
        Bitboard(board.by_color(shakmaty::Color::Black).0),
    ];
    let side_to_move = side_to_move(position);
    let mut castling = CastlingRights::NONE;
    for rook in Bitboard(position.castles().castling_rights().0).squares() {
        let color = if rook.rank().index() == 0 {
            Color::White
        } else {
            Color::Black
        };
        let king_file = Bitboard(board.kings().0 & colors[color.index()].0)
            .first()
            .map(Square::file)
            .ok_or("castling rights without a king")?;
        let side = if rook.file() > king_file {
            CastlingSide::King
        } else {
            CastlingSide::Queen
        };
        castling.set(color, side, Some(rook.file()));
    }
    let en_passant = position
        .ep_square(EnPassantMode::Legal)
        .and_then(|sq| Square::new(u8::from(sq)));
    let halfmove_clock =
        u16::try_from(position.halfmoves()).map_err(|_| "halfmove clock too large")?;
    let fullmove_number =
        u16::try_from(position.fullmoves().get()).map_err(|_| "fullmove number too large")?;
    Position::from_parts(PositionParts {
        pieces,
        colors,
        side_to_move,
        castling,
        en_passant,
        halfmove_clock,
        fullmove_number,
    })
    .map_err(|e| e.to_string())
}
