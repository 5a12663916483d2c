//! Wire types: the JSON shapes of the HTTP contract, with their OpenAPI schemas.
//!
//! Kept apart from the engine's types so the engine knows nothing of HTTP. Where the wire
//! shape is the engine's or the service's own serde form (the rules, the status, bot
//! levels, ends), that type is used as it is and only its schema is written here. The
//! renderings of the service's answers ([`View`](crate::service::View) and the rest) live
//! here too, so every answer is built one way. Nothing here decides a rule or what a caller may see: a view
//! shows what the service's answer holds, and nothing else.
//!
//! One file per resource, and `ids.rs`, where a request's text becomes the domain's ids,
//! seats and names (once: the service takes them as they are); everything is re-exported
//! here, so `crate::api::wire::*` names every wire type.

mod challenges;
mod events;
mod history;
mod ids;
mod leagues;
mod lobby;
mod matches;
mod moves;
mod players;
mod rules;
mod seeks;
mod tournaments;
mod view;
mod webhooks;

pub use challenges::*;
pub use events::*;
pub use history::*;
pub use ids::*;
pub use leagues::*;
pub use lobby::*;
pub use matches::*;
pub use moves::*;
pub use players::*;
pub use rules::*;
pub use seeks::*;
pub use tournaments::*;
pub use view::*;
pub use webhooks::*;
