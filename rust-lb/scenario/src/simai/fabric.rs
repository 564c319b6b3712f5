//! A SimAI topology as this simulator's fabric (issue 39: "servers of 8 GPUs with an NVSwitch
//! domain (NVLink as its own link class with its rate and latency), one NIC per GPU").
//!
//! In SimAI's ns-3 frontend (SimAI, NSDI '25; `SetupNetwork` and the NIC's route choice in its
//! `rdma-hw.cc`) a GPU node has two devices: its NVLink port to the server's NVSwitch and its NIC
//! port to a ToR; a queue pair uses the NVLink port iff its peer is in the same server, else the
//! NIC. The two ports serialise and queue independently. Here a GPU is two hosts, one per port:
//! * its NIC side keeps the GPU's node id `r` (so the ids of every GPU, NVSwitch and switch are
//!   SimAI's, and flow and output files name SimAI's nodes);
//! * its NVLink side is host `node_count + r`, linked to the NVSwitch with the NVLink link's
//!   rate and delay.
//!
//! [`SimAiFabric::endpoints`] picks the pair of hosts a transfer between two ranks uses, by
//! SimAI's rule. A GPU with no NVLink link has no NVLink side (its same-server peers are reached
//! through the NIC, as SimAI would route them).
//!
//! **Multi-homed GPUs** (SimAI's dual-ToR and dual-plane fabrics, `gen_Topo_Template.py
//! -topo AlibabaHPN [--dp]`: NIC port 0 of a GPU goes to ASW `asw_1[segment·g + rail]`, port 1
//! to `asw_2[…]`; single-plane, both ASW sets reach every PSW; dual-plane, `asw_1` reaches only
//! the first half of the PSWs and `asw_2` the second). SimAI's ns-3 frontend gives such a GPU one
//! RDMA NIC (`RdmaHw`) over one device per NIC link and one address; a queue pair's device is
//! chosen once, at its creation, by `RdmaHw::GetNicIdxOfQp` (ns-3's `Hash32` of the queue
//! pair's (sip, dip, sport, dport) modulo the number of the GPU's routes to the destination,
//! indexing them in route order); the receiver sends its ACKs on the device its receive queue
//! pair hashes to the same way (`GetNicIdxOfRxQp`), and the switches route to the GPU's one
//! address over every ToR it is linked to. Here the GPU's NIC side is one host with one link
//! per NIC link, in file order (its NIC's ports; `RdmaNic::AddPort` and
//! `RdmaFabricHelper::SetHostPortRoutes` in the ns-3 module, doc/rdma-lb.rst "SimAI inputs").
//! Refused: NIC links of one GPU with different rates (SimAI paces each queue pair at its
//! device's rate; our NIC has one line rate) and two NIC links of one GPU to the same switch
//! (SimAI keeps only the last in its neighbour map).
//!
//! Not modelled (refused with the line of the link): two NVLink links and GPU-to-GPU links.
//! SimAI's NVSwitches generate no ECN and no PFC; our switches mark by their port rate's ECN
//! thresholds (give the NVLink rate a threshold pair that is never reached to keep them silent).

use super::topology::{GpuType, LinkClass, SimAiTopology};
use crate::model::{Flow, Link, Topology};

/// The fabric built from a SimAI topology and where each rank's two sides are.
#[derive(Debug, Clone, PartialEq)]
pub struct SimAiFabric {
    /// The fabric: SimAI's nodes, then one NVLink-side host per GPU that has NVLink.
    pub topology: Topology,
    /// GPUs (ranks `0..gpus`).
    pub gpus: u32,
    /// GPUs per server.
    pub gpus_per_server: u32,
    /// The GPU type of the topology's header, if SimAI knows it (its NCCL model's choice of
    /// NVLS, [`super::nvls::applies`]).
    pub gpu_type: Option<GpuType>,
    /// The NVSwitches (ids `gpus..gpus + count`, one per server in SimAI's numbering).
    nvswitches: u32,
    /// Per rank: its NVLink-side host, if it has an NVLink link.
    nvlink_host: Vec<Option<u32>>,
    /// Per rank: its number of NIC links (its NIC's ports).
    nic_ports: Vec<u32>,
    /// The largest rate of a GPU's NIC links, bit/s (0 without NIC links).
    nic_rate_bps: u64,
}

impl SimAiFabric {
    /// Builds the fabric of `t`.
    ///
    /// # Errors
    /// `line N: message` for a link this model cannot build (module docs).
    pub fn build(t: &SimAiTopology) -> Result<SimAiFabric, (usize, String)> {
        let gpus = t.gpu_count();
        // Per GPU: its first NIC link's rate and the switches its NIC links reach.
        let mut nic: Vec<(u64, Vec<u32>)> = vec![(0, Vec::new()); gpus as usize];
        let mut nvlink_host = vec![None; gpus as usize];
        let mut links = Vec::with_capacity(t.links.len());
        for l in &t.links {
            let gpu_end = [l.a, l.b].into_iter().find(|&n| n < gpus);
            let (mut a, mut b) = (l.a, l.b);
            match (l.class, gpu_end) {
                (LinkClass::Direct, _) => {
                    return Err((
                        l.line,
                        format!(
                            "GPU {} to GPU {}: direct GPU links are not modelled",
                            l.a, l.b
                        ),
                    ));
                }
                (LinkClass::NvLink, Some(g)) => {
                    let side = t.node_count.saturating_add(g);
                    let slot = nvlink_host
                        .get_mut(g as usize)
                        .ok_or((l.line, String::new()))?;
                    if slot.replace(side).is_some() {
                        return Err((
                            l.line,
                            format!("GPU {g} has a second NVLink link: one NVSwitch per GPU"),
                        ));
                    }
                    if a == g {
                        a = side;
                    } else {
                        b = side;
                    }
                }
                (LinkClass::Nic, Some(g)) => {
                    let (rate, switches) =
                        nic.get_mut(g as usize).ok_or((l.line, String::new()))?;
                    let sw = if l.a == g { l.b } else { l.a };
                    if switches.is_empty() {
                        *rate = l.rate_bps;
                    } else if l.rate_bps != *rate {
                        return Err((
                            l.line,
                            format!(
                                "GPU {g} has NIC links of different rates ({} and {} bit/s): \
                                 the NIC ports of a GPU must have one rate",
                                *rate, l.rate_bps
                            ),
                        ));
                    }
                    if switches.contains(&sw) {
                        return Err((
                            l.line,
                            format!("GPU {g} has a second NIC link to switch {sw}"),
                        ));
                    }
                    switches.push(sw);
                }
                _ => {}
            }
            links.push(Link {
                a,
                b,
                rate_bps: l.rate_bps,
                delay_ns: l.delay_ns,
                error_rate: l.error_rate,
            });
        }
        let extra = u32::try_from(nvlink_host.iter().flatten().count()).unwrap_or(u32::MAX);
        // NVLink sides are numbered node_count + rank; with a GPU lacking NVLink the ids would
        // leave a hole, which the fabric does not allow.
        if extra != 0 && extra != gpus {
            let g = nvlink_host.iter().position(Option::is_none).unwrap_or(0);
            return Err((
                0,
                format!("GPU {g} has no NVLink link while others have one"),
            ));
        }
        let mut switch_ids = t.nvswitch_ids.clone();
        switch_ids.extend(&t.switch_ids);
        Ok(SimAiFabric {
            topology: Topology {
                node_count: t.node_count.saturating_add(extra),
                switch_ids,
                links,
                port_rates: Vec::new(),
                endpoint_switch_ids: Vec::new(),
            },
            gpus,
            gpus_per_server: t.gpus_per_server,
            gpu_type: t.gpu_type,
            nvswitches: u32::try_from(t.nvswitch_ids.len()).unwrap_or(u32::MAX),
            nvlink_host,
            nic_ports: nic
                .iter()
                .map(|(_, s)| u32::try_from(s.len()).unwrap_or(u32::MAX))
                .collect(),
            nic_rate_bps: nic.iter().map(|(r, _)| *r).max().unwrap_or(0),
        })
    }

    /// The number of NIC ports of rank `r` (its NIC links; 2 on SimAI's dual-ToR and dual-plane
    /// fabrics), 0 for an unknown rank.
    #[must_use]
    pub fn nic_ports(&self, r: u32) -> u32 {
        self.nic_ports.get(r as usize).copied().unwrap_or(0)
    }

    /// The largest rate of a GPU's NIC links (the scale-out network's host rate), bit/s; 0
    /// when no GPU has one.
    #[must_use]
    pub fn nic_rate_bps(&self) -> u64 {
        self.nic_rate_bps
    }

    /// The rates of the NVLink links (a GPU's NVLink side to its NVSwitch), each once, ascending.
    #[must_use]
    pub fn nvlink_rates(&self) -> Vec<u64> {
        let mut rates: Vec<u64> = self
            .topology
            .links
            .iter()
            .filter(|l| {
                self.nvlink_host
                    .iter()
                    .flatten()
                    .any(|&h| h == l.a || h == l.b)
            })
            .map(|l| l.rate_bps)
            .collect();
        rates.sort_unstable();
        rates.dedup();
        rates
    }

    /// The ends, in this fabric, of SimAI's link `a`-`b`: a GPU's NVLink link starts at its
    /// NVLink side here; any other link keeps SimAI's ids.
    #[must_use]
    pub fn link_ends(&self, a: u32, b: u32) -> (u32, u32) {
        let side = |g: u32| self.nvlink_host.get(g as usize).copied().flatten();
        let linked = |x: u32, y: u32| {
            self.topology
                .links
                .iter()
                .any(|l| (l.a == x && l.b == y) || (l.a == y && l.b == x))
        };
        match (side(a), side(b)) {
            (Some(s), _) if linked(s, b) => (s, b),
            (_, Some(s)) if linked(a, s) => (a, s),
            _ => (a, b),
        }
    }

    /// The (sender, receiver) hosts of a transfer from rank `src` to rank `dst`: their NVLink
    /// sides if both are in one server and have NVLink, else their NIC sides (the rank ids).
    /// An NVSwitch ([`Self::nvswitch_of`]) is its own end, and the GPU its NVLink side.
    #[must_use]
    pub fn endpoints(&self, src: u32, dst: u32) -> (u32, u32) {
        let side = |r: u32| self.nvlink_host.get(r as usize).copied().flatten();
        if self.is_nvswitch(dst) {
            return (side(src).unwrap_or(src), dst);
        }
        if self.is_nvswitch(src) {
            return (src, side(dst).unwrap_or(dst));
        }
        let same_server =
            self.gpus_per_server != 0 && src / self.gpus_per_server == dst / self.gpus_per_server;
        match (same_server, side(src), side(dst)) {
            (true, Some(a), Some(b)) => (a, b),
            _ => (src, dst),
        }
    }

    /// The NVSwitch of server `server` (SimAI's numbering: node `gpus + server`), if the
    /// topology has one.
    #[must_use]
    pub fn nvswitch_of(&self, server: u32) -> Option<u32> {
        (server < self.nvswitches).then(|| self.gpus + server)
    }

    /// Whether node `id` is an NVSwitch.
    fn is_nvswitch(&self, id: u32) -> bool {
        id >= self.gpus && id - self.gpus < self.nvswitches
    }

    /// The NVSwitches that `flows` start or end at (NVLS), ascending: the fabric's endpoint
    /// switches ([`Topology::endpoint_switch_ids`]).
    #[must_use]
    pub fn endpoint_nvswitches(&self, flows: &[Flow]) -> Vec<u32> {
        let mut ids: Vec<u32> = flows
            .iter()
            .flat_map(|f| [f.src, f.dst])
            .filter(|&n| self.is_nvswitch(n))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

#[cfg(test)]
mod tests;
