//! An EPD/FEN line as import reads it, and as a FEN and an EPD alone.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pawnstorm::fuzzing::fen_line(data));
