"""Assertions shared by the problem tests."""
from lsmgpu.testing import check_delta_at


def assert_delta_is_reevaluation(problem, x) -> None:
    """problem.delta(x, every move) equals evaluate(after) - evaluate(before), move by move
    (exactly: the problems checked here are integer; lsmgpu.testing does the check)."""
    check_delta_at(problem, x)


def assert_file_rejected(tmp_path, loader, name: str, text: str, message: str) -> None:
    """Writing ``text`` to ``name`` and loading it raises a ValueError matching ``message``."""
    import pytest
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        loader(path)
