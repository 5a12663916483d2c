//! How far apart two players are, from the margins of duplicate deals: the mean margin a
//! deal and its 95% interval, by Student's t. Pure arithmetic, for the duplicate arena.
//!
//! A duplicate deal is played twice with the same hands, the sides swapped, so the luck of
//! the deal cancels out of its margin (one side's points minus the other's over both
//! games) and the margins of successive deals are independent samples of the players'
//! difference in skill. Their mean, ± t(0.975, n − 1) × s / √n with s the sample standard
//! deviation, is the interval that holds the true mean margin 95 times out of 100 (for
//! margins roughly normal, which the central limit theorem makes of means of a few dozen
//! deals at most).

/// The mean margin a deal and its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Margin {
    pub per_deal_mean: f64,
    /// `None` until two deals are done: one deal says nothing of the spread.
    pub ci95: Option<(f64, f64)>,
    pub deals_done: usize,
}

/// The margin of `deals` (one figure a deal, from the same side's point of view).
pub fn margin(deals: &[f64]) -> Margin {
    let n = deals.len();
    if n == 0 {
        return Margin {
            per_deal_mean: 0.0,
            ci95: None,
            deals_done: 0,
        };
    }
    let mean = deals.iter().sum::<f64>() / n as f64;
    let ci95 = (n >= 2).then(|| {
        let variance = deals.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let half = t_975(n - 1) * (variance / n as f64).sqrt();
        (mean - half, mean + half)
    });
    Margin {
        per_deal_mean: mean,
        ci95,
        deals_done: n,
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (df ≥ 1): the table for
/// 1 to 30, beyond it the Cornish-Fisher expansion around the normal's 1.959964, which is
/// within 0.0002 of the exact figure there.
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
        2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739,
        2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
    ];
    if (1..=30).contains(&df) {
        return TABLE[df - 1];
    }
    let z: f64 = 1.959_964;
    let n = df.max(1) as f64;
    z + (z.powi(3) + z) / (4.0 * n)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * n * n)
        + (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / (384.0 * n.powi(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_of_known_samples_matches_a_textbook_t_interval() {
        // Mean 5, sample variance 20/3, t(0.975, 3) = 3.1824: the interval by hand.
        let m = margin(&[2.0, 4.0, 6.0, 8.0]);
        assert_eq!(m.per_deal_mean, 5.0);
        let s = (20.0f64 / 3.0).sqrt();
        let half = 3.1824 * s / 2.0;
        let (lo, hi) = m.ci95.unwrap();
        assert!((lo - (5.0 - half)).abs() < 1e-9 && (hi - (5.0 + half)).abs() < 1e-9);
        assert_eq!(m.deals_done, 4);
    }

    #[test]
    fn no_deal_or_one_deal_gives_no_interval() {
        assert_eq!(margin(&[]).ci95, None);
        let one = margin(&[12.0]);
        assert_eq!((one.per_deal_mean, one.ci95), (12.0, None));
    }

    #[test]
    fn equal_margins_give_an_interval_of_width_zero() {
        let m = margin(&[3.0; 10]);
        assert_eq!(m.ci95, Some((3.0, 3.0)));
    }

    #[test]
    fn the_quantile_beyond_the_table_meets_known_values() {
        // Exact: df 40 → 2.02108, 60 → 2.00030, 120 → 1.97993, 1000 → 1.96234.
        for (df, exact) in [
            (40, 2.02108),
            (60, 2.00030),
            (120, 1.97993),
            (1000, 1.96234),
        ] {
            assert!((t_975(df) - exact).abs() < 0.0002, "df {df}: {}", t_975(df));
        }
        assert!(t_975(31) < t_975(30) && t_975(31) > 2.0);
    }
}
