//! Arbitrary bytes opened as a position DB, every block and record read.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pawnstorm::fuzzing::db_file(data));
