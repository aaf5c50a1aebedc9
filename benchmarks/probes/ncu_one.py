import sys, numpy as np
from lsmgpu.backends import resolve
from lsmgpu.backends.colony import Construction, colony_for
from lsmgpu.problems import TSP
p = TSP.from_file(f".data/tsplib/{sys.argv[1]}.tsp"); n = p.n
c = Construction(selection=sys.argv[2], tabu=sys.argv[3], beta=2.0, tau0=1e-4, warps=1)
col = colony_for(resolve("cuda"), p.colony_model(32), c, n, n)
for k in range(2): col.construct(7, k, np.random.default_rng(0).integers(0, n, n))
print(col.kernel_seconds)
