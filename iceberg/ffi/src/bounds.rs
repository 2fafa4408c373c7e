//! Iceberg's single-value binary serialization of column bounds (table
//! spec, appendix D) and the truncation of string bounds, plus the time
//! transforms that turn the time column into a partition value.

use crate::error::{Error, Result};

pub fn long_bytes(v: i64) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

pub fn int_bytes(v: i32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

pub fn double_bytes(v: f64) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

/// The first `chars` characters of `s`.
pub fn truncate_chars(s: &str, chars: usize) -> &str {
    match s.char_indices().nth(chars) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

/// A lower bound: the string itself, cut to `chars` characters (a prefix is
/// never greater than the string).
pub fn string_lower_bound(s: &str, chars: usize) -> Vec<u8> {
    truncate_chars(s, chars).as_bytes().to_vec()
}

/// An upper bound: the string when it fits, else its first `chars`
/// characters with the last one incremented (so the bound stays above every
/// string with that prefix); None when no character can be incremented.
pub fn string_upper_bound(s: &str, chars: usize) -> Option<Vec<u8>> {
    let prefix = truncate_chars(s, chars);
    if prefix.len() == s.len() {
        return Some(s.as_bytes().to_vec());
    }
    let mut cs: Vec<char> = prefix.chars().collect();
    while let Some(last) = cs.pop() {
        let mut next = last as u32 + 1;
        // Skip the surrogate range, which has no chars.
        if (0xD800..=0xDFFF).contains(&next) {
            next = 0xE000;
        }
        if let Some(c) = char::from_u32(next) {
            cs.push(c);
            return Some(cs.into_iter().collect::<String>().into_bytes());
        }
    }
    None
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeTransform {
    Hour,
    Day,
    Month,
    Year,
}

const MICROS_PER_HOUR: i64 = 3_600_000_000;
const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;

impl TimeTransform {
    pub fn parse(name: &str) -> Result<TimeTransform> {
        match name {
            "hour" => Ok(TimeTransform::Hour),
            "day" => Ok(TimeTransform::Day),
            "month" => Ok(TimeTransform::Month),
            "year" => Ok(TimeTransform::Year),
            other => Err(Error::invalid(format!(
                "unsupported partition transform \"{other}\" (hour, day, month, year)"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TimeTransform::Hour => "hour",
            TimeTransform::Day => "day",
            TimeTransform::Month => "month",
            TimeTransform::Year => "year",
        }
    }

    /// The partition value of a timestamp (micros since the epoch): hours,
    /// days, months or years since 1970-01-01 00:00 UTC.
    pub fn apply(self, micros: i64) -> i32 {
        let value = match self {
            TimeTransform::Hour => micros.div_euclid(MICROS_PER_HOUR),
            TimeTransform::Day => micros.div_euclid(MICROS_PER_DAY),
            TimeTransform::Month => {
                let (y, m, _) = civil_from_days(micros.div_euclid(MICROS_PER_DAY));
                (y - 1970) * 12 + (m as i64 - 1)
            }
            TimeTransform::Year => {
                let (y, _, _) = civil_from_days(micros.div_euclid(MICROS_PER_DAY));
                y - 1970
            }
        };
        value as i32
    }
}

/// (year, month 1-12, day 1-31) of days since 1970-01-01 (proleptic
/// Gregorian; Howard Hinnant's civil_from_days).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transforms() {
        // 2024-02-29T13:00:00Z
        let t = 1_709_211_600_000_000;
        assert_eq!(TimeTransform::Day.apply(t), 19_782);
        assert_eq!(TimeTransform::Hour.apply(t), 19_782 * 24 + 13);
        assert_eq!(TimeTransform::Month.apply(t), 54 * 12 + 1);
        assert_eq!(TimeTransform::Year.apply(t), 54);
        assert_eq!(TimeTransform::Day.apply(-1), -1);
        assert_eq!(TimeTransform::Month.apply(-1), -1);
    }

    #[test]
    fn string_bounds() {
        assert_eq!(string_lower_bound("abc", 16), b"abc");
        assert_eq!(string_upper_bound("abc", 16).unwrap(), b"abc");
        assert_eq!(string_lower_bound("abcdef", 3), b"abc");
        assert_eq!(string_upper_bound("abcdef", 3).unwrap(), b"abd");
        assert_eq!(string_upper_bound("ab\u{10FFFF}x", 3).unwrap(), b"ac");
        assert_eq!(string_upper_bound("\u{10FFFF}\u{10FFFF}x", 2), None);
        assert_eq!(string_lower_bound("żółw", 2), "żó".as_bytes());
    }
}
