//! Exact points: a win 1, a draw ½, and Sonneborn-Berger's halves of those, in quarters.

/// Points in quarters, so that every figure of the standings is exact and compares exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Points(u32);

impl Points {
    pub const ZERO: Points = Points(0);
    pub const WIN: Points = Points(4);
    pub const DRAW: Points = Points(2);

    pub const fn from_quarters(q: u32) -> Points {
        Points(q)
    }

    pub const fn quarters(self) -> u32 {
        self.0
    }

    /// Half of it, exact for any score (a score is a multiple of ½, so its half of ¼).
    pub const fn half(self) -> Points {
        Points(self.0 / 2)
    }

    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / 4.0
    }
}

impl std::ops::Add for Points {
    type Output = Points;
    fn add(self, o: Points) -> Points {
        Points(self.0 + o.0)
    }
}

impl std::ops::AddAssign for Points {
    fn add_assign(&mut self, o: Points) {
        self.0 += o.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draw_is_half_a_win_and_half_a_draw_is_a_quarter() {
        assert_eq!(Points::DRAW + Points::DRAW, Points::WIN);
        assert_eq!(Points::DRAW.half().as_f64(), 0.25);
        assert_eq!((Points::WIN + Points::DRAW).as_f64(), 1.5);
    }
}
