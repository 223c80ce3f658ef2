//! Writes a `.binpack` of random games for throughput measurements (`import`, `export`,
//! `features`): `cargo run --release --example random_binpack -- OUT.binpack POSITIONS [SEED]`.
//! Games are random playouts by shakmaty (up to 200 plies), each one chain; scores are the
//! material balance plus noise, results drawn at random: the bytes per position are those
//! of real binpacks (a chain's first position, then a move and a score each), the values are
//! not meant for training.

use std::io::BufWriter;

use sfbinpack::chess::coords::Square as SfSquare;
use sfbinpack::chess::r#move::Move as SfMove;
use sfbinpack::chess::piece::Piece as SfPiece;
use sfbinpack::chess::piecetype::PieceType as SfPieceType;
use sfbinpack::chess::position::Position as SfPosition;
use sfbinpack::{CompressedTrainingDataEntryWriter, TrainingDataEntry};
use shakmaty::{Chess, Color, EnPassantMode, Position, Role, fen::Fen};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(out), Some(count)) = (args.get(1), args.get(2)) else {
        return Err("usage: random_binpack OUT.binpack POSITIONS [SEED]".into());
    };
    let count: u64 = count.parse()?;
    let mut state: u64 = args.get(3).map_or(Ok(1), |s| s.parse())? | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let file = BufWriter::with_capacity(1 << 20, std::fs::File::create(out)?);
    let mut writer = CompressedTrainingDataEntryWriter::new(file)?;
    let mut written = 0u64;
    while written < count {
        let mut game = Chess::default();
        let white_result: i16 = [1, 0, -1][(next() % 3) as usize];
        let mut ply = 0u16;
        while written < count && ply < 200 {
            let moves = game.legal_moves();
            if moves.is_empty() {
                break;
            }
            let mv = moves[(next() % moves.len() as u64) as usize];
            let fen = Fen::from_position(&game, EnPassantMode::Legal).to_string();
            let pos = SfPosition::from_fen(&fen).map_err(|e| format!("{fen}: {e:?}"))?;
            let board = game.board();
            let material = |c: Color| -> i32 {
                [
                    (Role::Pawn, 100),
                    (Role::Knight, 300),
                    (Role::Bishop, 300),
                    (Role::Rook, 500),
                    (Role::Queen, 900),
                ]
                .iter()
                .map(|&(r, v)| v * (board.by_role(r) & board.by_color(c)).count() as i32)
                .sum()
            };
            let us = game.turn();
            let score = material(us) - material(!us) + (next() % 61) as i32 - 30;
            let from = SfSquare::new(mv.from().map_or(0, |s| s as u32));
            let to = SfSquare::new(mv.to() as u32);
            let sf_move = match mv {
                shakmaty::Move::Castle { king, rook } => {
                    SfMove::castle(SfSquare::new(king as u32), SfSquare::new(rook as u32))
                }
                shakmaty::Move::EnPassant { .. } => SfMove::en_passant(from, to),
                shakmaty::Move::Normal {
                    promotion: Some(role),
                    ..
                } => {
                    let kind = match role {
                        Role::Knight => SfPieceType::Knight,
                        Role::Bishop => SfPieceType::Bishop,
                        Role::Rook => SfPieceType::Rook,
                        _ => SfPieceType::Queen,
                    };
                    SfMove::promotion(from, to, SfPiece::new(kind, pos.side_to_move()))
                }
                _ => SfMove::normal(from, to),
            };
            let result = if us == Color::White {
                white_result
            } else {
                -white_result
            };
            writer.write_entry(&TrainingDataEntry {
                pos,
                mv: sf_move,
                score: score as i16,
                ply,
                result,
            })?;
            written += 1;
            game.play_unchecked(mv);
            ply += 1;
        }
    }
    drop(writer);
    eprintln!("{out}: {written} positions");
    Ok(())
}
