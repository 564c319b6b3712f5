//! The one table of transport parameters: every field of [`crate::Transport`], in its
//! serialization order, with its type and default, and where it has them its TOML key (with
//! the unit type the value is written in and a range check), its ConWeave key (with the
//! `Line` parser that reads it) and the ns-3 attributes it sets (object and name, value kind).
//!
//! [`transport_params`] is an "x-macro": it hands the whole table to a consumer macro, and
//! each layer derives what it needs from it -- the `Transport` struct and its `Default`
//! (`model.rs`), the TOML keys of `[transport]` and how they are applied
//! (`toml_config/transport.rs`), the ConWeave keys (`conweave.rs`), the keys of the
//! `transport` override (`overrides.rs`: `rp_timer = 300us, ...`) and the list of ns-3
//! attribute settings the scenario program applies in one loop
//! ([`crate::Transport::ns3_attributes`], through the cxx bridge: each setting names the ns-3
//! TypeId that declares the attribute, [`Ns3Object::type_id`]). The loss recovery and the
//! congestion control are chosen by their TypeId names ([`Ns3Value::Component`]: the NIC's
//! factory attributes `LossRecovery` and `CongestionControl`); a setting of one of them goes
//! to the NICs' factory of that type or of a type derived from it.
//!
//! A new knob used by one loss recovery or congestion control is three files: its row here
//! (`ns3 GoBackN "Name" as kind`), the scheme's header (`ns3-module/model/rdma-recovery-gbn.h`:
//! the member) and its source (`rdma-recovery-gbn.cc`: the `AddAttribute` in its `GetTypeId`,
//! with the default `RdmaTransportDefault("ns3::RdmaGoBackN", "Name")`, and the code that reads
//! the member). A knob several schemes use is an attribute of their base class
//! (`RoceRecovery`, `CongestionControl`: `rdma-recovery.h`/`.cc`, `rdma-cc.h`/`.cc`) plus the
//! sources that read it; a knob of the NIC, a switch or an MMU is the row, that object's
//! `AddAttribute` and member, and its use. A new object is a variant of [`Ns3Object`] with its
//! TypeId name; the scenario program dispatches on the name.
//!
//! A range check is written once, in its row (`check fn`), and applies to the value wherever it
//! came from: the TOML and ConWeave parsers run it when they read the key (the error names
//! the line and the key in that format's terms), and [`crate::Transport::check_ranges`],
//! generated from the rows, runs every row's check on the merged scenario (the validation in
//! `lib.rs` calls it after the overrides, naming the override when it set the value; it keeps
//! by hand only the checks that relate several fields). So a knob with a range check is still
//! the three files above.
//!
//! The uet transport's settings (`[transport.uet]`, [`crate::UetParams`]) are a sub-table
//! written and consumed the same way, [`uet`]: a new uet knob is three files too -- its row in
//! `transport_params/uet.rs` (`ns3 UetRecovery "Name" as kind`), `rdma-recovery-uet.h` (the
//! member) and `rdma-recovery-uet.cc` (the `AddAttribute` with the default
//! `RdmaTransportDefault("ns3::RdmaUetRecovery", "Name")`, and its use); one whose 0 means
//! "derived from the fabric" is the row and `rdma-uet-fabric.h`/`.cc` (member; attribute and
//! its rule in `RdmaUetFabric::Derive`). Measured on `max_window_bdp`: 10 source files
//! spelled it before (TOML schema and parser, struct, validation, bridge struct and copy, C++
//! struct and copy, the scenario runner, the NIC's attribute, member and use), 3 now.
//!
//! Row grammar (`;`-terminated, in `Transport` field order):
//! `#[doc] #[serde] field: Type = default`
//! `[, toml "key" as UnitType [check fn]]` -- `fn(&Type) -> Result<(), String>` on the
//! field's value (the TOML value is converted first; a message that reads after the key);
//! `[, conweave "KEY" => parser(args)]` -- a `conweave::Line` method;
//! `[, ns3 Object "Attribute" as kind]*` -- `Object` an [`Ns3Object`], `kind` an
//! [`Ns3Value`] constructor.
//! Fields without a `toml` clause (kind, recovery, cc, the window, the ECN map, the quirks)
//! are parsed by hand, and `uet` by its own table ([`uet`]); fields without `ns3` are applied
//! by the scenario program from other inputs (the window, the ECN map) or not modelled
//! (`l2_back_to_zero`).
//! Defaults are ConWeave's `run.py` values for 100 Gbps and the ns-3 attribute defaults.

use serde::Serialize;

use crate::toml_config::quantity::{Bytes, Rate, Time};

/// The ns-3 object an attribute belongs to: a NIC, a switch or its MMU, or one of the loss
/// recoveries and congestion controls each NIC creates -- always the TypeId that declares the
/// attribute (as `Config::SetDefault` needs it). The NIC creates its loss recovery and its
/// congestion control from its factory attributes `LossRecovery` and `CongestionControl`
/// (`ObjectFactoryValue`); the scenario program sets a component's attribute on the factory
/// whose type is that TypeId or derived from it, as ns-3 TypeIds inherit their parent's
/// attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Ns3Object {
    /// `ns3::RdmaNic` of every host.
    Nic,
    /// `ns3::RdmaSwitch` of every switch.
    Switch,
    /// `ns3::SwitchMmu` of every switch.
    Mmu,
    /// `ns3::RdmaRoceRecovery`: the RoCE loss recoveries (Go-Back-N, IRN, NIC-SR) of every host.
    RoceRecovery,
    /// `ns3::RdmaGoBackN` of every host.
    GoBackN,
    /// `ns3::RdmaIrn` of every host.
    Irn,
    /// `ns3::RdmaCongestionControl`: every congestion control of every host.
    CongestionControl,
    /// `ns3::RdmaDcqcn` of every host.
    Dcqcn,
    /// `ns3::RdmaHpcc` of every host.
    Hpcc,
    /// `ns3::RdmaDctcp` of every host.
    Dctcp,
    /// `ns3::RdmaUetRecovery`: the uet transport of every host (its window and its rule).
    UetRecovery,
    /// `ns3::RdmaUetFabric`: the uet transport's fabric-wide settings whose 0 means "derived
    /// from the fabric" (queue, ECN thresholds, base RTT, RTO); the scenario program derives
    /// them there and sets the result on the switches and NICs.
    UetFabric,
    /// `ns3::RdmaNetDevice`: every port of every node (set as its link is created).
    Device,
}

impl Ns3Object {
    /// The name of the object's ns-3 `TypeId` (what crosses the bridge).
    #[must_use]
    pub const fn type_id(self) -> &'static str {
        match self {
            Ns3Object::Nic => "ns3::RdmaNic",
            Ns3Object::Switch => "ns3::RdmaSwitch",
            Ns3Object::Mmu => "ns3::SwitchMmu",
            Ns3Object::RoceRecovery => "ns3::RdmaRoceRecovery",
            Ns3Object::GoBackN => "ns3::RdmaGoBackN",
            Ns3Object::Irn => "ns3::RdmaIrn",
            Ns3Object::CongestionControl => "ns3::RdmaCongestionControl",
            Ns3Object::Dcqcn => "ns3::RdmaDcqcn",
            Ns3Object::Hpcc => "ns3::RdmaHpcc",
            Ns3Object::Dctcp => "ns3::RdmaDctcp",
            Ns3Object::UetRecovery => "ns3::RdmaUetRecovery",
            Ns3Object::UetFabric => "ns3::RdmaUetFabric",
            Ns3Object::Device => "ns3::RdmaNetDevice",
        }
    }
}

/// A typed attribute value (the C++ side builds the matching ns-3 `AttributeValue`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Ns3Value {
    /// `UintegerValue`.
    Uint(u64),
    /// `TimeValue(NanoSeconds(ns))`.
    TimeNs(u64),
    /// `DataRateValue(DataRate(bps))`.
    RateBps(u64),
    /// `BooleanValue`.
    Bool(bool),
    /// `DoubleValue`.
    Double(f64),
    /// `StringValue` of a name (enum attributes accept their names).
    Name(&'static str),
    /// A component of the NIC (loss recovery, congestion control) chosen by its ns-3 TypeId
    /// name, `type_id`: an `ObjectFactoryValue` of that type. `name` is the config's name of
    /// it, what `summary.json` prints.
    Component {
        /// The component's TypeId name (`ns3::RdmaIrn`).
        type_id: &'static str,
        /// Its name in configs and outputs (`irn`).
        name: &'static str,
    },
}

impl Ns3Value {
    /// An unsigned integer.
    pub fn uint(v: impl Into<u64>) -> Self {
        Ns3Value::Uint(v.into())
    }

    /// A time in ns.
    #[must_use]
    pub fn time_ns(v: u64) -> Self {
        Ns3Value::TimeNs(v)
    }

    /// A rate in bits/s.
    #[must_use]
    pub fn rate_bps(v: u64) -> Self {
        Ns3Value::RateBps(v)
    }

    /// A flag.
    #[must_use]
    pub fn flag(v: bool) -> Self {
        Ns3Value::Bool(v)
    }

    /// A real number.
    #[must_use]
    pub fn real(v: f64) -> Self {
        Ns3Value::Double(v)
    }

    /// A value of an enum attribute, by its name ([`Ns3Name`]).
    pub fn named(v: impl Ns3Name) -> Self {
        Ns3Value::Name(v.ns3_name())
    }

    /// A component of the NIC, by its TypeId name.
    pub fn component(v: impl Ns3Component) -> Self {
        Ns3Value::Component {
            type_id: v.type_id(),
            name: v.name(),
        }
    }
}

/// An enum a value of an ns-3 enum attribute: its name is the attribute's name of the value
/// (defined once, in Rust).
pub trait Ns3Name: Copy {
    /// The name (`nscc+rccc`).
    fn ns3_name(self) -> &'static str;
}

/// An enum whose variants are components of the NIC (loss recoveries, congestion controls):
/// each variant names its ns-3 TypeId (the names of the algorithms are defined once, here in
/// Rust).
pub trait Ns3Component: Copy {
    /// The name of the component's ns-3 TypeId (`ns3::RdmaIrn`).
    fn type_id(self) -> &'static str;
    /// Its name in configs and outputs (`irn`).
    fn name(self) -> &'static str;
}

/// One attribute setting: `object`'s attribute `name` = `value`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ns3Attribute {
    /// Which objects.
    pub object: Ns3Object,
    /// The attribute's name in its `TypeId`.
    pub name: &'static str,
    /// The value.
    pub value: Ns3Value,
    /// Its key in `summary.json`'s `transport` object (the field name), if it is listed there.
    pub summary_key: Option<&'static str>,
}

/// A TOML value (of the unit type the table names) turned into its `Transport` field type;
/// `Err` (a message) if the field's type cannot hold it.
pub(crate) trait IntoField<F> {
    fn into_field(self) -> Result<F, String>;
}

impl IntoField<u64> for Time {
    fn into_field(self) -> Result<u64, String> {
        Ok(self.0)
    }
}

impl IntoField<u64> for Rate {
    fn into_field(self) -> Result<u64, String> {
        Ok(self.0)
    }
}

impl IntoField<u64> for Bytes {
    fn into_field(self) -> Result<u64, String> {
        Ok(self.0)
    }
}

impl IntoField<u32> for Bytes {
    fn into_field(self) -> Result<u32, String> {
        u32::try_from(self.0)
            .map_err(|_| format!("must be at most {} bytes, got {}", u32::MAX, self.0))
    }
}

impl<T> IntoField<T> for T {
    fn into_field(self) -> Result<T, String> {
        Ok(self)
    }
}

/// A value of the unit type the table names read from the text of an override
/// (`transport = "rp_timer = 300us, min_rate = 1Gbps"`): the same units as in TOML, without
/// quotes.
pub(crate) trait FromText: Sized {
    fn from_text(text: &str) -> Result<Self, String>;
}

impl FromText for Time {
    fn from_text(text: &str) -> Result<Self, String> {
        crate::units::parse_time_ns(text).map(Time)
    }
}

impl FromText for Rate {
    fn from_text(text: &str) -> Result<Self, String> {
        crate::units::parse_rate_bps(text).map(Rate)
    }
}

impl FromText for Bytes {
    /// A size with a unit, or a plain integer of bytes (as TOML's integers).
    fn from_text(text: &str) -> Result<Self, String> {
        match text.parse::<u64>() {
            Ok(n) => Ok(Bytes(n)),
            Err(_) => crate::units::parse_bytes(text).map(Bytes),
        }
    }
}

impl FromText for f64 {
    fn from_text(text: &str) -> Result<Self, String> {
        text.parse()
            .map_err(|_| format!("`{text}` is not a number"))
    }
}

impl FromText for u32 {
    fn from_text(text: &str) -> Result<Self, String> {
        text.parse()
            .map_err(|_| format!("`{text}` is not a non-negative integer"))
    }
}

impl FromText for bool {
    fn from_text(text: &str) -> Result<Self, String> {
        match text {
            "1" | "true" => Ok(true),
            "0" | "false" => Ok(false),
            _ => Err(format!("`{text}` is not true/false")),
        }
    }
}

/// `text` read as the unit type `U` ([`FromText`]).
pub(crate) fn parse_text<U: FromText>(text: &str) -> Result<U, String> {
    U::from_text(text)
}

/// A row's range check refused the value of its field ([`crate::Transport::check_ranges`]):
/// the row's keys, for a message in the terms of whichever input set the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeError {
    /// The `Transport` field.
    pub field: &'static str,
    /// Its TOML key, `transport.<key>`.
    pub toml_key: &'static str,
    /// Its ConWeave key, if it has one.
    pub conweave_key: Option<&'static str>,
    /// What the check says (`must be > 0`).
    pub message: String,
}

// The range checks of the rows (`check fn`): each takes the value as the `Transport` field
// holds it, whichever input set it (a TOML key, a ConWeave key, an override), and says what
// is wrong in a message that reads after the key (`transport.rp_timer: must be > 0`).

/// `u_target`: HPCC's η in (0, 10].
pub(crate) fn u_target_range(v: &f64) -> Result<(), String> {
    if *v > 0.0 && *v <= 10.0 {
        Ok(())
    } else {
        Err(format!("must be in (0, 10], got {v}"))
    }
}

/// A gain or a fraction in (0, 1].
pub(crate) fn unit_fraction(v: &f64) -> Result<(), String> {
    if *v > 0.0 && *v <= 1.0 {
        Ok(())
    } else {
        Err(format!("must be in (0, 1], got {v}"))
    }
}

/// serde: whether `pfc_alpha` is the reference's 1/16.
#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if signature"
)]
pub(crate) fn is_default_pfc_alpha(v: &f64) -> bool {
    v.to_bits() == (1.0_f64 / 16.0).to_bits()
}

/// A dynamic-threshold alpha in (0, 64].
pub(crate) fn alpha_range(v: &f64) -> Result<(), String> {
    if *v > 0.0 && *v <= 64.0 {
        Ok(())
    } else {
        Err(format!("must be in (0, 64], got {v}"))
    }
}

/// A multiplier or a count of at least 1.
pub(crate) fn at_least_one(v: &u32) -> Result<(), String> {
    if *v >= 1 {
        Ok(())
    } else {
        Err("must be >= 1".to_owned())
    }
}

/// A period or a size that must be positive (a zero timer period would fire forever at one
/// instant; a zero cap would stop every sender).
pub(crate) fn positive(v: &u64) -> Result<(), String> {
    if *v > 0 {
        Ok(())
    } else {
        Err("must be > 0".to_owned())
    }
}

/// The switch buffer: positive (ConWeave's `BUFFER_SIZE 0`, a per-port automatic size, is
/// not modelled).
pub(crate) fn buffer_range(v: &u64) -> Result<(), String> {
    if *v > 0 {
        Ok(())
    } else {
        Err("must be > 0 (the reference's 0 = per-port automatic size is not modelled)".to_owned())
    }
}

/// A payload of 1..=9000 bytes (jumbo frames at most).
pub(crate) fn payload_range(v: &u32) -> Result<(), String> {
    if (1..=9000).contains(v) {
        Ok(())
    } else {
        Err(format!("must be in 1..=9000 bytes, got {v}"))
    }
}

/// A data header, RoCE's (`roce_header`) as uet's (`[transport.uet] header`): at least the
/// model's 48 B (Ethernet, IPv4, UDP, BTH), at most 512 B.
pub(crate) fn header_range(v: &u32) -> Result<(), String> {
    if (48..=512).contains(v) {
        Ok(())
    } else {
        Err(format!("must be in 48..=512 bytes, got {v}"))
    }
}

/// The PFC pause quantum: at least 1 µs (pause frames carry whole microseconds).
pub(crate) fn pause_time_range(v: &u64) -> Result<(), String> {
    if *v >= 1000 {
        Ok(())
    } else {
        Err(format!(
            "must be >= 1us (whole microseconds on the wire), got {v} ns"
        ))
    }
}

/// A behaviour of the reference that is not modelled: only `false` (ConWeave's 0).
pub(crate) fn only_false(v: &bool) -> Result<(), String> {
    if *v {
        Err("only false (0) is modelled".to_owned())
    } else {
        Ok(())
    }
}

/// Hands the table to `$consumer`.
macro_rules! transport_params {
    ($consumer:ident) => {
        $consumer! {
            /// Wire protocol: RoCE (every other key here) or UET (its own keys in `uet`). Left
            /// out of the config echo when RoCE, so that RoCE outputs stay as they were before
            /// UET existed.
            #[serde(skip_serializing_if = "TransportKind::is_roce")]
            kind: TransportKind = TransportKind::Roce,
                toml_by_hand kind: Option<KindSec>;
            /// Parameters of the UET transport (used when `kind` is UET; echoed unless default).
            #[serde(skip_serializing_if = "UetParams::is_default")]
            uet: UetParams = UetParams::default(),
                toml_by_hand uet: Option<Spanned<UetSec>>;
            /// Loss recovery (`RdmaNic::LossRecovery`, a factory of [`Recovery::type_id`];
            /// under uet the uet transport's, [`crate::Transport::ns3_settings`]).
            recovery: Recovery = Recovery::Gbn,
                toml_by_hand recovery: Option<RecoverySec>,
                ns3 Nic "LossRecovery" as component summary;
            /// Congestion control (`RdmaNic::CongestionControl`, a factory of [`Cc::type_id`]).
            cc: Cc = Cc::Dcqcn,
                toml_by_hand cc: Option<CcSec>,
                ns3 Nic "CongestionControl" as component summary;
            /// Window (`HAS_WIN`): each queue pair may have at most the fabric's largest BDP in
            /// flight. run.py turns it on for HPCC and DCTCP ([`Transport::run_py_window`]).
            has_win: bool = false,
                toml_by_hand window: Option<bool>;
            /// The window scales with the rate over the line rate (`VAR_WIN`).
            var_win: bool = false,
                toml_by_hand var_win: Option<bool>,
                ns3 Nic "VarWin" as flag;
            /// HPCC target utilisation η (`U_TARGET`).
            u_target: f64 = 0.95,
                toml "u_target" as f64 check u_target_range,
                conweave "U_TARGET" => real(),
                ns3 Hpcc "TargetUtil" as real;
            /// HPCC additive steps before a multiplicative one (`MI_THRESH`).
            mi_thresh: u32 = 0,
                toml "mi_thresh" as u32,
                conweave "MI_THRESH" => int_u32(),
                ns3 Hpcc "MiThresh" as uint;
            /// HPCC reacts to every ACK between per-RTT updates (`FAST_REACT`).
            fast_react: bool = false,
                toml "fast_react" as bool,
                conweave "FAST_REACT" => flag(),
                ns3 Hpcc "FastReact" as flag;
            /// HPCC keeps one reference rate per hop (`MULTI_RATE`).
            multi_rate: bool = false,
                toml "multi_rate" as bool,
                conweave "MULTI_RATE" => flag(),
                ns3 Hpcc "MultiRate" as flag;
            /// HPCC fast reactions skip hops with an empty queue (`SAMPLE_FEEDBACK`).
            sample_feedback: bool = false,
                toml "sample_feedback" as bool,
                conweave "SAMPLE_FEEDBACK" => flag(),
                ns3 Hpcc "SampleFeedback" as flag;
            /// Multiplier of the INT byte and queue units (`INT_MULTI`).
            int_multi: u32 = 1,
                toml "int_multi" as u32 check at_least_one,
                conweave "INT_MULTI" => int_u32(),
                ns3 Hpcc "IntMulti" as uint,
                ns3 Switch "IntMulti" as uint;
            /// DCTCP additive increase per window (`DCTCP_RATE_AI`).
            dctcp_rate_ai_bps: u64 = 1_000_000_000,
                toml "dctcp_rate_ai" as Rate,
                conweave "DCTCP_RATE_AI" => rate(),
                ns3 Dctcp "DctcpRateAI" as rate_bps;
            /// PFC on (lossless) or off.
            pfc_enabled: bool = true,
                toml "pfc" as bool,
                conweave "ENABLE_PFC" => flag(),
                ns3 Switch "PfcEnabled" as flag summary;
            /// ECN marking at switches (`ENABLE_QCN`).
            ecn_enabled: bool = true,
                toml "ecn" as bool,
                conweave "ENABLE_QCN" => flag(),
                ns3 Switch "EcnEnabled" as flag summary;
            /// Shared buffer per switch.
            buffer_bytes: u64 = 9 * 1024 * 1024,
                toml "buffer" as Bytes check buffer_range,
                conweave "BUFFER_SIZE" => scaled(1 << 20, "MiB"),
                ns3 Mmu "BufferSize" as uint summary;
            /// Alpha of the MMU's ingress dynamic threshold: an ingress queue pauses its
            /// upstream (PFC) above alpha x the free shared buffer (the reference's 1/16).
            /// Left out of the config echo at its default, so that earlier runs keep their
            /// sweep directories.
            #[serde(skip_serializing_if = "crate::transport_params::is_default_pfc_alpha")]
            pfc_alpha: f64 = 1.0 / 16.0,
                toml "pfc_alpha" as f64 check alpha_range,
                ns3 Mmu "IngressAlpha" as real;
            /// ECN thresholds per port rate.
            ecn: Vec<EcnEntry> = EcnEntry::run_py_map(),
                toml_by_hand ecn_thresholds: Option<Spanned<Vec<EcnSec>>>;
            /// DCQCN alpha update period.
            alpha_resume_interval_ns: u64 = 1_000,
                toml "alpha_resume_interval" as Time check positive,
                conweave "ALPHA_RESUME_INTERVAL" => scaled(1000, "us"),
                ns3 Dcqcn "AlphaResumeInterval" as time_ns summary;
            /// DCQCN minimum time between rate decreases.
            rate_decrease_interval_ns: u64 = 4_000,
                toml "rate_decrease_interval" as Time check positive,
                conweave "RATE_DECREASE_INTERVAL" => scaled(1000, "us"),
                ns3 Dcqcn "RateDecreaseInterval" as time_ns summary;
            /// DCQCN rate-increase timer.
            rp_timer_ns: u64 = 300_000,
                toml "rp_timer" as Time check positive,
                conweave "RP_TIMER" => scaled(1000, "us"),
                ns3 Dcqcn "RpTimer" as time_ns summary;
            /// DCQCN fast-recovery stages.
            fast_recovery_times: u32 = 1,
                toml "fast_recovery_times" as u32,
                conweave "FAST_RECOVERY_TIMES" => int_u32(),
                ns3 Dcqcn "FastRecoveryTimes" as uint summary;
            /// DCQCN alpha EWMA gain g.
            ewma_gain: f64 = 1.0 / 256.0,
                toml "ewma_gain" as f64 check unit_fraction,
                conweave "EWMA_GAIN" => real(),
                ns3 CongestionControl "EwmaGain" as real summary;
            /// DCQCN additive increase step.
            rate_ai_bps: u64 = 40_000_000,
                toml "rate_ai" as Rate,
                conweave "RATE_AI" => rate(),
                ns3 CongestionControl "RateAI" as rate_bps summary;
            /// DCQCN hyper increase step.
            rate_hai_bps: u64 = 100_000_000,
                toml "rate_hai" as Rate,
                conweave "RATE_HAI" => rate(),
                ns3 CongestionControl "RateHAI" as rate_bps summary;
            /// DCQCN rate floor.
            min_rate_bps: u64 = 100_000_000,
                toml "min_rate" as Rate,
                conweave "MIN_RATE" => rate(),
                ns3 CongestionControl "MinRate" as rate_bps summary;
            /// DCQCN clamps the target rate on a cut.
            clamp_target_rate: bool = false,
                toml "clamp_target_rate" as bool,
                conweave "CLAMP_TARGET_RATE" => flag(),
                ns3 Dcqcn "ClampTargetRate" as flag summary;
            /// Rate after the first CNP of a QP, as a fraction of line rate
            /// (`RdmaDcqcn::RateOnFirstCnp`).
            rate_on_first_cnp: f64 = 1.0,
                toml "rate_on_first_cnp" as f64 check unit_fraction,
                ns3 Dcqcn "RateOnFirstCnp" as real summary;
            /// ACK once per this many packets (`L2_ACK_INTERVAL`).
            ack_interval_packets: u32 = 1,
                toml "ack_interval_packets" as u32 check at_least_one,
                conweave "L2_ACK_INTERVAL" => int_u32(),
                ns3 Nic "L2AckInterval" as uint summary;
            /// Chunk size for ACK milestones (`L2_CHUNK_SIZE`).
            l2_chunk_bytes: u32 = 4000,
                toml "l2_chunk" as Bytes,
                conweave "L2_CHUNK_SIZE" => int_u32(),
                ns3 GoBackN "L2ChunkSize" as uint summary;
            /// Go-Back-N restarts the whole message (`L2_BACK_TO_ZERO`; only false is modelled).
            l2_back_to_zero: bool = false,
                toml "l2_back_to_zero" as bool check only_false,
                conweave "L2_BACK_TO_ZERO" => flag();
            /// Pace data by the QP rate (`RATE_BOUND`).
            rate_bound: bool = true,
                toml "rate_bound" as bool,
                conweave "RATE_BOUND" => flag(),
                ns3 Nic "RateBound" as flag summary;
            /// Payload bytes per data packet (`PACKET_PAYLOAD_SIZE`).
            payload_bytes: u32 = 1000,
                toml "payload" as Bytes check payload_range,
                conweave "PACKET_PAYLOAD_SIZE" => int_u32(),
                ns3 Nic "PayloadSize" as uint summary;
            /// Header bytes of a RoCE data packet: 48 is the HPCC lineage's (14 L2 + 20 IPv4 +
            /// 8 UDP + 6 sequence and priority: ConWeave's), 52 SimAI's (its sequence number is
            /// 64-bit: `SimpleSeqTsHeader`), the default where `SimAI.conf` is read.
            roce_header_bytes: u32 = 48,
                toml "roce_header" as Bytes check header_range,
                ns3 Nic "RoceHeaderSize" as uint summary;
            /// PFC pause quantum (`PAUSE_TIME`).
            pause_time_ns: u64 = 5_000,
                toml "pause_time" as Time check pause_time_range,
                conweave "PAUSE_TIME" => scaled(1000, "us"),
                ns3 Switch "PauseTime" as time_ns summary;
            /// Go-Back-N / NIC-SR retransmission timeout.
            l2_timeout_ns: u64 = 4_000_000,
                toml "l2_timeout" as Time,
                ns3 RoceRecovery "L2Timeout" as time_ns summary;
            /// Minimum time between NACKs of one QP.
            nack_interval_ns: u64 = 4_000,
                toml "nack_interval" as Time,
                ns3 RoceRecovery "NackInterval" as time_ns summary;
            /// IRN RTO with few packets in flight.
            irn_rto_low_ns: u64 = 100_000,
                toml "irn_rto_low" as Time,
                ns3 Irn "IrnRtoLow" as time_ns summary;
            /// IRN RTO otherwise.
            irn_rto_high_ns: u64 = 320_000,
                toml "irn_rto_high" as Time,
                ns3 Irn "IrnRtoHigh" as time_ns summary;
            /// IRN in-flight cap.
            irn_bdp_bytes: u64 = 104_000,
                toml "irn_bdp" as Bytes check positive,
                ns3 Irn "IrnBdp" as uint summary;
            /// IRN out-of-order threshold under spraying (0 = off; Hopper's fix).
            irn_ooo_threshold: u32 = 0,
                toml "irn_ooo_threshold" as u32,
                ns3 Irn "IrnOooThreshold" as uint summary;
            /// IRN: data sent after a path change travels in a PSN space of its own, as in the
            /// queue pair that probed the path (the Hopper paper, §3.3; `rdma-recovery-irn.h`).
            irn_qp_per_path: bool = false,
                toml "irn_qp_per_path" as bool,
                ns3 Irn "IrnQpPerPath" as flag;
            /// Fix of the ACK-milestone quirk (every in-order packet ACKed); false reproduces
            /// the reference.
            ack_milestone_fix: bool = false,
                toml "ack_milestone_fix" as bool,
                ns3 GoBackN "AckMilestoneFix" as flag summary;
            /// Reference quirk: an out-of-order NACK carries a CNP. No effect under `nic-sr`,
            /// where every NACK cuts the rate by design (the Themis paper, §2.2); use
            /// `cc = "none"` to study NIC-SR without rate cuts.
            nack_carries_cnp: bool = true,
                toml "nack_carries_cnp" as bool,
                ns3 RoceRecovery "NackCarriesCnp" as flag summary;
            /// Reference quirk of the MMU headroom sum (`rdma-lb.rst`, "Switch buffer, PFC and
            /// ECN").
            headroom_sum_quirk: bool = true,
                toml "headroom_sum_quirk" as bool,
                ns3 Mmu "HeadroomSumQuirk" as flag summary;
            /// ACKs and NACKs ride every switch's highest-priority queue, outside the MMU (the
            /// reference's; SimAI's `ACK_HIGH_PRIO 1`); false: their flow's data queue, through
            /// the MMU, as SimAI's `ACK_HIGH_PRIO 0` (`RdmaSwitch::AckHighPriority`).
            ack_high_prio: bool = true,
                toml "ack_high_prio" as bool,
                ns3 Switch "AckHighPriority" as flag;
            /// Switches withdraw routes over failed links (`RdmaSwitch::WithdrawFailedPorts`).
            withdraw_failed_ports: bool = false,
                toml "withdraw_failed_ports" as bool,
                ns3 Switch "WithdrawFailedPorts" as flag summary;
            /// The reference's behaviours reproduced for lock-step agreement ([`Quirk`]).
            quirks: QuirkSet = QuirkSet::all(),
                toml_by_hand quirks: Option<Spanned<QuirksSec>>;
        }
    };
}
pub(crate) use transport_params;

/// Consumer: the `Transport` struct, its `Default` and [`crate::Transport::ns3_attributes`].
macro_rules! define_transport {
    ($(
        $(#[$meta:meta])*
        $field:ident : $ty:ty = $default:expr
        $(, toml_by_hand $hkey:ident : $htype:ty)?
        $(, toml $key:literal as $unit:ident $(check $check:ident)?)?
        $(, conweave $cw:literal => $cwparse:ident($($cwarg:expr),*))?
        $(, ns3 $object:ident $attr:literal as $kind:ident $($summary:ident)?)*
        ;
    )*) => {
        /// NIC, switch-buffer and congestion-control settings: the rows of
        /// `crate::transport_params` (defaults: ConWeave's `run.py` values for 100 Gbps).
        #[derive(Debug, Clone, PartialEq, Serialize)]
        pub struct Transport {
            $( $(#[$meta])* pub $field: $ty, )*
        }

        impl Default for Transport {
            fn default() -> Self {
                Transport { $( $field: $default, )* }
            }
        }

        impl Transport {
            /// The ns-3 attribute settings of the table's `ns3` clauses, in table order.
            #[must_use]
            pub fn ns3_attributes(&self) -> Vec<$crate::transport_params::Ns3Attribute> {
                use $crate::transport_params::{Ns3Attribute, Ns3Object, Ns3Value};
                vec![$( $(
                    Ns3Attribute {
                        object: Ns3Object::$object,
                        name: $attr,
                        value: Ns3Value::$kind(self.$field),
                        summary_key: $crate::transport_params::summary_key!($field $($summary)?),
                    },
                )* )*]
            }

            /// The rows' range checks (`check fn`) on this transport's values, in table
            /// order: the first value refused. Run on the scenario after every input (TOML,
            /// ConWeave config, overrides) is merged; the parsers also run a row's check
            /// when they read its key, to name the line.
            ///
            /// # Errors
            /// The first value a row's check refuses, with the row's keys.
            pub fn check_ranges(&self) -> Result<(), $crate::transport_params::RangeError> {
                $( $( $(
                    $crate::transport_params::$check(&self.$field).map_err(|message| {
                        $crate::transport_params::RangeError {
                            field: stringify!($field),
                            toml_key: concat!("transport.", $key),
                            conweave_key: Self::conweave_key(stringify!($field)),
                            message,
                        }
                    })?;
                )? )? )*
                Ok(())
            }

            /// The range check of the row of `field` on its value (`Ok` for a field
            /// without one).
            pub(crate) fn check_field(&self, field: &str) -> Result<(), String> {
                match field {
                    $( $( $(
                        stringify!($field) => $crate::transport_params::$check(&self.$field),
                    )? )? )*
                    _ => Ok(()),
                }
            }

            /// The ConWeave key of the row of `field`, if it has one.
            fn conweave_key(field: &str) -> Option<&'static str> {
                match field {
                    $( $( stringify!($field) => Some($cw), )? )*
                    _ => None,
                }
            }
        }
    };
}
pub(crate) use define_transport;

/// Consumer: `struct TransportSec` (`[transport]`: the hand-parsed keys as the table types
/// them, one `Option<Spanned<Unit>>` per `toml` key) and `fn apply_table_keys`, which sets the
/// given `toml` keys after their checks.
macro_rules! define_toml_keys {
    ($(
        $(#[$meta:meta])*
        $field:ident : $ty:ty = $default:expr
        $(, toml_by_hand $hkey:ident : $htype:ty)?
        $(, toml $key:literal as $unit:ident $(check $check:ident)?)?
        $(, conweave $cw:literal => $cwparse:ident($($cwarg:expr),*))?
        $(, ns3 $object:ident $attr:literal as $kind:ident $($summary:ident)?)*
        ;
    )*) => {
        /// `[transport]`: the table's keys (`crate::transport_params`), in table order.
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(super) struct TransportSec {
            $(
                $( pub(super) $hkey: $htype, )?
                $(
                    #[serde(rename = $key)]
                    pub(super) $field: Option<Spanned<$unit>>,
                )?
            )*
            /// `simai_conf`: a SimAI.conf whose settings are the base of the section's (the
            /// one key outside the table: it sets many of the table's parameters at once).
            pub(super) simai_conf: Option<Spanned<String>>,
        }

        /// Sets every table key given in `t` on `out`, in table order, after its row's check
        /// (the error names the key's line).
        fn apply_table_keys(cx: &Cx<'_>, t: &TransportSec, out: &mut Transport) -> Result<()> {
            $( $(
                if let Some(v) = &t.$field {
                    let value: $ty = IntoField::into_field(*v.get_ref())
                        .and_then(|f| {
                            $( $crate::transport_params::$check(&f)?; )?
                            Ok(f)
                        })
                        .map_err(|m| cx.err(v, concat!("transport.", $key), ErrorKind::Value, m))?;
                    out.$field = value;
                }
            )? )*
            Ok(())
        }
    };
}
pub(crate) use define_toml_keys;

/// Consumer: `TABLE_KEYS` and `fn set_table_key_from_text` of the `transport` override
/// (`overrides.rs`): the table's TOML keys, set from the text of an override.
macro_rules! define_override_keys {
    ($(
        $(#[$meta:meta])*
        $field:ident : $ty:ty = $default:expr
        $(, toml_by_hand $hkey:ident : $htype:ty)?
        $(, toml $key:literal as $unit:ident $(check $check:ident)?)?
        $(, conweave $cw:literal => $cwparse:ident($($cwarg:expr),*))?
        $(, ns3 $object:ident $attr:literal as $kind:ident $($summary:ident)?)*
        ;
    )*) => {
        /// The table's TOML keys, in table order (what the `transport` override accepts).
        pub(crate) const TABLE_KEYS: &[&str] = &[$( $( $key, )? )*];

        /// Sets the table key `key` (its TOML name) of `out` from `text`, written as in
        /// TOML but without quotes (`300us`, `0.5`, `true`); `None` if the table has no such
        /// key. No range check: the validation checks the merged scenario
        /// (`Transport::check_ranges`), naming the override.
        fn set_table_key_from_text(
            out: &mut Transport,
            key: &str,
            text: &str,
        ) -> Option<std::result::Result<(), String>> {
            match key {
                $( $(
                    $key => Some(
                        $crate::transport_params::parse_text::<$unit>(text)
                            .and_then(IntoField::into_field)
                            .map(|v: $ty| out.$field = v),
                    ),
                )? )*
                _ => None,
            }
        }
    };
}
pub(crate) use define_override_keys;

/// Consumer: `fn table_key` of the ConWeave parser's `Settings`: sets the field of a
/// ConWeave key of the table; `Ok(false)` for any other key.
macro_rules! define_conweave_keys {
    ($(
        $(#[$meta:meta])*
        $field:ident : $ty:ty = $default:expr
        $(, toml_by_hand $hkey:ident : $htype:ty)?
        $(, toml $key:literal as $unit:ident $(check $check:ident)?)?
        $(, conweave $cw:literal => $cwparse:ident($($cwarg:expr),*))?
        $(, ns3 $object:ident $attr:literal as $kind:ident $($summary:ident)?)*
        ;
    )*) => {
        /// The table's ConWeave keys (`crate::transport_params`), each after its row's check
        /// (the error names the key's line).
        fn table_key(&mut self, l: &Line<'_>) -> Result<bool> {
            let field = match l.key {
                $( $( $cw => {
                    self.t.$field = l.$cwparse($($cwarg),*)?;
                    stringify!($field)
                } )? )*
                _ => return Ok(false),
            };
            self.t
                .check_field(field)
                .map_err(|m| l.err(ErrorKind::Value, m))?;
            Ok(true)
        }
    };
}
pub(crate) use define_conweave_keys;

/// `Some("field")` for an `ns3` clause marked `summary`, else `None`.
macro_rules! summary_key {
    ($field:ident) => {
        None
    };
    ($field:ident summary) => {
        Some(stringify!($field))
    };
}
pub(crate) use summary_key;

pub mod uet;

#[cfg(test)]
mod tests;
