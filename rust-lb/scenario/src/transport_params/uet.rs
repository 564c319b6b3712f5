//! The table of the uet transport's parameters (`[transport.uet]`, [`crate::UetParams`]): the
//! sub-table of [`super`] for the settings used only when `kind = "uet"`, written and consumed
//! the same way. Each row is one field of `UetParams`, in its serialization order (the config
//! echo and the sweep directory names depend on it): its type and default, its TOML key with
//! the unit type the value is written in and a range check, and the ns-3 attributes it sets.
//!
//! [`uet_params`] hands the table to a consumer macro: `model.rs` builds the `UetParams`
//! struct, its `Default`, its attribute settings and its range checks from it
//! ([`define_uet`]); `toml_config/transport.rs` the keys of `[transport.uet]` and how they
//! are applied ([`define_uet_toml_keys`]). The attribute settings cross the bridge in one
//! list, which the scenario program applies only when the NICs run the uet transport; the
//! ns-3 attribute defaults read the rows' defaults (`RdmaTransportDefault`).
//!
//! A new uet knob is three files: its row here (`ns3 UetRecovery "Name" as kind`), the uet
//! transport's header (`ns3-module/model/rdma-recovery-uet.h`: the member) and its source
//! (`rdma-recovery-uet.cc`: the `AddAttribute` in its `GetTypeId`, with the default
//! `RdmaTransportDefault("ns3::RdmaUetRecovery", "Name")`, and the code that reads it). A knob
//! the switches or the NICs read is an attribute of theirs instead (`ns3 Switch ...`,
//! `ns3 Nic ...`: `rdma-switch.h`/`.cc`, `rdma-nic.h`/`rdma-nic-attributes.cc`). A knob whose
//! 0 means "derived from the fabric" is an attribute of `ns3::RdmaUetFabric`
//! (`ns3-module/model/rdma-uet-fabric.h`/`.cc`: the member, its `AddAttribute` and its rule
//! in `RdmaUetFabric::Derive`, the one place the derived values are computed, and where they
//! are set on the switches and NICs).
//!
//! One setting has no attribute: `switch_hash` picks how the fabric helper builds the
//! switches' ECMP (`RdmaFabricHelper::UseHtsimSwitches`, which also needs the run's seed and
//! flow count, and changes the entropy of ECMP flows), before any switch exists -- a choice of
//! construction, not a value of an object, so it crosses the bridge as its typed enum
//! (`rdmalb::bridge::SwitchHash`). And `payload` sets no attribute of its own: under
//! `kind = "uet"` it is the transport's payload (`transport.payload_bytes`, the NICs'
//! `PayloadSize`; the switches' follows it in `RdmaUetFabric`).
//!
//! Row grammar (`;`-terminated, in `UetParams` field order):
//! `#[doc] #[serde] field: Type = default, toml "key" as UnitType [check fn]`
//! `[, ns3 Object "Attribute" as kind]*` -- as in [`super`]'s table (the check a function of
//! this module, `fn(&Type) -> Result<(), String>`; a unit type that is not the field's type
//! converts by `IntoField`).

use super::RangeError;

pub(crate) use super::payload_range;

/// Hands the uet table to `$consumer`.
macro_rules! uet_params {
    ($consumer:ident) => {
        $consumer! {
            /// Payload bytes per data packet (htsim's MSS: 4150 B packets minus the 64 B
            /// header); under uet the transport's `payload_bytes` (the NICs' `PayloadSize`).
            payload_bytes: u32 = 4086,
                toml "payload" as Bytes check payload_range;
            /// Header bytes on the wire of a data packet, and the size of a trimmed packet
            /// (the model's data header is 48 B: Ethernet, IPv4, UDP, BTH; the rest is padding).
            header_bytes: u32 = 64,
                toml "header" as Bytes check header_range,
                ns3 Nic "UetHeaderSize" as uint,
                ns3 Switch "TrimmedSize" as uint;
            /// Switches trim data they cannot queue (header forwarded at the highest priority);
            /// NSCC's derived target delay depends on it.
            trimming: bool = false,
                toml "trimming" as bool,
                ns3 Switch "TrimEnabled" as flag,
                ns3 UetRecovery "NsccTrimming" as flag;
            /// Data queue of a switch egress port, in packets (0 = one BDP of the longest path).
            queue_packets: u32 = 0,
                toml "queue_packets" as u32,
                ns3 UetFabric "QueuePackets" as uint;
            /// ECN marking starts above this many queued packets (0 = queue / 4).
            ecn_kmin_packets: u32 = 0,
                toml "ecn_kmin_packets" as u32,
                ns3 UetFabric "EcnKminPackets" as uint;
            /// Every packet is marked above this many (0 = 3 x queue / 4).
            ecn_kmax_packets: u32 = 0,
                toml "ecn_kmax_packets" as u32,
                ns3 UetFabric "EcnKmaxPackets" as uint;
            /// Initial window in packets (0 = the cap).
            initial_window_packets: u32 = 0,
                toml "initial_window_packets" as u32,
                ns3 UetRecovery "InitialWindowPackets" as uint;
            /// Window cap as a multiple of the base BDP (htsim: 1.5).
            max_window_bdp: f64 = 1.5,
                toml "max_window_bdp" as f64 check window_bdp_range,
                ns3 UetRecovery "MaxWindowBdp" as real;
            /// Base RTT of every queue pair (0 = the fabric's largest unloaded RTT, and each
            /// pair's own for its window cap).
            base_rtt_ns: u64 = 0,
                toml "base_rtt" as Time,
                ns3 UetFabric "BaseRtt" as time_ns;
            /// Retransmission timeout (0 = base RTT + 4 x the drain time of one queue).
            rto_ns: u64 = 0,
                toml "rto" as Time,
                ns3 UetFabric "Rto" as time_ns;
            /// The link rate the derived queue, ECN thresholds, base RTT and RTO are sized for
            /// (0 = the largest bottleneck rate of a host pair: one rate, as htsim's
            /// `-linkspeed`). A fabric whose pairs differ in rate, such as a SimAI topology's
            /// NVLink beside its NICs, sizes them for its network: a SimAI topology's NIC rate
            /// when left out. Left out of the config echo at 0.
            #[serde(skip_serializing_if = "is_zero")]
            sizing_rate_bps: u64 = 0,
                toml "sizing_rate" as Rate,
                ns3 UetFabric "SizingRate" as rate_bps;
            /// How the switches hash flows onto equal-cost ports (no attribute: the module
            /// doc).
            switch_hash: SwitchHash = SwitchHash::FiveTuple,
                toml "switch_hash" as SwitchHashSec;
            /// SMaRTT's wait-to-decrease (the REPS paper, §3.0.1): an ECN-marked ACK cuts the
            /// window only while the moving average of the ACKs' ECN echoes is at least this
            /// (the paper's 0.25; 0 = off, every mark cuts: htsim's `mprdma` window, the
            /// default). Left out of the config echo when off, so that earlier runs keep their
            /// sweep directories.
            #[serde(skip_serializing_if = "UetParams::wtd_off")]
            wait_to_decrease: f64 = 0.0,
                toml "wait_to_decrease" as f64 check wtd_range,
                ns3 UetRecovery "WaitToDecrease" as real;
            /// Gain of that moving average per ACK (the REPS artifact's 0.05; the paper gives
            /// none).
            #[serde(skip_serializing_if = "UetParams::default_wtd_alpha")]
            wtd_alpha: f64 = 0.05,
                toml "wtd_alpha" as f64 check wtd_alpha_range,
                ns3 UetRecovery "WtdAlpha" as real;
            /// The sender's window rule. Left out of the config echo at its default.
            #[serde(skip_serializing_if = "UetCc::is_mprdma")]
            cc: UetCc = UetCc::Mprdma,
                toml "cc" as UetCcName,
                ns3 UetRecovery "Cc" as named;
            /// NSCC's target queuing delay in ns (htsim `-target_q_delay`; 0 = 0.75 x the
            /// network's RTT with trimming, 1 x without). Left out of the config echo at 0.
            #[serde(skip_serializing_if = "is_zero")]
            nscc_target_delay_ns: u64 = 0,
                toml "nscc_target_delay" as Time,
                ns3 UetRecovery "NsccTargetDelay" as time_ns;
            /// NSCC's quick-adapt gate (htsim `-qa_gate`): it acts when the bytes delivered in
            /// a window are below the cap / 2^gate. Left out of the config echo at 3.
            #[serde(skip_serializing_if = "UetParams::default_qa_gate")]
            nscc_qa_gate: u32 = 3,
                toml "nscc_qa_gate" as u32 check qa_gate_range,
                ns3 UetRecovery "NsccQaGate" as uint;
            /// The receiver coalesces ACKs: one per this many wire bytes accepted, and one at
            /// once for an ECN mark, a duplicate, the first packet and a packet asking for
            /// one, each with a 64-packet SACK bitmap (htsim `-sack_threshold`; the UEC
            /// htsim's 16,384, its default under htsim inputs). 0 = an ACK per packet (the
            /// REPS artifact's). Left out of the config echo at 0.
            #[serde(skip_serializing_if = "is_zero_u32")]
            ack_bytes: u32 = 0,
                toml "ack_bytes" as u32,
                ns3 UetRecovery "AckBytes" as uint;
            /// With `ack_bytes` > 0, which new packets carry the AR bit (their ACK leaves at
            /// once with its bitmap from the packet itself): `uec`, one after which the window
            /// has no room for another packet (the UEC htsim's, the default); `reps`, one that
            /// fills the window (the REPS artifact's; with `ack_bytes = 4000`, the artifact's
            /// ACKs). Left out of the config echo at `uec`.
            #[serde(skip_serializing_if = "UetAckRequest::is_uec")]
            ack_request: UetAckRequest = UetAckRequest::Uec,
                toml "ack_request" as UetAckRequestSec,
                ns3 UetRecovery "AckRequest" as named;
            /// RCCC: the receiver's pull pacer grants credit at this fraction of its line rate
            /// (htsim's `pull_rate_modifier`, 0.99, fixed there). Left out of the config echo
            /// at 0.99.
            #[serde(skip_serializing_if = "UetParams::default_pull_rate")]
            rccc_pull_rate: f64 = 0.99,
                toml "rccc_pull_rate" as f64 check pull_rate_range,
                ns3 UetRecovery "RcccPullRate" as real;
            /// RCCC: bytes of credit per pull, a multiple of 256 (htsim's 4 x 4096 B, fixed
            /// there whatever the MTU). Left out of the config echo at 16,384.
            #[serde(skip_serializing_if = "UetParams::default_credit_per_pull")]
            rccc_credit_per_pull_bytes: u32 = 16384,
                toml "rccc_credit_per_pull" as Bytes check credit_per_pull_range,
                ns3 UetRecovery "RcccCreditPerPull" as uint;
            /// What NSCC learns from an ACK or NACK: `every-ack`, every ACK's echoed send time
            /// is an RTT sample and a NACK's cumulative ACK credits nothing (ours, the
            /// default); `htsim`, the UEC htsim's `UecSrc::processAck`: an RTT sample only for
            /// a packet still outstanding whose first or (resent once) second transmission the
            /// ACK answers (`validateSendTs`; else the delay average, nothing updated), and a
            /// NACK's cumulatively acknowledged bytes credited at the next ACK. Left out of the
            /// config echo at `every-ack`.
            #[serde(skip_serializing_if = "UetNsccFeedback::is_every_ack")]
            nscc_feedback: UetNsccFeedback = UetNsccFeedback::EveryAck,
                toml "nscc_feedback" as UetNsccFeedbackSec,
                ns3 UetRecovery "NsccFeedback" as named;
            /// What takes bytes out of the sender's flight: `named-packets`, each packet an
            /// ACK or NACK acknowledges (ours, the default); `received-bytes`, the growth of
            /// the receiver's count of new data bytes that every ACK carries, so packets
            /// received out of order leave with the next ACK, named or not, and a NACK takes
            /// out only its trimmed packet (the UEC htsim's `UecSrc::processAck`). Left out of
            /// the config echo at `named-packets`.
            #[serde(skip_serializing_if = "UetInflight::is_named_packets")]
            inflight: UetInflight = UetInflight::NamedPackets,
                toml "inflight" as UetInflightSec,
                ns3 UetRecovery "Inflight" as named;
            /// When a switch port lets go of the data packet it sends: `start`, when its
            /// transmission starts (it leaves the queue's occupancy and is ECN-marked then, from
            /// the packets behind it; the model's switch, the default); `end`, when its last bit
            /// has left (it counts in the occupancy that trims and marks until then, and is
            /// marked then from the packets waiting behind it: the UEC htsim's
            /// `CompositeQueue`). Left out of the config echo at `start`.
            #[serde(skip_serializing_if = "UetQueueRelease::is_start")]
            queue_release: UetQueueRelease = UetQueueRelease::Start,
                toml "queue_release" as UetQueueReleaseSec,
                ns3 Switch "QueueRelease" as named;
            /// When a switch's full data queue refuses an arriving data packet (trimming on),
            /// the probability that the newest packet waiting in that queue is trimmed instead
            /// and the arrival is queued: 0, the arrival is always trimmed (the model's switch,
            /// the default); 0.5, the UEC htsim's `CompositeQueue::receivePacket`
            /// (`drand() < 0.5`: it trims its newest packet, `_enqueued_low.pop_front()`).
            /// Left out of the config echo at 0.
            #[serde(skip_serializing_if = "UetParams::default_trim_newest")]
            trim_newest_probability: f64 = 0.0,
                toml "trim_newest_probability" as f64 check probability_range,
                ns3 Switch "TrimNewestProbability" as real;
            /// The clock of serialization times on every port and of the NICs' pacing: `ns`,
            /// whole ns, rounded (the model's ns-3 time, the default: 64 B at 400 Gb/s take
            /// 1 ns); `ps`, htsim's bytes x 8 x 10^12 / rate in whole ps, each port carrying
            /// the fraction of a ns to the next frame it sends back to back (64 B at 400 Gb/s
            /// take 1.28 ns), so that a link's share of control packets is htsim's. Left out
            /// of the config echo at `ns`.
            #[serde(skip_serializing_if = "UetTxTime::is_ns")]
            tx_time: UetTxTime = UetTxTime::Ns,
                toml "tx_time" as UetTxTimeSec,
                ns3 Device "TxTime" as named,
                ns3 Nic "TxTime" as named;
            /// When a host port has both control packets (ACKs, NACKs, pulls) and data
            /// waiting: 0, control first always (the model's NIC, the default); N, data gets
            /// every (N + 1)th such turn (the UEC htsim's `UecNIC::doNextEvent`: 10, its
            /// control-to-data ratio of 10 to 1). Left out of the config echo at 0.
            #[serde(skip_serializing_if = "is_zero_u32")]
            control_turns: u32 = 0,
                toml "control_turns" as u32 check control_turns_range,
                ns3 Device "ControlTurns" as uint;
        }
    };
}
pub(crate) use uet_params;

// The range checks of the rows (`check fn`), on the value as the `UetParams` field holds it;
// the message reads after the key (`transport.uet.header: must be in 48..=512 bytes, got 40`).

/// The data header: [`super::header_range`], the check RoCE's header shares.
pub(crate) use super::header_range;

/// The window cap: (0, 100] base BDPs.
pub(crate) fn window_bdp_range(v: &f64) -> Result<(), String> {
    if *v > 0.0 && *v <= 100.0 {
        Ok(())
    } else {
        Err(format!("must be in (0, 100], got {v}"))
    }
}

/// Wait-to-decrease's threshold: [0, 1), 0 = off.
pub(crate) fn wtd_range(v: &f64) -> Result<(), String> {
    if (0.0..1.0).contains(v) {
        Ok(())
    } else {
        Err(format!("must be in [0, 1) (0 = off), got {v}"))
    }
}

/// A moving average's gain: (0, 1].
pub(crate) fn wtd_alpha_range(v: &f64) -> Result<(), String> {
    super::unit_fraction(v)
}

/// The NIC's control turns per data turn: 0..=1000.
pub(crate) fn control_turns_range(v: &u32) -> Result<(), String> {
    if *v <= 1000 {
        Ok(())
    } else {
        Err(format!(
            "must be in 0..=1000 (0 = control first always), got {v}"
        ))
    }
}

/// NSCC's quick-adapt gate: 0..=30 (a shift of the cap).
pub(crate) fn qa_gate_range(v: &u32) -> Result<(), String> {
    if *v <= 30 {
        Ok(())
    } else {
        Err(format!("must be in 0..=30, got {v}"))
    }
}

/// RCCC's pull rate: [0.01, 10] x the line rate.
pub(crate) fn pull_rate_range(v: &f64) -> Result<(), String> {
    if (0.01..=10.0).contains(v) {
        Ok(())
    } else {
        Err(format!("must be in [0.01, 10], got {v}"))
    }
}

/// A probability: in [0, 1].
pub(crate) fn probability_range(v: &f64) -> Result<(), String> {
    if (0.0..=1.0).contains(v) {
        Ok(())
    } else {
        Err(format!("must be in [0, 1], got {v}"))
    }
}

/// RCCC's credit per pull: a positive multiple of 256 B.
pub(crate) fn credit_per_pull_range(v: &u32) -> Result<(), String> {
    if *v > 0 && *v % 256 == 0 {
        Ok(())
    } else {
        Err(format!("must be a positive multiple of 256 B, got {v}"))
    }
}

/// A row's check refused a value of [`crate::UetParams`]: the row's TOML key
/// (`transport.uet.<key>`) and the message.
pub(crate) fn range_error(
    field: &'static str,
    toml_key: &'static str,
    message: String,
) -> RangeError {
    RangeError {
        field,
        toml_key,
        conweave_key: None,
        message,
    }
}

/// Consumer: the `UetParams` struct, its `Default`, `UetParams::ns3_attributes` and
/// `UetParams::check_ranges`.
macro_rules! define_uet {
    ($(
        $(#[$meta:meta])*
        $field:ident : $ty:ty = $default:expr,
            toml $key:literal as $unit:ident $(check $check:ident)?
            $(, ns3 $object:ident $attr:literal as $kind:ident)*
        ;
    )*) => {
        /// Parameters of [`TransportKind::Uet`]: the rows of
        /// `crate::transport_params::uet`. A zero means "derived from the fabric" by the
        /// scenario program (`RdmaUetFabric::Derive`; `ns3-module/doc/rdma-lb.rst`, "The UET
        /// transport").
        #[derive(Debug, Clone, PartialEq, Serialize)]
        pub struct UetParams {
            $( $(#[$meta])* pub $field: $ty, )*
        }

        impl Default for UetParams {
            fn default() -> Self {
                UetParams { $( $field: $default, )* }
            }
        }

        impl UetParams {
            /// The TOML keys of `[transport.uet]`, in table order.
            pub const TOML_KEYS: &'static [&'static str] = &[$( $key, )*];

            /// The ns-3 attribute settings of the rows' `ns3` clauses, in table order.
            #[must_use]
            pub fn ns3_attributes(&self) -> Vec<Ns3Attribute> {
                vec![$( $(
                    Ns3Attribute {
                        object: Ns3Object::$object,
                        name: $attr,
                        value: Ns3Value::$kind(self.$field),
                        summary_key: None,
                    },
                )* )*]
            }

            /// The rows' range checks on these values, in table order (run on the merged
            /// scenario; the TOML parser also runs a row's check at the key's line).
            ///
            /// # Errors
            /// The first value a row's check refuses, with the row's key.
            pub fn check_ranges(&self) -> Result<(), $crate::transport_params::RangeError> {
                $( $(
                    $crate::transport_params::uet::$check(&self.$field).map_err(|m| {
                        $crate::transport_params::uet::range_error(
                            stringify!($field),
                            concat!("transport.uet.", $key),
                            m,
                        )
                    })?;
                )? )*
                Ok(())
            }
        }
    };
}
pub(crate) use define_uet;

/// Consumer: `struct UetSec` (`[transport.uet]`: one `Option<Spanned<Unit>>` per row) and
/// `fn apply_uet_keys`, which sets the given keys after their checks (the error names the
/// key's line).
macro_rules! define_uet_toml_keys {
    ($(
        $(#[$meta:meta])*
        $field:ident : $ty:ty = $default:expr,
            toml $key:literal as $unit:ident $(check $check:ident)?
            $(, ns3 $object:ident $attr:literal as $kind:ident)*
        ;
    )*) => {
        /// `[transport.uet]`: the uet table's keys (`crate::transport_params::uet`).
        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(super) struct UetSec {
            $(
                #[serde(rename = $key)]
                pub(super) $field: Option<Spanned<$unit>>,
            )*
        }

        /// Sets every key given in `u` on `out`, in table order, after its row's check.
        fn apply_uet_keys(cx: &Cx<'_>, u: &UetSec, out: &mut UetParams) -> Result<()> {
            $(
                if let Some(v) = &u.$field {
                    let value: $ty = IntoField::into_field(v.get_ref().clone())
                        .and_then(|f| {
                            $( $crate::transport_params::uet::$check(&f)?; )?
                            Ok(f)
                        })
                        .map_err(|m| {
                            cx.err(v, concat!("transport.uet.", $key), ErrorKind::Value, m)
                        })?;
                    out.$field = value;
                }
            )*
            Ok(())
        }
    };
}
pub(crate) use define_uet_toml_keys;
