//! A lichess evaluation line: the hand-written scanner against serde_json.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pawnstorm::fuzzing::jsonl_line(data));
