"""One registry: a user's own search, registered once by name, runs from the command line, in
MultiStart (each start equal to the single search with its spawned seed), in compare, and
through a checkpoint; bad registrations are refused."""
from dataclasses import dataclass

import numpy as np
import pytest

from lsmgpu.comparison import compare
from lsmgpu.cli import main
from lsmgpu.parallel import MultiStart, spawn_seeds
from lsmgpu.problems import QAP
from lsmgpu.search import SEARCHES, LocalSearch, register
from lsmgpu.search.base import Stop


@dataclass(frozen=True)
class DescentParams:
    """The user's search's own option: its step rule."""

    rule: str = "first"

    def __post_init__(self):
        if self.rule not in ("best", "first"):
            raise ValueError(f"FirstDescent: `rule` must be 'best' or 'first', got {self.rule!r}")


class FirstDescent(LocalSearch):
    """A user's search in a dozen lines: improving moves until none is left, then a random restart."""

    algorithm = "FirstDescent"
    Params = DescentParams
    iteration_unit = "moves"
    needs_budget = True

    def __init__(self, problem, *, params=None, neighbourhood=None, backend="auto", seed=None, initial=None,
                 callbacks=None, history="improvements", **options):
        self.params = self._params(params, options)
        super().__init__(problem, neighbourhood=neighbourhood, backend=backend, seed=seed, initial=initial,
                         callbacks=callbacks, history=history)

    def _iterate(self):
        improved, move = self._improve(self.params.rule, self.iteration)
        if not improved:
            self._load(self.problem.initial_solution(self.rng))      # a local optimum: restart
        return move


@pytest.fixture
def registered():
    register("first-descent", FirstDescent)
    yield "first-descent"
    del SEARCHES["first-descent"]


def test_a_registered_search_runs_everywhere_by_its_name(registered, capsys, tmp_path):
    """The command line, MultiStart, compare and a checkpoint all take the user's search by name."""
    qap = QAP.from_file(QAP.shipped("tai12a"))
    assert main(["solve", "tai12a", "--algorithm", registered, "--iterations", "60", "--backend", "cpu",
                 "--quiet"]) == 0
    assert "60 iterations" in capsys.readouterr().out
    multi = MultiStart(registered, qap, starts=3, seed=5, backend="cpu", rule="best").run(40)
    for k, seed in enumerate(spawn_seeds(5, 3)):
        alone = FirstDescent(qap, seed=seed, backend="cpu", rule="best").run(40)
        assert multi.runs[k].fitness == alone.fitness and np.array_equal(multi.runs[k].history, alone.history)
    rows = compare("tai12a", algorithm=registered, runs=2, iterations=30, backend="cpu")
    assert len(rows) == 1 and len(rows[0].results) == 2
    path = tmp_path / "descent.ckpt"
    whole = FirstDescent(qap, seed=2, backend="cpu").run(80)
    FirstDescent(qap, seed=2, backend="cpu").run(40, checkpoint=path)
    resumed = FirstDescent(qap, seed=2, backend="cpu").resume(path, iterations=80)
    assert resumed.fitness == whole.fitness and np.array_equal(resumed.history, whole.history)


def test_a_bad_registration_is_refused(registered):
    """A taken name, a name that is not a string and a class that is not a Search are refused."""
    with pytest.raises(ValueError, match="already FirstDescent"):
        register("first-descent", FirstDescent)
    with pytest.raises(ValueError, match="`name` must be a new non-empty string"):
        register("", FirstDescent)
    with pytest.raises(TypeError, match="subclass of lsmgpu.search.loop.Search"):
        register("stop", Stop)
    with pytest.raises(ValueError, match="MultiStart: unknown search 'first-decent' \\(did you mean "
                                         "'first-descent'\\?\\)"):
        MultiStart("first-decent", QAP.from_file(QAP.shipped("tai12a")), starts=2)


def test_a_search_that_names_why_it_cannot_be_checkpointed_refuses_a_checkpoint(tmp_path):
    """A user's search with ``checkpoint_refused`` (every search lsmgpu ships is checkpointed) is
    refused a checkpoint and a resume, naming why, before it runs or writes anything."""
    class Unsaved(FirstDescent):
        checkpoint_refused = "its state lives in a remote service"

    qap = QAP.from_file(QAP.shipped("tai12a"))
    path = tmp_path / "unsaved.ckpt"
    with pytest.raises(ValueError, match=r"cannot be checkpointed \(its state lives in a remote service\)"):
        Unsaved(qap, backend="cpu").run(10, checkpoint=path)
    FirstDescent(qap, seed=2, backend="cpu").run(10, checkpoint=path)
    with pytest.raises(ValueError, match=r"no run of it is checkpointed \(its state lives in a remote service\)"):
        Unsaved(qap, backend="cpu").resume(path)
    assert Unsaved(qap, backend="cpu").run(10).iterations == 10
