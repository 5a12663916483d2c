//! Black-box tests of the HTTP service: each starts the real server on a free port and
//! talks to it over HTTP, as a client would. Game tests run on both stores
//! (`<area>::memory::…` and `<area>::redis::…`, see `helpers::on_both_stores`), some also
//! on a Redis Cluster (`<area>::cluster::…`, see `helpers::on_every_store`).

mod admission;
mod arena;
mod audit;
mod bots;
mod challenge_caps;
mod challenges;
mod child;
mod clocks;
mod concurrency;
mod connections;
mod docs;
mod errors;
mod failover;
mod fanout;
mod faults;
mod helpers;
mod history;
mod hostile;
mod http_basics;
mod idempotency;
mod idempotent_creates;
mod leagues;
mod limits;
mod lobby;
mod logs;
mod long_poll;
mod matches;
mod ops;
mod player_seats;
mod players;
mod problems;
#[path = "../support/proxy.rs"]
mod proxy;
mod ratelimit;
mod ratings;
mod redaction;
mod request_ids;
mod resharding;
mod revocation;
mod round_trips;
mod sealing;
mod seeks;
mod sse;
mod tournament_hold;
mod tournament_tools;
mod tournaments;
mod two_servers;
mod watch;
mod webhooks;
mod wording;
