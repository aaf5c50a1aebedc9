"""The wave tuner's search order, cache and failure handling (no GPU: a fake launch)."""
import pytest

from lsmgpu.backends.tuning import COMMON_BLOCKS, WaveTuner, default_configuration
from lsmgpu.errors import KernelLaunchError


def test_candidates_largest_grids_and_common_blocks_first():
    """Totals are powers of two from the one nearest n up to the neighbourhood size; the
    first pass covers the common block sizes from the largest total down, then the rest."""
    tuner = WaveTuner(cache=None)
    pairs = tuner.candidates(n=100, size=5000, resident_threads=10**6)
    assert sorted(t for t, b in pairs if b == 32) == [128, 256, 512, 1024, 2048, 4096, 8192]
    first = pairs[:len(COMMON_BLOCKS)]
    assert first[0] == (8192, 256) and {b for _, b in first} == set(COMMON_BLOCKS)
    common = [p for p in pairs if p[1] in COMMON_BLOCKS]
    assert pairs[:len(common)] == common                      # the coarse pass comes first
    assert all(t % b == 0 and b <= t for t, b in pairs) and len(pairs) == len(set(pairs))


def test_tune_skips_failures_and_caches(tmp_path):
    """A configuration that fails to launch is skipped, the fastest that ran is kept and cached."""
    cache = tmp_path / "tuning.json"
    calls = []

    def launch(threads, block):
        calls.append((threads, block))
        if block == 1024:
            raise KernelLaunchError("too many resources", (threads // block,), (block,))
        return abs(block - 96) * 1e-6 + 1e-3 / threads     # fastest: largest total, block 96

    tuner = WaveTuner(cache=str(cache), budget=10.0)
    best = tuner.tune("kernel|gpu|5000", 100, 5000, 10**6, launch)
    assert best == (8160, 96)
    assert WaveTuner(cache=str(cache)).tune("kernel|gpu|5000", 100, 5000, 10**6, launch) == best
    tried = len(calls)
    assert tuner.tune("kernel|gpu|5000", 100, 5000, 10**6, launch) == best and len(calls) == tried


def test_tune_with_nothing_launchable_is_an_error():
    """Tune with nothing launchable is an error."""
    def launch(threads, block):
        raise KernelLaunchError("no", (1,), (block,))
    with pytest.raises(KernelLaunchError, match="no configuration"):
        WaveTuner(cache=None).tune("k", 10, 100, 1000, launch)


def test_default_configuration():
    """Without tuning, the launch is sized from the moves and the resident threads: (8192, 256) for a large neighbourhood, (64, 64) for a tiny one."""
    assert default_configuration(5000, 10**6) == (8192, 256)
    assert default_configuration(40, 10**6) == (64, 64)


def test_a_near_size_class_of_a_tuned_kernel_starts_untimed():
    """A new instance of a known kind: the nearest tuned size class (within NEAR_CLASS) of the
    same kernel and device serves it without a launch; a far one or another kernel is tuned."""
    from lsmgpu.backends.tuning import NEAR_CLASS, tuning_key
    calls = []

    def launch(threads, block):
        calls.append((threads, block))
        return 1.0 / threads
    tuner = WaveTuner(cache=None, budget=10.0)
    tuned = tuner.tune(tuning_key("kernel", "gpu", 6000, 60_000), 6000, 60_000, 10**6, launch)
    timed = len(calls)
    assert tuner.tune(tuning_key("kernel", "gpu", 12_000, 120_000), 12_000, 120_000, 10**6, launch) == tuned
    assert len(calls) == timed                                          # borrowed, nothing launched
    smaller = tuner.tune(tuning_key("kernel", "gpu", 3000, 30_000), 3000, 30_000, 10**6, launch)
    assert len(calls) == timed and smaller[0] <= 32_768 and smaller[0] % smaller[1] == 0   # capped to its moves
    far = 60_000 * NEAR_CLASS * 4
    tuner.tune(tuning_key("kernel", "gpu", 6000, far), 6000, far, 10**6, launch)
    assert len(calls) > timed                                           # too far: timed
    timed = len(calls)
    tuner.tune(tuning_key("other", "gpu", 6000, 60_000), 6000, 60_000, 10**6, launch)
    assert len(calls) > timed                                           # another kernel: timed
