//! What a load-balancing scheme declares to the registry ([`crate::registry`]): its parameter
//! type, how it is checked, the capabilities the NIC and the fabric ask about, and how its
//! decider is built on the side where it decides. One small trait per role:
//!
//! * [`Scheme`]: every scheme (parameters, validation, capabilities);
//! * [`HostRole`]: a scheme deciding at the sender NIC builds one path selector per queue
//!   pair (see [`crate::host`]);
//! * [`SwitchRole`]: a scheme deciding at the switches builds one agent per switch (see
//!   [`crate::switch`]).
//!
//! Each scheme implements them in its own file; the registry's one row per scheme generates
//! the algorithm list, the parsing and the static dispatch from them. Nothing here names a
//! scheme, so no scheme depends on the list of schemes.

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::error::ParamError;
use crate::rng::{SharedGlibcRand, SimRng};
use crate::switch::ecmp::EcmpHash;

/// Where an algorithm makes its decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// At the sender NIC, per queue pair: it chooses the entropy of each data packet.
    Host,
    /// At switches, per packet: it chooses the egress port among the equal-cost candidates.
    Switch,
}

/// The parameters of a scheme that takes none: any key is an error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// Every scheme: its parameters and the capabilities others ask about.
pub trait Scheme {
    /// Its parameters, read from the `[lb] params` table (every key defaulted, unknown keys
    /// refused: `#[serde(deny_unknown_fields, default)]`).
    type Config: DeserializeOwned + Clone + std::fmt::Debug + PartialEq;

    /// Whether it sprays a queue pair over many paths and learns per packet from the ECN marks
    /// and RTTs echoed for each (a transport that leaves out-of-order arrivals unanswered
    /// starves it; the ns-3 scenario warns).
    const SPRAYS_ON_FEEDBACK: bool = false;
    /// Whether it keeps a queue pair on one path at a time and moves it on ECN or RTT feedback
    /// (thinned acknowledgements starve it; the ns-3 scenario warns).
    const MOVES_ON_FEEDBACK: bool = false;

    /// Checks the ranges of `config`.
    ///
    /// # Errors
    /// The first parameter out of range (the registry adds the algorithm's name).
    fn validate(config: &Self::Config) -> Result<(), ParamError>;
}

/// A scheme deciding at the sender NIC.
pub trait HostRole: Scheme {
    /// Its per-queue-pair selector: a [`crate::host::PathSelector`], held directly or boxed
    /// (a large one boxed keeps every queue pair's selector small).
    type Selector: Clone + std::fmt::Debug;

    /// The selector of a new queue pair; `rng` is the queue pair's own generator.
    fn selector(config: &Self::Config, rng: &mut SimRng) -> Self::Selector;
}

/// A scheme deciding at the switches (the NICs keep one entropy per flow).
pub trait SwitchRole: Scheme {
    /// Its per-switch agent: a [`crate::switch::SwitchAgent`], held directly (a
    /// [`crate::switch::Chooser`]) or boxed (flow tables).
    type Agent: Clone + std::fmt::Debug;

    /// The agent of switch `switch_id`; `ecmp` is that switch's flow hash, for schemes that
    /// fall back to it.
    fn agent(config: &Self::Config, switch_id: u32, ecmp: EcmpHash) -> Self::Agent;

    /// Makes `agent` draw from the reference simulator's one `rand()` stream (quirk
    /// `glibc-rand`); schemes that keep their own generator ignore it.
    fn share_reference_rand(_agent: &mut Self::Agent, _rand: SharedGlibcRand) {}
}
