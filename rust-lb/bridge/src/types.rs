//! Bridge module of the shared enums and of the transport's ns-3 attribute settings
//! (namespace `rdmalb::bridge`, header `rdma-lb-bridge/src/types.rs.h`). The switch hash
//! crosses the language boundary as a typed value, never as a name: it mirrors the Rust enum
//! that defines it once (`rdma_lb_scenario::SwitchHash`), variant for variant (`From` maps the
//! Rust enum to its mirror, so a new Rust variant does not compile until it has one; `TryFrom`
//! maps back and refuses a value C++ made up). The loss recovery and the congestion control
//! cross as what they are to ns-3, TypeId names ([`ffi::Ns3ValueKind::Component`]).

use rdma_lb_scenario::transport_params::{Ns3Attribute, Ns3Value};
use rdma_lb_scenario::SwitchHash as ScSwitchHash;

#[cxx::bridge(namespace = "rdmalb::bridge")]
pub mod ffi {
    /// The switches' ECMP on the uet transport (`rdma_lb_scenario::SwitchHash`).
    #[derive(Debug)]
    enum SwitchHash {
        FiveTuple,
        Htsim,
    }

    /// Which ns-3 `AttributeValue` an [`Ns3Setting`] holds, and in which of its fields.
    #[derive(Debug)]
    enum Ns3ValueKind {
        /// `UintegerValue(uint)`.
        Uint,
        /// `TimeValue(NanoSeconds(uint))`.
        TimeNs,
        /// `DataRateValue(DataRate(uint))` (bits/s).
        RateBps,
        /// `BooleanValue(uint != 0)`.
        Bool,
        /// `DoubleValue(real)`.
        Double,
        /// `StringValue(text)` (a name; enum attributes accept their names).
        Name,
        /// `ObjectFactoryValue` of the TypeId named `text`: a component of the NIC (loss
        /// recovery, congestion control); `summary_text` is its name in configs and outputs.
        Component,
    }

    /// One attribute setting of the table of transport parameters
    /// (`rdma_lb_scenario::transport_params`): attribute `name` of the objects of ns-3 TypeId
    /// `type_id` (`Ns3Object::type_id`) = the value.
    #[derive(Debug, Clone)]
    struct Ns3Setting {
        type_id: String,
        name: String,
        kind: Ns3ValueKind,
        uint: u64,
        real: f64,
        text: String,
        /// Its key in summary.json's `transport` object; empty if not listed there.
        summary_key: String,
        /// A `Component`'s value in summary.json (the config's name, `nic-sr`); else empty.
        summary_text: String,
    }

    extern "Rust" {
        /// The default of the transport parameter behind attribute `name` of ns-3 TypeId
        /// `type_id` (the ns-3 attribute defaults read it); an error for an attribute the
        /// table lacks.
        fn default_ns3_setting(type_id: &str, name: &str) -> Result<Ns3Setting>;
    }

    // `rust::Vec<Ns3Setting>` (a loaded scenario's list, `rdmalb::scenario::Transport`).
    impl Vec<Ns3Setting> {}
}

/// `From<$rust> for ffi::$ffi` and `TryFrom<ffi::$ffi> for $rust`, variant for variant (the
/// variants are spelled alike on both sides).
macro_rules! mirror {
    ($ffi:ident, $rust:ident, $what:literal, [$($v:ident),+ $(,)?]) => {
        impl From<$rust> for ffi::$ffi {
            fn from(x: $rust) -> Self {
                match x {
                    $($rust::$v => ffi::$ffi::$v,)+
                }
            }
        }

        impl TryFrom<ffi::$ffi> for $rust {
            type Error = String;

            fn try_from(x: ffi::$ffi) -> Result<Self, String> {
                match x {
                    $(ffi::$ffi::$v => Ok($rust::$v),)+
                    _ => Err(format!(concat!("no ", $what, " has the value {}"), x.repr)),
                }
            }
        }
    };
}

mirror!(SwitchHash, ScSwitchHash, "switch hash", [FiveTuple, Htsim]);

/// The bridge form of one attribute setting.
pub(crate) fn ns3_setting(a: &Ns3Attribute) -> ffi::Ns3Setting {
    let (kind, uint, real, text, summary_text) = match a.value {
        Ns3Value::Uint(v) => (ffi::Ns3ValueKind::Uint, v, 0.0, "", ""),
        Ns3Value::TimeNs(v) => (ffi::Ns3ValueKind::TimeNs, v, 0.0, "", ""),
        Ns3Value::RateBps(v) => (ffi::Ns3ValueKind::RateBps, v, 0.0, "", ""),
        Ns3Value::Bool(v) => (ffi::Ns3ValueKind::Bool, u64::from(v), 0.0, "", ""),
        Ns3Value::Double(v) => (ffi::Ns3ValueKind::Double, 0, v, "", ""),
        Ns3Value::Name(v) => (ffi::Ns3ValueKind::Name, 0, 0.0, v, ""),
        Ns3Value::Component { type_id, name } => {
            (ffi::Ns3ValueKind::Component, 0, 0.0, type_id, name)
        }
    };
    ffi::Ns3Setting {
        type_id: a.object.type_id().to_owned(),
        name: a.name.to_owned(),
        kind,
        uint,
        real,
        text: text.to_owned(),
        summary_key: a.summary_key.unwrap_or("").to_owned(),
        summary_text: summary_text.to_owned(),
    }
}

pub(crate) fn default_ns3_setting(type_id: &str, name: &str) -> Result<ffi::Ns3Setting, String> {
    let table = rdma_lb_scenario::Transport::default().ns3_attributes();
    let uet = rdma_lb_scenario::UetParams::default().ns3_attributes();
    table
        .iter()
        .chain(&uet)
        .find(|a| a.object.type_id() == type_id && a.name == name)
        .map(ns3_setting)
        .ok_or_else(|| format!("no transport parameter sets the {type_id} attribute {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_of_the_attributes_come_from_the_table() {
        let d = default_ns3_setting("ns3::RdmaRoceRecovery", "NackInterval").unwrap();
        assert_eq!((d.kind, d.uint), (ffi::Ns3ValueKind::TimeNs, 4_000));
        assert_eq!(d.summary_key, "nack_interval_ns");
        let d = default_ns3_setting("ns3::RdmaGoBackN", "L2ChunkSize").unwrap();
        assert_eq!((d.kind, d.uint), (ffi::Ns3ValueKind::Uint, 4000));
        let d = default_ns3_setting("ns3::RdmaCongestionControl", "EwmaGain").unwrap();
        assert_eq!((d.kind, d.real), (ffi::Ns3ValueKind::Double, 1.0 / 256.0));
        let d = default_ns3_setting("ns3::RdmaNic", "CongestionControl").unwrap();
        assert_eq!(
            (d.kind, d.text.as_str(), d.summary_text.as_str()),
            (ffi::Ns3ValueKind::Component, "ns3::RdmaDcqcn", "dcqcn")
        );
        let d = default_ns3_setting("ns3::RdmaNic", "LossRecovery").unwrap();
        assert_eq!(
            (d.kind, d.text.as_str(), d.summary_text.as_str()),
            (ffi::Ns3ValueKind::Component, "ns3::RdmaGoBackN", "gbn")
        );
        let d = default_ns3_setting("ns3::SwitchMmu", "BufferSize").unwrap();
        assert_eq!(d.uint, 9 * 1024 * 1024);
        let d = default_ns3_setting("ns3::RdmaSwitch", "IntMulti").unwrap();
        assert_eq!((d.uint, d.summary_key.as_str()), (1, ""));
        let d = default_ns3_setting("ns3::RdmaHpcc", "IntMulti").unwrap();
        assert_eq!((d.type_id.as_str(), d.uint), ("ns3::RdmaHpcc", 1));
        assert_eq!(
            default_ns3_setting("ns3::RdmaSwitch", "NackInterval").unwrap_err(),
            "no transport parameter sets the ns3::RdmaSwitch attribute NackInterval"
        );
        // A scheme's attribute is its own: not the NIC's any more, nor its base's.
        assert!(default_ns3_setting("ns3::RdmaNic", "L2ChunkSize").is_err());
        assert!(default_ns3_setting("ns3::RdmaRoceRecovery", "L2ChunkSize").is_err());
        assert!(default_ns3_setting("ns3::X", "X").is_err());
    }

    #[test]
    fn the_switch_hash_mirrors() {
        for h in [ScSwitchHash::FiveTuple, ScSwitchHash::Htsim] {
            assert_eq!(ScSwitchHash::try_from(ffi::SwitchHash::from(h)), Ok(h));
        }
        assert!(ScSwitchHash::try_from(ffi::SwitchHash { repr: 2 }).is_err());
    }
}
