"""Shared fixtures: small real instances shipped with the package, and the GPU/nvcc markers."""
import shutil

import numpy as np
import pytest
from hypothesis import settings

from lsmgpu.problems import QAP, TSP

settings.register_profile("ci", deadline=None, max_examples=60)
settings.load_profile("ci")


def _gpu_available() -> bool:
    from lsmgpu.backends import cuda_available
    return cuda_available()[0]


def pytest_collection_modifyitems(config, items):
    gpu = None
    for item in items:
        if "gpu" in item.keywords:
            gpu = _gpu_available() if gpu is None else gpu
            if not gpu:
                item.add_marker(pytest.mark.skip(reason="needs PyCUDA and an NVIDIA GPU"))
        if "nvcc" in item.keywords and shutil.which("nvcc") is None:
            item.add_marker(pytest.mark.skip(reason="needs nvcc"))


@pytest.fixture(scope="session")
def tai12a():
    return QAP.from_file(QAP.shipped("tai12a"))


@pytest.fixture(scope="session")
def nug12():
    return QAP.from_file(QAP.shipped("nug12"))


@pytest.fixture(scope="session")
def berlin52():
    return TSP.from_file(TSP.shipped("berlin52"), neighbourhood="2opt")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
