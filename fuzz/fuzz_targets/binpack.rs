//! A Stockfish .binpack imported from memory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pawnstorm::import::Format;

fuzz_target!(|data: &[u8]| pawnstorm::fuzzing::import_bytes(Format::Binpack, data));
