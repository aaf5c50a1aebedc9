"""Whether benchmarks/portgen.py makes the DIMACS TSP Challenge's own instances: LKH-3 (elkai) on
portgen(1000, 1000) and portcgen(1000, 1000), whose tours should be as long as the challenge's
E1k.0 and C1k.0 are listed (23,360,648 and 11,387,430; LKH-3 reaches them at this size). A
count, the same on every machine.

    python -m benchmarks.probes.challenge_instances
"""
from __future__ import annotations

from benchmarks.peers import lkh
from benchmarks.portgen import portcgen, portgen
from lsmgpu.problems import TSP

#: the challenge's listed tour lengths of the instances its generators make with n = seed = 1000
LISTED = {"E1k.0": (portgen, 23_360_648), "C1k.0": (portcgen, 11_387_430)}


def main() -> None:
    for name, (make, listed) in LISTED.items():
        problem = TSP(make(1000, 1000), name=name)
        tour, seconds = lkh(problem)
        length = problem.evaluate(tour)
        print(f"{name}: {make.__name__}(1000, 1000), LKH-3's tour {length:,.0f} in {seconds:.1f} s, "
              f"listed {listed:,}: {'the same' if length == listed else 'different'}")


if __name__ == "__main__":
    main()
