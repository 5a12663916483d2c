//! domino-server: a headless REST domino game server.
//!
//! Module map (each owns one thing and says what it may not touch):
//! - [`engine`]: the rules (RULES.md); pure, knows nothing of HTTP or Redis.
//! - [`store`]: persistence of games (Redis or memory); the only module that talks to Redis.

pub mod engine;
// pub mod store; (merged from branch store)
