//! SimAI's NVLS all-reduce: a tensor-parallel all-reduce reduced in the server's NVSwitch
//! (NCCL's NVLink SHARP; SimAI, NSDI '25, with the environment variable `AS_NVLS_ENABLE=1`).
//!
//! What SimAI does (`MockNcclGroup::get_algo_proto_info` and
//! `MockNcclGroup::genAllreduceNVLSFlowModels` in SimAI's
//! `astra-sim-alibabacloud/astra-sim/system/MockNcclGroup.cc`, the flows' progress in
//! `NcclTreeFlowModel.cc`):
//! * **When.** An all-reduce in a TP group of 8 or more ranks on H100 / H800 GPUs (the topology
//!   header's type); every other collective and group stays on rings. SimAI builds the flows
//!   only for a group inside one server; for a group over several servers it builds none, and
//!   the collective never ends: refused here ([`check`]).
//! * **Flows.** The buffer is cut into [`CHUNKS`] chunks of `size / 4` bytes (not divided by
//!   the ranks). Per chunk, every rank sends its chunk to the server's NVSwitch (an upload), and
//!   the NVSwitch sends a chunk to every rank (a download) once all of the chunk's uploads have
//!   completed: 8 unicast flows each way, no multicast, no reduction delay.
//! * **Order.** A rank's upload of chunk `c + 1` waits until its upload of chunk `c` has *sent*
//!   its last byte (SimAI's per-pair send queue, `PacketSentFinshed`), not until it completes.
//!   Every flow then waits the send latency, as any SimAI flow ([`super::iteration`]).
//! * **The NVSwitch** of server `s` is node `gpus + s`, an RDMA endpoint beside its switch
//!   (SimAI gives every NVSwitch an RDMA NIC): [`super::SimAiFabric`] lists it in
//!   [`crate::model::Topology::endpoint_switch_ids`].
//!
//! Checked against SimAI's own NVLS run of the micro example
//! (`data/simai/reference/case1_microAllReduce_8g_nvls`): its 128 flows, their pairs and sizes
//! (this crate's tests), their starts and FCTs to the nanosecond with quirk `time-truncation`
//! (ctest `reference-simai`).
//!
//! Deviations: SimAI's chunk size is a C `int`, so a chunk of 2 GiB or more overflows there;
//! refused here ([`check`]).

use super::groups::Group;
use super::nccl::{Hop, NcclFlow};
use super::topology::GpuType;
use super::workload::{CommGroup, CommKind};

/// The chunks SimAI cuts an NVLS all-reduce into.
pub const CHUNKS: u32 = 4;

/// The smallest group SimAI runs as NVLS.
pub const MIN_RANKS: usize = 8;

/// Whether SimAI with `AS_NVLS_ENABLE=1` runs `kind` in a group of `group` kind and `ranks`
/// ranks on `gpu` as NVLS (module docs).
#[must_use]
pub fn applies(kind: CommKind, group: CommGroup, ranks: usize, gpu: Option<GpuType>) -> bool {
    kind == CommKind::AllReduce
        && group == CommGroup::Tp
        && ranks >= MIN_RANKS
        && matches!(gpu, Some(GpuType::H100 | GpuType::H800))
}

/// Why SimAI's NVLS cannot run `bytes` in `group` (module docs), if it cannot.
#[must_use]
pub fn check(group: &Group, bytes: u64) -> Option<String> {
    if group.servers.len() != 1 {
        return Some(format!(
            "an NVLS all-reduce over {} servers: SimAI builds no flows for it (its collective \
             never ends); NVLS needs the TP group in one server",
            group.servers.len()
        ));
    }
    if bytes / u64::from(CHUNKS) > i32::MAX as u64 {
        return Some(format!(
            "an NVLS all-reduce of {bytes} bytes: SimAI's chunk of size / 4 overflows its int"
        ));
    }
    None
}

/// The flows of an NVLS all-reduce of `bytes` in `group` (one server's ranks) through
/// `nvswitch`, in SimAI's order: per chunk, the uploads in the group's rank order, then the
/// downloads. Step `2c` holds chunk `c`'s uploads, step `2c + 1` its downloads.
#[must_use]
pub fn decompose(group: &Group, bytes: u64, nvswitch: u32) -> Vec<NcclFlow> {
    let chunk = bytes / u64::from(CHUNKS);
    let n = group.ranks.len();
    let mut flows: Vec<NcclFlow> = Vec::with_capacity(2 * n * CHUNKS as usize);
    for c in 0..CHUNKS {
        let first_upload = flows.len();
        for (k, &rank) in group.ranks.iter().enumerate() {
            // The same rank's upload of the previous chunk: 2n flows back.
            let after_sent = first_upload.checked_sub(2 * n).map(|f| f + k);
            flows.push(NcclFlow {
                src: rank,
                dst: nvswitch,
                bytes: chunk,
                ring: 0,
                step: 2 * c,
                after: Vec::new(),
                after_sent,
                after_ready: None,
                hop: Hop::NvlsUpload,
                reduced: false,
            });
        }
        let uploads: Vec<usize> = (first_upload..first_upload + n).collect();
        for &rank in &group.ranks {
            flows.push(NcclFlow {
                src: nvswitch,
                dst: rank,
                bytes: chunk,
                ring: 0,
                step: 2 * c + 1,
                after: uploads.clone(),
                after_sent: None,
                after_ready: None,
                hop: Hop::NvlsDownload,
                reduced: false,
            });
        }
    }
    flows
}

#[cfg(test)]
mod tests;
