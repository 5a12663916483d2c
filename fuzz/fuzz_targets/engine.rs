//! Move parsing and the engine: see `domino_server::fuzz::engine`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| domino_server::fuzz::engine(data));
