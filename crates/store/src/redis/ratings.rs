//! Ratings' bookkeeping on Redis: each rated game's rating record is a versioned value of
//! its own (`ratings:{game id}`, kept [`RATINGS_KEPT`]), claimed like `SET NX` and saved
//! by the same compare-and-set as a player's; each preset's leaderboard a sorted set
//! (`leaderboard:{preset}`).

use super::RedisStore;
use super::connection::corrupt;
use super::keys::Keys;
use super::players::{SAVE_LUA, millis, parse_versioned, versioned_value};
use super::scripts::Lua;
use crate::ratings::{RATINGS_KEPT, RatingStore};
use crate::{SaveOutcome, StoreError, Stored};

/// KEYS: the record. ARGV: value, ttl ms. Stores it unless one exists; returns the one
/// there is.
const CLAIM_LUA: &str = r"
local cur = redis.call('GET', KEYS[1])
if cur then return cur end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
";

pub(super) struct RatingScripts {
    claim: Lua,
    save: Lua,
}

impl RatingScripts {
    pub(super) fn new() -> RatingScripts {
        RatingScripts {
            claim: Lua::new(CLAIM_LUA.to_owned()),
            save: Lua::new(SAVE_LUA.to_owned()),
        }
    }
}

impl Keys {
    fn ratings(&self, game: &str) -> String {
        format!("{}ratings:{{{game}}}", self.prefix)
    }
    fn leaderboard(&self, preset: &str) -> String {
        format!("{}leaderboard:{{{preset}}}", self.prefix)
    }
}

impl RatingStore for RedisStore {
    async fn claim_ratings(&self, game: &str, bytes: Vec<u8>) -> Result<Stored, StoreError> {
        let mut conn = self.conns.writer()?;
        let value = versioned_value(1, &bytes);
        let kept = millis(RATINGS_KEPT).to_string();
        let key = self.keys.ratings(game);
        let (reply, acked) = self
            .write(
                &mut conn,
                self.deadline(),
                "claim ratings",
                &self.rating_scripts.claim,
                |cmd| {
                    cmd.arg(1).arg(&key).arg(&value).arg(&kept);
                },
                true,
            )
            .await?;
        self.confirmed("claim ratings", acked)?;
        let stored: Vec<u8> =
            redis::from_redis_value(reply).map_err(|_| corrupt("claim ratings reply"))?;
        parse_versioned(&stored).ok_or_else(|| corrupt("ratings value"))
    }

    async fn save_ratings(
        &self,
        game: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        let key = self.keys.ratings(game);
        let save = &self.rating_scripts.save;
        self.save_versioned("save ratings", save, &key, expected, &bytes)
            .await
    }

    async fn rank(&self, preset: &str, player: &str, score: f64) -> Result<(), StoreError> {
        let mut conn = self.conns.get()?;
        self.bounded(
            "rank",
            redis::cmd("ZADD")
                .arg(self.keys.leaderboard(preset))
                .arg(score)
                .arg(player)
                .exec_async(&mut conn),
        )
        .await
    }

    async fn leaderboard(
        &self,
        preset: &str,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(String, f64)>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conns.get()?;
        self.bounded(
            "leaderboard",
            redis::cmd("ZREVRANGE")
                .arg(self.keys.leaderboard(preset))
                .arg(offset)
                .arg(offset.saturating_add(limit) - 1)
                .arg("WITHSCORES")
                .query_async(&mut conn),
        )
        .await
    }
}
