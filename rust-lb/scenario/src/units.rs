//! Numbers with units, parsed exactly (decimal text → integer, no floating point).
//!
//! * Rates: `bps` / `b/s` with an optional `K`/`k`, `M`, `G`, `T` prefix (ns-3 `DataRate` and
//!   ConWeave spellings: `100Gbps`, `40.0Mb/s`), or the bare prefix as `traffic_gen.py -b 100G`
//!   takes it. The result must be a whole, non-zero number of bits per second.
//! * Times: `ns`, `us` (or `µs`), `ms`, `s`. The result must be a whole number of nanoseconds.
//! * Sizes: `B`, `KB`/`MB`/`GB` (powers of 1000), `KiB`/`MiB`/`GiB` (powers of 1024).
//!
//! A number without a unit is an error (`"1000"` could mean anything); the message lists the
//! units that are accepted. Decimal values are parsed as digit strings and scaled by integer
//! arithmetic, so `"0.1s"` is exactly 100,000,000 ns.

/// A non-negative decimal number: digits, optionally one `.` and more digits.
/// Returns (all digits as an integer, number of digits after the point).
pub(crate) fn parse_decimal(text: &str) -> Option<(u128, u32)> {
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i, f),
        None => (text, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Trailing zeros of the fraction do not change the value; dropping them keeps the scale
    // small ("2.000000000000" is fine).
    let frac = frac.trim_end_matches('0');
    let int = int.trim_start_matches('0');
    if int.len() + frac.len() > 36 {
        return None;
    }
    let mut mantissa: u128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        mantissa = mantissa * 10 + u128::from(b - b'0');
    }
    let scale = u32::try_from(frac.len()).ok()?;
    Some((mantissa, scale))
}

/// `mantissa / 10^scale × multiplier`, exactly; `None` if not a whole number or too large.
pub(crate) fn scale_exact(mantissa: u128, scale: u32, multiplier: u128) -> Option<u64> {
    let num = mantissa.checked_mul(multiplier)?;
    let den = 10u128.checked_pow(scale)?;
    if num % den != 0 {
        return None;
    }
    u64::try_from(num / den).ok()
}

/// Like [`scale_exact`] but rounds half up to the nearest integer.
pub(crate) fn scale_rounded(mantissa: u128, scale: u32, multiplier: u128) -> Option<u64> {
    let num = mantissa.checked_mul(multiplier)?;
    let den = 10u128.checked_pow(scale)?;
    u64::try_from((num + den / 2) / den).ok()
}

/// Splits `"100Gbps"` into (`"100"`, `"Gbps"`).
fn split_number(text: &str) -> (&str, &str) {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t.split_at(end)
}

/// Units accepted by [`parse_rate_bps`], for messages.
pub const RATE_UNITS: &str =
    "bps, Kbps, Mbps, Gbps, Tbps (or b/s, Kb/s, Mb/s, Gb/s, Tb/s; K, M, G, T)";
/// Units accepted by [`parse_time_ns`], for messages.
pub const TIME_UNITS: &str = "ns, us, ms, s";
/// Units accepted by [`parse_bytes`], for messages.
pub const BYTE_UNITS: &str = "B, KB, MB, GB, KiB, MiB, GiB";

/// Parses a data rate into bits per second. The error is a message without location.
///
/// # Errors
/// Missing or unknown unit, malformed number, zero, or not a whole number of bits/s.
pub fn parse_rate_bps(text: &str) -> Result<u64, String> {
    let (num, unit) = split_number(text);
    let mult: u128 = match unit {
        "bps" | "b/s" => 1,
        "Kbps" | "kbps" | "Kb/s" | "kb/s" | "K" | "k" => 1_000,
        "Mbps" | "Mb/s" | "M" => 1_000_000,
        "Gbps" | "Gb/s" | "G" => 1_000_000_000,
        "Tbps" | "Tb/s" | "T" => 1_000_000_000_000,
        "" => return Err(format!("rate `{text}` has no unit (use {RATE_UNITS})")),
        _ => {
            return Err(format!(
                "rate `{text}`: unknown unit `{unit}` (use {RATE_UNITS})"
            ))
        }
    };
    let (m, s) = parse_decimal(num).ok_or_else(|| format!("rate `{text}`: not a number"))?;
    let v = scale_exact(m, s, mult)
        .ok_or_else(|| format!("rate `{text}`: not a whole number of bits/s"))?;
    if v == 0 {
        return Err(format!("rate `{text}` must be positive"));
    }
    Ok(v)
}

/// Parses a duration into nanoseconds. The error is a message without location.
///
/// # Errors
/// Missing or unknown unit, malformed number, or not a whole number of nanoseconds.
pub fn parse_time_ns(text: &str) -> Result<u64, String> {
    let (num, unit) = split_number(text);
    let mult: u128 = match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "" => return Err(format!("time `{text}` has no unit (use {TIME_UNITS})")),
        _ => {
            return Err(format!(
                "time `{text}`: unknown unit `{unit}` (use {TIME_UNITS})"
            ))
        }
    };
    let (m, s) = parse_decimal(num).ok_or_else(|| format!("time `{text}`: not a number"))?;
    scale_exact(m, s, mult).ok_or_else(|| format!("time `{text}`: not a whole number of ns"))
}

/// Parses a size into bytes. The error is a message without location.
///
/// # Errors
/// Missing or unknown unit, malformed number, or not a whole number of bytes.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let (num, unit) = split_number(text);
    let mult: u128 = match unit {
        "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "" => return Err(format!("size `{text}` has no unit (use {BYTE_UNITS})")),
        _ => {
            return Err(format!(
                "size `{text}`: unknown unit `{unit}` (use {BYTE_UNITS})"
            ))
        }
    };
    let (m, s) = parse_decimal(num).ok_or_else(|| format!("size `{text}`: not a number"))?;
    scale_exact(m, s, mult).ok_or_else(|| format!("size `{text}`: not a whole number of bytes"))
}

/// Seconds written as a decimal (`2.000013125`) to nanoseconds, exactly; digits beyond the
/// ninth decimal are rounded half up.
///
/// # Errors
/// Anything but a non-negative decimal number (no sign, no exponent).
pub fn parse_seconds_to_ns(text: &str) -> Result<u64, String> {
    let (m, s) = parse_decimal(text)
        .ok_or_else(|| format!("`{text}` is not a non-negative decimal number of seconds"))?;
    scale_rounded(m, s, 1_000_000_000).ok_or_else(|| format!("`{text}` s is too large"))
}

/// The whole nanoseconds ns-3.19 makes of a time given as `seconds` (a double):
/// `Seconds(double)` converts the double to 64.64 fixed point (integer part, and the fraction
/// truncated to 64 bits), multiplies by 10^9 truncating, and keeps the integer part:
/// `floor(d) x 10^9 + floor(trunc(frac(d) x 2^64) x 10^9 / 2^64)`. So a value just above a
/// whole nanosecond can land one below it: 2.000000041 s starts at 2000000040 ns (checked
/// against every start time of the reference's fct.txt on the reference case), and 1000 B at
/// 100 Gbps serialize in 79 ns (8.0000000000000002e-8 s). Negative or non-finite input gives
/// 0; values beyond u64 nanoseconds saturate.
#[must_use]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "the casts are the reference's truncations; the input is finite and positive"
)]
pub fn ns3_19_seconds_to_ns(seconds: f64) -> u64 {
    if !seconds.is_finite() || seconds <= 0.0 {
        return 0;
    }
    let whole = seconds.floor();
    if whole >= 1.8e10 {
        return u64::MAX; // beyond u64 nanoseconds
    }
    let fraction_bits = ((seconds - whole) * 18_446_744_073_709_551_616.0) as u64; // x 2^64
    let fraction_ns = (u128::from(fraction_bits) * 1_000_000_000) >> 64;
    (whole as u64) * 1_000_000_000 + u64::try_from(fraction_ns).unwrap_or(0)
}

/// Formats bits/s for summaries (`100Gbps`, `40Mbps`, `1500bps`).
#[must_use]
pub fn format_rate(bps: u64) -> String {
    for (div, unit) in [
        (1_000_000_000_000, "Tbps"),
        (1_000_000_000, "Gbps"),
        (1_000_000, "Mbps"),
        (1_000, "Kbps"),
    ] {
        if bps >= div && bps % div == 0 {
            return format!("{}{unit}", bps / div);
        }
    }
    format!("{bps}bps")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate_bps("100Gbps"), Ok(100_000_000_000));
        assert_eq!(parse_rate_bps("40.0Mb/s"), Ok(40_000_000));
        assert_eq!(parse_rate_bps("2.5Gbps"), Ok(2_500_000_000));
        assert_eq!(parse_rate_bps("100G"), Ok(100_000_000_000));
        assert_eq!(parse_rate_bps("1500bps"), Ok(1500));
        assert!(parse_rate_bps("100").unwrap_err().contains("has no unit"));
        assert!(parse_rate_bps("100Gbit")
            .unwrap_err()
            .contains("unknown unit `Gbit`"));
        assert!(parse_rate_bps("0Gbps").unwrap_err().contains("positive"));
        assert!(parse_rate_bps("0.5bps")
            .unwrap_err()
            .contains("whole number"));
        assert!(parse_rate_bps("-1Gbps").is_err());
    }

    #[test]
    fn ns3_19_truncation() {
        // From the reference's fct.txt on the reference case: flow-file start -> start_ns.
        assert_eq!(ns3_19_seconds_to_ns(2.000000041), 2_000_000_040);
        assert_eq!(ns3_19_seconds_to_ns(2.000000083), 2_000_000_083);
        assert_eq!(ns3_19_seconds_to_ns(2.000003), 2_000_002_999);
        // Serialization of 1048 B at 100 Gbps as DataRate::CalculateTxTime computes it.
        assert_eq!(ns3_19_seconds_to_ns(1048.0 * 8.0 / 1e11), 83);
        assert_eq!(ns3_19_seconds_to_ns(1000.0 * 8.0 / 1e11), 79);
        assert_eq!(ns3_19_seconds_to_ns(50.0 * 8.0 / 1e11), 3);
        assert_eq!(ns3_19_seconds_to_ns(60.0 * 8.0 / 1e11), 4);
        assert_eq!(ns3_19_seconds_to_ns(1048.0 * 8.0 / 25e9), 335);
        assert_eq!(ns3_19_seconds_to_ns(2.0), 2_000_000_000);
        assert_eq!(ns3_19_seconds_to_ns(0.0), 0);
        assert_eq!(ns3_19_seconds_to_ns(-1.0), 0);
        assert_eq!(ns3_19_seconds_to_ns(f64::NAN), 0);
        assert_eq!(ns3_19_seconds_to_ns(1e300), u64::MAX);
        assert_eq!(ns3_19_seconds_to_ns(f64::MIN_POSITIVE), 0);
    }

    #[test]
    fn times() {
        assert_eq!(parse_time_ns("1000ns"), Ok(1000));
        assert_eq!(parse_time_ns("1us"), Ok(1000));
        assert_eq!(parse_time_ns("1.5us"), Ok(1500));
        assert_eq!(parse_time_ns("10ms"), Ok(10_000_000));
        assert_eq!(parse_time_ns("0.1s"), Ok(100_000_000));
        assert!(parse_time_ns("1000").unwrap_err().contains("has no unit"));
        assert!(parse_time_ns("1000xs")
            .unwrap_err()
            .contains("unknown unit `xs`"));
        assert!(parse_time_ns("1.5ns").unwrap_err().contains("whole number"));
    }

    #[test]
    fn sizes_and_seconds() {
        assert_eq!(parse_bytes("9MiB"), Ok(9_437_184));
        assert_eq!(parse_bytes("100KB"), Ok(100_000));
        assert_eq!(parse_bytes("64MB"), Ok(64_000_000));
        assert!(parse_bytes("12").unwrap_err().contains("has no unit"));
        assert_eq!(parse_seconds_to_ns("2.000013125"), Ok(2_000_013_125));
        assert_eq!(parse_seconds_to_ns("2"), Ok(2_000_000_000));
        assert_eq!(parse_seconds_to_ns("0.1"), Ok(100_000_000));
        // 0.1 + 0.2 style float surprises cannot happen: every digit is exact.
        assert_eq!(parse_seconds_to_ns("2.100000000"), Ok(2_100_000_000));
        assert_eq!(parse_seconds_to_ns("1.0000000005"), Ok(1_000_000_001));
        assert_eq!(parse_seconds_to_ns("1.0000000004"), Ok(1_000_000_000));
        assert!(parse_seconds_to_ns("-1").is_err());
        assert!(parse_seconds_to_ns("1e-3").is_err());
        assert!(parse_seconds_to_ns(".").is_err());
        assert_eq!(format_rate(100_000_000_000), "100Gbps");
        assert_eq!(format_rate(40_000_000), "40Mbps");
    }
}
