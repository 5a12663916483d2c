//! Paging, one way for every list: `page` (from 1) and `per_page` (1 to 100). The bounds
//! are the service's ([`crate::service::MAX_PER_PAGE`], checked there); here only the
//! query's defaults.

use serde::Deserialize;
use utoipa::IntoParams;

/// Items a page holds when the query does not say.
pub const DEFAULT_PER_PAGE: usize = 20;

/// The query of a list that takes nothing but its page.
#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// From 1; a page no list could reach (page x per_page past 2^63) is a 400.
    #[param(minimum = 1)]
    pub page: Option<usize>,
    /// 1 to 100; default 20.
    #[param(minimum = 1, maximum = 100)]
    pub per_page: Option<usize>,
}

impl PageQuery {
    pub fn get(&self) -> (usize, usize) {
        paging(self.page, self.per_page, DEFAULT_PER_PAGE)
    }
}

/// The page and its size a query asks for, with the list's default size.
pub fn paging(page: Option<usize>, per_page: Option<usize>, default: usize) -> (usize, usize) {
    (page.unwrap_or(1), per_page.unwrap_or(default))
}
