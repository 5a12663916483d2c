//! Why a move is refused. Refusing a move never changes the game.

use std::fmt;

use super::layout::End;
use super::tile::Tile;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveError {
    /// The match is over.
    GameOver,
    /// Only a muggins call may be made out of turn.
    NotYourTurn {
        turn: u8,
    },
    NotInHand(Tile),
    /// A tile the game's set does not hold (`7-9` in a double-six game).
    NotInSet {
        tile: Tile,
        max_pip: u8,
    },
    MustLeadWith(Tile),
    LeadTakesNoEnd,
    /// The tile fits more than one end: the end must be named.
    EndRequired(Tile),
    EndNotOpen(End),
    DoesNotFit {
        tile: Tile,
        end: End,
        value: u8,
    },
    FitsNowhere(Tile),
    ClaimWithoutMuggins,
    WrongClaim {
        claim: u16,
        points: u16,
    },
    CannotDraw(&'static str),
    MustPlay,
    MustDraw,
    NothingToTake,
    OwnSide,
    NoSuchSeat(u8),
    /// The seat is abandoned already (a bot plays it): it can neither resign nor be
    /// abandoned again.
    SeatAbandoned(u8),
    /// Forfeiting on time needs two sides (two seats, or four in teams).
    NotTwoSides,
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MoveError::GameOver => write!(f, "the match is over"),
            MoveError::NotYourTurn { turn } => write!(f, "it is seat {turn}'s turn"),
            MoveError::NotInHand(t) => write!(f, "{t} is not in your hand"),
            MoveError::NotInSet { tile, max_pip } => write!(
                f,
                "no such tile in this set: {tile} (this game plays double-{max_pip}, pips 0 to {max_pip})"
            ),
            MoveError::MustLeadWith(t) => write!(f, "the lead must be {t}"),
            MoveError::LeadTakesNoEnd => write!(f, "the lead names no end"),
            MoveError::EndRequired(t) => write!(f, "{t} fits more than one end: name the end"),
            MoveError::EndNotOpen(e) => write!(f, "the {} end is not open", e.as_str()),
            MoveError::DoesNotFit { tile, end, value } => {
                write!(
                    f,
                    "{tile} does not fit the {} end, which shows {value}",
                    end.as_str()
                )
            }
            MoveError::FitsNowhere(t) => write!(f, "{t} fits no open end"),
            MoveError::ClaimWithoutMuggins => {
                write!(f, "points are claimed only under muggins rules")
            }
            MoveError::WrongClaim { claim, points } => {
                write!(f, "you claimed {claim} but the play scores {points}")
            }
            MoveError::CannotDraw(why) => write!(f, "you cannot draw: {why}"),
            MoveError::MustPlay => write!(f, "you cannot pass while you can play"),
            MoveError::MustDraw => write!(f, "you cannot pass while you can draw"),
            MoveError::NothingToTake => write!(f, "there are no unclaimed points to take"),
            MoveError::OwnSide => write!(f, "the unclaimed points are your own side's"),
            MoveError::NoSuchSeat(s) => write!(f, "there is no seat {s}"),
            MoveError::SeatAbandoned(s) => write!(f, "seat {s} is abandoned"),
            MoveError::NotTwoSides => write!(f, "only a match of two sides can be forfeited"),
        }
    }
}

impl std::error::Error for MoveError {}
