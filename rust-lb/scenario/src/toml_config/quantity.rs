//! Quantities with units in TOML scenarios: [`Rate`], [`Time`] and [`Bytes`] deserialize from
//! strings such as `"100Gbps"`, `"1us"` and `"9MiB"` (sizes also from plain integers of
//! bytes) through the parsers of `crate::units`; a number without a unit is an error.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use crate::units::{parse_bytes, parse_rate_bps, parse_time_ns};

macro_rules! unit_type {
    ($name:ident, $parse:path, $what:literal, $int_ok:literal) => {
        /// A quantity parsed from a string with a unit.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name(pub u64);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<$name, E> {
                        if $int_ok {
                            u64::try_from(v)
                                .map($name)
                                .map_err(|_| E::custom(format!("negative value {v}")))
                        } else {
                            Err(E::custom(format!(
                                "{v} has no unit; write {} as a string with a unit",
                                $what
                            )))
                        }
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<$name, E> {
                        Err(E::custom(format!(
                            "{v} has no unit; write {} as a string with a unit",
                            $what
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(Rate, parse_rate_bps, "a rate such as \"100Gbps\"", false);
unit_type!(Time, parse_time_ns, "a time such as \"1us\"", false);
unit_type!(
    Bytes,
    parse_bytes,
    "a size such as \"9MiB\" or an integer of bytes",
    true
);
