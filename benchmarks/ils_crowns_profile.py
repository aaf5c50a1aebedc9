"""Where an ILS iteration's time goes on the crowns neighbourhood (Weierstrass, CEC form):
cProfile of a GPU run of --seconds, sorted by cumulative time, beside the hill climb's steps/s.
Run on the device: python3 -W ignore -m benchmarks.ils_crowns_profile [n] [seconds]"""
import cProfile
import pstats
import sys

from lsmgpu import HillClimbing, IteratedLocalSearch
from lsmgpu.problems import Weierstrass

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
problem = Weierstrass(n, form="cec", m=10_000)
climb = HillClimbing(problem, seed=0, backend="cuda", patience=10**9).run(seconds=seconds)
print(f"hill climbing: {climb.iterations / seconds:.0f} steps/s")
search = IteratedLocalSearch(problem, seed=0, backend="cuda")
search.run(seconds=1.0)
search = IteratedLocalSearch(problem, seed=0, backend="cuda")
profile = cProfile.Profile()
result = profile.runcall(search.run, seconds=seconds)
print(f"ILS: {result.iterations} kicks, {result.evaluations / problem.neighbourhood.size / seconds:.0f} steps/s, "
      f"best {result.fitness:.6f}")
pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
