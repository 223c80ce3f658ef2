//! A weights file; what the loader takes evaluates alike on every path.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pawnstorm::fuzzing::weights_file(data));
