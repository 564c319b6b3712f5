//! The switch ECMP hashes: the reference simulator's (ConWeave's ns-3 tree; `rdma-lb.rst`,
//! "Routing and ECMP") and the REPS
//! artifact's (htsim's FatTreeSwitch, [`bridge_hash`]).
//!
//! The reference hashes a 12-byte key `[sip, dip, sport | dport << 16]` (three little-endian
//! `u32` words) with MurmurHash3 x86-32, seeded by the switch's node id, and picks
//! `candidates[hash % n]`. This is our own implementation of the published MurmurHash3
//! algorithm (Austin Appleby, public domain), checked against its reference test vectors.

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

fn mix_k(k: u32) -> u32 {
    k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

fn fmix(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// Up to four bytes read as a little-endian word (missing high bytes are zero).
fn le_word(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .rev()
        .fold(0u32, |acc, &b| (acc << 8) | u32::from(b))
}

/// MurmurHash3 x86-32 of `data` with `seed`.
#[must_use]
pub fn murmur3_x86_32(data: &[u8], seed: u32) -> u32 {
    let mut h = seed;
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        h ^= mix_k(le_word(block));
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let k = tail
            .iter()
            .rev()
            .fold(0u32, |acc, &b| (acc << 8) | u32::from(b));
        h ^= mix_k(k);
    }
    // The length is mixed in modulo 2^32, as the reference does.
    #[allow(
        clippy::cast_possible_truncation,
        reason = "MurmurHash3 mixes the length mod 2^32"
    )]
    let len = data.len() as u32;
    fmix(h ^ len)
}

/// The reference's flow hash: MurmurHash3 over `[sip, dip, sport | dport << 16]`, seeded by
/// the switch id.
#[must_use]
pub fn flow_hash(sip: u32, dip: u32, sport: u16, dport: u16, switch_seed: u32) -> u32 {
    let ports = u32::from(sport) | (u32::from(dport) << 16);
    let mut key = [0u8; 12];
    for (dst, word) in key.chunks_exact_mut(4).zip([sip, dip, ports]) {
        dst.copy_from_slice(&word.to_le_bytes());
    }
    murmur3_x86_32(&key, switch_seed)
}

/// The hash of FreeBSD's `if_bridge` (Bob Jenkins' 1997 mix of three words, "Hash
/// Functions", Dr. Dobb's Journal), which the REPS artifact's htsim switches use for ECMP:
/// `a = golden + t1`, `b = golden + t3`, `c = t2`, one mix, the result is `c`. Our own
/// implementation of the published mix.
#[must_use]
pub fn bridge_hash(t1: u32, t2: u32, t3: u32) -> u32 {
    const GOLDEN: u32 = 0x9e37_79b9;
    let mut a = GOLDEN.wrapping_add(t1);
    let mut b = GOLDEN.wrapping_add(t3);
    let mut c = t2;
    for (sa, sb, sc) in [(13, 8, 13), (12, 16, 5), (3, 10, 15)] {
        a = a.wrapping_sub(b).wrapping_sub(c) ^ (c >> sa);
        b = b.wrapping_sub(c).wrapping_sub(a) ^ (a << sb);
        c = c.wrapping_sub(a).wrapping_sub(b) ^ (b >> sc);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference vectors of MurmurHash3_x86_32 (SMHasher and its widely published test table).
    #[test]
    fn matches_reference_vectors() {
        assert_eq!(murmur3_x86_32(b"", 0), 0);
        assert_eq!(murmur3_x86_32(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_x86_32(b"", 0xffff_ffff), 0x81f1_6f39);
        assert_eq!(murmur3_x86_32(&[0, 0, 0, 0], 0), 0x2362_f9de);
        assert_eq!(murmur3_x86_32(&[0x21, 0x43, 0x65, 0x87], 0), 0xf55b_516b);
        assert_eq!(murmur3_x86_32(&[0x21, 0x43, 0x65], 0), 0x7e4a_8634);
        assert_eq!(murmur3_x86_32(&[0x21, 0x43], 0), 0xa0f7_b07a);
        assert_eq!(murmur3_x86_32(&[0x21], 0), 0x7266_1cf4);
        assert_eq!(
            murmur3_x86_32(&[0x21, 0x43, 0x65, 0x87], 0x5082_edee),
            0x2362_f9de
        );
        assert_eq!(murmur3_x86_32(b"Hello, world!", 1234), 0xfaf6_cdb3);
        assert_eq!(
            murmur3_x86_32(b"The quick brown fox jumps over the lazy dog", 0x9747_b28c),
            0x2fa8_26cd
        );
    }

    #[test]
    fn flow_hash_depends_on_every_field() {
        let base = flow_hash(1, 2, 3, 4, 5);
        assert_ne!(base, flow_hash(9, 2, 3, 4, 5));
        assert_ne!(base, flow_hash(1, 9, 3, 4, 5));
        assert_ne!(base, flow_hash(1, 2, 9, 4, 5));
        assert_ne!(base, flow_hash(1, 2, 3, 9, 5));
        assert_ne!(base, flow_hash(1, 2, 3, 4, 9));
        assert_eq!(base, flow_hash(1, 2, 3, 4, 5));
    }

    #[test]
    fn bridge_hash_reproduces_the_artifacts_ecmp_choices() {
        // From a debug build of the REPS artifact (htsim_uec -seed 42, Fig. 2 topology, ECMP):
        // (key = src and dst host ids written one after the other, path id, switch salt) and
        // the uplink index it chose among 32.
        for (key, path, salt, hash, choice) in [
            (18_694, 1, 1_608_637_542, 686_856_254, 30),
            (184_349, 2, 1_201_263_687, 1_832_800_591, 15),
            (96_491, 0, 787_716_372, 1_693_910_052, 4),
        ] {
            assert_eq!(bridge_hash(key, path, salt), hash);
            assert_eq!(bridge_hash(key, path, salt) % 32, choice);
        }
        assert_eq!(bridge_hash(0, 0, 0), 3_175_731_469);
    }
}
