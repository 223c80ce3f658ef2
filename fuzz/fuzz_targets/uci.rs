//! A UCI session driven in-process, searches bounded by nodes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pawnstorm::fuzzing::uci_session(data));
