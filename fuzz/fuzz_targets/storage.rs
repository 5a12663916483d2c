//! Stored games from any bytes: see `domino_server::fuzz::storage`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| domino_server::fuzz::storage(data));
