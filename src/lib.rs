//! domino-server: a headless REST domino game server.
//!
//! Module map (each owns one thing and says what it may not touch):
//! - [`store`]: persistence of games (Redis or memory); the only module that talks to Redis.

pub mod store;
