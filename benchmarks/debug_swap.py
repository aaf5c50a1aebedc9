import numpy as np, pycuda.driver as cuda
from lsmgpu import TabuSearch
from lsmgpu.backends.cuda import CudaBackend
from lsmgpu.problems import TSP
for opts in ({}, {"generation": "host"}):
    tsp = TSP.from_file(TSP.shipped("eil51"))
    s = TabuSearch(tsp, seed=0, backend=CudaBackend(**opts))
    s.start(iterations=2000)
    ev = s.evaluator
    bad = None
    while not s.step():
        x = ev.x
        want = tsp.solution_data(x)
        for name, (buf, dtype, shape) in ev.state_buffers.items():
            got = np.empty(shape, dtype); cuda.memcpy_dtoh(got, buf)
            if not np.array_equal(got, want[name]):
                diff = np.flatnonzero(got != want[name])
                bad = (s.iteration, name, diff[:8], got[diff[:4]], want[name][diff[:4]], s.history[-1], tsp.evaluate(x))
                break
        if bad: break
        if not np.array_equal(ev.device_solution(), x):
            bad = (s.iteration, "x"); break
    print(opts, "first bad:", bad, "config", ev.config, "chunk", ev.chunk)
