//! domino-server: a headless REST domino game server.
//!
//! Module map (each owns one thing and says what it may not touch):
//! - [`engine`]: the rules (RULES.md); pure, knows nothing of HTTP or Redis.
//! - [`bots`]: the built-in players (random, greedy, expert); they see only a seat's projection.
//! - [`store`]: persistence of games (Redis or memory); the only module that talks to Redis.

pub mod bots;
pub mod engine;
// pub mod store; (merged from branch store)
