//! Key and channel names, all derived from the prefix. Every key of one game carries the
//! hash tag `{<id>}`, so that a cluster keeps them (and the game's channel) in one slot and
//! one script may touch them all.

/// Key names, all derived from the prefix. A move's save names four of them: they are
/// joined with `concat`, a third of the instructions of `format!`.
#[derive(Clone)]
pub(super) struct Keys {
    pub(super) prefix: String,
}

impl Keys {
    pub(super) fn game(&self, id: &str) -> String {
        [&self.prefix, "game:{", id, "}"].concat()
    }
    pub(super) fn idem(&self, id: &str) -> String {
        [&self.prefix, "game:{", id, "}:idem"].concat()
    }
    /// One seat's idempotency keys, oldest first (a list capped at the window).
    pub(super) fn idem_window(&self, id: &str, seat: u8) -> String {
        [&self.prefix, "game:{", id, "}:idem:", &seat.to_string()].concat()
    }
    /// Which process plays the game's bots now (a holder id, expiring).
    pub(super) fn lease(&self, id: &str) -> String {
        format!("{}game:{{{id}}}:lease", self.prefix)
    }
    /// The index of clock deadlines: a sorted set of game ids, score = deadline (epoch
    /// ms), read by every process's sweep; and beside it (same slot) the version each
    /// entry was written for.
    pub(super) fn deadlines(&self) -> String {
        format!("{}{{deadlines}}", self.prefix)
    }

    pub(super) fn deadline_versions(&self) -> String {
        format!("{}{{deadlines}}:v", self.prefix)
    }

    pub(super) fn open(&self) -> String {
        format!("{}{{lobby}}:open", self.prefix)
    }
    pub(super) fn lobby(&self) -> String {
        format!("{}{{lobby}}:games", self.prefix)
    }
    pub(super) fn owners(&self) -> String {
        format!("{}{{lobby}}:owner", self.prefix)
    }
    /// The prefix of an owner's sorted set of listed games (the address follows).
    pub(super) fn by_owner(&self) -> String {
        format!("{}{{lobby}}:by:", self.prefix)
    }
    /// Games in play by their creator: id → address, and id → when it was created.
    pub(super) fn creators(&self) -> String {
        format!("{}{{lobby}}:creator", self.prefix)
    }
    pub(super) fn creator_ages(&self) -> String {
        format!("{}{{lobby}}:creator-age", self.prefix)
    }
    /// The prefix of a creator's sorted set of games in play (the address follows).
    pub(super) fn by_creator(&self) -> String {
        format!("{}{{lobby}}:playing:", self.prefix)
    }
    /// The latest finished games: a sorted set of ids, score = when each finished (epoch
    /// ms), the newest [`crate::FINISHED_KEPT`] kept.
    pub(super) fn finished(&self) -> String {
        format!("{}{{lobby}}:finished", self.prefix)
    }
    /// The prefix of a creator's sorted set of kept games, by when each stops counting
    /// (the address follows).
    pub(super) fn kept_by(&self) -> String {
        format!("{}{{lobby}}:kept:", self.prefix)
    }
    /// Games in play: a sorted set of ids, score = when each started (epoch ms).
    pub(super) fn playing(&self) -> String {
        format!("{}{{lobby}}:live", self.prefix)
    }
    pub(super) fn channel(&self, id: &str) -> String {
        [&self.prefix, "events:{", id, "}"].concat()
    }
    /// The game id of a channel name, if it is one of ours.
    pub(super) fn id_of_channel<'a>(&self, channel: &'a str) -> Option<&'a str> {
        channel
            .strip_prefix(self.prefix.as_str())?
            .strip_prefix("events:{")?
            .strip_suffix('}')
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn keys_share_one_hash_tag() {
        let keys = Keys {
            prefix: "t*[x]:".into(),
        };
        for key in [keys.game("g1"), keys.idem("g1"), keys.channel("g1")] {
            assert!(key.contains("{g1}"), "{key}");
        }
        assert_eq!(keys.id_of_channel(&keys.channel("g1")), Some("g1"));
        assert_eq!(keys.id_of_channel("other:events:{g1}"), None);
    }

    #[test]
    fn a_game_s_keys_are_named_in_full() {
        let keys = Keys {
            prefix: "p:".into(),
        };
        assert_eq!(keys.game("g1"), "p:game:{g1}");
        assert_eq!(keys.idem("g1"), "p:game:{g1}:idem");
        assert_eq!(keys.idem_window("g1", 3), "p:game:{g1}:idem:3");
        assert_eq!(keys.channel("g1"), "p:events:{g1}");
    }
}
