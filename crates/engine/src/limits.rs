//! The numeric limits of engine requests, each defined and checked once here (ripgrep's flag
//! definitions hold their own ranges): how many clicks a click makes, how long `wait_for
//! stable` wants the pixels quiet, how long a tree read may take, how long a shell command
//! may run and how often a verified one is retried, and every pause and wait cap (a `wait`
//! tool's pause, a `wait_for`'s deadline, a launch's wait for its window, a page wait).
//!
//! A request type applies its limit (a count out of range is refused with [`OutOfRange`]; a
//! duration is clamped, as it always was); a profile only words the range, taking the bounds
//! from here, so two profiles never disagree about a range.

use std::time::Duration;

/// An inclusive range of whole numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub lo: u64,
    pub hi: u64,
}

impl Limit {
    /// Whether `value` lies inside.
    pub fn contains(self, value: i64) -> bool {
        value >= 0 && (self.lo..=self.hi).contains(&(value as u64))
    }

    /// `value` moved into the range.
    pub fn clamp(self, value: u64) -> u64 {
        value.clamp(self.lo, self.hi)
    }

    /// `value` as a count inside the range, or what was wrong with it.
    pub fn check(self, value: i64) -> Result<u64, OutOfRange> {
        if self.contains(value) {
            Ok(value as u64)
        } else {
            Err(OutOfRange { value, limit: self })
        }
    }

    /// The range in plain words: "1, 2 or 3" for a few values, else "50–30000".
    pub fn words(self) -> String {
        if self.hi - self.lo <= 3 {
            let all: Vec<String> = (self.lo..=self.hi).map(|v| v.to_string()).collect();
            match all.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => all.join(""),
            }
        } else {
            format!("{}–{}", self.lo, self.hi)
        }
    }
}

/// A value a request refused; each profile words it with its own parameter name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfRange {
    pub value: i64,
    pub limit: Limit,
}

/// Clicks in a row (`click`'s count): 1, 2 or 3.
pub const CLICK_COUNT: Limit = Limit { lo: 1, hi: 3 };

/// How long `wait_for stable` wants the pixels quiet, in milliseconds (clamped).
pub const STABLE_MS: Limit = Limit { lo: 50, hi: 30_000 };

/// How long one tree read may take, in milliseconds (clamped).
pub const TREE_TIMEOUT_MS: Limit = Limit {
    lo: 100,
    hi: 30_000,
};

/// How long one shell command (or one verified attempt) may run, in milliseconds (refused
/// outside).
pub const SHELL_TIMEOUT_MS: Limit = Limit { lo: 1, hi: 600_000 };

/// How many times `shell_exec_verified` may run its command again (refused outside).
pub const SHELL_RETRIES: Limit = Limit { lo: 0, hi: 5 };

/// How long a `wait` tool pauses, in seconds (refused outside; fractions are taken).
pub const PAUSE_SECONDS: Limit = Limit { lo: 0, hi: 30 };

/// Longest `timeout` a `wait_for` accepts (longer ones are cut to it).
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// Longest a launch may wait for its window (refused beyond).
pub const MAX_LAUNCH_WAIT: Duration = Duration::from_secs(60);

/// How long a page wait (`browser_wait_for`) may take, in milliseconds (clamped).
pub const PAGE_WAIT_MS: Limit = Limit { lo: 1, hi: 60_000 };

impl Limit {
    /// Whether a fractional `value` (seconds of a pause) lies inside.
    pub fn contains_f64(self, value: f64) -> bool {
        (self.lo as f64..=self.hi as f64).contains(&value)
    }
}

/// A duration clamped to a millisecond limit.
pub(crate) fn clamp_duration(limit: Limit, d: Duration) -> Duration {
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(limit.clamp(ms))
}

// The browser channel's waits.

/// How long a browser launch waits for its first page to load, in milliseconds (clamped).
pub const PAGE_LOAD_MS: Limit = Limit { lo: 0, hi: 30_000 };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_check_clamp_and_read_out() {
        assert_eq!(CLICK_COUNT.check(2), Ok(2));
        assert_eq!(
            CLICK_COUNT.check(4),
            Err(OutOfRange {
                value: 4,
                limit: CLICK_COUNT
            })
        );
        assert!(CLICK_COUNT.check(-1).is_err() && CLICK_COUNT.check(0).is_err());
        assert_eq!(CLICK_COUNT.words(), "1, 2 or 3");
        assert_eq!(STABLE_MS.words(), "50–30000");
        assert_eq!(SHELL_TIMEOUT_MS.words(), "1–600000");
        assert!(SHELL_TIMEOUT_MS.check(0).is_err() && SHELL_TIMEOUT_MS.check(600_001).is_err());
        assert_eq!(SHELL_RETRIES.check(5), Ok(5));
        assert!(SHELL_RETRIES.check(6).is_err());
        assert_eq!(STABLE_MS.clamp(10), 50);
        assert!(PAUSE_SECONDS.contains_f64(0.5) && PAUSE_SECONDS.contains_f64(30.0));
        assert!(!PAUSE_SECONDS.contains_f64(30.5) && !PAUSE_SECONDS.contains_f64(-0.1));
        assert!(!PAUSE_SECONDS.contains_f64(f64::NAN));
        assert_eq!(PAUSE_SECONDS.words(), "0–30");
        assert_eq!(PAGE_WAIT_MS.clamp(90_000), 60_000);
        assert_eq!(
            clamp_duration(TREE_TIMEOUT_MS, Duration::from_secs(3600)),
            Duration::from_secs(30)
        );
    }
}
