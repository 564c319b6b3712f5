#!/usr/bin/env python3
"""Writes the permutation the REPS artifact draws, as a ConWeave flow file.

The REPS artifact (tommasobo/REPS_EuroSys_Artifact, htsim/sim/datacenter/connection_matrices/
gen_permutation.py, called by run_symmetric.py with seed 42) draws its permutation with Python's
`random`: seed the generator, shuffle a list of the sources, shuffle a list of the
destinations, then walk the pairs and, where a node would send to itself, exchange its
destination with the next pair's. This script implements that behaviour (our code, same
algorithm and the same standard generator, so the same draw) and writes our flow-file format
(ConWeave's flow file): every flow at t = 0, priority group 3.

    gen_permutation.py NODES SIZE_BYTES SEED OUT
"""
import random
import sys


def artifact_permutation(nodes: int, seed: int) -> list[tuple[int, int]]:
    """(src, dst) pairs in the artifact's order (its flow ids 1..nodes)."""
    sources = list(range(nodes))
    destinations = list(range(nodes))
    rng = random.Random(seed)  # the module-level seed() the artifact calls seeds this same generator
    rng.shuffle(sources)
    rng.shuffle(destinations)
    for i in range(nodes):
        if sources[i] == destinations[i]:
            j = (i + 1) % nodes
            destinations[i], destinations[j] = destinations[j], destinations[i]
    return list(zip(sources, destinations))


def main() -> None:
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    nodes, size, seed, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    pairs = artifact_permutation(nodes, seed)
    with open(out, "w", encoding="ascii") as f:
        f.write(f"{len(pairs)}\n")
        for src, dst in pairs:
            f.write(f"{src} {dst} 3 {size} 0\n")


if __name__ == "__main__":
    main()
