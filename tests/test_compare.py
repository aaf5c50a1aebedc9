"""Comparing variants with the same seeds, from Python and from the command line."""
import numpy as np
import pytest

from lsmgpu.cli import main
from lsmgpu.comparison import compare, format_table, plot


def test_variants_share_seeds_and_summaries_are_right():
    """Each variant runs `runs` times with the seeds spawned from `seed`; the row's numbers summarise those runs."""
    rows = compare("berlin52", neighbourhoods=["swap", "2opt"], runs=3, iterations=60, backend="cpu")
    assert [r.runs for r in rows] == [3, 3]
    for row in rows:
        fits = [res.fitness for res in row.results]
        assert row.fitness_mean == pytest.approx(np.mean(fits)) and row.fitness_best == min(fits)
        assert row.gap_mean_pct == pytest.approx(100 * (np.mean(fits) - 7542) / 7542)
    again = compare("berlin52", neighbourhoods=["2opt"], runs=3, iterations=60, backend="cpu")
    assert [r.fitness for r in again[0].results] == [r.fitness for r in rows[1].results]
    assert "TwoOpt()" in format_table(rows) and "Swap()" in format_table(rows)


def test_cpu_collapses_gpu_only_variants():
    """Selection and generation variants are one variant on the CPU backend."""
    rows = compare("tai12a", selections=["gpu", "host"], generations=["gpu", "cpu"], runs=1,
                   iterations=20, backend="cpu")
    assert len(rows) == 1 and rows[0].variant.endswith("cpu")


def test_bad_arguments():
    """Unknown strategies, zero runs and a missing budget are clear errors."""
    with pytest.raises(ValueError, match="selection"):
        compare("tai12a", selections=["warp"], runs=1, iterations=5, backend="cpu")
    with pytest.raises(ValueError, match="runs"):
        compare("tai12a", runs=0, iterations=5, backend="cpu")
    with pytest.raises(ValueError, match="iterations"):
        compare("tai12a", runs=1, backend="cpu")


def test_cli_prints_table_and_writes_plot(tmp_path, capsys):
    """`lsmgpu compare` prints one row per variant and saves the plot."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "cmp.png"
    assert main(["compare", "eil51", "--neighbourhood", "swap,2opt", "--runs", "2", "--iterations", "30",
                 "--backend", "cpu", "--plot", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("| Swap()") == 1 and printed.count("| TwoOpt()") == 1
    assert out.stat().st_size > 1000


def test_plot_without_matplotlib_is_a_clear_error(monkeypatch, tmp_path):
    """Without matplotlib, plot() says what to install."""
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    rows = compare("tai12a", runs=1, iterations=5, backend="cpu")
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ImportError, match="matplotlib"):
        plot(rows, tmp_path / "x.png")


def test_compare_and_load_are_importable_from_lsmgpu():
    """The package's lazily imported names are the functions, also after their modules load."""
    import lsmgpu
    import lsmgpu.comparison  # noqa: F401  (a loaded module must not shadow the function)
    from lsmgpu import compare as imported, load
    assert imported is compare and lsmgpu.compare is compare
    assert load("berlin52").n == 52
