//! Moves on the wire: the body a seat posts (also each entry of `legal_moves`) and a move
//! as the log, the export and the event stream show it.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::engine::{End, LegalMove, Move, Tile};
use crate::service;

use super::*;

/// A tile as text: `"a-b"`, read in either order, written `a <= b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileText(pub Tile);

impl Serialize for TileText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// A tile's text as the parser reads it: the pips of its halves, 0 to 15 each (one or two
/// digits), joined by `-`.
const TILE_PATTERN: &str = "^(0?[0-9]|1[0-5])-(0?[0-9]|1[0-5])$";

impl utoipa::PartialSchema for TileText {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::String)
            .pattern(Some(TILE_PATTERN))
            .description(Some(
                "A tile: the pips of its halves (0 to 15), `a-b`. Read in either order; \
                 written with the lower half first.",
            ))
            .examples(["5-3"])
            .into()
    }
}

impl ToSchema for TileText {
    fn name() -> std::borrow::Cow<'static, str> {
        "Tile".into()
    }
}

impl<'de> Deserialize<'de> for TileText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TileText, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        parse_tile(&text)
            .map(TileText)
            .map_err(serde::de::Error::custom)
    }
}

/// A move a seat makes: the body of `POST /v1/games/{id}/moves`, and each entry of
/// `legal_moves`, which may be posted back as it is. `type` says which move, and which
/// other fields it may have.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[schema(as = Move, example = json!({"type": "play", "tile": "5-3", "end": "right"}))]
pub enum MoveBody {
    /// Play a tile.
    Play {
        /// `"a-b"`, in either order.
        tile: TileText,
        /// Omitted for the lead, or when only one end fits.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<super::rules::EndNameDoc>)]
        end: Option<End>,
        /// Points claimed with the play (muggins rules only); must equal the count. Listed
        /// moves that score carry it: post them back and the points are yours.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(maximum = 65535)]
        claim: Option<u16>,
        /// In `legal_moves`: the points this move credits to you. Ignored in a request.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(maximum = 65535)]
        points: Option<u16>,
        /// Refuse the move (409) unless the game is still at this version.
        #[serde(skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
    /// Draw from the boneyard.
    Draw {
        /// In `legal_moves`: 0. Ignored in a request.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(maximum = 65535)]
        points: Option<u16>,
        /// Refuse the move (409) unless the game is still at this version.
        #[serde(skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
    /// Pass.
    Pass {
        /// In `legal_moves`: 0. Ignored in a request.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(maximum = 65535)]
        points: Option<u16>,
        /// Refuse the move (409) unless the game is still at this version.
        #[serde(skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
    /// Take the points an opponent made but did not claim (muggins rules).
    Muggins {
        /// In `legal_moves`: the points the call takes. Ignored in a request.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(maximum = 65535)]
        points: Option<u16>,
        /// Refuse the move (409) unless the game is still at this version.
        #[serde(skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
    /// Concede, on your turn or not: with two sides the other side wins; with three or
    /// four seats a bot plays yours to the end and play goes on. Never in `legal_moves`.
    Resign {
        /// Refuse the move (409) unless the game is still at this version.
        #[serde(skip_serializing_if = "Option::is_none")]
        expected_version: Option<u64>,
    },
}

impl MoveBody {
    /// The move asked for, and the version it is conditional on.
    pub fn to_request(&self) -> service::MoveRequest {
        let (mv, expected_version) = match *self {
            MoveBody::Play {
                tile,
                end,
                claim,
                expected_version,
                ..
            } => (
                Move::Play {
                    tile: tile.0,
                    end,
                    claim,
                },
                expected_version,
            ),
            MoveBody::Draw {
                expected_version, ..
            } => (Move::Draw, expected_version),
            MoveBody::Pass {
                expected_version, ..
            } => (Move::Pass, expected_version),
            MoveBody::Muggins {
                expected_version, ..
            } => (Move::Muggins, expected_version),
            MoveBody::Resign { expected_version } => (Move::Resign, expected_version),
        };
        service::MoveRequest {
            mv,
            expected_version,
        }
    }

    /// A seat's move as the wire shows it, with `points` when it is listed; `None` for
    /// the server's own moves.
    fn of(mv: Move, points: Option<u16>) -> Option<MoveBody> {
        Some(match mv {
            Move::Play { tile, end, claim } => MoveBody::Play {
                tile: TileText(tile),
                end,
                claim,
                points,
                expected_version: None,
            },
            Move::Draw => MoveBody::Draw {
                points,
                expected_version: None,
            },
            Move::Pass => MoveBody::Pass {
                points,
                expected_version: None,
            },
            Move::Muggins => MoveBody::Muggins {
                points,
                expected_version: None,
            },
            Move::Resign => MoveBody::Resign {
                expected_version: None,
            },
            Move::TimedOut | Move::Abandon | Move::Forfeit => return None,
        })
    }

    /// `legal_moves` as listed: each with the points it credits.
    pub fn listed(legal: &[LegalMove]) -> Vec<MoveBody> {
        legal
            .iter()
            .filter_map(|lm| MoveBody::of(lm.mv, Some(lm.points)))
            .collect()
    }
}

/// A move only the server makes, as the log, the export and the event stream show it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMove {
    /// The seat to move ran out of time; a bot's move for it follows.
    TimedOut,
    /// The seat is handed to a bot for good.
    Abandon,
    /// The seat ran out of time under `on_timeout: forfeit`.
    Forfeit,
}

/// A move as it was made, in its public form (a draw never names its tile): a seat's, or
/// the server's.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(untagged)]
pub enum MadeMove {
    Seat(MoveBody),
    Server(ServerMove),
}

impl MadeMove {
    pub fn of(mv: Move) -> MadeMove {
        match mv {
            Move::TimedOut => MadeMove::Server(ServerMove::TimedOut),
            Move::Abandon => MadeMove::Server(ServerMove::Abandon),
            Move::Forfeit => MadeMove::Server(ServerMove::Forfeit),
            Move::Play { .. } | Move::Draw | Move::Pass | Move::Muggins | Move::Resign => {
                MadeMove::Seat(MoveBody::of(mv, None).expect("a seat's move has a body"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_legal_move_posted_back_verbatim_parses_to_the_same_move() {
        let mv = Move::Play {
            tile: "3-5".parse().unwrap(),
            end: Some(End::Right),
            claim: Some(10),
        };
        let listed = MoveBody::listed(&[LegalMove { mv, points: 10 }]);
        let body: MoveBody =
            serde_json::from_value(serde_json::to_value(&listed[0]).unwrap()).unwrap();
        assert_eq!(body.to_request().mv, mv);
    }

    #[test]
    fn a_move_body_refuses_fields_its_type_does_not_take() {
        for body in [
            json!({"type": "draw", "tile": "1-2"}),
            json!({"type": "resign", "points": 0}),
            json!({"type": "timed_out"}),
            json!({"type": "play"}),
            json!({"type": "play", "tile": "1-2", "spin": true}),
        ] {
            assert!(
                serde_json::from_value::<MoveBody>(body.clone()).is_err(),
                "{body} was accepted"
            );
        }
    }

    #[test]
    fn the_server_s_moves_are_shown_by_their_type_alone() {
        assert_eq!(
            serde_json::to_value(MadeMove::of(Move::TimedOut)).unwrap(),
            json!({"type": "timed_out"})
        );
        assert_eq!(
            serde_json::to_value(MadeMove::of(Move::Draw)).unwrap(),
            json!({"type": "draw"})
        );
    }
}
