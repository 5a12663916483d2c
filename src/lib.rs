//! domino-server: a headless REST domino game server.
//!
//! Module map (each owns one thing and says what it may not touch):
//! - [`engine`]: the rules (docs/rules.md); pure, knows nothing of HTTP or Redis.
//! - [`bots`]: the built-in players (random, greedy, expert, master) and their turns at a table;
//!   a bot chooses from a seat's projection only.
//! - [`store`]: persistence of games (Redis or memory); the only module that talks to Redis.
//!   [`store::any::AnyStore`] is the one the server holds, chosen at startup.
//! - [`api`]: HTTP handlers (one file per resource), wire types, the problem+json error
//!   type, the OpenAPI document; knows no game rules and no visibility rule, and reaches
//!   games only through the service.
//! - [`service`]: the one place that joins engine, bots and store, by aggregate, each with
//!   its use cases and stored types: `games` (tables: the stored game, its one write
//!   path and one admission path, clocks, bots, lobby, events, history), `players`
//!   (players, keys, a player's stream), `matchmaking` (`Challenges`, `Seeks`), `matches` (the
//!   duplicate arena: a match's own record, its series, its invitation and drive),
//!   `offers` (the challenge routes, for a challenge or a match's invitation), `ratings`
//!   (ratings, leaderboards); `dispatch` runs what follows a save, each reaction its
//!   aggregate's; `driver` the work on games no request waits for (the sweep of due
//!   games, bots played in the background under a lease).
//! - [`domain`]: the values a request names (ids, seats, names), parsed once by api and
//!   taken by the service; each rule of what one may hold lives on its type.
//! - [`tournament`]: Swiss and round-robin pairings and the standings (score, Buchholz,
//!   Sonneborn-Berger, margin); pure, a function of the history it is handed.
//! - [`rating`]: Glicko-2 ratings (Glickman's paper); pure arithmetic, no storage.
//! - [`margin`]: the mean margin of duplicate deals and its 95% interval (Student's t).
//! - [`metrics`]: the Prometheus registry, the HTTP metrics middleware, the game counters.
//! - [`settings`]: typed settings from the environment; the only reader of it.
//! - [`startup`]: builds the store, binds the listener, wires middleware and state, sizes
//!   the connection limits to the open-file limit, and owns stopping (the shutdown token
//!   the service's long polls and event feeds select on).
//! - [`telemetry`]: the tracing subscriber (pretty or JSON) and per-request ids.
//! - [`address`]: a client's address as the limits count it (api derives, service passes).
//! - [`hooks`]: calls out to bots' webhooks, guarded (public addresses only, bounded in time,
//!   size and number) and signed; knows no game, only URLs and bytes.
//! - `fuzz` (hidden): the fuzzing harnesses that `fuzz/` and the regression test run.

pub mod address;
pub mod api;
pub mod domain;
#[doc(hidden)]
pub mod fuzz;
pub mod hooks;
pub mod margin;
pub mod metrics;
pub mod rating;
pub mod service;
pub mod settings;
pub mod startup;
pub mod telemetry;

// Crates of their own (crates/), under the names the rest of the server knows them by.
pub use domino_bots as bots;
pub use domino_engine as engine;
pub use domino_store as store;
pub use domino_tournament as tournament;
