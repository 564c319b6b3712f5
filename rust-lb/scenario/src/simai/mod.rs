//! SimAI's input files, parsed (issue 39: SimAI inputs should run unchanged).
//!
//! SimAI (Wang et al., NSDI '25; <https://github.com/aliyun/SimAI>, network backend
//! ns-3-alibabacloud) simulates LLM training: a *workload* file (written by AICB) lists the
//! layers of one iteration with their compute times and collectives; a *topology* file (written
//! by SimAI's `gen_Topo_Template.py`) lists GPUs, NVSwitches, network switches and links. The
//! formats here are the ones the simulator *reads* (not a spec; SimAI has none), as of SimAI
//! commit `cef83f9d`:
//! * [`workload`]: `Workload::initialize_workload` in
//!   `astra-sim-alibabacloud/astra-sim/workload/Workload.cc`;
//! * [`topology`]: `SetupNetwork` in
//!   `astra-sim-alibabacloud/astra-sim/network_frontend/ns3/common.h`;
//! * [`groups`]: the parallel groups (TP, DP, EP, DP_EP) its NCCL model builds from the
//!   workload header and the topology (`MockNcclGroup`);
//! * [`nccl`]: a collective in a group as the point-to-point flows of its NCCL model (rings);
//! * [`pxn`]: its PXN option (`AS_PXN_ENABLE=1`), cross-server ring hops relayed on the
//!   destination's rail;
//! * [`nvls`]: its NVLS option (`AS_NVLS_ENABLE=1`), a TP all-reduce through the NVSwitch;
//! * [`fabric`]: a topology as this simulator's fabric (a GPU's NVLink and NIC ports as two
//!   hosts) and the hosts a transfer between two ranks uses;
//! * [`iteration`]: one training iteration as flows with their dependencies and compute;
//! * [`report`]: SimAI's per-layer result file (`ncclFlowModel_EndToEnd.csv`) from an
//!   iteration's flow completions;
//! * [`conf`]: `SimAI.conf`, `ReadConf` in the same `common.h` (HPCC-style `KEY value` lines;
//!   the keys shared with ConWeave's configs are read by [`crate::conweave`]'s code).
//!
//! Both parsers follow this crate's conventions: `parse_*_str(name, text)` needs no file,
//! `parse_*_file(path)` reads one, and every error is a [`ScenarioError`](crate::ScenarioError)
//! naming `file:line: field`. SimAI reads its files token by token and silently accepts much
//! that it then misinterprets; these parsers are line based and reject such input instead.
//! Each module documents where it deviates. Example inputs are under `data/simai/`.
//!
//! Not parsed here (yet): the analytical backend's `busbw.yaml`.

/// A fieldless enum whose variants each have one spelling in SimAI's files, written once:
/// generates the enum, `ALL`, `token()` and `from_token()`.
macro_rules! token_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $token:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The spelling in SimAI's files.
            #[must_use]
            pub const fn token(self) -> &'static str {
                match self {
                    $( $name::$variant => $token, )+
                }
            }

            /// The variant spelled exactly `text`.
            #[must_use]
            pub fn from_token(text: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.token() == text)
            }

            /// All spellings, comma-separated (for messages).
            #[must_use]
            pub fn tokens() -> String {
                Self::ALL.iter().map(|v| v.token()).collect::<Vec<_>>().join(", ")
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.token())
            }
        }
    };
}

pub mod conf;
pub mod fabric;
pub mod groups;
pub mod iteration;
pub mod nccl;
pub mod nvls;
pub mod pxn;
pub mod report;
pub mod topology;
pub mod workload;

pub use conf::{parse_conf_file, parse_conf_str, SimAiConf};
pub use fabric::SimAiFabric;
pub use groups::{Group, GroupSizes, Groups};
pub use iteration::{CollectiveLabel, Iteration};
pub use nccl::{decompose, decompose_with, rings, Hop, NcclFlow, NcclOptions};
pub use report::{EndToEndPlan, END_TO_END_CSV};

pub use topology::{
    parse_topology_file, parse_topology_str, GpuType, LinkClass, NodeKind, SimAiLink, SimAiTopology,
};
pub use workload::{
    parse_workload_file, parse_workload_str, Comm, CommGroup, CommKind, Layer, Phase, PhaseKind,
    Policy, Workload, WorkloadHeader,
};
