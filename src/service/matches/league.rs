//! Matches a league makes: accepted at once (both entrants entered the league to be
//! paired), unrated (the league rates them itself), made under the id the league named in
//! its own record first, so a league driven by two processes, or again after a crash, makes
//! each once. The league reads back how each ended.

use crate::domain::MatchId;
use crate::engine::{MatchEnd, Outcome, Preset, RulesPatch};

use super::series::{MatchStatus, Series};
use super::{Match, Matches};
use crate::service::error::Error;
use crate::service::games::Progress;
use crate::service::games::clock::ClockSettings;
use crate::service::matchmaking::invitation::{Invitation, Opponent, Party, Terms};
use crate::service::shared::now_ms;
use crate::store::StoreError;
use crate::store::challenges::{ChallengeStore, Parties};

/// Games of a league's match in play at once: one deal's two games.
const PARALLEL: u8 = 2;

/// A match a league asks for: `challenger` (a player) against `opponent` (a player or a
/// level), `deals` deals each played twice with the sides swapped.
#[derive(Debug, Clone)]
pub struct LeagueMatch {
    pub challenger: Party,
    pub opponent: Opponent,
    pub preset: Preset,
    pub overrides: RulesPatch,
    pub clock: Option<ClockSettings>,
    pub deals: u32,
}

/// How a league's match stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LeagueOutcome {
    /// Being played.
    Running,
    /// Over: the challenger's points less the opponent's over every deal (the other way
    /// round when points are penalties), and its margin a deal; and whether the
    /// challenger, then the opponent, stopped answering in one of its games (lost it on
    /// time, or ran out of time so often that a bot took its seat).
    Finished {
        points_diff: i64,
        margin_per_deal: f64,
        deals: usize,
        timed_out: [bool; 2],
    },
    /// Canceled: it will never be played out.
    Void,
    /// Not in the store: not made yet (its league named it, then its process died), or
    /// no longer kept.
    Missing,
}

impl Matches {
    /// Makes match `id` for a league unless it exists, and starts it.
    pub(crate) async fn make_for_league(&self, id: MatchId, new: LeagueMatch) -> Result<(), Error> {
        let now = now_ms();
        let terms = Terms {
            preset: new.preset,
            overrides: new.overrides,
            seats: 2,
            clock: new.clock,
            rated: false,
        };
        // Counted against no address: the league's caps bound what it plays.
        let mut invitation = Invitation::new(new.challenger, terms, now, now);
        invitation.add_opponent(new.opponent);
        invitation.accept_at_once();
        // The rules, seats and clock are checked as any game's are.
        self.challenges.check_game(&invitation.new_game(), false)?;
        let series = Series::new(new.deals, true, PARALLEL, None, self.ctx.dealer.secret());
        let made = Match::new(id, invitation, series);
        let (challenger, opponents) = (
            made.invitation().challenger(),
            made.invitation().opponent_ids(),
        );
        let parties = Parties {
            challenger: &challenger.id,
            opponents: &opponents,
        };
        match self
            .ctx
            .store
            .challenges()
            .create_challenge(&id, made.encode(), now, parties, Some(now))
            .await
        {
            Ok(()) => {
                tracing::info!(match_id = %id, challenger = %challenger.id, "league match made");
            }
            // Made before, by this league's drive on another process or before a crash.
            Err(StoreError::Exists) => {}
            Err(e) => return Err(e.into()),
        }
        self.drive_series(id).await.map(drop)
    }

    /// How league match `id` stands now.
    pub(crate) async fn league_outcome(&self, id: MatchId) -> Result<LeagueOutcome, Error> {
        let Some((_, found)) = self.records.find(id).await? else {
            return Ok(LeagueOutcome::Missing);
        };
        let series = found.series();
        Ok(match series.status(true) {
            MatchStatus::Finished => {
                let penalty = found.penalty_scoring();
                let tally = series.tally();
                let diff = tally.points_for - tally.points_against;
                let margin = series.margin(penalty);
                LeagueOutcome::Finished {
                    points_diff: if penalty { -diff } else { diff },
                    margin_per_deal: margin.per_deal_mean,
                    deals: margin.deals_done,
                    timed_out: self.timed_out(&found).await?,
                }
            }
            MatchStatus::Canceled => LeagueOutcome::Void,
            MatchStatus::Waiting | MatchStatus::Running => LeagueOutcome::Running,
        })
    }

    /// Whether the challenger, then the opponent, of finished match `found` lost a game on
    /// time or had its seat abandoned. Without a clock nobody runs out of time: no game is
    /// read.
    async fn timed_out(&self, found: &Match) -> Result<[bool; 2], Error> {
        let mut timed_out = [false; 2];
        if found.invitation().clock().is_none() {
            return Ok(timed_out);
        }
        for game in &found.series().games {
            let Progress::Ended {
                outcome,
                end,
                abandoned,
                ..
            } = self.games.progress(game.game_id).await?
            else {
                continue;
            };
            for seat in 0..2u8 {
                let lost_on_time =
                    end == MatchEnd::Timeout && outcome == Outcome::Won { side: 1 - seat };
                if lost_on_time || abandoned & (1 << seat) != 0 {
                    timed_out[usize::from(seat != game.seat)] = true;
                }
            }
        }
        Ok(timed_out)
    }
}
