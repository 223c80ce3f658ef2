//! The yardstick for `pawnstorm import`'s PGN speed: pgn-reader's own parse and replay on
//! one core (every SAN checked and played with shakmaty, each position counted, nothing
//! stored), as pgn-reader's benchmarks do it.
//!
//!     cargo run --release --example pgn_reader_replay -- GAMES.pgn

use std::ops::ControlFlow;
use std::time::Instant;

use pgn_reader::{RawTag, Reader, SanPlus, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

struct Replay {
    positions: u64,
    failed: u64,
}

impl Visitor for Replay {
    type Tags = Option<Chess>;
    type Movetext = Chess;
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(None)
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        if name == b"FEN" {
            *tags = Fen::from_ascii(value.as_bytes())
                .ok()
                .and_then(|f| f.into_position(CastlingMode::Chess960).ok());
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        self.positions += 1;
        ControlFlow::Continue(tags.unwrap_or_default())
    }

    fn san(&mut self, position: &mut Chess, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        match san_plus.san.to_move(position) {
            Ok(mv) => {
                position.play_unchecked(mv);
                self.positions += 1;
                ControlFlow::Continue(())
            }
            Err(_) => {
                self.failed += 1;
                ControlFlow::Break(())
            }
        }
    }

    fn end_game(&mut self, _movetext: Self::Movetext) -> Self::Output {}
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: pgn_reader_replay GAMES.pgn")?;
    let start = Instant::now();
    let mut reader = Reader::new(std::fs::File::open(&path)?);
    let mut replay = Replay {
        positions: 0,
        failed: 0,
    };
    while reader.read_game(&mut replay)?.is_some() {}
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "pgn-reader replay: {} positions ({} games stopped at a bad move), {seconds:.2} s, {:.0} positions/s",
        replay.positions,
        replay.failed,
        replay.positions as f64 / seconds
    );
    Ok(())
}
