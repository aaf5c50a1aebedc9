"""Multi-start: spawned seeds, equality with single runs, budgets."""
import numpy as np
import pytest

from lsmgpu import HillClimbing, TabuSearch
from lsmgpu.parallel.multistart import MultiStart, spawn_seeds
from lsmgpu.problems import QAP


@pytest.fixture
def qap():
    return QAP.from_file(QAP.shipped("tai12a"))


def test_each_start_equals_a_single_run_with_its_spawned_seed(qap):
    """Start k's trajectory is that of TabuSearch(seed=SeedSequence(seed).spawn(B)[k])."""
    result = MultiStart(TabuSearch, qap, starts=4, seed=7, backend="cpu").run(300)
    for k, seed in enumerate(np.random.SeedSequence(7).spawn(4)):
        single = TabuSearch(qap, seed=seed, backend="cpu").run(300)
        assert np.array_equal(result.results[k].history, single.history)
    assert result.fitness == np.nanmin(result.fitnesses) and result.status == "done"
    assert len(set(result.fitnesses.tolist())) > 1 or result.fitness == qap.best_known


def test_target_ends_the_multistart(qap):
    """One after the other, the starts after the one that hits the target do not run; batched,
    they all stop at that iteration ("stopped")."""
    result = MultiStart("tabu", qap, starts=20, seed=0, backend="cpu", batch=False).run(5000, target=qap.best_known)
    assert result.status == "target" and result.fitness == qap.best_known
    assert any(r is None for r in result.results)
    batched = MultiStart("tabu", qap, starts=20, seed=0, backend="cpu").run(5000, target=qap.best_known)
    assert batched.status == "target" and batched.fitness == qap.best_known
    statuses = [r.status for r in batched.results]
    assert "target" in statuses and set(statuses) <= {"target", "stopped"}


def test_time_limit_is_honoured(qap):
    result = MultiStart(HillClimbing, qap, starts=10_000, seed=0, backend="cpu", restarts=10**6).run(seconds=0.3)
    assert result.status == "seconds" and result.best is not None


def test_bad_arguments(qap):
    with pytest.raises(ValueError, match="starts"):
        spawn_seeds(0, 0)
    with pytest.raises(ValueError, match="unknown search"):
        MultiStart("anneal", qap, starts=2)
    with pytest.raises(TypeError, match="LocalSearch"):
        MultiStart(int, qap, starts=2)
