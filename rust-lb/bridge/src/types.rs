//! Bridge module of the shared enums (namespace `rdmalb::bridge`, header
//! `rdma-lb-bridge/src/types.rs.h`): the congestion control, the loss recovery, the transport
//! kind and the switch hash cross the language boundary as typed values, never as names. Each
//! mirrors the Rust enum that defines it once
//! (`rdma_lb_scenario::{Cc, Recovery, TransportKind, SwitchHash}`),
//! variant for variant: `From` maps the Rust enum to its mirror (a new Rust variant does not
//! compile until it has one), `TryFrom` maps back and refuses a value C++ made up. The names
//! come from the Rust enums through the functions below; C++ compares no name.

use rdma_lb_scenario::transport_params::{Ns3Attribute, Ns3Value};
use rdma_lb_scenario::{
    Cc as ScCc, Recovery as ScRecovery, SwitchHash as ScSwitchHash,
    TransportKind as ScTransportKind,
};

#[cxx::bridge(namespace = "rdmalb::bridge")]
pub mod ffi {
    /// The NICs' congestion control (`rdma_lb_scenario::Cc`). The values are ConWeave's
    /// `CC_MODE` numbers, as the ns-3 model's `RdmaCcMode`.
    #[derive(Debug)]
    enum Cc {
        None = 0,
        Dcqcn = 1,
        Hpcc = 3,
        Timely = 7,
        Dctcp = 8,
    }

    /// The NICs' loss recovery (`rdma_lb_scenario::Recovery`), in `RdmaNic::LossRecovery`
    /// order.
    #[derive(Debug)]
    enum Recovery {
        Gbn,
        Irn,
        NicSr,
    }

    /// The wire protocol (`rdma_lb_scenario::TransportKind`), in `RdmaNic::Transport` order.
    #[derive(Debug)]
    enum TransportKind {
        Roce,
        Uet,
    }

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
    }

    extern "Rust" {
        /// The default of the transport parameter behind attribute `name` of ns-3 TypeId
        /// `type_id` (the ns-3 attribute defaults read it); an error for an attribute the
        /// table lacks.
        fn default_ns3_setting(type_id: &str, name: &str) -> Result<Ns3Setting>;
        /// The congestion control's name (configs, `RdmaNic::CcMode`); an error for a value
        /// that is none.
        fn cc_name(cc: Cc) -> Result<&'static str>;
        /// The congestion control called `name`; an unknown name is an error listing the
        /// known ones.
        fn cc_from_name(name: &str) -> Result<Cc>;
        /// The loss recovery's name (configs, `RdmaNic::LossRecovery`); an error for a value
        /// that is none.
        fn recovery_name(recovery: Recovery) -> Result<&'static str>;
        /// The loss recovery called `name`; an unknown name is an error.
        fn recovery_from_name(name: &str) -> Result<Recovery>;
        /// The transport's name (configs, `RdmaNic::Transport`); an error for a value that is
        /// none.
        fn transport_kind_name(kind: TransportKind) -> Result<&'static str>;
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

mirror!(
    Cc,
    ScCc,
    "congestion control",
    [None, Dcqcn, Hpcc, Timely, Dctcp]
);
mirror!(Recovery, ScRecovery, "loss recovery", [Gbn, Irn, NicSr]);
mirror!(
    TransportKind,
    ScTransportKind,
    "transport kind",
    [Roce, Uet]
);
mirror!(SwitchHash, ScSwitchHash, "switch hash", [FiveTuple, Htsim]);

fn cc_name(cc: ffi::Cc) -> Result<&'static str, String> {
    ScCc::try_from(cc).map(ScCc::name)
}

fn cc_from_name(name: &str) -> Result<ffi::Cc, String> {
    ScCc::from_name(name).map(ffi::Cc::from).ok_or_else(|| {
        format!(
            "unknown congestion control `{name}` (known: {})",
            ScCc::all_names()
        )
    })
}

fn recovery_name(recovery: ffi::Recovery) -> Result<&'static str, String> {
    ScRecovery::try_from(recovery).map(ScRecovery::name)
}

fn recovery_from_name(name: &str) -> Result<ffi::Recovery, String> {
    ScRecovery::from_name(name)
        .map(ffi::Recovery::from)
        .ok_or_else(|| format!("unknown loss recovery `{name}` (known: gbn, irn, nic-sr)"))
}

fn transport_kind_name(kind: ffi::TransportKind) -> Result<&'static str, String> {
    ScTransportKind::try_from(kind).map(ScTransportKind::name)
}

/// The bridge form of one attribute setting.
pub(crate) fn ns3_setting(a: &Ns3Attribute) -> ffi::Ns3Setting {
    let (kind, uint, real, text) = match a.value {
        Ns3Value::Uint(v) => (ffi::Ns3ValueKind::Uint, v, 0.0, ""),
        Ns3Value::TimeNs(v) => (ffi::Ns3ValueKind::TimeNs, v, 0.0, ""),
        Ns3Value::RateBps(v) => (ffi::Ns3ValueKind::RateBps, v, 0.0, ""),
        Ns3Value::Bool(v) => (ffi::Ns3ValueKind::Bool, u64::from(v), 0.0, ""),
        Ns3Value::Double(v) => (ffi::Ns3ValueKind::Double, 0, v, ""),
        Ns3Value::Name(v) => (ffi::Ns3ValueKind::Name, 0, 0.0, v),
    };
    ffi::Ns3Setting {
        type_id: a.object.type_id().to_owned(),
        name: a.name.to_owned(),
        kind,
        uint,
        real,
        text: text.to_owned(),
        summary_key: a.summary_key.unwrap_or("").to_owned(),
    }
}

pub(crate) fn default_ns3_setting(type_id: &str, name: &str) -> Result<ffi::Ns3Setting, String> {
    rdma_lb_scenario::Transport::default()
        .ns3_attributes()
        .iter()
        .find(|a| a.object.type_id() == type_id && a.name == name)
        .map(ns3_setting)
        .ok_or_else(|| format!("no transport parameter sets the {type_id} attribute {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn congestion_controls_mirror_with_their_conweave_numbers() {
        for &c in ScCc::ALL {
            let m = ffi::Cc::from(c);
            assert_eq!(u32::from(m.repr), c.conweave_mode(), "{c:?}");
            assert_eq!(ScCc::try_from(m), Ok(c));
            assert_eq!(cc_name(m).unwrap(), c.name());
            assert_eq!(cc_from_name(c.name()).unwrap(), m);
        }
        assert_eq!(
            cc_from_name("cubic").unwrap_err(),
            "unknown congestion control `cubic` (known: dcqcn, hpcc, timely, dctcp, none)"
        );
        assert_eq!(
            cc_name(ffi::Cc { repr: 5 }).unwrap_err(),
            "no congestion control has the value 5"
        );
    }

    #[test]
    fn defaults_of_the_attributes_come_from_the_table() {
        let d = default_ns3_setting("ns3::RdmaRoceRecovery", "NackInterval").unwrap();
        assert_eq!((d.kind, d.uint), (ffi::Ns3ValueKind::TimeNs, 4_000));
        assert_eq!(d.summary_key, "nack_interval_ns");
        let d = default_ns3_setting("ns3::RdmaGoBackN", "L2ChunkSize").unwrap();
        assert_eq!((d.kind, d.uint), (ffi::Ns3ValueKind::Uint, 4000));
        let d = default_ns3_setting("ns3::RdmaCongestionControl", "EwmaGain").unwrap();
        assert_eq!((d.kind, d.real), (ffi::Ns3ValueKind::Double, 1.0 / 256.0));
        let d = default_ns3_setting("ns3::RdmaNic", "CcMode").unwrap();
        assert_eq!(
            (d.kind, d.text.as_str()),
            (ffi::Ns3ValueKind::Name, "dcqcn")
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
    fn recovery_transport_and_hash_mirror() {
        for r in [ScRecovery::Gbn, ScRecovery::Irn, ScRecovery::NicSr] {
            let m = ffi::Recovery::from(r);
            assert_eq!(ScRecovery::try_from(m), Ok(r));
            assert_eq!(recovery_name(m).unwrap(), r.name());
            assert_eq!(recovery_from_name(r.name()).unwrap(), m);
        }
        assert_eq!(
            recovery_from_name("sr").unwrap_err(),
            "unknown loss recovery `sr` (known: gbn, irn, nic-sr)"
        );
        assert!(recovery_name(ffi::Recovery { repr: 3 }).is_err());
        for k in [ScTransportKind::Roce, ScTransportKind::Uet] {
            let m = ffi::TransportKind::from(k);
            assert_eq!(ScTransportKind::try_from(m), Ok(k));
            assert_eq!(transport_kind_name(m).unwrap(), k.name());
        }
        assert!(transport_kind_name(ffi::TransportKind { repr: 2 }).is_err());
        for h in [ScSwitchHash::FiveTuple, ScSwitchHash::Htsim] {
            assert_eq!(ScSwitchHash::try_from(ffi::SwitchHash::from(h)), Ok(h));
        }
    }
}
