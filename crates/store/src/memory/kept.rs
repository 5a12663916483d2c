//! The games each creator's address made that the memory store keeps, finished or not
//! ([`crate::Creator::kept`]), and when room comes back after a refusal.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use super::Inner;
use crate::{Creator, StoreError};

/// Per creator's address, the ids of the games it made that are kept.
#[derive(Default)]
pub(super) struct Kept(HashMap<String, HashSet<String>>);

impl Inner {
    /// Counts game `id` among `address`'s kept games.
    pub(super) fn keep(&mut self, address: &str, id: &str) {
        self.kept
            .0
            .entry(address.to_owned())
            .or_default()
            .insert(id.to_owned());
    }

    /// Counts game `id` no more among `maker`'s (it is removed).
    pub(super) fn unkeep(&mut self, maker: Option<&str>, id: &str) {
        let Some(maker) = maker else { return };
        if let Some(ids) = self.kept.0.get_mut(maker) {
            ids.remove(id);
            if ids.is_empty() {
                self.kept.0.remove(maker);
            }
        }
    }

    /// The refusal of one more game by `creator` when it has its maximum kept: the first
    /// of them expires in `frees_in` (expired ones are removed first). Costs at most the
    /// cap's lookups, and only when refusing.
    pub(super) fn kept_refusal(&mut self, creator: &Creator, now: Instant) -> Option<StoreError> {
        let held = |inner: &Inner| inner.kept.0.get(&creator.address).map_or(0, HashSet::len);
        if held(self) < creator.kept {
            return None;
        }
        let ids: Vec<String> = (self.kept.0.get(&creator.address).into_iter().flatten())
            .cloned()
            .collect();
        for id in &ids {
            // Removes it if it expired.
            let _ = self.live(id, now);
        }
        if held(self) < creator.kept {
            return None;
        }
        let first = (self.kept.0.get(&creator.address).into_iter().flatten())
            .filter_map(|id| self.games.get(id))
            .map(|game| game.expires_at)
            .min()
            .unwrap_or(now);
        Some(StoreError::TooManyKept {
            max: creator.kept,
            frees_in: first.saturating_duration_since(now),
        })
    }

    /// How long until the first game kept expires (after a sweep: none has yet).
    pub(super) fn first_expiry(&self, now: Instant) -> Duration {
        (self.games.values())
            .map(|game| game.expires_at)
            .min()
            .map_or(Duration::ZERO, |first| first.saturating_duration_since(now))
    }
}
