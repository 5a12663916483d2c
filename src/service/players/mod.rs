//! Players: identities that outlive a game. A player holds a key, a bearer secret shown
//! once; the store keeps only its SHA-256 (the key is 256 random bits, so no password
//! hashing is needed), compared in constant time.
//!
//! A key reads `dpk_<player id>_<secret>`: the prefix lets scanners find a leaked key, and
//! the id means authenticating is one read of the player's record. The built-in levels
//! are players too (their names are reserved), served from the code, never stored.
//!
//! The players aggregate owns the player records, their keys and a player's stream
//! ([`stream`]); it is the lowest aggregate: it calls no other (a player's seats and
//! games are the games aggregate's).

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::address::AddressKey;
use crate::bots::Level;
use crate::domain::{Caller, GameId, Named, PlayerId, PlayerKey, PlayerName, Who};
use crate::engine::Preset;
use crate::rating::Rating;
use crate::store::SaveOutcome;
use crate::store::players::{Created, PlayerAdmission, PlayerStore};

use super::Error;
use super::idempotency::{self, Before, Create, RequestKey};
use super::shared::{Shared, now_ms};

mod rated;
mod record;
mod stream;
mod webhook;

pub use record::HISTORY_KEPT;
pub(in crate::service) use record::PlayerRecord;

pub use stream::NewsItem;
pub(in crate::service) use webhook::{Counted, Hook};
pub use webhook::{WebhookSet, WebhookState};

pub use crate::domain::KEY_PREFIX;
/// The window [`super::Caps::players`] and [`super::Caps::tournaments_per_ip`] count
/// creations in.
pub(in crate::service) const CREATION_WINDOW: std::time::Duration =
    std::time::Duration::from_secs(3600);

/// A player's rating in one preset.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PresetRating {
    pub rating: Rating,
    /// Rated games played there.
    pub games: u64,
}

/// A player's rating in one preset right after a rated game moved it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatingMoved {
    pub at_ms: u64,
    pub rating: Rating,
    pub game_id: GameId,
}

/// A player as anyone may see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub id: String,
    pub name: String,
    pub bot: bool,
    pub created_ms: u64,
    /// Games the player was seated in (as far as the store's index of them goes); none
    /// for a built-in level, whose games are not indexed: it sits at any table that asks
    /// for it, so its index would be written by a good share of every game made.
    pub games: Option<u64>,
    /// Per preset (by name), its rating there: only presets with rated games.
    pub ratings: BTreeMap<String, PresetRating>,
    /// How its webhook's calls go, if it has one: the state less its URL and why it was
    /// paused (what anyone may see of how a bot answers).
    pub webhook: Option<WebhookState>,
    /// The leagues it is in (entered, not left), by name: filled in by the leagues
    /// aggregate (`Leagues::with_leagues`), above this one; empty until then.
    pub leagues: Vec<ProfileLeague>,
}

/// A league a player is in, as its profile names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileLeague {
    pub id: String,
    pub name: String,
}

/// A profile with the player's key: the answer to creating a player or a new key.
#[derive(Debug, Clone)]
pub struct Keyed {
    pub profile: Profile,
    pub key: String,
}

pub(super) fn key_hash(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// A new key for player `id`, 256 random bits after its prefix and id.
pub(super) fn new_key(id: &PlayerId) -> String {
    key_of(id, &new_secret())
}

/// 256 random bits: a key's secret.
fn new_secret() -> [u8; 32] {
    let mut secret = [0u8; 32];
    rand::rng().fill_bytes(&mut secret);
    secret
}

/// Player `id`'s key of `secret`.
fn key_of(id: &PlayerId, secret: &[u8; 32]) -> String {
    format!("{KEY_PREFIX}{id}_{}", hex::encode(secret))
}

/// The player id a key names, if it has a key's shape.
pub(super) fn id_of_key(key: &str) -> Option<&str> {
    let (id, secret) = key.strip_prefix(KEY_PREFIX)?.split_once('_')?;
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(id, 32) && hex(secret, 64)).then_some(id)
}

/// The player id a key names, unchecked: for telling requests of two players apart (an
/// idempotency fingerprint), never for trusting one.
pub fn player_of_key(key: &str) -> Option<&str> {
    id_of_key(key)
}

/// The profile of a built-in level.
fn level_profile(level: Level) -> Profile {
    Profile {
        id: level.as_str().to_owned(),
        name: level.as_str().to_owned(),
        bot: true,
        created_ms: 0,
        games: None,
        ratings: BTreeMap::new(),
        webhook: None,
        leagues: Vec::new(),
    }
}

const BAD_KEY: Error = Error::Unauthorized("the key is not a player's key");
/// A key naming a player it does not open: most often one replaced by a rotation.
const STALE_KEY: Error = Error::Unauthorized(
    "this player key is not valid (perhaps it was rotated: `POST /v1/players/me/key` \
     replaces the old key at once); send the player's current key",
);
const NO_KEY: Error = Error::Unauthorized("send the player's key as `Authorization: Bearer <key>`");

/// The players aggregate: player records, their keys, and a player's stream of news.
pub struct Players {
    ctx: Arc<Shared>,
}

impl Players {
    pub(super) fn new(ctx: Arc<Shared>) -> Arc<Players> {
        Arc::new(Players { ctx })
    }

    /// Creates a player named `name` (unique ignoring case), counted against `from`'s
    /// creations in the last hour. With `request` (its `Idempotency-Key`) a retry answers
    /// the same player and key again, made once.
    pub async fn create_player(
        &self,
        name: &PlayerName,
        bot: bool,
        from: Option<AddressKey>,
        request: Option<&RequestKey>,
    ) -> Result<Keyed, Error> {
        let id = PlayerId::random();
        let secret = new_secret();
        let store = &self.ctx.store;
        let make = self.make_player(&id, &secret, name, bot, from);
        idempotency::once(
            store,
            request,
            Create::Player,
            None,
            &id,
            Some(&secret),
            make,
            {
                |before: Before| async move {
                    let (_, record) = before.found(
                        self.player_record(&PlayerId::stored(before.id.clone()))
                            .await?
                            .ok_or(Error::PlayerNotFound),
                    )?;
                    let key = before
                        .secret()
                        .map(|secret| key_of(&record.id, &secret))
                        .filter(|key| record.opens_with(key))
                        .ok_or_else(|| {
                            Error::Forbidden(
                                "the player this Idempotency-Key made has had its key replaced \
                             since (POST /v1/players/me/key): use the new key"
                                    .into(),
                            )
                        })?;
                    Ok(Keyed {
                        profile: self.profile_of(&record).await?,
                        key,
                    })
                }
            },
        )
        .await
    }

    async fn make_player(
        &self,
        id: &PlayerId,
        secret: &[u8; 32],
        name: &PlayerName,
        bot: bool,
        from: Option<AddressKey>,
    ) -> Result<Keyed, Error> {
        let name_key = name.key();
        let counted = from
            .zip(self.ctx.caps.players)
            .map(|(from, max)| (from.to_string(), max));
        if let Some((address, max)) = &counted
            && let PlayerAdmission::Refused { frees_in } = self
                .ctx
                .store
                .players()
                .admit_player(address, *max, CREATION_WINDOW)
                .await?
        {
            return Err(Error::TooManyPlayers {
                max: *max,
                frees_in,
            });
        }
        let key = key_of(id, secret);
        let record = PlayerRecord {
            id: id.to_owned(),
            name: name.as_str().to_owned(),
            bot,
            created_ms: now_ms(),
            key_hash: key_hash(&key),
            ratings: BTreeMap::new(),
            rated_games: Vec::new(),
            history: BTreeMap::new(),
            webhook: None,
        };
        let created = self
            .ctx
            .store
            .players()
            .create_player(
                id,
                name_key.as_str(),
                record.encode(),
                self.ctx.lifetimes.player_unplayed,
            )
            .await;
        if !matches!(created, Ok(Created::Created))
            && let Some((address, _)) = &counted
            && let Err(e) = self.ctx.store.players().unadmit_player(address).await
        {
            tracing::warn!(error = %e, "could not take back a refused player's count");
        }
        match created? {
            Created::Created => {}
            Created::NameTaken => {
                return Err(Error::NameTaken(format!(
                    "the name {:?} is taken",
                    name.as_str()
                )));
            }
        }
        self.ctx.metrics.players_created.inc();
        tracing::info!(player_id = %id, bot, "player created");
        Ok(Keyed {
            profile: record.profile(0),
            key,
        })
    }

    /// The profile of a player by id or name, or of a built-in level by its name.
    pub async fn profile(&self, who: &Who) -> Result<Profile, Error> {
        if let Some(level) = who.level() {
            // A level's ratings, once it played rated games, are in a record of its own.
            let mut profile = level_profile(level);
            if let Some((_, record)) = self.player_record(&PlayerId::of_level(level)).await? {
                profile.ratings = record.ratings;
            }
            return Ok(profile);
        }
        let record = match self.id_of(who).await? {
            Some(id) => self.player_record(&id).await?.map(|(_, record)| record),
            None => None,
        };
        let record = record.ok_or(Error::PlayerNotFound)?;
        self.profile_of(&record).await
    }

    /// The rating history in `preset` of a player by id or name (or a built-in level),
    /// oldest first: its rating after each of its latest rated games there.
    pub async fn rating_history(
        &self,
        who: &Who,
        preset: Preset,
    ) -> Result<Vec<RatingMoved>, Error> {
        let id = self.id_of(who).await?.ok_or(Error::PlayerNotFound)?;
        match self.player_record(&id).await? {
            Some((_, record)) => Ok(record.history_in(preset.name())),
            // A level before its first rated game has no record, and no history.
            None if who.level().is_some() => Ok(Vec::new()),
            None => Err(Error::PlayerNotFound),
        }
    }

    /// The id of a player that exists, named by id or name, or of a built-in level.
    pub(in crate::service) async fn known(&self, who: &Who) -> Result<PlayerId, Error> {
        let id = self.id_of(who).await?.ok_or(Error::PlayerNotFound)?;
        if !id.is_level() && self.player_record(&id).await?.is_none() {
            return Err(Error::PlayerNotFound);
        }
        Ok(id)
    }

    /// The id of a player named by id or name, or of a built-in level (its name).
    pub(in crate::service) async fn id_of(&self, who: &Who) -> Result<Option<PlayerId>, Error> {
        Ok(match who.named() {
            Named::Level(level) => Some(PlayerId::of_level(*level)),
            Named::Id(id) => Some(id.clone()),
            Named::Name(name) => self
                .ctx
                .store
                .players()
                .player_named(name.as_str())
                .await?
                .map(PlayerId::stored),
        })
    }

    /// The profile of the key's player.
    pub async fn me(&self, caller: &Caller) -> Result<Profile, Error> {
        let (_, record) = self.authenticate(caller).await?;
        self.profile_of(&record).await
    }

    /// A new key for the key's player; the old one stops working at once.
    pub async fn rotate_key(&self, caller: &Caller) -> Result<Keyed, Error> {
        // A rotation that loses a race to another starts again, and finds the key it
        // holds stopped by the winner (401), as it should.
        for _ in 0..3 {
            let (version, mut record) = self.authenticate(caller).await?;
            let fresh = new_key(&record.id);
            record.key_hash = key_hash(&fresh);
            match self
                .ctx
                .store
                .players()
                .save_player(&record.id, version, record.encode())
                .await?
            {
                SaveOutcome::Saved { .. } => {
                    tracing::info!(player_id = %record.id, "player key rotated");
                    self.tell_key_changed(&record.id).await;
                    return Ok(Keyed {
                        profile: self.profile_of(&record).await?,
                        key: fresh,
                    });
                }
                SaveOutcome::Conflict { .. } => continue,
                SaveOutcome::Missing => return Err(BAD_KEY),
            }
        }
        Err(Error::Internal(
            "a player's key kept changing under a rotation".into(),
        ))
    }

    /// The player whose key `caller` sent, and its record's version: the one check of a
    /// use case a player's key opens (a seat's token opens none).
    pub(super) async fn authenticate(&self, caller: &Caller) -> Result<(u64, PlayerRecord), Error> {
        match caller {
            Caller::Player(key) => self.open(key).await,
            Caller::Seat(_) => Err(BAD_KEY),
            Caller::Nobody => Err(NO_KEY),
        }
    }

    /// The player `key` opens, and its record's version.
    pub(super) async fn open(&self, key: &PlayerKey) -> Result<(u64, PlayerRecord), Error> {
        let key = key.as_str();
        let id = PlayerId::stored(id_of_key(key).ok_or(BAD_KEY)?.to_owned());
        match self.player_record(&id).await? {
            Some((version, record)) if record.opens_with(key) => Ok((version, record)),
            Some(_) => Err(STALE_KEY),
            None => Err(BAD_KEY),
        }
    }

    pub(super) async fn player_record(
        &self,
        id: &PlayerId,
    ) -> Result<Option<(u64, PlayerRecord)>, Error> {
        match self.ctx.store.players().load_player(id).await? {
            Some(stored) => Ok(Some((stored.version, PlayerRecord::decode(&stored.bytes)?))),
            None => Ok(None),
        }
    }

    async fn profile_of(&self, record: &PlayerRecord) -> Result<Profile, Error> {
        let (_, games) = self
            .ctx
            .store
            .players()
            .player_games(&record.id, 0, 0)
            .await?;
        Ok(record.profile(games))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_key_has_its_prefix_names_its_player_and_holds_256_bits() {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let player = PlayerId::stored(id.clone());
        let key = new_key(&player);
        assert!(matches!(Caller::of(Some(&key)), Caller::Player(_)));
        assert_eq!(id_of_key(&key), Some(id.as_str()));
        assert_eq!(key.len(), KEY_PREFIX.len() + 32 + 1 + 64);
        assert_ne!(new_key(&player), key);
    }

    #[test]
    fn malformed_keys_name_no_player() {
        for key in [
            "dpk_",
            "dpk_abc_def",
            "xyz_0123456789abcdef0123456789abcdef_00",
            "0123456789abcdef",
        ] {
            assert_eq!(id_of_key(key), None, "{key}");
        }
    }
}
