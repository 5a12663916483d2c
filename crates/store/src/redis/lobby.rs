//! The lobby's writes and its pages: an index of the listed games and of each address's
//! games, in a slot of its own, written after the game's own script (see
//! `docs/architecture.md`). Apart from the store itself because a game's keys and the
//! lobby's never share a script.

use redis::Value;

use super::RedisStore;
use super::connection::Conn;
use super::connection::corrupt;
use crate::value::{History, game_value, parse_game, version_text};
use crate::{Creator, GameKey, Listing, Save, StoreError, Stored, now_ms};

/// Stale lobby entries a page prunes at most (each a few commands inside the script).
const LOBBY_PRUNE_BATCH: usize = 100;

impl RedisStore {
    /// After a create: lists the game and counts it against its owner's and its creator's
    /// caps; a game the caps refuse is deleted again. `game`, `idem`: its keys; `value`: its
    /// stored value.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn put_in_lobby(
        &self,
        conn: &mut Conn,
        deadline: tokio::time::Instant,
        id: &GameKey,
        (game, idem): (&str, &str),
        value: &[u8],
        listing: Option<Listing>,
        creator: Option<Creator>,
    ) -> Result<(), StoreError> {
        let created_ms = listing
            .as_ref()
            .map_or_else(super::now_ms, |l| l.created_ms);
        let listed = listing.as_ref().map(|_| value).unwrap_or_default();
        let (owner, max) = listing.and_then(|l| l.owner).unwrap_or_default();
        let (by, most, kept) = creator
            .map(|c| (c.address, c.max, c.kept))
            .unwrap_or_default();
        let now = now_ms();
        let (reply, _) = self
            .write(
                &mut *conn,
                deadline,
                "create",
                &self.scripts.lobby_put,
                |cmd| {
                    cmd.arg(9)
                        .arg(self.keys.open())
                        .arg(self.keys.lobby())
                        .arg(self.keys.owners())
                        .arg(format!("{}{owner}", self.keys.by_owner()))
                        .arg(self.keys.creators())
                        .arg(self.keys.creator_ages())
                        .arg(format!("{}{by}", self.keys.by_creator()))
                        .arg(self.keys.playing())
                        .arg(format!("{}{by}", self.keys.kept_by()))
                        .arg(id)
                        .arg(created_ms)
                        .arg(listed)
                        .arg(&owner)
                        .arg(max)
                        .arg(now.saturating_sub(self.idle_ttl_ms))
                        .arg(self.idle_ttl_ms)
                        .arg(&by)
                        .arg(most)
                        .arg(LOBBY_PRUNE_BATCH)
                        .arg(kept)
                        .arg(now)
                        .arg(now + self.idle_ttl_ms);
                },
                false,
            )
            .await?;
        let refused = match reply {
            Value::Int(1) => return Ok(()),
            Value::Int(0) => StoreError::TooManyWaiting { max },
            Value::Int(2) => StoreError::TooManyGames { max: most },
            Value::Array(first) => {
                let until: Option<u64> = first
                    .get(1)
                    .and_then(|v| redis::from_redis_value::<String>(v.clone()).ok())
                    .and_then(|s| s.parse::<f64>().ok())
                    .map(|ms| ms as u64);
                let until = until.ok_or_else(|| corrupt("lobby reply"))?;
                StoreError::TooManyKept {
                    max: kept,
                    frees_in: std::time::Duration::from_millis(until.saturating_sub(now)),
                }
            }
            _ => return Err(corrupt("lobby reply")),
        };
        // Refused: the game must not stay behind, unlisted, for its whole ttl.
        let deleted = self
            .bounded_until(
                deadline,
                "create",
                redis::cmd("DEL").arg(game).arg(idem).exec_async(&mut *conn),
            )
            .await;
        if let Err(e) = deleted {
            tracing::warn!(game_id = %id, error = %e, "could not delete a game refused by the lobby's cap");
        }
        Err(refused)
    }

    /// After a save at `version` that unlists the game or lists its new state.
    pub(super) async fn unlist_or_relist(
        &self,
        conn: &mut Conn,
        deadline: tokio::time::Instant,
        id: &GameKey,
        save: &Save,
        version: u64,
    ) {
        let lobby = if save.unlist {
            self.write(
                &mut *conn,
                deadline,
                "unlist",
                &self.scripts.lobby_drop,
                |cmd| {
                    cmd.arg(4)
                        .arg(self.keys.open())
                        .arg(self.keys.lobby())
                        .arg(self.keys.owners())
                        .arg(self.keys.playing())
                        .arg(id)
                        .arg(self.keys.by_owner())
                        .arg(now_ms())
                        .arg(now_ms().saturating_sub(self.idle_ttl_ms));
                },
                false,
            )
            .await
        } else {
            // As the game's value without its events: a page shows no events.
            let value = game_value(version, &History::default(), &save.bytes);
            self.write(
                &mut *conn,
                deadline,
                "relist",
                &self.scripts.lobby_update,
                |cmd| {
                    cmd.arg(1)
                        .arg(self.keys.lobby())
                        .arg(id)
                        .arg(version_text(version))
                        .arg(&value);
                },
                false,
            )
            .await
        };
        if let Err(e) = lobby {
            // The save is the truth; the lobby entry is pruned after the idle ttl.
            tracing::warn!(game_id = %id, error = %e, "saved, but could not update the game's lobby entry");
        }
    }

    /// After a save that finishes the match: the game is no longer in play, no longer
    /// counts against its creator's games in play, and is among the latest finished.
    pub(super) async fn note_finished(
        &self,
        conn: &mut Conn,
        deadline: tokio::time::Instant,
        id: &GameKey,
    ) {
        let freed = self
            .write(
                &mut *conn,
                deadline,
                "free",
                &self.scripts.lobby_free,
                |cmd| {
                    cmd.arg(4)
                        .arg(self.keys.creators())
                        .arg(self.keys.creator_ages())
                        .arg(self.keys.playing())
                        .arg(self.keys.finished())
                        .arg(id)
                        .arg(self.keys.by_creator())
                        .arg(self.keys.kept_by())
                        .arg(now_ms() + self.idle_ttl_ms)
                        .arg(self.idle_ttl_ms)
                        .arg(now_ms())
                        .arg(crate::FINISHED_KEPT);
                },
                false,
            )
            .await;
        if let Err(e) = freed {
            // Counted until it goes stale, one idle ttl after it was created.
            tracing::warn!(game_id = %id, error = %e, "finished, but could not take the game off its creator's count");
        }
    }

    /// A page of the lobby, newest first (see [`crate::GameStore::list_open`]).
    pub(super) async fn lobby_page(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<(String, Stored)>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let cutoff = now_ms().saturating_sub(self.idle_ttl_ms);
        // Redis indexes a sorted set with signed 64-bit numbers and refuses larger ones
        // (which would read as an outage): an offset past that is past every game.
        const MAX_INDEX: usize = i64::MAX as usize;
        if offset > MAX_INDEX {
            return Ok(Vec::new());
        }
        let last = offset.saturating_add(limit - 1).min(MAX_INDEX);
        let mut conn = self.conns.get()?;
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "list_open",
                &self.scripts.lobby_list,
                |cmd| {
                    cmd.arg(3)
                        .arg(self.keys.open())
                        .arg(self.keys.lobby())
                        .arg(self.keys.owners())
                        .arg("")
                        .arg(self.keys.by_owner())
                        .arg(cutoff)
                        .arg(offset)
                        .arg(last)
                        .arg(LOBBY_PRUNE_BATCH);
                },
                false,
            )
            .await?;
        let flat: Vec<Vec<u8>> =
            redis::from_redis_value(reply).map_err(|_| corrupt("lobby reply"))?;
        flat.chunks_exact(2)
            .map(|pair| {
                let id = String::from_utf8(pair[0].clone()).map_err(|_| corrupt("lobby id"))?;
                let game = parse_game(&pair[1]).ok_or_else(|| corrupt("lobby entry"))?;
                let stored = Stored {
                    version: game.version,
                    bytes: game.bytes,
                };
                Ok((id, stored))
            })
            .collect()
    }
}

impl RedisStore {
    /// A page of the games in play, latest started first (see
    /// [`crate::GameStore::list_playing`]).
    pub(super) async fn playing_page(
        &self,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        // As for the lobby: Redis refuses ranks past a signed 64-bit number.
        const MAX_INDEX: usize = i64::MAX as usize;
        if limit == 0 || offset > MAX_INDEX {
            return Ok(Vec::new());
        }
        let last = offset.saturating_add(limit - 1).min(MAX_INDEX);
        let cutoff = now_ms().saturating_sub(self.idle_ttl_ms);
        let mut conn = self.conns.get()?;
        let (reply, _) = self
            .write(
                &mut conn,
                self.deadline(),
                "list_playing",
                &self.scripts.playing_list,
                |cmd| {
                    cmd.arg(1)
                        .arg(self.keys.playing())
                        .arg(cutoff)
                        .arg(offset)
                        .arg(last);
                },
                false,
            )
            .await?;
        redis::from_redis_value(reply).map_err(|_| corrupt("list of games in play"))
    }
}
