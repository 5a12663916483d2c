//! What happened so far: the pairings played (or in play), the byes, who withdrew.

/// An entrant: its index in entry order (0 = the earliest entry).
pub type Entrant = u16;

/// Who won a pairing (over both games of a duplicate pairing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Winner {
    A,
    B,
    Draw,
}

/// One pairing of a round: `a` took the first seat of its (first) game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Played {
    pub round: u16,
    pub a: Entrant,
    pub b: Entrant,
    /// `None`: not finished yet (it still counts as a meeting, but scores nothing).
    pub winner: Option<Winner>,
    /// The points `a` scored minus `b`'s, over all the pairing's games.
    pub margin_a: i32,
}

/// A round an entrant was not paired in and scored as a win.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bye {
    pub round: u16,
    pub entrant: Entrant,
}

/// A tournament's record as the pairings and the standings read it.
///
/// `withdrawn` has one flag per entrant (a shorter slice leaves the rest active).
#[derive(Clone, Copy, Debug)]
pub struct History<'a> {
    pub entrants: u16,
    pub withdrawn: &'a [bool],
    pub played: &'a [Played],
    pub byes: &'a [Bye],
}

impl History<'_> {
    pub fn is_withdrawn(&self, e: Entrant) -> bool {
        self.withdrawn.get(usize::from(e)).copied().unwrap_or(false)
    }

    /// Whether `x` and `y` were ever paired (finished or not).
    pub fn met(&self, x: Entrant, y: Entrant) -> bool {
        self.played
            .iter()
            .any(|p| (p.a == x && p.b == y) || (p.a == y && p.b == x))
    }

    /// How many byes `e` has had.
    pub fn byes_of(&self, e: Entrant) -> usize {
        self.byes.iter().filter(|b| b.entrant == e).count()
    }
}
