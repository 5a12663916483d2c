//! How a variable's text becomes a setting: unset and empty alike, a value the server
//! cannot use refused with the variable's name.

use std::collections::HashMap;
use std::ffi::OsString;
use std::num::NonZeroU32;

use super::{RateLimit, SettingsError};

/// A cap: a whole number, `0` for none.
pub(super) fn cap(s: &str) -> Result<Option<usize>, String> {
    s.trim()
        .parse::<usize>()
        .map(|n| (n > 0).then_some(n))
        .map_err(|_| "expected a whole number (0: no cap)".to_owned())
}

pub(super) struct Env<'a>(pub(super) &'a HashMap<String, OsString>);

impl Env<'_> {
    /// The value of `var`, `None` when unset or empty.
    pub(super) fn get(&self, var: &'static str) -> Result<Option<String>, SettingsError> {
        match self.0.get(var) {
            None => Ok(None),
            Some(raw) => match raw.to_str() {
                Some(s) if s.trim().is_empty() => Ok(None),
                Some(s) => Ok(Some(s.to_owned())),
                None => Err(SettingsError {
                    var,
                    value: raw.to_string_lossy().into_owned(),
                    problem: "not valid UTF-8".to_owned(),
                }),
            },
        }
    }

    pub(super) fn parse<T>(
        &self,
        var: &'static str,
        default: T,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<T, SettingsError> {
        match self.get(var)? {
            None => Ok(default),
            Some(value) => parse(&value).map_err(|problem| SettingsError {
                var,
                value,
                problem,
            }),
        }
    }

    /// A rate (`0`: no limit) and its burst (default: the rate).
    pub(super) fn rate_limit(
        &self,
        rate_var: &'static str,
        burst_var: &'static str,
        default: Option<RateLimit>,
    ) -> Result<Option<RateLimit>, SettingsError> {
        let whole = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| "expected a whole number of requests per second".to_owned())
        };
        let rate = match self.parse(rate_var, default.map(|r| r.per_second.get()), |s| {
            whole(s).map(Some)
        })? {
            None | Some(0) => return Ok(None),
            Some(rate) => NonZeroU32::new(rate).expect("not 0"),
        };
        let burst = self.parse(burst_var, rate, |s| {
            whole(s).and_then(|n| {
                NonZeroU32::new(n)
                    .ok_or_else(|| "expected a whole number greater than 0".to_owned())
            })
        })?;
        Ok(Some(RateLimit {
            per_second: rate,
            burst,
        }))
    }
}

pub(super) fn positive(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(0) | Err(_) => Err("expected a whole number greater than 0".to_owned()),
        Ok(n) => Ok(n),
    }
}

/// `true`/`false` (or `1`/`0`, `yes`/`no`, any case).
pub(super) fn boolean(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err("expected true or false".to_owned()),
    }
}
