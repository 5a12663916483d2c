//! Pages of a list (the lobby, a player's games, a leaderboard): one rule for their bounds.

use super::Error;

/// A page holds at most this many items.
pub const MAX_PER_PAGE: usize = 100;

/// Where page `page` (from 1) of `per_page` items starts, or a 400 naming the query's
/// parameters (`size` is the name of `per_page` in the query).
pub(super) fn page_offset(page: usize, per_page: usize, size: &str) -> Result<usize, Error> {
    if page == 0 || !(1..=MAX_PER_PAGE).contains(&per_page) {
        return Err(Error::BadRequest(format!(
            "page starts at 1; {size} is 1 to {MAX_PER_PAGE}"
        )));
    }
    // A store counts positions in 64-bit signed integers (Redis does): a page no list
    // could reach is the client's mistake, not the store's.
    if page
        .checked_mul(per_page)
        .is_none_or(|end| i64::try_from(end).is_err())
    {
        return Err(Error::BadRequest("page: too large for any list".into()));
    }
    Ok((page - 1) * per_page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_start_at_1_hold_1_to_100_and_reach_no_further_than_a_store_counts() {
        assert_eq!(page_offset(1, 50, "per_page").unwrap(), 0);
        assert_eq!(page_offset(3, 100, "per_page").unwrap(), 200);
        for (page, per_page) in [(0, 10), (1, 0), (1, 101), (usize::MAX, 100)] {
            assert!(
                matches!(
                    page_offset(page, per_page, "limit"),
                    Err(Error::BadRequest(_))
                ),
                "{page} {per_page}"
            );
        }
        let Err(Error::BadRequest(message)) = page_offset(1, 101, "limit") else {
            panic!("refused")
        };
        assert_eq!(message, "page starts at 1; limit is 1 to 100");
    }
}
