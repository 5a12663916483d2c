//! Glicko-2 ratings, exactly as Glickman's paper gives them ("Example of the Glicko-2
//! system", 2012): pure arithmetic on a player's rating, deviation and volatility.
//!
//! The server rates each finished rated game as a rating period of its own, so a player
//! is updated against one opponent at a time; [`update`] takes any number of games all
//! the same, as the paper does, so that its worked example is a test. A team game rates
//! each player against one opponent standing for the other team ([`Rating::mean_of`]).

/// The paper's scale factor between the Glicko scale and Glicko-2's.
const SCALE: f64 = 173.7178;

/// The system constant τ: how much a volatility may change in one period. The paper
/// suggests 0.3 to 1.2; 0.5 is its example's, and ours.
pub const TAU: f64 = 0.5;

/// The paper's convergence tolerance for the volatility's iteration.
const EPSILON: f64 = 0.000_001;

/// A deviation above this is provisional: the rating says little yet (lichess's 110).
pub const PROVISIONAL_ABOVE: f64 = 110.0;

/// One player's rating on the Glicko scale.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rating {
    pub rating: f64,
    pub deviation: f64,
    pub volatility: f64,
}

impl Default for Rating {
    /// A newcomer: 1500, 350, 0.06.
    fn default() -> Rating {
        Rating {
            rating: 1500.0,
            deviation: 350.0,
            volatility: 0.06,
        }
    }
}

/// A game's outcome for the player rated: 1 a win, 0.5 a draw, 0 a loss.
pub type Score = f64;

impl Rating {
    /// Whether the rating is still provisional.
    pub fn provisional(&self) -> bool {
        self.deviation > PROVISIONAL_ABOVE
    }

    /// One opponent standing for a team: the mean of its ratings and of its deviations
    /// (volatility plays no part in an opponent's side of an update).
    pub fn mean_of(team: &[Rating]) -> Rating {
        let n = team.len().max(1) as f64;
        Rating {
            rating: team.iter().map(|r| r.rating).sum::<f64>() / n,
            deviation: team.iter().map(|r| r.deviation).sum::<f64>() / n,
            volatility: team.iter().map(|r| r.volatility).sum::<f64>() / n,
        }
    }

    fn mu(&self) -> f64 {
        (self.rating - 1500.0) / SCALE
    }

    fn phi(&self) -> f64 {
        self.deviation / SCALE
    }
}

fn g(phi: f64) -> f64 {
    1.0 / (1.0 + 3.0 * phi * phi / (std::f64::consts::PI * std::f64::consts::PI)).sqrt()
}

fn expected(mu: f64, mu_j: f64, phi_j: f64) -> f64 {
    1.0 / (1.0 + (-g(phi_j) * (mu - mu_j)).exp())
}

/// `player`'s rating after one rating period with `games` (each an opponent as rated
/// before the period, and the player's score against it). With no games only the
/// deviation grows (step 6 of the paper alone).
pub fn update(player: Rating, games: &[(Rating, Score)]) -> Rating {
    update_with(player, games, TAU)
}

/// [`update`] under a system constant `tau` of the caller's (a league's: its bots' skill
/// changes less than people's).
pub fn update_with(player: Rating, games: &[(Rating, Score)], tau: f64) -> Rating {
    let (mu, phi, sigma) = (player.mu(), player.phi(), player.volatility);
    if games.is_empty() {
        return Rating {
            deviation: (phi * phi + sigma * sigma).sqrt() * SCALE,
            ..player
        };
    }
    // Steps 3 and 4: the estimated variance and the improvement.
    let mut inverse_v = 0.0;
    let mut sum = 0.0;
    for (opponent, score) in games {
        let (mu_j, phi_j) = (opponent.mu(), opponent.phi());
        let e = expected(mu, mu_j, phi_j);
        inverse_v += g(phi_j).powi(2) * e * (1.0 - e);
        sum += g(phi_j) * (score - e);
    }
    let v = 1.0 / inverse_v;
    let delta = v * sum;
    let sigma = new_volatility(phi, sigma, v, delta, tau);
    // Steps 6 to 8.
    let phi_star = (phi * phi + sigma * sigma).sqrt();
    let phi = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
    let mu = mu + phi * phi * sum;
    Rating {
        rating: SCALE * mu + 1500.0,
        deviation: SCALE * phi,
        volatility: sigma,
    }
}

/// Step 5: the new volatility, by the paper's Illinois iteration.
fn new_volatility(phi: f64, sigma: f64, v: f64, delta: f64, tau: f64) -> f64 {
    let a = (sigma * sigma).ln();
    let f = |x: f64| {
        let ex = x.exp();
        ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex).powi(2))
            - (x - a) / (tau * tau)
    };
    let mut big_a = a;
    let mut big_b = if delta * delta > phi * phi + v {
        (delta * delta - phi * phi - v).ln()
    } else {
        let mut k = 1.0;
        while f(a - k * tau) < 0.0 {
            k += 1.0;
        }
        a - k * tau
    };
    let (mut f_a, mut f_b) = (f(big_a), f(big_b));
    while (big_b - big_a).abs() > EPSILON {
        let big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a);
        let f_c = f(big_c);
        if f_c * f_b <= 0.0 {
            big_a = big_b;
            f_a = f_b;
        } else {
            f_a /= 2.0;
        }
        big_b = big_c;
        f_b = f_c;
    }
    (big_a / 2.0).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rating: f64, deviation: f64) -> Rating {
        Rating {
            rating,
            deviation,
            volatility: 0.06,
        }
    }

    #[test]
    fn the_papers_worked_example_gives_its_figures() {
        let player = at(1500.0, 200.0);
        let games = [
            (at(1400.0, 30.0), 1.0),
            (at(1550.0, 100.0), 0.0),
            (at(1700.0, 300.0), 0.0),
        ];
        let after = update(player, &games);
        assert!((after.rating - 1464.06).abs() < 0.01, "{after:?}");
        assert!((after.deviation - 151.52).abs() < 0.01, "{after:?}");
        assert!((after.volatility - 0.05999).abs() < 0.000_01, "{after:?}");
    }

    #[test]
    fn a_period_without_games_only_widens_the_deviation() {
        let player = at(1600.0, 100.0);
        let after = update(player, &[]);
        assert_eq!(after.rating, 1600.0);
        assert_eq!(after.volatility, 0.06);
        let phi = 100.0 / SCALE;
        assert!((after.deviation - (phi * phi + 0.06 * 0.06).sqrt() * SCALE).abs() < 1e-9);
    }

    #[test]
    fn one_game_periods_move_two_newcomers_by_the_same_amount_in_opposite_directions() {
        let (winner, loser) = (Rating::default(), Rating::default());
        let w = update(winner, &[(loser, 1.0)]);
        let l = update(loser, &[(winner, 0.0)]);
        assert!(w.rating > 1500.0 && l.rating < 1500.0);
        assert!(((w.rating - 1500.0) - (1500.0 - l.rating)).abs() < 1e-9);
        assert!(w.deviation < 350.0 && (w.deviation - l.deviation).abs() < 1e-9);
        assert!(w.provisional());
        // A newcomer's first win against another newcomer: about +162 (a deviation of 350
        // makes the first games count heavily).
        assert!((w.rating - 1662.3).abs() < 0.1, "{w:?}");
    }

    #[test]
    fn a_draw_between_equals_changes_no_rating_and_narrows_both_deviations() {
        let (a, b) = (at(1700.0, 80.0), at(1700.0, 80.0));
        let after = update(a, &[(b, 0.5)]);
        assert!((after.rating - 1700.0).abs() < 1e-9);
        assert!(after.deviation < 80.0);
        assert!(!after.provisional());
    }

    #[test]
    fn beating_a_stronger_player_gains_more_than_beating_a_weaker_one() {
        let me = at(1500.0, 100.0);
        let up = update(me, &[(at(1800.0, 100.0), 1.0)]).rating - 1500.0;
        let down = update(me, &[(at(1200.0, 100.0), 1.0)]).rating - 1500.0;
        assert!(up > down && down > 0.0, "{up} {down}");
    }

    #[test]
    fn a_team_is_met_as_its_mean() {
        let team = [at(1400.0, 50.0), at(1600.0, 150.0)];
        let mean = Rating::mean_of(&team);
        assert_eq!((mean.rating, mean.deviation), (1500.0, 100.0));
    }
}
