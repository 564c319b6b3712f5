"""FCT slowdown, defined once for the whole package (as the reference simulator and ConWeave's
fctAnalysis.py define it; ns3-module/doc/rdma-lb.rst, "Scenario driver and analysis").

slowdown = max(1, fct / ideal_fct), and

    ideal_fct = base_rtt + total_bytes * 8 / bottleneck_bw
    base_rtt  = 2 * hops * link_delay + hops * per_hop_bytes * 8 / bw   (transmission counted once)
    total_bytes = size + ceil(size / 1000) * 48                          (48 B header per packet)

Variant ``reference`` (default) reproduces the HPCC/ConWeave simulator: the per-hop
store-and-forward term uses 1000 B (the payload, without the 48 B of headers) whatever the flow
size, and the result is truncated to whole ns (integer arithmetic, as the reference writes it).
Variant ``fixed`` uses the first packet's real wire size, min(size, 1000) + 48 B, per hop and
keeps fractional ns.
"""

import math

PAYLOAD_BYTES = 1000  # PACKET_PAYLOAD_SIZE / MTU payload
HEADER_BYTES = 48  # L2 14 + IPv4 20 + UDP 8 + SeqTs 6 (no INT under DCQCN)
IDEAL_VARIANTS = ("reference", "fixed")


def total_wire_bytes(size_bytes):
    """Bytes on the wire for a flow of ``size_bytes`` payload: 48 B per (possibly partial) packet."""
    return size_bytes + math.ceil(size_bytes / PAYLOAD_BYTES) * HEADER_BYTES


def base_rtt_ns(hops, link_delay_ns=1000, bw_gbps=100.0, variant="reference", size_bytes=None):
    """Unloaded RTT of a path of ``hops`` links (host-switch-...-host) of equal bandwidth."""
    _check_variant(variant)
    if variant == "reference":
        per_hop = PAYLOAD_BYTES
        return 2 * hops * link_delay_ns + hops * (per_hop * 8 * 1_000_000_000 // int(bw_gbps * 1e9))
    if size_bytes is None:
        raise ValueError("variant 'fixed' needs size_bytes")
    per_hop = min(size_bytes, PAYLOAD_BYTES) + HEADER_BYTES
    return 2 * hops * link_delay_ns + hops * per_hop * 8 / bw_gbps


def ideal_fct_ns(size_bytes, hops, link_delay_ns=1000, bw_gbps=100.0, variant="reference"):
    """Ideal (unloaded, stand-alone) FCT of one flow, as the reference simulator computes it."""
    rtt = base_rtt_ns(hops, link_delay_ns, bw_gbps, variant, size_bytes)
    total = total_wire_bytes(size_bytes)
    if variant == "reference":
        return rtt + total * 8_000_000_000 // int(bw_gbps * 1e9)
    return rtt + total * 8 / bw_gbps


def slowdown(fct_ns, ideal_ns):
    """FCT slowdown: actual / ideal, floored at 1 (works on scalars and numpy arrays)."""
    import numpy as np

    ratio = np.asarray(fct_ns, dtype=float) / np.asarray(ideal_ns, dtype=float)
    out = np.maximum(1.0, ratio)
    return float(out) if out.ndim == 0 else out


def _check_variant(variant):
    if variant not in IDEAL_VARIANTS:
        raise ValueError(f"ideal-FCT variant must be one of {IDEAL_VARIANTS}, got {variant!r}")
