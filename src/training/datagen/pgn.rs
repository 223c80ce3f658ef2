//! A generated game as PGN: the seven-tag roster, `Termination` (why the game ended, in
//! words: `checkmate`, `score adjudication`, ...), `PlyCount`, and `GameId` and
//! `RandomPlies` (where the DB's positions of the game start); SAN from shakmaty.

use std::fmt::Write as _;

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Position as _};

use super::GameRecord;
use crate::movegen::Board;

/// Movetext lines are cut before this width, as the PGN standard asks (at most 79).
const LINE_WIDTH: usize = 79;

pub(super) fn write(game: &GameRecord, out: &mut String) {
    let mut tag = |name: &str, value: &str| {
        let value = value.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = writeln!(out, "[{name} \"{value}\"]");
    };
    tag("Event", "pawnstorm datagen");
    tag("Site", "?");
    tag("Date", "????.??.??");
    tag("Round", &(u64::from(game.game_id) + 1).to_string());
    tag("White", "pawnstorm");
    tag("Black", "pawnstorm");
    tag("Result", game.result.as_pgn());
    tag("Termination", game.termination.name());
    tag("PlyCount", &game.moves.len().to_string());
    tag("GameId", &game.game_id.to_string());
    tag("RandomPlies", &game.random_plies.to_string());
    let fen = game.start.to_fen();
    if game.start != Board::startpos() {
        tag("SetUp", "1");
        tag("FEN", &fen);
    }
    out.push('\n');

    let mut position: Chess = Fen::from_ascii(fen.as_bytes())
        .ok()
        .and_then(|fen| fen.into_position(CastlingMode::Standard).ok())
        .expect("a game's start position is a legal position for shakmaty");
    let mut tokens = Vec::with_capacity(game.moves.len() * 3 / 2 + 2);
    for (i, &mv) in game.moves.iter().enumerate() {
        let white = position.turn() == Color::White;
        if white || i == 0 {
            let number = position.fullmoves();
            let dots = if white { "." } else { "..." };
            tokens.push(format!("{number}{dots}"));
        }
        let uci = UciMove::from_ascii(mv.uci(false).to_string().as_bytes())
            .expect("pawnstorm writes well-formed UCI moves");
        let legal = uci
            .to_move(&position)
            .expect("pawnstorm's legal moves are legal for shakmaty");
        tokens.push(SanPlus::from_move_and_play_unchecked(&mut position, legal).to_string());
    }
    tokens.push(game.result.as_pgn().to_string());
    let mut line_length = 0;
    for token in tokens {
        if line_length > 0 && line_length + 1 + token.len() > LINE_WIDTH {
            out.push('\n');
            line_length = 0;
        }
        if line_length > 0 {
            out.push(' ');
            line_length += 1;
        }
        out.push_str(&token);
        line_length += token.len();
    }
    out.push_str("\n\n");
}
