//! The memory store's challenges: maps behind a lock of their own, so each call is
//! atomic, as a script is on Redis. A challenge is dropped [`CHALLENGE_KEPT`] after its
//! creation or last save, checked as the sweep reads the due ones.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use super::{MemoryStore, NewestFirst};
use crate::challenges::{CHALLENGE_KEPT, CapReached, ChallengeStore, Direction, OpenCaps, Parties};
use crate::{SaveOutcome, StoreError, Stored};

#[derive(Default)]
pub(super) struct Challenges {
    challenges: HashMap<String, Stored>,
    /// When each challenge is dropped, earliest first, and each one's entry.
    kept_until: BTreeSet<(Instant, String)>,
    kept_at: HashMap<String, Instant>,
    /// Per player and direction, its challenges newest first (ties: id descending).
    indexed: HashMap<(String, Direction), BTreeSet<NewestFirst>>,
    /// Due challenges: by due time, and each one's entry.
    due: BTreeSet<(u64, String)>,
    due_at: HashMap<String, u64>,
    /// Per player and direction, its challenges counted open: id → when it expires.
    open: HashMap<(String, Direction), HashMap<String, u64>>,
    /// Per player, the matches it made that may still run.
    matches: HashMap<String, BTreeSet<String>>,
}

impl Challenges {
    fn set_due(&mut self, id: &str, due_ms: Option<u64>) {
        if let Some(old) = self.due_at.remove(id) {
            self.due.remove(&(old, id.to_owned()));
        }
        if let Some(due) = due_ms {
            self.due.insert((due, id.to_owned()));
            self.due_at.insert(id.to_owned(), due);
        }
    }

    fn keep(&mut self, id: &str) {
        self.keep_for(id, CHALLENGE_KEPT);
    }

    fn keep_for(&mut self, id: &str, kept: Duration) {
        if let Some(old) = self.kept_at.remove(id) {
            self.kept_until.remove(&(old, id.to_owned()));
        }
        let until = Instant::now() + kept;
        self.kept_until.insert((until, id.to_owned()));
        self.kept_at.insert(id.to_owned(), until);
    }

    /// Player `player`'s challenges counted open in `direction`, the expired dropped.
    fn open_of(
        &mut self,
        player: &str,
        direction: Direction,
        now_ms: u64,
    ) -> &mut HashMap<String, u64> {
        let open = self.open.entry((player.to_owned(), direction)).or_default();
        open.retain(|_, expires| *expires > now_ms);
        open
    }

    fn drop_old(&mut self, now: Instant) {
        while let Some((until, id)) = self.kept_until.first().cloned() {
            if until > now {
                break;
            }
            self.kept_until.pop_first();
            self.kept_at.remove(&id);
            self.challenges.remove(&id);
            self.set_due(&id, None);
        }
    }
}

impl MemoryStore {
    fn challenges(&self) -> std::sync::MutexGuard<'_, Challenges> {
        // As for games: every mutation leaves the maps consistent.
        self.challenges
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl ChallengeStore for MemoryStore {
    async fn create_challenge(
        &self,
        id: &str,
        bytes: Vec<u8>,
        created_ms: u64,
        parties: Parties<'_>,
        due_ms: Option<u64>,
    ) -> Result<(), StoreError> {
        let mut challenges = self.challenges();
        if challenges.challenges.contains_key(id) {
            return Err(StoreError::Exists);
        }
        challenges
            .challenges
            .insert(id.to_owned(), Stored { version: 1, bytes });
        challenges.keep(id);
        let entry = (Reverse(created_ms), Reverse(id.to_owned()));
        let out = (parties.challenger.to_owned(), Direction::Out);
        challenges
            .indexed
            .entry(out)
            .or_default()
            .insert(entry.clone());
        for opponent in parties.opponents {
            let into = (opponent.clone(), Direction::In);
            challenges
                .indexed
                .entry(into)
                .or_default()
                .insert(entry.clone());
        }
        challenges.set_due(id, due_ms);
        Ok(())
    }

    async fn load_challenge(&self, id: &str) -> Result<Option<Stored>, StoreError> {
        Ok(self.challenges().challenges.get(id).cloned())
    }

    async fn save_challenge(
        &self,
        id: &str,
        expected: u64,
        bytes: Vec<u8>,
    ) -> Result<SaveOutcome, StoreError> {
        let mut challenges = self.challenges();
        let saved = super::save_versioned(&mut challenges.challenges, id, expected, bytes);
        if let SaveOutcome::Saved { .. } = saved {
            challenges.keep(id);
        }
        Ok(saved)
    }

    async fn player_challenges(
        &self,
        player: &str,
        direction: Direction,
        since_ms: u64,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let mut challenges = self.challenges();
        let Some(list) = challenges.indexed.get_mut(&(player.to_owned(), direction)) else {
            return Ok(Vec::new());
        };
        list.retain(|(Reverse(created), _)| *created >= since_ms);
        Ok(list
            .iter()
            .take(limit)
            .map(|(_, Reverse(id))| id.clone())
            .collect())
    }

    async fn keep_challenge(&self, id: &str, kept: Duration) -> Result<(), StoreError> {
        let mut challenges = self.challenges();
        if challenges.challenges.contains_key(id) {
            challenges.keep_for(id, kept);
        }
        Ok(())
    }

    async fn open_challenge(
        &self,
        id: &str,
        parties: Parties<'_>,
        expires_ms: u64,
        now_ms: u64,
        caps: OpenCaps,
    ) -> Result<Result<(), CapReached>, StoreError> {
        let mut challenges = self.challenges();
        let counted = std::iter::once((parties.challenger, Direction::Out, caps.out, None)).chain(
            parties
                .opponents
                .iter()
                .enumerate()
                .map(|(i, p)| (p.as_str(), Direction::In, caps.into, Some(i))),
        );
        let counted: Vec<_> = counted.collect();
        for &(player, direction, cap, opponent) in &counted {
            let open = challenges.open_of(player, direction, now_ms);
            if !open.contains_key(id) && open.len() >= cap {
                return Ok(Err(
                    opponent.map_or(CapReached::Challenger, CapReached::Opponent)
                ));
            }
        }
        for (player, direction, _, _) in counted {
            let open = challenges.open_of(player, direction, now_ms);
            open.insert(id.to_owned(), expires_ms);
        }
        Ok(Ok(()))
    }

    async fn close_challenge(&self, id: &str, parties: Parties<'_>) -> Result<(), StoreError> {
        let mut challenges = self.challenges();
        let counted = std::iter::once((parties.challenger, Direction::Out)).chain(
            parties
                .opponents
                .iter()
                .map(|p| (p.as_str(), Direction::In)),
        );
        for (player, direction) in counted {
            let key = (player.to_owned(), direction);
            if let Some(open) = challenges.open.get_mut(&key) {
                open.remove(id);
                if open.is_empty() {
                    challenges.open.remove(&key);
                }
            }
        }
        Ok(())
    }

    async fn open_challenges(
        &self,
        player: &str,
        direction: Direction,
        now_ms: u64,
        offset: usize,
        limit: usize,
    ) -> Result<Vec<String>, StoreError> {
        let mut challenges = self.challenges();
        // Newest first (the latest expiry), ties by id descending, as ZREVRANGE orders.
        let mut open: Vec<(u64, String)> = challenges
            .open_of(player, direction, now_ms)
            .iter()
            .map(|(id, expires)| (*expires, id.clone()))
            .collect();
        open.sort_unstable_by(|a, b| b.cmp(a));
        Ok(open
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|(_, id)| id)
            .collect())
    }

    async fn index_challenge_due(&self, id: &str, due_ms: Option<u64>) -> Result<(), StoreError> {
        self.challenges().set_due(id, due_ms);
        Ok(())
    }

    async fn challenges_due(&self, now_ms: u64, limit: usize) -> Result<Vec<String>, StoreError> {
        let mut challenges = self.challenges();
        challenges.drop_old(Instant::now());
        Ok(challenges
            .due
            .iter()
            .take_while(|(due, _)| *due <= now_ms)
            .take(limit)
            .map(|(_, id)| id.clone())
            .collect())
    }

    async fn index_match(&self, player: &str, id: &str, running: bool) -> Result<(), StoreError> {
        let mut challenges = self.challenges();
        if running {
            let matches = challenges.matches.entry(player.to_owned()).or_default();
            matches.insert(id.to_owned());
        } else if let Some(matches) = challenges.matches.get_mut(player) {
            matches.remove(id);
            if matches.is_empty() {
                challenges.matches.remove(player);
            }
        }
        Ok(())
    }

    async fn player_matches(&self, player: &str) -> Result<Vec<String>, StoreError> {
        let challenges = self.challenges();
        Ok(challenges
            .matches
            .get(player)
            .map(|matches| matches.iter().cloned().collect())
            .unwrap_or_default())
    }
}
