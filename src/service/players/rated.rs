//! A rating change, applied by the players aggregate to the record it owns: the ratings
//! aggregate decides the new rating, this one writes it, once a game.

use crate::bots::Level;
use crate::domain::{GameId, PlayerId};
use crate::engine::Preset;
use crate::rating::Rating;
use crate::store::SaveOutcome;
use crate::store::players::PlayerStore;

use super::{PlayerRecord, Players};
use crate::service::Error;
use crate::service::shared::now_ms;

/// Compare-and-set attempts on the record before giving up (the ratings' sweep tries again).
const ATTEMPTS: usize = 8;

impl Players {
    /// Moves `who`'s rating in `preset` to what `rate` makes of it, for game `game`,
    /// unless that game moved it already or `who` is no more (then `None`); else the
    /// rating before and after. A level's record is made the first time it is rated.
    pub(in crate::service) async fn apply_rating(
        &self,
        who: &PlayerId,
        game: GameId,
        preset: Preset,
        rate: impl Fn(Rating) -> Rating,
    ) -> Result<Option<(Rating, Rating)>, Error> {
        let preset = preset.name();
        for _ in 0..ATTEMPTS {
            let (version, mut player) = match self.player_record(who).await? {
                Some(found) => found,
                None => match who.parse::<Level>() {
                    Ok(level) => {
                        let record = PlayerRecord::level(level);
                        // Another process may create it first: either way it exists now.
                        let _ = self
                            .ctx
                            .store
                            .players()
                            .create_player(who, who, record.encode_record(), None)
                            .await;
                        continue;
                    }
                    // A player that is no more has no rating to move.
                    Err(_) => return Ok(None),
                },
            };
            if player.rated(game) {
                return Ok(None);
            }
            let before = player.rating_in(preset);
            let after = rate(before);
            player.rate(game, preset, after, now_ms());
            match self
                .ctx
                .store
                .players()
                .save_player(who, version, player.encode_record())
                .await?
            {
                SaveOutcome::Saved { .. } => return Ok(Some((before, after))),
                SaveOutcome::Conflict { .. } => continue,
                SaveOutcome::Missing => return Ok(None),
            }
        }
        Err(Error::Internal(format!(
            "player {who}'s record kept changing while its rating moved"
        )))
    }
}
