#!/usr/bin/env python3
"""The cost of one gradient all-reduce in a tgcore --dist job, by the
alpha-beta model (Thakur, Rabenseifner and Gropp, "Optimization of
Collective Communication Operations in MPICH", 2005), for the ways
Open MPI's tuned all-reduce runs and for tgcore's host staging.

  ring:               2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma
  recursive doubling: log2(p) (alpha + n beta + n gamma)
  staging (tgcore):   2 n / host memcpy bandwidth (to the host and back)
  agree (tgcore):     one 24-byte all-reduce per call (recursive doubling)

Usage: python3 docs/allreduce_cost.py   (no arguments; prints tables)
"""
import math

NETWORKS = {  # alpha (s), beta (s/byte); shared memory: one machine
    "shared memory": (0.5e-6, 1 / 10e9),
    "100 Gb/s InfiniBand": (2e-6, 1 / 12e9),
    "10 Gb/s Ethernet": (30e-6, 1 / 1.1e9),
}
GAMMA = 1 / 5e9     # host float adds, s/byte
MEMCPY = 8e9        # host staging copy, bytes/s
MODELS = {  # bytes of float32 gradients
    "fashion_mnist --quick (7.9k params)": 4 * 7_922,
    "ResNet-50 (25.6M params)": 4 * 25_600_000,
    "1.3B-parameter transformer": 4 * 1_300_000_000,
}
RANKS = (8, 64, 512)


def ring(p, n, a, b):
    return 2 * (p - 1) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * GAMMA


def doubling(p, n, a, b):
    return math.log2(p) * (a + n * b + n * GAMMA)


def step_cost(p, n, a, b):
    best = min(ring(p, n, a, b), doubling(p, n, a, b))
    return best + 2 * n / MEMCPY + doubling(p, 24, a, b)


def main():
    for net, (a, b) in NETWORKS.items():
        print(f"== {net}: alpha {a * 1e6:g} us, {1 / b / 1e9:g} GB/s")
        print(f"{'model':38s}" + "".join(f"{p:>12d} ranks" for p in RANKS)
              + "  (host staging)")
        for name, n in MODELS.items():
            cells = "".join(f"{step_cost(p, n, a, b) * 1e3:15.2f} ms"
                            for p in RANKS)
            print(f"{name:38s}{cells}  ({2 * n / MEMCPY * 1e3:.2f} ms)")
        print()


if __name__ == "__main__":
    main()
