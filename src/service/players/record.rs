//! A player as stored: its format byte, then postcard; the readers of the formats
//! before.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

use crate::bots::Level;
use crate::domain::{GameId, PlayerId};
use crate::rating::Rating;

use crate::service::codec::{self, Encoder};

use super::webhook::Webhook;
use super::{Error, PresetRating, Profile, RatingMoved, key_hash, new_key};

/// The player's record's format byte, then postcard: the record, then its webhook
/// (appended apart, so format 3 reads with the same struct). A player lives for ever, so
/// the readers of the formats before stay until a migration has rewritten every record.
const FORMAT: u8 = 4;
/// The format before: no webhook yet.
const FORMAT_V3: u8 = 3;
/// The format before: no rating history yet ([`PlayerRecordV2`]).
const FORMAT_V2: u8 = 2;
/// The first format: no ratings yet ([`PlayerRecordV1`]).
const FORMAT_V1: u8 = 1;
/// Points of a player's rating history kept per preset, the newest: a chart's worth,
/// and a record that stays small (each is read on every request with the key).
pub const HISTORY_KEPT: usize = 100;
/// Rated games a player's record remembers, newest last: a rating moved for one of them
/// is not moved again (a sweep finishing what a dead process began).
const RATED_GAMES_KEPT: usize = 64;

/// A player as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::service) struct PlayerRecord {
    pub(super) id: PlayerId,
    pub(super) name: String,
    pub(super) bot: bool,
    pub(super) created_ms: u64,
    /// SHA-256 of the whole key.
    pub(super) key_hash: [u8; 32],
    /// Per preset (by name), the player's rating there.
    pub(super) ratings: BTreeMap<String, PresetRating>,
    /// The rated games whose result moved these ratings lately, oldest first.
    pub(super) rated_games: Vec<GameId>,
    /// Per preset, its rating after each of its latest rated games, oldest first (at
    /// most [`HISTORY_KEPT`]).
    pub(super) history: BTreeMap<String, VecDeque<RatingMoved>>,
    /// The URL the server calls when the player's seats are to move, if any. Stored after
    /// the rest ([`FORMAT`]).
    #[serde(skip)]
    pub(super) webhook: Option<Webhook>,
}

/// A player as format 2 stored it, before its rating history: read as one with none.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct PlayerRecordV2 {
    id: String,
    name: String,
    bot: bool,
    created_ms: u64,
    key_hash: [u8; 32],
    ratings: BTreeMap<String, PresetRating>,
    rated_games: Vec<GameId>,
}

impl From<PlayerRecordV2> for PlayerRecord {
    fn from(v2: PlayerRecordV2) -> PlayerRecord {
        PlayerRecord {
            id: PlayerId::stored(v2.id),
            name: v2.name,
            bot: v2.bot,
            created_ms: v2.created_ms,
            key_hash: v2.key_hash,
            ratings: v2.ratings,
            rated_games: v2.rated_games,
            history: BTreeMap::new(),
            webhook: None,
        }
    }
}

/// A player as format 1 stored it, before ratings: read as a player with none (its next
/// save writes the current format).
#[derive(Deserialize)]
struct PlayerRecordV1 {
    id: String,
    name: String,
    bot: bool,
    created_ms: u64,
    key_hash: [u8; 32],
}

impl From<PlayerRecordV1> for PlayerRecord {
    fn from(v1: PlayerRecordV1) -> PlayerRecord {
        PlayerRecord {
            id: PlayerId::stored(v1.id),
            name: v1.name,
            bot: v1.bot,
            created_ms: v1.created_ms,
            key_hash: v1.key_hash,
            ratings: BTreeMap::new(),
            rated_games: Vec::new(),
            history: BTreeMap::new(),
            webhook: None,
        }
    }
}

impl PlayerRecord {
    pub(in crate::service) fn id(&self) -> &PlayerId {
        &self.id
    }

    pub(in crate::service) fn name(&self) -> &str {
        &self.name
    }

    /// Per preset (by name), the player's rating there.
    pub(in crate::service) fn ratings(&self) -> &BTreeMap<String, PresetRating> {
        &self.ratings
    }

    pub(super) fn encode(&self) -> Vec<u8> {
        Encoder::new(FORMAT, self).then(&self.webhook).finish()
    }

    pub(super) fn decode(bytes: &[u8]) -> Result<PlayerRecord, Error> {
        match codec::open("player", bytes)? {
            (FORMAT, mut body) => {
                let mut record: PlayerRecord = body.next()?;
                record.webhook = body.last()?;
                Ok(record)
            }
            (FORMAT_V3, body) => body.last(),
            (FORMAT_V2, body) => body.last::<PlayerRecordV2>().map(PlayerRecord::from),
            (FORMAT_V1, body) => body.last::<PlayerRecordV1>().map(PlayerRecord::from),
            (other, body) => Err(body.unknown(other)),
        }
    }

    pub(super) fn opens_with(&self, key: &str) -> bool {
        bool::from(key_hash(key).ct_eq(&self.key_hash))
    }

    pub(super) fn profile(&self, games: u64) -> Profile {
        Profile {
            id: self.id.to_string(),
            name: self.name.clone(),
            bot: self.bot,
            created_ms: self.created_ms,
            games: Some(games),
            ratings: self.ratings.clone(),
            webhook: self.webhook.as_ref().map(Webhook::state),
            leagues: Vec::new(),
        }
    }

    /// Moves its rating in `preset` to `after` for game `game` at `at_ms`, and keeps the
    /// point in its history, unless that game moved it already: then false, and nothing
    /// changes.
    pub(in crate::service) fn rate(
        &mut self,
        game: GameId,
        preset: &str,
        after: Rating,
        at_ms: u64,
    ) -> bool {
        if self.rated_games.contains(&game) {
            return false;
        }
        let entry = self
            .ratings
            .entry(preset.to_owned())
            .or_insert(PresetRating {
                rating: Rating::default(),
                games: 0,
            });
        entry.rating = after;
        entry.games += 1;
        self.rated_games.push(game);
        if self.rated_games.len() > RATED_GAMES_KEPT {
            self.rated_games.remove(0);
        }
        let history = self.history.entry(preset.to_owned()).or_default();
        history.push_back(RatingMoved {
            at_ms,
            rating: after,
            game_id: game,
        });
        if history.len() > HISTORY_KEPT {
            history.pop_front();
        }
        true
    }

    /// Its rating in `preset` after each of its latest rated games there, oldest first.
    pub(in crate::service) fn history_in(&self, preset: &str) -> Vec<RatingMoved> {
        self.history
            .get(preset)
            .map(|h| h.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The record of built-in `level` as a rated player: its name as its id, and a key
    /// nobody holds (a key names a 32-digit id, which a level's is not).
    pub(in crate::service) fn level(level: Level) -> PlayerRecord {
        PlayerRecord {
            id: PlayerId::of_level(level),
            name: level.as_str().to_owned(),
            bot: true,
            created_ms: 0,
            key_hash: key_hash(&new_key(&PlayerId::of_level(level))),
            ratings: BTreeMap::new(),
            rated_games: Vec::new(),
            history: BTreeMap::new(),
            webhook: None,
        }
    }

    pub(in crate::service) fn is_bot(&self) -> bool {
        self.bot
    }

    /// Its rating in `preset` now (a newcomer's where it has played no rated game).
    pub(in crate::service) fn rating_in(&self, preset: &str) -> Rating {
        self.ratings
            .get(preset)
            .map_or_else(Rating::default, |r| r.rating)
    }

    /// Whether game `game` moved its ratings already.
    pub(in crate::service) fn rated(&self, game: GameId) -> bool {
        self.rated_games.contains(&game)
    }

    pub(in crate::service) fn encode_record(&self) -> Vec<u8> {
        self.encode()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_player_stored_in_format_1_reads_as_one_without_ratings_and_saves_as_the_current() {
        // Format 1 as commit 523e409 wrote it, byte by byte (postcard: a string is its
        // varint length then its bytes, a bool one byte, a u64 a varint, an array as is).
        let id = "0123456789abcdef0123456789abcdef";
        let key = new_key(&PlayerId::stored(id.to_owned()));
        let created_ms: u64 = 1_700_000_000_000;
        let mut bytes = vec![1, 32];
        bytes.extend(id.as_bytes());
        bytes.extend([3, b'a', b'n', b'n', 1]);
        let mut n = created_ms;
        while n >= 0x80 {
            bytes.push((n as u8 & 0x7f) | 0x80);
            n >>= 7;
        }
        bytes.push(n as u8);
        bytes.extend(key_hash(&key));
        let read = PlayerRecord::decode(&bytes).unwrap();
        assert_eq!((read.id.as_str(), read.name.as_str()), (id, "ann"));
        assert!(read.bot && read.opens_with(&key) && read.ratings.is_empty());
        assert_eq!(read.profile(3).created_ms, created_ms);
        // Its next save is in the current format, and reads back the same.
        let again = PlayerRecord::decode(&read.encode()).unwrap();
        assert_eq!(read.encode()[0], FORMAT);
        assert_eq!(again.encode(), read.encode());
        // A format nobody wrote is refused.
        let mut unknown = bytes;
        unknown[0] = FORMAT + 1;
        assert!(PlayerRecord::decode(&unknown).is_err());
    }

    #[test]
    fn a_player_stored_in_format_3_reads_with_no_webhook_and_saves_as_the_current() {
        let mut record = PlayerRecord::level(Level::Greedy);
        let game = GameId::random();
        assert!(record.rate(game, "block", Rating::default(), 9));
        let v3 = codec::encode(FORMAT_V3, &record);
        let read = PlayerRecord::decode(&v3).unwrap();
        assert!(read.webhook.is_none() && read.rated(game));
        assert_eq!(read.history_in("block").len(), 1);
        assert_eq!(read.encode()[0], FORMAT);
        assert_eq!(
            PlayerRecord::decode(&read.encode()).unwrap().encode(),
            read.encode()
        );
    }

    #[test]
    fn a_key_opens_only_the_record_made_for_it() {
        let key = new_key(&PlayerId::stored("0123456789abcdef0123456789abcdef".into()));
        let record = PlayerRecord {
            id: PlayerId::stored("0123456789abcdef0123456789abcdef".into()),
            name: "ann".into(),
            bot: false,
            created_ms: 1,
            key_hash: key_hash(&key),
            ratings: BTreeMap::new(),
            rated_games: Vec::new(),
            history: BTreeMap::new(),
            webhook: None,
        };
        let again = PlayerRecord::decode(&record.encode()).unwrap();
        assert!(again.opens_with(&key));
        assert!(!again.opens_with(&new_key(&record.id)));
    }

    #[test]
    fn a_player_stored_in_format_2_reads_with_its_ratings_and_no_history_and_saves_as_the_current()
    {
        let id = "0123456789abcdef0123456789abcdef";
        let key = new_key(&PlayerId::stored(id.to_owned()));
        let (g1, g2) = (GameId::random(), GameId::random());
        let rating = Rating {
            rating: 1612.5,
            ..Rating::default()
        };
        let v2 = PlayerRecordV2 {
            id: id.into(),
            name: "ann".into(),
            bot: false,
            created_ms: 7,
            key_hash: key_hash(&key),
            ratings: BTreeMap::from([("block".into(), PresetRating { rating, games: 3 })]),
            rated_games: vec![g1],
        };
        let bytes = postcard::to_extend(&v2, vec![FORMAT_V2]).unwrap();
        let mut read = PlayerRecord::decode(&bytes).unwrap();
        assert!(read.opens_with(&key));
        assert_eq!(read.rating_in("block"), rating);
        assert!(read.rated(g1) && read.history_in("block").is_empty());
        // The game that moved it once does not again; a new one is kept in the history.
        assert!(!read.rate(g1, "block", Rating::default(), 9));
        assert!(read.rate(g2, "block", Rating::default(), 9));
        let again = PlayerRecord::decode(&read.encode()).unwrap();
        assert_eq!(read.encode()[0], FORMAT);
        let history = again.history_in("block");
        assert_eq!(history.len(), 1);
        assert_eq!((history[0].at_ms, history[0].game_id), (9, g2));
    }

    #[test]
    fn a_history_keeps_its_newest_points_each_once() {
        let mut record = PlayerRecord::level(Level::Greedy);
        let games: Vec<GameId> = (0..HISTORY_KEPT + 5).map(|_| GameId::random()).collect();
        for (n, &game) in games.iter().enumerate() {
            let after = Rating {
                rating: 1500.0 + n as f64,
                ..Rating::default()
            };
            assert!(record.rate(game, "block", after, n as u64));
            assert!(!record.rate(game, "block", after, n as u64));
        }
        let history = record.history_in("block");
        assert_eq!(history.len(), HISTORY_KEPT);
        assert_eq!(history[0].game_id, games[5]);
        assert_eq!(history.last().unwrap().at_ms, (HISTORY_KEPT + 4) as u64);
        assert!(record.history_in("all_fives").is_empty());
    }
}
