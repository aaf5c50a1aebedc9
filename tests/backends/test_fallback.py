"""A population method's kernels on a backend that has none: the host's reference runs, and the
fallback is announced (BackendFallback naming the kernel), never silent; the CPU backend is not
a fallback and says nothing."""
import warnings

import numpy as np
import pytest

from lsmgpu.backends import resolve
from lsmgpu.backends.colony import Construction, CpuColony, colony_for
from lsmgpu.backends.dontlook import CpuDontLook, dontlook_for
from lsmgpu.backends.genetic import Breeding, CpuGenetic, genetic_for
from lsmgpu.errors import BackendFallback
from lsmgpu.problems import TSP

from ..search.test_dontlook import rules_of


class NoKernels:
    """A backend other than the CPU without any population kernel."""
    name, device = "elsewhere", "no device"


@pytest.fixture(scope="module")
def tsp():
    return TSP(np.random.default_rng(0).uniform(0, 100, (20, 2)), name="r20")


def makers(tsp):
    rules = rules_of(tsp)
    return [
        (lambda b: colony_for(b, tsp.colony_model(8), Construction(), tsp.n, 4), CpuColony, "the ants build", "colony"),
        (lambda b: genetic_for(b, Breeding("hybrid", 0.1, 8, 1, None), tsp.n, tsp.edge_distance()), CpuGenetic,
         "the generations run", "genetic"),
        (lambda b: dontlook_for(b, "dontlook", CpuDontLook, rules, tsp.edge_distance(), 2, announce="test",
                                what="the descents"), CpuDontLook, "the descents run", "dontlook"),
    ]


@pytest.mark.parametrize("k", range(3))
def test_a_backend_without_the_kernel_runs_the_host_and_says_so(tsp, k):
    """A backend without the kernel runs the host and says so."""
    make, host, what, kernel = makers(tsp)[k]
    with pytest.warns(BackendFallback, match=f"{what} on the host \\(elsewhere has no {kernel} kernel\\)"):
        assert isinstance(make(NoKernels()), host)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(make(resolve("cpu")), host)
