//! The memory store's players: one map behind a lock of their own (players never touch a
//! game's lock), so each call is atomic, as a script is on Redis.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use super::MemoryStore;
use crate::players::{Created, PLAYER_GAMES_KEPT, PlayerAdmission, PlayerStore, player_channel};
use crate::{EventStream, GameStore, SaveOutcome, StoreError, Stored, StoredEvent};

/// A game's place in a player's list: newest first, ties by id descending, as Redis's
/// ZREVRANGE orders them.
type GameKey = (Reverse<u64>, Reverse<String>);

#[derive(Default)]
pub(super) struct PlayerTables {
    players: HashMap<String, Stored>,
    /// Folded name → player id.
    names: HashMap<String, String>,
    /// Per player, its games newest first.
    games: HashMap<String, BTreeSet<GameKey>>,
    /// Per address, its players created in the current window and when that ends.
    admitted: HashMap<String, (usize, Instant)>,
    /// Players never seated yet that expire: id → when, and its name.
    unplayed: HashMap<String, (Instant, String)>,
    /// The same, soonest first.
    expiring: BTreeSet<(Instant, String)>,
    /// Players present (a stream open) until when.
    present: HashMap<String, Instant>,
}

impl PlayerTables {
    /// Forgets the unplayed players whose time is up, with their names.
    fn expire(&mut self, now: Instant) {
        while let Some((until, id)) = self.expiring.first().cloned()
            && until <= now
        {
            self.expiring.pop_first();
            if let Some((_, name)) = self.unplayed.remove(&id) {
                self.players.remove(&id);
                if self.names.get(&name) == Some(&id) {
                    self.names.remove(&name);
                }
            }
        }
    }

    /// Player `id` has played: it lasts for ever.
    fn played(&mut self, id: &str) {
        if let Some((until, _)) = self.unplayed.remove(id) {
            self.expiring.remove(&(until, id.to_owned()));
        }
    }
}

impl MemoryStore {
    /// The tables, the unplayed players whose time is up gone.
    fn players(&self) -> std::sync::MutexGuard<'_, PlayerTables> {
        // As for games: every mutation leaves the maps consistent, so a poisoned lock is
        // taken anyway.
        let mut players = self
            .players
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        players.expire(Instant::now());
        players
    }
}

impl PlayerStore for MemoryStore {
    async fn mark_present(&self, id: &str, ttl: Duration) -> Result<(), StoreError> {
        let mut players = self.players();
        let now = Instant::now();
        // Gone ones go as others are marked: the map holds the present, give or take.
        players.present.retain(|_, until| *until > now);
        players.present.insert(id.to_owned(), now + ttl);
        Ok(())
    }

    async fn is_present(&self, id: &str) -> Result<bool, StoreError> {
        let players = self.players();
        Ok(players
            .present
            .get(id)
            .is_some_and(|until| *until > Instant::now()))
    }

    async fn create_player(
        &self,
        id: &str,
        name: &str,
        bytes: Vec<u8>,
        unplayed: Option<Duration>,
    ) -> Result<Created, StoreError> {
        let mut players = self.players();
        if players.names.contains_key(name) {
            return Ok(Created::NameTaken);
        }
        if players.players.contains_key(id) {
            return Err(StoreError::Exists);
        }
        players.names.insert(name.to_owned(), id.to_owned());
        players
            .players
            .insert(id.to_owned(), Stored { version: 1, bytes });
        if let Some(ttl) = unplayed {
            let until = Instant::now() + ttl;
            players
                .unplayed
                .insert(id.to_owned(), (until, name.to_owned()));
            players.expiring.insert((until, id.to_owned()));
        }
        Ok(Created::Created)
    }

    async fn load_player(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        Ok(self.players().players.get(id).cloned())
    }

    async fn player_named(&self, name: &str) -> Result<Option<String>, StoreError> {
        Ok(self.players().names.get(name).cloned())
    }

    async fn save_player(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        Ok(super::save_versioned(
            &mut self.players().players,
            id,
            expected,
            bytes,
        ))
    }

    async fn add_player_game(
        &self,
        id: &str,
        _name: &str,
        game: &str,
        created_ms: u64,
    ) -> Result<(), StoreError> {
        let mut players = self.players();
        players.played(id);
        let games = players.games.entry(id.to_owned()).or_default();
        games.insert((Reverse(created_ms), Reverse(game.to_owned())));
        while games.len() > PLAYER_GAMES_KEPT {
            games.pop_last();
        }
        Ok(())
    }

    async fn player_games(
        &self,
        id: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<String>, u64), StoreError> {
        let players = self.players();
        let Some(games) = players.games.get(id) else {
            return Ok((Vec::new(), 0));
        };
        let page = games
            .iter()
            .skip(offset)
            .take(limit)
            .map(|(_, Reverse(game))| game.clone())
            .collect();
        Ok((page, games.len() as u64))
    }

    async fn admit_player(
        &self,
        address: &str,
        max: usize,
        window: Duration,
    ) -> Result<PlayerAdmission, StoreError> {
        let now = Instant::now();
        let mut players = self.players();
        players.admitted.retain(|_, (_, until)| *until > now);
        let (count, until) = players
            .admitted
            .entry(address.to_owned())
            .or_insert((0, now + window));
        if *count >= max {
            return Ok(PlayerAdmission::Refused {
                frees_in: *until - now,
            });
        }
        *count += 1;
        Ok(PlayerAdmission::Admitted)
    }

    async fn unadmit_player(&self, address: &str) -> Result<(), StoreError> {
        if let Some((count, _)) = self.players().admitted.get_mut(address) {
            *count = count.saturating_sub(1);
        }
        Ok(())
    }

    /// Through the games' channels, which a subscriber may open before anything is sent.
    async fn publish_player(&self, id: &str, event: StoredEvent) -> Result<(), StoreError> {
        let (inner, _) = self.lock();
        if let Some(tx) = inner.channels.get(&player_channel(id)) {
            // No subscriber: the player is not listening now.
            let _ = tx.send(event);
        }
        Ok(())
    }

    async fn subscribe_player(&self, id: &str) -> Result<EventStream, StoreError> {
        self.subscribe(&player_channel(id)).await
    }
}
