//! The news players are told on their stream ([`super::players`] carries it without
//! reading it), made here from what each aggregate hands up to the dispatcher (a game's
//! save, matchmaking's and the matches' and tournaments' notices, a rating's change): one
//! way for every piece of news, and this file stands above every aggregate it hears.

use serde::{Deserialize, Serialize};

use crate::domain::{GameId, Seat};
use crate::engine::{MatchEnd, Outcome, Preset};

use super::games::record::Record;
use super::matches::MatchNotice;
use super::matches::record::Match;
use super::matchmaking::Notice;
use super::matchmaking::challenge::Challenge;
use super::matchmaking::invitation::ChallengeStatus;
use super::matchmaking::seek::Seek;
pub use super::ratings::RatingChange;
use super::tournaments::TournamentNotice;

/// News for one player.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum PlayerNews {
    /// A game with a seat bound to the player started (its last seat was taken).
    GameStarted {
        game_id: String,
        seat: u8,
        preset: Preset,
        rated: bool,
        /// Per seat, the name shown there.
        players: Vec<Option<String>>,
    },
    /// A challenge to the player was made.
    Challenge(Box<Challenge>),
    /// An opponent declined a challenge the player made or was also challenged in.
    ChallengeDeclined(Box<Challenge>),
    /// The challenger took back a challenge to the player.
    ChallengeCanceled(Box<Challenge>),
    /// A challenge the player made or received expired unanswered.
    ChallengeExpired(Box<Challenge>),
    /// A seek of the player's expired unmatched.
    SeekExpired(Box<Seek>),
    /// A match the player is in moved on: a game started or ended, or it is over.
    MatchUpdated(Box<Match>),
    /// A tournament the player is in started a round: the player's games in it (none:
    /// a bye).
    TournamentRound {
        tournament_id: String,
        round: u16,
        game_ids: Vec<String>,
    },
    /// A tournament the player is in finished (or was canceled): where the player ended.
    TournamentFinished {
        tournament_id: String,
        status: String,
        rank: u16,
        score: f64,
    },
    /// Its match ended.
    GameFinished {
        game_id: String,
        outcome: Outcome,
        reason: MatchEnd,
        /// Per side.
        scores: Vec<i32>,
        /// In a rated game, the player's rating before and after it.
        rating: Option<RatingChange>,
    },
    /// A match to the player was made: its invitation, told as a challenge's. (Last,
    /// as the next: the variants before keep their places on a stream's wire.)
    MatchOffered(Box<Match>),
    /// A match's invitation closed unaccepted (its status says how), told as a
    /// challenge's.
    MatchClosed(Box<Match>),
    /// The player's webhook was paused, for this reason.
    WebhookPaused { reason: String },
}

/// What a player's stream carries.
pub type PlayerItem = super::players::NewsItem<PlayerNews>;

impl PlayerNews {
    /// What the players hear of a matchmaking change.
    pub(super) fn of_notice(notice: Notice<'_>) -> Option<PlayerNews> {
        Some(match notice {
            Notice::Challenged(c) => PlayerNews::Challenge(Box::new(c.clone())),
            Notice::Closed(c) => match c.invitation().saved_status() {
                ChallengeStatus::Declined => PlayerNews::ChallengeDeclined(Box::new(c.clone())),
                ChallengeStatus::Canceled => PlayerNews::ChallengeCanceled(Box::new(c.clone())),
                ChallengeStatus::Expired => PlayerNews::ChallengeExpired(Box::new(c.clone())),
                ChallengeStatus::Open | ChallengeStatus::Accepted => return None,
            },
            Notice::SeekExpired(s) => PlayerNews::SeekExpired(Box::new(s.clone())),
        })
    }

    /// What the players hear of a match's change.
    pub(super) fn of_match_notice(notice: MatchNotice<'_>) -> PlayerNews {
        match notice {
            MatchNotice::Offered(m) => PlayerNews::MatchOffered(Box::new(m.clone())),
            MatchNotice::Closed(m) => PlayerNews::MatchClosed(Box::new(m.clone())),
            MatchNotice::Updated(m) => PlayerNews::MatchUpdated(Box::new(m.clone())),
        }
    }

    /// What the players hear of a tournament's change.
    pub(super) fn of_tournament_notice(notice: TournamentNotice) -> PlayerNews {
        match notice {
            TournamentNotice::Round {
                tournament,
                round,
                game_ids,
            } => PlayerNews::TournamentRound {
                tournament_id: tournament.to_string(),
                round,
                game_ids,
            },
            TournamentNotice::Finished {
                tournament,
                status,
                rank,
                score,
            } => PlayerNews::TournamentFinished {
                tournament_id: tournament.to_string(),
                status: status.to_owned(),
                rank,
                score,
            },
        }
    }

    /// Game `id` (as `record`) started, to the player at `seat`.
    pub(super) fn started(id: GameId, record: &Record, seat: Seat) -> PlayerNews {
        PlayerNews::GameStarted {
            game_id: id.to_string(),
            seat: seat.index(),
            preset: record.preset(),
            rated: record.rated(),
            players: record
                .seating()
                .occupants()
                .iter()
                .map(|s| s.name.clone())
                .collect(),
        }
    }

    /// Game `id` (as `record`) finished, with the player's rating's change when rated;
    /// `None` while it has not.
    pub(super) fn finished(
        id: GameId,
        record: &Record,
        rating: Option<RatingChange>,
    ) -> Option<PlayerNews> {
        let (outcome, reason) = (record.game().outcome()?, record.game().match_end()?);
        Some(PlayerNews::GameFinished {
            game_id: id.to_string(),
            outcome,
            reason,
            scores: record.game().scores().to_vec(),
            rating,
        })
    }
}
