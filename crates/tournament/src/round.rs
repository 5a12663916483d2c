//! One round's pairings, as the pairing functions hand it to the service.

use crate::history::Entrant;

/// One round: the pairs, `(first seat, second seat)`, from the top board down, and the
/// entrants given a bye (a win) instead.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Round {
    pub pairs: Vec<(Entrant, Entrant)>,
    pub byes: Vec<Entrant>,
}
