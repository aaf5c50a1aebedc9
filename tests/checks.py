"""Assertions shared by the problem tests."""
import numpy as np


def assert_delta_is_reevaluation(problem, x, exact: bool = True) -> None:
    """problem.delta(x, every move) equals evaluate(after) - evaluate(before), move by move."""
    nb = problem.neighbourhood
    moves = nb.moves(x, np.arange(nb.size))
    deltas = problem.delta(x, moves)
    base = problem.evaluate(x)
    for move, change in zip(moves, deltas):
        y = x.copy()
        nb.apply(y, move)
        if exact:
            assert problem.evaluate(y) - base == change, move
        else:
            assert np.isclose(problem.evaluate(y) - base, change), move


def assert_file_rejected(tmp_path, loader, name: str, text: str, message: str) -> None:
    """Writing ``text`` to ``name`` and loading it raises a ValueError matching ``message``."""
    import pytest
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        loader(path)
