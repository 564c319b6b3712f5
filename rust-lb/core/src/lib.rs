//! # rdma-lb-core: load balancing for RDMA fabrics, as pure functions of their inputs
//!
//! This crate holds the algorithms of five papers (Whack-a-Mole, Themis, REPS, Hopper, PLTS)
//! and their baselines (ECMP, oblivious spraying, FlowBender, adaptive routing) with no
//! simulator, no I/O and no global state.
//!
//! ## Contract
//! * **Time is passed in.** Every call that needs the time takes a [`SimTime`] (nanoseconds of
//!   simulated time). Nothing here reads a clock.
//! * **Randomness is passed in.** Every algorithm that draws random numbers owns a [`SimRng`]
//!   seeded by its caller (in ns-3, from an ns-3 random stream), so a run is a function of
//!   (config, seed).
//! * **Units live in types and names**: [`SimTime`]/[`SimDuration`] are nanoseconds,
//!   [`Entropy`] is the 16-bit value switches hash (the RoCEv2 UDP source port), [`Psn`] a
//!   packet sequence number; raw integers carry their unit in their name (`*_ns`, `*_bytes`).
//! * **Errors at construction, never on the hot path.** Configs are parsed and validated once
//!   ([`config`], with the errors and range checks of [`error`]); per-packet methods are
//!   infallible and written not to panic (the crate denies `unwrap`, `expect`, `panic!` and
//!   slice indexing outside tests).
//! * **Names defined once.** [`Algorithm`] is the single list of algorithm names used by
//!   configs, ns-3 attributes, result folders and plot legends.
//!
//! ## Layout
//! * [`host`]: sender-NIC path selectors (one per queue pair), trait [`host::PathSelector`].
//! * [`switch`]: per-switch egress choosers, trait [`switch::EgressChooser`].
//! * [`hash`]: the switch ECMP hash (MurmurHash3 x86-32, as the reference simulator uses).
#![forbid(unsafe_code)]

pub mod algorithm;
pub mod config;
pub mod error;
pub mod hash;
pub mod host;
mod params;
pub mod registry;
pub mod rng;
pub mod scheme;
pub mod switch;
pub mod time;
pub mod units;

pub use algorithm::{Algorithm, Side};
pub use config::{HostLbConfig, SwitchLbConfig};
pub use error::ConfigError;
pub use rng::SimRng;
pub use time::{SimDuration, SimTime};
pub use units::{Entropy, Psn};
