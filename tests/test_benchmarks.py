"""The benchmark harness's CPU-only parts: the tables on shipped instances, the generated instances."""
import argparse

import pytest

from benchmarks.peers import scipy_restarts, table_peers_qap
from lsmgpu.problems import QAP, TSP


def test_peer_table_runs_every_method_on_the_cpu():
    """peers-qap runs lsmgpu and both scipy heuristics for each budget, with gaps to the best known."""
    args = argparse.Namespace(peer_seconds="0.1,0.2")
    rows = []
    table_peers_qap(args, [QAP.shipped("tai12a")], lambda: "cpu", rows.append)
    assert [(r["strategy"], r["budget_s"]) for r in rows] == [
        (m, b) for b in (0.1, 0.2) for m in ("lsmgpu tabu search", "scipy 2opt", "scipy faq")]
    assert all(r["gap_pct"] >= 0 and r["seconds"] >= r["budget_s"] * 0.9 for r in rows)


def test_scipy_restarts_report_lsmgpu_fitness():
    """The scipy wrapper's best is a real assignment cost (checked against QAP.evaluate inside)."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    best, seconds, restarts = scipy_restarts(problem, "faq", 0.05, 0)
    assert restarts >= 1 and best >= problem.best_known


#: the quick report's tables in four runs (so that the test's parts spread over the workers) and
#: lines each run's report holds
QUICK_TABLES = {
    "qap": (["qap", "tsp-swap", "ppp-h1", "weierstrass", "peers-qap"],
            ["tai12a", "berlin52", "ppp-31-33", "![qap](qap-speedup.png)", "![peers-qap](peers-qap-gap.png)",
             "| qap | tai12a | 12 | TabuSearch | cpu |", "| weierstrass-luong-1-float32 | 1 | HillClimbing |"]),
    "searches": (["selection", "peers-weierstrass", "multistart", "islands"], ["lsmgpu ILS, 1000 crowns"]),
    "tours": (["tsp-quality", "batch-ils", "segments", "cpu-chains"],
              ["| tsp-quality | mean of 2 |", "ILS 1n", "batched ILS, 4 islands", "one ILS chain",
               "| cpu-chains | TSP | eil51 | 2-opt + Or-opt | cpu |",
               "| cpu-chains | TSP | eil51 | 5-opt chains of 100 alone, α-nearest | cpu |"]),
    "populations": (["colony-quality", "faco", "ga-convergence", "ga-quality"],
                    ["MMAS + batched LS", "ACS-SPM, 256 ants", "| ga-convergence | eil51 | 51 | hybrid | 2048 | 1 |",
                     "| ga-quality | tai12a | 12 | 128 | ox |"]),
}


@pytest.mark.parametrize("part", list(QUICK_TABLES))
def test_quick_report_on_the_cpu(tmp_path, part):
    """`python -m benchmarks ... --quick --backend cpu` runs the tables on shipped instances and
    writes Markdown, CSV, JSON and the speed-up plots (the Weierstrass peers: hill climbing and ILS)."""
    from benchmarks.__main__ import main
    tables, lines = QUICK_TABLES[part]
    main([*tables, "--quick", "--backend", "cpu", "--out", str(tmp_path)])
    report = (tmp_path / "results.md").read_text()
    for table in tables:
        assert f"## {table}" in report and (tmp_path / f"{table}.csv").is_file()
    for line in lines:
        assert line in report
    if part == "qap":
        assert (tmp_path / "qap-speedup.png").is_file() and (tmp_path / "peers-qap-gap.png").is_file()


def test_gpu_only_tables_refuse_the_cpu(tmp_path):
    """GPU only tables refuse the CPU."""
    from benchmarks.__main__ import main
    with pytest.raises(SystemExit, match="needs the GPU"):
        main(["twoopt-rate", "--quick", "--backend", "cpu", "--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="needs the GPU"):
        main(["descents", "--quick", "--backend", "cpu", "--out", str(tmp_path)])
    for table in ("ga-generation", "ga-million", "fosin-3opt"):
        with pytest.raises(SystemExit, match="need(s)? the GPU"):
            main([table, "--quick", "--backend", "cpu", "--out", str(tmp_path)])
    for table in ("acs-build", "mmas-build"):
        with pytest.raises(SystemExit, match="need the GPU"):
            main([table, "--quick", "--backend", "cpu", "--out", str(tmp_path)])


def test_tsp_peer_table(tmp_path):
    """peers-tsp runs lsmgpu's ILS, OR-Tools and LKH (where installed) and scores their tours
    itself; when lsmgpu's own row is a GPU run, the same ILS on the CPU backend runs beside it
    (exercised here with a CPU factory standing in for the GPU)."""
    pytest.importorskip("elkai")
    pytest.importorskip("ortools")
    from benchmarks.peers import table_peers_tsp
    from lsmgpu.problems import shipped
    args = argparse.Namespace(peer_seconds="0.3", peer_tsp_neighbourhood="2opt", backend="cpu")
    rows = []
    table_peers_tsp(args, [shipped("berlin52")], lambda: "cpu", rows.append)
    assert [r["strategy"] for r in rows] == ["lsmgpu ILS (2opt)", "OR-Tools guided local search",
                                             "LKH-3 (elkai, 1 run)"]
    assert all(r["best_fitness"] >= 7542 and r["gap_pct"] >= 0 for r in rows)
    args.backend, rows = "cuda", []
    table_peers_tsp(args, [shipped("berlin52")], lambda: "cpu", rows.append)
    assert [r["strategy"] for r in rows][:2] == ["lsmgpu ILS (2opt)", "lsmgpu ILS (2opt), CPU backend"]
    assert rows[1]["best_fitness"] >= 7542 and rows[1]["work"].endswith(" kicks")


def test_tsp_peers_take_coordinates_where_no_matrix_fits():
    """Without a distance matrix (instances like pla85900) OR-Tools reads arc costs from the
    coordinates and LKH takes them as points; LKH stopped at its limit gives no tour."""
    import numpy as np
    pytest.importorskip("elkai")
    pytest.importorskip("ortools")
    from benchmarks.peers import lkh, ortools_gls
    from lsmgpu.problems import TSP, shipped
    berlin = TSP.from_file(shipped("berlin52"))
    berlin.matrix = None
    tour, _ = ortools_gls(berlin, 0.3)
    assert np.array_equal(np.sort(tour), np.arange(52)) and berlin.evaluate(tour) >= 7542
    tour, _ = lkh(berlin, 60)
    assert np.array_equal(np.sort(tour), np.arange(52)) and berlin.evaluate(tour) == 7542
    assert lkh(berlin, 0.001)[0] is None


def test_report_merges_runs_from_results_logs_and_csvs(tmp_path):
    """benchmarks.report makes one report of several runs: a results.json, the rows a cut-off
    run printed to its log, an earlier table's CSV; tsp-quality's means are recomputed over
    every instance row and each run's command and commit head the report."""
    import csv
    import json

    from benchmarks.report import main as report

    def row(instance, gap, method="ILS 10n"):
        return dict(table="tsp-quality", instance=instance, n=10, backend="cuda", method=method, iterations=1,
                    seconds=1.0, length=1, optimum=1, gap_pct=gap, fosin_mean_gap_pct=None)
    meta = dict(device="GPU X", date="2026-11-23", commit="aaa1111", command="python -m benchmarks tsp-quality")
    (tmp_path / "a.json").write_text(json.dumps(dict(meta=meta, rows=[row("x1", 1.0), row("mean of 1", 1.0)])))
    (tmp_path / "b.log").write_text("compiling\n" + repr(row("x2", 2.0)) + "\n" +
                                    repr(dict(table="qap", instance="tai12a", speedup=3.0)) + "\ninterrupted\n"
                                    "device: GPU Y · date: 2026-11-22 · commit: bbb2222\n")
    with open(tmp_path / "c.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, list(row("x3", 6.0)))
        writer.writeheader()
        writer.writerow(row("x3", 6.0))
    (tmp_path / "d.csv").write_text("table,instance,speedup\nppp-h1,101-117,7.0\n")   # another table of c's run
    run_c = "::LSMGPU_COMMIT=ccc3333 python -m benchmarks tsp-quality ppp-h1"
    report([str(tmp_path / "a.json"), f"{tmp_path / 'b.log'}::LSMGPU_COMMIT=bbb2222 python -m benchmarks qap",
            f"{tmp_path / 'c.csv'}{run_c}", f"{tmp_path / 'd.csv'}{run_c}", "--out", str(tmp_path / "out")])
    text = (tmp_path / "out" / "results.md").read_text()
    assert "commit: aaa1111 + bbb2222 + ccc3333" in text and "device: GPU X + GPU Y" in text
    assert "(rows from its log)" in text and text.count("tsp-quality ppp-h1 (rows from its CSV files)") == 1
    assert ("| tsp-quality | mean of 3 | None | None | ILS 10n | None | None | None | None | 3.0 | 0.32 | "
            "GPU X + GPU Y + unknown | aaa1111 + bbb2222 + ccc3333 |") in text
    assert "| tsp-quality | x2 | 10 | cuda | ILS 10n | 1 | 1.0 | 1 | 1 | 2.0 | None | GPU Y | bbb2222 |" in text
    assert "mean of 1" not in text and "| qap | tai12a | 3.0 | GPU Y | bbb2222 |" in text
    assert "| ppp-h1 | 101-117 | 7.0 | unknown | ccc3333 |" in text   # a CSV names no device


def test_ils_checkpoints_equal_runs_stopped_there():
    """tsp-quality reads ILS 0.1 n, n, ... from one run as it passes each kick count: each
    checkpoint's length equals a separate run with the same seed stopped at that count."""
    from benchmarks.tsp_quality import ils_checkpoints
    from lsmgpu import IteratedLocalSearch, candidate_polish
    from lsmgpu.problems import TSP
    tsp = TSP.from_file(TSP.shipped("pr76"), neighbourhood="2opt-candidates")
    runs = ils_checkpoints(tsp, lambda: "cpu", [0.1, 0.5, 1.0], seconds=600)
    assert [name for name, *_ in runs] == ["ILS 0.1n", "ILS 0.5n", "ILS 1n"]
    assert runs[0][1] > runs[1][1] > runs[2][1]         # three different points of the run
    for (name, length, seconds, kicks), expected_kicks in zip(runs, (8, 38, 76)):
        alone = IteratedLocalSearch(tsp, seed=0, backend="cpu",
                                    polish=candidate_polish(tsp.neighbourhood.candidates)).run(iterations=expected_kicks)
        assert (length, kicks) == (alone.fitness, expected_kicks) and seconds > 0


def test_overrun_table_on_the_cpu(tmp_path):
    """The overrun table runs every search asked for (here two, on a shipped TSP and QAP) in a child
    process and records the wall time from the constructor's call and the status."""
    from benchmarks.__main__ import main
    main(["overrun", "--quick", "--backend", "cpu", "--overrun-seconds", "0.3", "--overrun-searches", "tabu,faco",
          "--out", str(tmp_path)])
    import csv
    rows = list(csv.DictReader(open(tmp_path / "overrun.csv")))
    assert [(r["search"], r["instance"]) for r in rows] == [("tabu", "eil51"), ("faco", "eil51"), ("tabu", "tai12a")]
    assert {r["status"] for r in rows} <= {"seconds", "target"}
    assert all(float(r["wall_seconds"]) > 0 and r["within_target"] in ("True", "False") for r in rows)


def test_every_bad_input_is_a_clear_error(tmp_path):
    """The bad-inputs table: every API parameter, malformed file and CLI flag tried ends in an
    error that names it: no traceback, no silent acceptance, no hang."""
    from benchmarks.__main__ import main
    main(["bad-inputs", "--backend", "cpu", "--out", str(tmp_path)])
    import csv
    rows = list(csv.DictReader(open(tmp_path / "bad-inputs.csv")))
    assert len(rows) >= 80
    assert [r for r in rows if r["outcome"] != "clear error"] == []


def test_run_counts_must_be_positive(tmp_path, capsys):
    """Run counts must be positive."""
    from benchmarks.__main__ import main
    for option in ("--faco-seeds", "--colony-acs-seeds"):
        with pytest.raises(SystemExit):
            main(["colony-quality", option, "0", "--quick", "--backend", "cpu", "--out", str(tmp_path)])
        assert f"argument {option}: must be at least 1, got 0" in capsys.readouterr().err


def test_coverage_counts_tour_edges_in_either_list():
    """An edge counts when either end lists the other; a tour of lists' edges is fully covered."""
    import numpy as np
    from benchmarks.depth import coverage
    tour = np.array([0, 1, 2, 3])
    table = np.array([[1], [2], [3], [2]])                 # 3 -> 0 listed by neither end
    assert coverage(tour, table) == 0.75
    assert coverage(tour, np.array([[1], [2], [3], [0]])) == 1.0


def test_alpha_and_depth_tables_on_the_cpu(tmp_path):
    """`alpha` and `depth` run beside LKH-3 (elkai, where installed) on a shipped instance: the
    α-lists' coverage of LKH's tour, the bound below the optimum, one row per method."""
    pytest.importorskip("elkai")
    from benchmarks.__main__ import main
    main(["alpha", "depth", "--quick", "--backend", "cpu", "--out", str(tmp_path)])
    report = (tmp_path / "results.md").read_text()
    assert "| alpha | eil51 | 51 |" in report
    for method in ("FocusedACO (quadrant)", "FocusedACO (alpha)", "LKH-3 defaults (1 core)", "LKH-3 POPMUSIC (1 core)"):
        assert method in report


def test_lkh_runs_once_for_each_seed_and_alone_without_configs(tmp_path):
    """depth --depth-configs none: LKH-3's rows alone, a run for each of --depth-seeds (LKH's SEED
    = seed + 1), each with a tour of the instance, its length and gap, no summary without lsmgpu rows."""
    pytest.importorskip("elkai")
    import json

    import numpy as np

    from benchmarks.__main__ import main
    from lsmgpu.problems import load
    kept = tmp_path / "tours.npz"
    main(["depth", "--quick", "--backend", "cpu", "--depth-configs", "none", "--depth-lkh", "popmusic",
          "--depth-seeds", "0,1", "--depth-tours", str(kept), "--out", str(tmp_path)])
    written = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert sorted((row["strategy"], row["seed"]) for row in written) == [("LKH-3 POPMUSIC (1 core)", 0),
                                                                         ("LKH-3 POPMUSIC (1 core)", 1)]
    tours, problem = np.load(kept), load("eil51")
    for row in written:
        tour = tours[f"eil51|LKH-3 POPMUSIC|{row['seed']}|1"]
        assert np.array_equal(np.sort(tour), np.arange(51))
        assert problem.evaluate(tour) == row["length"] and round(100 * problem.gap(row["length"]), 4) == row["gap_pct"]


def test_lkh_answers_come_as_each_run_ends_and_late_runs_as_none():
    """collect_lkh yields each run's answer as it ends (the ended one first, whatever the order
    given), and None for a run still going ``wait`` seconds later; the pool is shut down after."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from benchmarks.depth import collect_lkh
    pool, release = ThreadPoolExecutor(2), threading.Event()
    futures = {("slow", "", 0): pool.submit(release.wait, 30), ("quick", "", 0): pool.submit(lambda: "tour")}
    futures["quick", "", 0].result()
    answers = collect_lkh(pool, futures, wait=0.2)
    assert next(answers) == (("quick", "", 0), "tour") and next(answers) == (("slow", "", 0), None)
    release.set()                    # the slow run may end now: the pool's shutdown waits for it
    assert list(answers) == []
    with pytest.raises(RuntimeError, match="shutdown"):
        pool.submit(print)


def test_lkh_is_given_its_seed():
    """lkh_run hands LKH-3 ``SEED = seed + 1`` in its parameter text (seed 0: LKH's default, 1)."""
    from unittest import mock

    from benchmarks.depth import lkh_run
    from lsmgpu.problems import TSP
    seen = []
    fake = mock.Mock(solve_problem=lambda params, problem: seen.append(params) or list(range(1, 6)))
    with mock.patch.dict("sys.modules", {"elkai": mock.Mock(_elkai=fake), "elkai._elkai": fake}):
        for seed in (0, 4):
            tour, _ = lkh_run(str(TSP.shipped("berlin52")), "", 1.0, seed)
    assert "SEED = 1\n" in seen[0] and "SEED = 5\n" in seen[1] and list(tour) == [0, 1, 2, 3, 4]


def test_depth_keeps_every_rows_tour_where_asked(tmp_path):
    """depth --depth-tours: one file with each row's tour under "instance|strategy|seed|budget",
    each a tour of the instance of its row's length; a summary row per strategy over its two seeds;
    each row's ``kernel_build_s`` its result's ``timings["build"]``, None on the CPU."""
    import json

    import numpy as np

    from benchmarks.__main__ import main
    from lsmgpu.problems import load
    kept = tmp_path / "tours.npz"
    main(["depth", "--quick", "--backend", "cpu", "--depth-lkh", "none", "--depth-seeds", "0,1",
          "--depth-tours", str(kept), "--out", str(tmp_path)])
    tours, problem = np.load(kept), load("eil51")
    written = json.loads((tmp_path / "results.json").read_text())["rows"]
    rows = {f"eil51|{row['strategy']}|{row['seed']}|1": row["length"] for row in written if row["table"] == "depth"}
    assert sorted(tours) == sorted(rows) and len(rows) == 4
    assert all(row["kernel_build_s"] is None for row in written if row["table"] == "depth")    # no build on the CPU
    summaries = [row for row in written if row["table"] == "depth-summary"]
    assert len(summaries) == 2 and all(row["seeds"] == 2 and row["lkh_mean_gap_pct"] is None for row in summaries)
    for key in tours:
        assert np.array_equal(np.sort(tours[key]), np.arange(51))
        assert problem.evaluate(tours[key]) == rows[key]


def test_ga_local_minima_table_on_the_cpu(tmp_path):
    """`ga-local-minima --quick` (Kang et al.'s Tables 3-4 in shape) runs on the CPU backend: a row per
    configuration and crossover, the first genes (2-opt local minima) no worse than the run's end."""
    from benchmarks.__main__ import main
    import csv
    main(["ga-local-minima", "--quick", "--backend", "cpu", "--ga-minima-configs", "16x1,16x2",
          "--ga-minima-crossovers", "bcscx,scx", "--out", str(tmp_path)])
    with open(tmp_path / "ga-local-minima.csv") as f:
        mine = list(csv.DictReader(f))
    assert len(mine) == 4 and {r["crossover"] for r in mine} == {"bcscx", "scx"}
    assert all(0 <= float(r["error"]) <= float(r["first_error"]) for r in mine)


def test_quality_means_count_the_instances_at_the_optimum():
    """tsp-quality's mean rows give each method's mean gap and how many instances it solved to the
    optimum, beside Fosin et al.'s 26 of 78 for ILS with 10 n kicks."""
    from benchmarks.tsp_quality import mean_rows
    rows = [dict(instance=name, method=method, gap_pct=gap) for name, method, gap in
            (("a", "ILS 10n", 0.0), ("b", "ILS 10n", 0.5), ("c", "ILS 10n", 0.0), ("a", "2-opt", 4.0))]
    means = {r["method"]: r for r in mean_rows(rows)}
    assert means["ILS 10n"]["at_optimum"] == "2 of 3" and means["ILS 10n"]["fosin_at_optimum"] == "26 of 78"
    assert means["ILS 10n"]["gap_pct"] == round(0.5 / 3, 3) and means["2-opt"]["at_optimum"] == "0 of 1"


def test_quality_means_read_split_csvs(tmp_path, capsys):
    """`python -m benchmarks.tsp_quality A.csv B.csv` pools the instance rows of runs split by
    size (leaving their own mean rows out) and prints one mean per method."""
    from benchmarks.tsp_quality import print_means
    head = "table,instance,n,method,gap_pct\n"
    (tmp_path / "a.csv").write_text(head + "tsp-quality,a,10,ILS 10n,0.0\ntsp-quality,mean of 1,,ILS 10n,0.0\n")
    (tmp_path / "b.csv").write_text(head + "tsp-quality,b,2000,ILS 10n,1.0\n")
    print_means([str(tmp_path / "a.csv"), str(tmp_path / "b.csv")])
    out = capsys.readouterr().out
    assert "mean of 2" in out and "mean gap 0.500 %" in out and "at the optimum 1 of 2 (Fosin 26 of 78)" in out


def test_segments_budget_runs_in_parts(tmp_path):
    """segments --segments-checkpoint: a part starts the run and checkpoints it, the next resumes
    it from the file; every part's set-up is kept beside it and taken from the one budget."""
    import json
    from types import SimpleNamespace

    from benchmarks.segments import run_in_parts
    from lsmgpu import TourSegments
    from lsmgpu.problems import load
    problem = load("kroA100")
    path = str(tmp_path / "run.ckpt")
    args = SimpleNamespace(segments_checkpoint=path, segments_checkpoint_every=0.0, segments_seconds=1.5)
    first, setup = run_in_parts(TourSegments(problem, seed=0, backend="cpu"), args, 0.25)
    assert setup == 0.25 and (tmp_path / "run.ckpt").exists()
    second, setups = run_in_parts(TourSegments(problem, seed=0, backend="cpu"), args, 0.5)
    assert setups == 0.75 and json.loads((tmp_path / "run.ckpt.json").read_text())["setups"] == [0.25, 0.5]
    assert second.fitness <= first.fitness and second.iterations >= first.iterations


def test_a_config_option_reads_as_none_a_bool_a_number_or_text():
    """segments/depth configs: "None" (e.g. restart_after=None), bools and numbers read as such,
    the rest stays text, and a config's entries keep their order."""
    from benchmarks.segments import option_value, parse_configs
    assert [option_value(t) for t in ("None", "True", "False", "3", "0.5", "hilbert")] == [None, True, False, 3, 0.5,
                                                                                            "hilbert"]
    assert type(option_value("3")) is int and option_value("None") is None
    assert parse_configs("defaults:start=hilbert;faco:restart_after=None,moves=192") == [
        ("defaults", {"start": "hilbert"}), ("faco", {"restart_after": None, "moves": 192})]


def test_generated_instances_are_the_challenges_reproducibly_and_clustered_where_asked():
    """portgen and portcgen: the same seed the same cities, another seed others; with seed 1000
    the challenge's E1k.0 and C1k.0 (first cities and coordinate sums pinned where LKH-3's tours
    of them matched the instances' listed lengths, 23,360,648 and 11,387,430); portgen's cities in
    the square, portcgen's around centres, so a city's nearest other city is closer."""
    import numpy as np
    from scipy.spatial import cKDTree

    from benchmarks.portgen import MAXCOORD, portcgen, portgen
    for make in (portgen, portcgen):
        cities = make(2000, 7)
        assert cities.shape == (2000, 2) and np.array_equal(cities, make(2000, 7))
        assert not np.array_equal(cities, make(2000, 8)) and np.array_equal(cities, np.floor(cities))
    e1k, c1k = portgen(1000, 1000).astype(np.int64), portcgen(1000, 1000).astype(np.int64)
    assert e1k[:2].tolist() == [[140237, 801141], [169837, 196125]] and e1k.sum(axis=0).tolist() == [508605748, 496415496]
    assert c1k[:2].tolist() == [[877915, 39773], [121704, 262791]] and c1k.sum(axis=0).tolist() == [521674817, 505088146]
    uniform, clustered = portgen(2000, 7), portcgen(2000, 7)
    assert uniform.min() >= 0 and uniform.max() < MAXCOORD
    nearest = [cKDTree(c).query(c, k=2)[0][:, 1].mean() for c in (uniform, clustered)]
    assert nearest[1] < 0.5 * nearest[0]
    with pytest.raises(ValueError, match="portcgen: at least 100 cities"):
        portcgen(99, 1)


def test_a_clustered_row_measures_its_gap_to_the_held_karp_bound(tmp_path):
    """segments on portcgen:N: the instance written once, its gaps to the Held-Karp bound, so
    never below 0."""
    from types import SimpleNamespace

    from benchmarks.segments import table_segments
    args = SimpleNamespace(segments_instances="portcgen:300", segments_folder=str(tmp_path), segments_marks="",
                           segments_configs="defaults:start=hilbert", segments_seconds=1.0, backend_choice="cpu",
                           segments_checkpoint="")
    rows = table_segments(args, None, lambda row: None)
    assert (tmp_path / "portcgen300.tsp").is_file() and len(rows) == 1
    row = rows[0]
    assert row["reference"] == "Held-Karp bound" and row["n"] == 300
    assert 0 <= row["gap_pct"] <= row["start_gap_pct"]


def test_tour_differences_are_the_moves_between_the_tours():
    """tour_difference: a tour against itself differs nowhere; a 2-opt move of it is one component
    of k 2, a move alone, its gain the length difference; a double bridge of two far stretches is
    two components of k 2, neither a move alone, spanning the stretches, and one pair that makes a
    tour together (its gain where positive); the summary puts a better tour's whole lead in its bin,
    and counts the new edges outside the candidate lists."""
    import numpy as np

    from benchmarks.probes.tour_difference import differences, outside_candidates, small_pairs, summary
    rng = np.random.default_rng(3)
    coords = rng.random((200, 2))

    def dist(u, v):
        return np.hypot(*(coords[u] - coords[v]).T)

    def length(t):
        return dist(t, np.roll(t, -1)).sum()

    a = np.arange(200)
    assert differences(a, a, dist) == []
    two_opt = np.r_[a[:50], a[50:120][::-1], a[120:]]
    [row] = differences(a, two_opt, dist)
    assert (row["k"], row["cities"], row["alone"]) == (2, 4, True) and np.isclose(row["gain"], length(a) - length(two_opt))
    bridge = np.r_[a[:20], a[150:180], a[50:150], a[20:50], a[180:]]
    rows = differences(a, bridge, dist)
    assert [(row["k"], row["cities"], row["alone"]) for row in rows] == [(2, 4, False)] * 2
    assert np.isclose(sum(row["gain"] for row in rows), length(a) - length(bridge))
    assert [row["span"] for row in rows] == [72, 72]          # 149 .. 199, 0 .. 20 and 179 .. 199, 0 .. 50
    assert small_pairs(rows, a) == (1, pytest.approx(max(0.0, length(a) - length(bridge))))
    assert small_pairs(rows, a, k_max=1) == (0, 0)
    better, worse = (two_opt, a) if length(two_opt) < length(a) else (a, two_opt)
    digest = summary(differences(worse, better, dist), 200)
    assert digest["b_shorter"] == 1 and digest["k 2-3"] == 100.0 and digest["far_pct"] == 100.0
    assert digest["not_alone_pct"] == 0.0
    lists = np.array([[(c + 1) % 200, (c - 1) % 200] for c in range(200)])
    assert outside_candidates(a, bridge, lists) == (4, 4) and outside_candidates(a, a, lists) == (0, 0)


def test_tour_difference_against_the_best_tour_of_the_file(tmp_path, capsys):
    """tour_difference with ``best``: each lsmgpu tour is compared with the shortest other tour of its
    instance in the file, whoever made it, and the largest place that one is shorter is described; a
    tour that is the file's shortest has nowhere the other is shorter; any other last word is refused."""
    import numpy as np

    from benchmarks.probes.tour_difference import main
    rng = np.random.default_rng(5)
    coords = np.round(rng.random((40, 2)) * 1000)
    lines = ["NAME : toy40", "TYPE : TSP", "DIMENSION : 40", "EDGE_WEIGHT_TYPE : EUC_2D", "NODE_COORD_SECTION"]
    lines += [f"{c + 1} {x:.0f} {y:.0f}" for c, (x, y) in enumerate(coords)] + ["EOF"]
    (tmp_path / "toy40.tsp").write_text("\n".join(lines) + "\n")
    good = np.argsort(np.arctan2(coords[:, 1] - 500, coords[:, 0] - 500))        # around the centre
    crossed = np.r_[good[:10], good[10:30][::-1], good[30:]]                     # a 2-opt move of it
    np.savez(tmp_path / "tours.npz", **{"toy40|FocusedACO|0|60": crossed, "toy40|FocusedACO|1|60": good})
    main(str(tmp_path / "tours.npz"), str(tmp_path), "best")
    rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 2 and all(" | FocusedACO, seed " in row for row in rows)
    toy = TSP.from_file(tmp_path / "toy40.tsp")
    worse, better = rows if toy.evaluate(crossed) > toy.evaluate(good) else rows[::-1]
    assert worse.split(" | ")[-1].startswith("k 2, 4 cities") and worse.split(" | ")[-1].endswith(", a move alone")
    assert better.split(" | ")[-1] == "none"
    with pytest.raises(SystemExit, match="'lkh' or 'best'"):
        main(str(tmp_path / "tours.npz"), str(tmp_path), "shortest")


def test_alpha_ties_counts_both_orders_against_the_files_shortest_tour(tmp_path, capsys):
    """alpha_ties: the reference is the shortest tour of the instance in the files; the plain
    column is the coverage of the instance's own α-lists (ties by length, each row sorted by hand),
    the penalised one that of the lists with LKH-3's ties; an instance no file holds is refused by name."""
    import numpy as np

    from benchmarks.depth import coverage
    from benchmarks.probes.alpha_ties import main
    from problems.alpha import alpha_candidates, pool_alpha
    rng = np.random.default_rng(7)
    coords = np.round(rng.random((60, 2)) * 1000)
    lines = ["NAME : toy60", "TYPE : TSP", "DIMENSION : 60", "EDGE_WEIGHT_TYPE : EUC_2D", "NODE_COORD_SECTION"]
    lines += [f"{c + 1} {x:.0f} {y:.0f}" for c, (x, y) in enumerate(coords)] + ["EOF"]
    (tmp_path / "toy60.tsp").write_text("\n".join(lines) + "\n")
    good = np.argsort(np.arctan2(coords[:, 1] - 500, coords[:, 0] - 500))
    np.savez(tmp_path / "a.npz", **{"toy60|LKH-3 POPMUSIC|0|60": rng.permutation(60)})
    np.savez(tmp_path / "b.npz", **{"toy60|FocusedACO|0|60": good})
    main(str(tmp_path), "toy60", [str(tmp_path / "a.npz"), str(tmp_path / "b.npz")])
    row = capsys.readouterr().out.splitlines()[1].split(" | ")
    toy = TSP.from_file(tmp_path / "toy60.tsp")
    assert row[1] == f"{toy.evaluate(good)} (?)"
    own, run = alpha_candidates(toy, 5)
    penalised, _ = alpha_candidates(toy, 5, run, penalised_ties=True)
    u, v, length, alpha = pool_alpha(toy, run, False)
    edges = {}
    for a, b, x, c in zip(u.tolist(), v.tolist(), alpha.tolist(), length.tolist()):
        edges.setdefault(a, []).append((x, c, b))
        edges.setdefault(b, []).append((x, c, a))
    plain = np.array([[b for _, _, b in sorted(edges[city])[:5]] for city in range(60)])
    assert [set(r) for r in plain.tolist()] == [set(r) for r in own.tolist()]
    assert row[2] == f"{100 * coverage(good, plain):.2f}"
    assert row[3] == f"{100 * coverage(good, penalised):.2f}"
    (tmp_path / "toy61.tsp").write_text((tmp_path / "toy60.tsp").read_text())
    with pytest.raises(SystemExit, match="no tour of toy61"):
        main(str(tmp_path), "toy61", [str(tmp_path / "a.npz")])


def test_crossover_pairs_shows_what_fusion_adds(tmp_path):
    """crossover_pairs: for every ordered pair of an instance's tours, the parents' gaps and the
    child's with each place alone and fused; a tour and its double bridge (the shorter one known)
    give the shorter fused, the first parent alone; the probe leaves fusion on."""
    import numpy as np

    from benchmarks.probes.crossover_pairs import children
    from lsmgpu.search import partition
    toy = TSP.from_file(TSP.shipped("kroA100"))
    good = toy.start_solution(np.random.default_rng(0))
    bridged = np.r_[good[:10], good[60:80], good[30:60], good[10:30], good[80:]]
    if toy.evaluate(bridged) < toy.evaluate(good):
        good, bridged = bridged, good
    rows = children(toy, {"good": good, "bridged": bridged})
    assert [(row["a"], row["b"]) for row in rows] == [("good", "bridged"), ("bridged", "good")]
    longer = rows[1]
    assert longer["plain_gap"] == longer["a_gap"] > longer["fused_gap"] == longer["b_gap"]
    assert rows[0]["plain_gap"] == rows[0]["fused_gap"] == rows[0]["a_gap"]
    assert partition._Pair.fuse is not None and "lambda" not in partition._Pair.fuse.__qualname__


def test_merge_cost_changes_each_copy_and_times_both_merges():
    """merge_cost: the first row is the tour, each other row a permutation changed from it; the fused
    merge gains at least what each place alone does; too few cities for the changes is refused."""
    import numpy as np

    from benchmarks.probes.merge_cost import changed_tours, merge_seconds
    rng = np.random.default_rng(3)
    toy = TSP(rng.integers(0, 10_000, size=(600, 2)).astype(float))
    tour = toy.start_solution(rng)
    tours = changed_tours(tour, 5, 20, np.random.default_rng(0))
    assert tours.shape == (5, 600) and np.array_equal(tours[0], tour)
    assert all(np.array_equal(np.sort(row), np.arange(600)) and not np.array_equal(row, tour) for row in tours[1:])
    between = toy.edge_distance().between
    (fused_s, fused_gain), (alone_s, alone_gain) = (merge_seconds(tours, between, 1, fused) for fused in (True, False))
    assert fused_gain >= alone_gain >= 0 and fused_s > 0 and alone_s > 0
    with pytest.raises(ValueError, match="300 cities|more than 303"):
        changed_tours(tour[:300], 2, 1, rng)


def test_lkh_from_a_tour_starts_there_in_a_process_of_its_own():
    """lkh_from_tour: one LKH-3 trial from berlin52's optimal tour (LKH's own) keeps its length; from
    a 2-opt move of it that lengthens the tour, one descent takes it back to the optimum; and a run
    from LKH's own start afterwards is not handed the earlier runs' start file, since deleted (in
    one process elkai's LKH would look for it and fail)."""
    pytest.importorskip("elkai")
    import numpy as np

    from benchmarks.probes.lkh_from_tour import lkh_trials
    from lsmgpu.problems import TSP
    path = str(TSP.shipped("berlin52"))
    problem = TSP.from_file(path)
    best, _ = lkh_trials(path, 1, None)
    worse = np.r_[best[:10], best[10:30][::-1], best[30:]]
    assert problem.evaluate(worse) > problem.evaluate(best) == 7542
    for start in (best, worse):
        tour, seconds = lkh_trials(path, 1, start)
        assert sorted(tour.tolist()) == list(range(52)) and problem.evaluate(tour) == 7542 and seconds > 0
    own, _ = lkh_trials(path, 1, None)
    assert sorted(own.tolist()) == list(range(52))


def test_lkh_trial_starts_keep_the_best_tours_edges_of_alpha_zero():
    """kopt_trials.walk_start: a permutation; where every edge of the best tour has α 0 and is among
    the candidates, the walk is the best tour itself (from its random city, either way round);
    with no edge of α 0 it keeps only what the random candidate choices give, not the whole tour."""
    import numpy as np

    from benchmarks.probes.kopt_trials import walk_start
    rng = np.random.default_rng(4)
    best = rng.permutation(60)
    pos = np.empty(60, dtype=np.int64)
    pos[best] = np.arange(60)
    candidates = np.stack([best[(pos + 1) % 60], best[(pos - 1) % 60], rng.integers(0, 60, 60)], axis=1)
    zero = {(min(a, b), max(a, b)) for a, b in zip(best.tolist(), np.roll(best, -1).tolist())}
    for _ in range(5):
        walk = walk_start(best, candidates, zero, rng)
        assert sorted(walk.tolist()) == list(range(60))
        edges = {frozenset(e) for e in zip(walk.tolist(), np.roll(walk, -1).tolist())}
        assert edges == {frozenset((a, b)) for a, b in zero}
    walk = walk_start(best, candidates, set(), rng)
    assert sorted(walk.tolist()) == list(range(60))
    assert {frozenset(e) for e in zip(walk.tolist(), np.roll(walk, -1).tolist())} != {frozenset(e) for e in zero}


def test_depth_configs_read_the_chain_alone():
    """A depth config's ``alone`` token gives the search chain_alone and its label says so; without
    it no chain_alone is passed (TourSegments' options have none)."""
    from benchmarks.depth import _label, _search_options
    options = _search_options(["chain100", "move5", "alone", "restart_after=30"])
    assert options["chain_alone"] is True and options["lk_depth"] == 100 and options["lk_move"] == 5
    assert _label(options) == ", LK chain 100 of 5-opt moves alone, restart_after=30"
    assert "chain_alone" not in _search_options(["chain100", "move5"])


def test_depth_configs_give_ascent_and_ties_to_the_instance(tmp_path, monkeypatch):
    """A depth config's ascent= and ties= are the instance's ``ascent_period`` and ``alpha_ties``
    (TSP.from_file's options, not the search's), and its rows' strategy names them."""
    import json

    from benchmarks import depth
    from benchmarks.__main__ import main
    read, real = [], depth.TSP.from_file
    monkeypatch.setattr(depth.TSP, "from_file", staticmethod(lambda path, **options: read.append(options) or
                                                             real(path, **options)))
    main(["depth", "--quick", "--backend", "cpu", "--depth-configs", "faco:alpha:ties=length:ascent=half",
          "--depth-lkh", "none", "--out", str(tmp_path)])
    assert read and all(options == {"alpha_ties": "length", "ascent_period": "half"} for options in read)
    rows = [row for row in json.loads((tmp_path / "results.json").read_text())["rows"] if row["table"] == "depth"]
    assert rows and all("alpha_ties=length" in row["strategy"] and "ascent_period=half" in row["strategy"] for row in rows)


def test_lk_descent_alpha_rows_read_the_ascents_penalties(monkeypatch):
    """An lk-descent row over "alpha" descends as the searches do: the 5 α-nearest and, for the
    5-opt chain's gain criterion, the ascent's penalties (a table alone would carry none)."""
    from types import SimpleNamespace

    import numpy as np

    from benchmarks import depth
    from lsmgpu import DontLookDescent
    from lsmgpu.parallel import improve
    from lsmgpu.problems import TSP
    from lsmgpu.problems.candidates import greedy_tour
    problem = TSP.from_file(TSP.shipped("kroA100"))
    start = greedy_tour(problem.coords)
    bound = []
    monkeypatch.setattr(depth, "improve", lambda p, x, descent, **o: bound.append(descent.bound(p)) or improve(p, x, descent, **o))
    args = SimpleNamespace(backend_choice="cpu", meta={"device": "cpu", "commit": "test"})
    row = depth._descent(args, problem, start, 0.0, "alpha:chain8:move5:alone")
    assert all(rules.penalties is not None and rules.k == 5 and rules.chain_alone for rules in bound)
    assert np.array_equal(bound[-1].penalties, problem.penalties())
    direct = improve(problem, start[None], DontLookDescent("alpha", lk_depth=8, lk_move=5, chain_alone=True), backend="cpu")
    assert row["gap_pct"] == round(100 * problem.gap(direct.fitness[0]), 3)


def test_depth_summary_reads_the_target_off_the_rows():
    """depth-summary: per strategy and budget, each instance's gap averaged over its seeds, their
    mean, LKH-3's better configuration per instance (each averaged over its seeds) and its mean, on
    how many instances lsmgpu is at most LKH's, and the target (at most LKH's everywhere, the mean at
    most half of LKH's)."""
    from benchmarks.depth import depth_summary

    def row(instance, strategy, gap, budget=60.0):
        return dict(table="depth", instance=instance, strategy=strategy, budget_s=budget, gap_pct=gap)
    rows = [row("a", "FACO", 0.1), row("a", "FACO", 0.0), row("b", "FACO", 0.02), row("a", "LKH-3 POPMUSIC (1 core)", 0.08),
            row("a", "LKH-3 POPMUSIC (1 core)", 0.02), row("a", "LKH-3 defaults (1 core)", 0.06),
            row("b", "LKH-3 POPMUSIC (1 core)", 0.01), row("b", "LKH-3 defaults (1 core)", None),
            row("a", "FACO", 0.0, budget=15.0), row("b", "FACO", 0.0, budget=15.0),
            row("a", "ILS", 0.01), row("b", "ILS", 0.0)]
    faco, ils, short = depth_summary(rows)
    assert (faco["strategy"], faco["budget_s"], faco["instances"], faco["seeds"]) == ("FACO", 60.0, 2, 1)
    assert faco["mean_gap_pct"] == 0.035 and faco["lkh_mean_gap_pct"] == 0.03            # (0.05 + 0.02) / 2, (0.05 + 0.01) / 2
    assert faco["at_most_lkh"] == "1 of 2" and faco["target_met"] is False
    assert ils["at_most_lkh"] == "2 of 2" and ils["mean_gap_pct"] == 0.005 and ils["target_met"] is True
    assert short["budget_s"] == 15.0 and short["lkh_mean_gap_pct"] is None and short["target_met"] is None
    assert short["at_most_lkh"] == "0 of 0"


def test_the_ant_tail_probe_times_each_build_and_counts_each_ants_checks():
    """benchmarks.probes.ant_tail: "CxA" parses to C colonies of A ants; the timed search keeps the
    iterations after the warm-up only, and their ants' checks are those the colony counted in
    them; a row's checks are in order (median, 99th percentile, most)."""
    from benchmarks.probes import ant_tail
    from lsmgpu.problems import TSP
    assert ant_tail.parse_config("3x448") == (3, 448) and ant_tail.parse_config("192") == (1, 192)
    problem = TSP.from_file(TSP.shipped("berlin52"))

    class Watched(ant_tail.TimedACO):
        def _iterate(self):
            super()._iterate()
            self.seen.append(self.colony.checked())

    search = Watched(problem, ants=3, colonies=2, lk_depth=6, lk_move=5, chain_alone=True, candidates="alpha",
                     backend="cpu", seed=0)
    search.warm_up, search.seen = 2, []
    search.run(iterations=5)
    assert len(search.took) == 3 and all(ms > 0 for ms in search.took)
    assert all(len(c) == 6 for c in search.checks)
    assert sum(int(c.sum()) for c in search.checks) == search.seen[-1] - search.seen[1] > 0
    row = ant_tail.probe(problem, 2, 3, 3, backend="cpu", warm_up=2, depth=6)
    assert row["timed"] == 3 and (row["colonies"], row["ants"]) == (2, 3)
    assert 0 <= row["checks_median"] <= row["checks_p99"] <= row["checks_most"] and row["gap_pct"] >= 0


def test_lists_descent_graph_tours_are_local_optima_and_ants_tours(monkeypatch):
    """lists_descent's graphs of tours: ``local_optima`` gives OPTIMA_RUNS different tours none of
    which a further don't-look descent over the same moves shortens, from random tours and from
    nearest-neighbour tours; ``colony_ants`` keeps
    ANT_GRAPH_ANTS tours after each of ANT_GRAPH_ITERATIONS iterations."""
    import numpy as np

    from benchmarks.probes import lists_descent
    from lsmgpu import DontLookDescent
    from lsmgpu.parallel import improve
    from lsmgpu.problems import TSP
    problem = TSP.from_file(TSP.shipped("eil51"))
    monkeypatch.setattr(lists_descent, "OPTIMA_RUNS", 4)
    optima = lists_descent.local_optima(problem)
    assert optima.shape == (4, 51) and all(sorted(t.tolist()) == list(range(51)) for t in optima)
    assert len({tuple(t) for t in optima}) == 4
    again = improve(problem, optima, DontLookDescent(10), backend="cpu")
    assert np.array_equal(again.fitness, [problem.evaluate(t) for t in optima])
    nn = lists_descent.local_optima(problem, "nn")
    assert nn.shape == (4, 51) and all(sorted(t.tolist()) == list(range(51)) for t in nn)
    again = improve(problem, nn, DontLookDescent(10), backend="cpu")
    assert np.array_equal(again.fitness, [problem.evaluate(t) for t in nn])
    assert len({tuple(t) for t in nn}) > 1
    monkeypatch.setattr(lists_descent, "ANT_GRAPH_ANTS", 3)
    monkeypatch.setattr(lists_descent, "ANT_GRAPH_ITERATIONS", 2)
    history = lists_descent.colony_ants(problem, 0)
    assert len(history) == 2 and all(ants.shape == (3, 51) for ants in history)
    assert all(sorted(t.tolist()) == list(range(51)) for ants in history for t in ants)


def test_the_lists_probe_s_chain_descent_ends_where_no_chain_improves():
    """benchmarks.probes.lists_descent: ``chain_descent`` returns a tour and its length, shorter
    than the start, where a second descent finds nothing; ``descend`` without bridges ends at the
    same length, with them at most there."""
    import numpy as np

    from benchmarks.probes import lists_descent
    from lsmgpu.problems import TSP
    from problems.alpha import alpha_candidates
    problem = TSP.from_file(TSP.shipped("eil51"))
    ascent = problem._held_karp_ascent()
    lists, _ = alpha_candidates(problem, 5, ascent)
    start = np.random.default_rng(3).permutation(problem.n)
    tour, length = lists_descent.chain_descent(problem, start, lists, ascent.pi)
    assert sorted(tour.tolist()) == list(range(51)) and length == problem.evaluate(tour) < problem.evaluate(start)
    assert lists_descent.chain_descent(problem, tour, lists, ascent.pi)[1] == length
    assert lists_descent.descend(problem, start, lists, ascent.pi) == length
    assert lists_descent.descend(problem, start, lists, ascent.pi, bridges=True) <= length


def test_the_depth_table_runs_the_command_itself():
    """``command_row``: ``lsmgpu solve`` in a process of its own, as a user runs it; its row's length and gap
    are those of the tour it wrote (checked against the fitness of its --json figures), its
    iterations and stop criterion those figures', the strategy the method it ran."""
    from types import SimpleNamespace

    from benchmarks.depth import cold_caches, command_row
    from lsmgpu.problems import TSP
    problem = TSP.from_file(TSP.shipped("kroA100"))
    caches = cold_caches("/tmp/run")             # lsmgpu's and CUDA's (NVRTC's) caches, both fresh
    assert caches == {"LSMGPU_CACHE": "/tmp/run/cache", "CUDA_CACHE_PATH": "/tmp/run/cuda-cache"}
    args = SimpleNamespace(meta=dict(device="test", commit="test"), backend_choice="cpu")
    for cold in (False, True):
        row, tour = command_row(args, TSP.shipped("kroA100"), 1.0, 3, cold=cold)
        assert sorted(tour.tolist()) == list(range(problem.n))
        assert row["length"] == problem.evaluate(tour) and row["gap_pct"] == round(100 * problem.gap(row["length"]), 4)
        assert row["strategy"] == "lsmgpu solve (DontLookILS" + (", cold cache)" if cold else ")")
        assert row["iterations"] >= 0 and row["status"] in ("seconds", "target") and row["seconds"] > 0
        assert row["kernel_build_s"] is None                    # no kernel built on the CPU


def test_the_command_s_row_keeps_its_build_wait(monkeypatch):
    """``command_row`` reads the seconds the command's run waited for its kernel builds (its --json
    figures' timings) into ``kernel_build_s``, and the figures' iterations and method."""
    import json
    import subprocess
    from types import SimpleNamespace

    import numpy as np

    from benchmarks import depth
    from lsmgpu.problems import TSP
    path = TSP.shipped("kroA100")
    problem = TSP.from_file(path)

    def command(argv, **options):
        out = argv[argv.index("--out") + 1]
        problem.write_solution(np.random.default_rng(0).permutation(problem.n), out)
        length = problem.evaluate(problem.read_solution(out))
        with open(argv[argv.index("--json") + 1], "w") as file:
            json.dump(dict(fitness=float(length), iterations=3, status="seconds", algorithm="FocusedACO",
                           timings={"evaluate": 1.0, "build": 42.917}), file)
        return SimpleNamespace(returncode=0, stdout="", stderr="")
    monkeypatch.setattr(subprocess, "run", command)
    args = SimpleNamespace(meta=dict(device="test", commit="test"), backend_choice="cuda")
    row, _ = depth.command_row(args, path, 60.0, 0, cold=True)
    assert row["kernel_build_s"] == 42.92 and row["iterations"] == 3
    assert row["strategy"] == "lsmgpu solve (FocusedACO, cold cache)"


def test_the_harness_times_full_builds_and_its_user_rows_run_as_users_do(monkeypatch, tmp_path):
    """Importing the harness turns lsmgpu's quick builds first off where the environment does not set
    them (its rows after a warm-up time the fully built kernels), and the processes it starts inherit
    that; a row run as a user's (`lsmgpu solve` in its own process, the overrun children) gets the
    environment without it, and a cold one empty caches under its folder."""
    import importlib
    import os

    import benchmarks
    from benchmarks.depth import user_environment
    from lsmgpu.backends.cuda import driver
    monkeypatch.setenv("LSMGPU_QUICK_BUILDS", "")              # recorded: the test's setting is undone after it
    monkeypatch.delenv("LSMGPU_QUICK_BUILDS")
    importlib.reload(benchmarks)
    assert os.environ["LSMGPU_QUICK_BUILDS"] == "0"
    monkeypatch.setattr(driver.nvrtc, "fast_compile", lambda: True)
    assert not driver.quick_builds()
    user = user_environment()
    assert "LSMGPU_QUICK_BUILDS" not in user and user["PATH"] == os.environ["PATH"]
    cold = user_environment(str(tmp_path))
    assert cold["LSMGPU_CACHE"].startswith(str(tmp_path)) and cold["CUDA_CACHE_PATH"].startswith(str(tmp_path))
    monkeypatch.setattr(os, "environ", user)
    assert driver.quick_builds()
    monkeypatch.setenv("LSMGPU_QUICK_BUILDS", "1")
    importlib.reload(benchmarks)
    assert os.environ["LSMGPU_QUICK_BUILDS"] == "1"                 # set by the caller: kept


@pytest.mark.nvcc
def test_the_kopt_clocks_probe_instruments_only_the_ants_kernel_and_it_compiles():
    """benchmarks.probes.kopt_clocks: each of its edits lands once in the rendered ants' kernel (5-opt
    chains alone, tours in shared memory or not) and the instrumented source compiles for sm_90; a
    descent-only source (no ants' kernel) and another template come back unchanged."""
    from benchmarks.probes.kopt_clocks import EDITS, instrumented
    from lsmgpu.backends.cuda.dontlook import KOPT_CHAIN_BLOCK
    from lsmgpu.backends.dontlook_chains import WALK_TRIES
    from lsmgpu.backends.kopt import KOPT_CANDIDATES, kopt_context
    from lsmgpu.cubins import nvcc_compile
    from lsmgpu.kernels import render_skeleton
    device = TSP.from_file(TSP.shipped("berlin52")).edge_distance().device_source()
    context = dict(K=5, S=3, OR3=0, LK=0, LK_DEPTH=100, LK_STAGE=3, LK_MOVE=5, **kopt_context(KOPT_CANDIDATES),
                   KO_ALONE=1, BLOCK=KOPT_CHAIN_BLOCK, DISTANCE=device, WALK_TRIES=WALK_TRIES, SEGMENT_ROWS=0,
                   TABLE_WIDTH=2)
    clocked = instrumented(render_skeleton)
    for shared in (False, True):
        plain = render_skeleton("dontlook.cu.j2", SHARED_ROWS=shared, **context)
        source = clocked("dontlook.cu.j2", SHARED_ROWS=shared, **context)
        assert all(source.count(replacement) == 1 for _, replacement in EDITS) and "ko_clock" not in plain
        assert nvcc_compile(source)
    descent = dict(context, SHARED_ROWS=False, KERNELS=["descend"])
    assert clocked("dontlook.cu.j2", **descent) == render_skeleton("dontlook.cu.j2", **descent)


def test_the_bridge_joins_probe_checks_tours_whole_and_finds_a_double_bridges_undoing():
    """benchmarks.probes.bridge_joins: ``one_tour`` keeps a 2-opt move and refuses the split into two
    cycles and a removed edge that is not in the tour; on berlin52's optimal tour with a double bridge
    made in it, improving joins are found, each of the 2-opt ones undoing at most what the bridge
    cost, and on the optimal tour none; nor any of the second kind there (``second_kind``), while on
    the bridged tour it finds some, each gaining at most what the bridge cost."""
    import numpy as np
    from benchmarks.probes.bridge_joins import joins, one_tour, second_kind
    from lsmgpu.search import DontLookILS
    from lsmgpu.search.dontlook import DontLookDescent
    problem = TSP.from_file(TSP.shipped("berlin52"))
    best = DontLookILS(problem, backend="cpu", seed=0, candidates="alpha", lk_depth=8, lk_move=5,
                       chain_alone=True).run(iterations=30)
    assert best.fitness == 7542                                      # berlin52's optimum
    x = np.asarray(best.solution, dtype=np.int64)
    a, b, c, d = (int(v) for v in x[[0, 1, 5, 6]])
    assert one_tour(x, [(a, b), (c, d)], [(a, c), (b, d)])
    assert not one_tour(x, [(a, b), (c, d)], [(a, d), (b, c)])
    assert not one_tour(x, [(a, c)], [(a, b)])
    cand = np.ascontiguousarray(DontLookDescent("alpha", lk_depth=12, lk_move=5).bound(problem).candidates[:, :5],
                                dtype=np.int64)
    between = problem.edge_distance().between
    dist = lambda u, v: between(*np.broadcast_arrays(np.asarray(u), np.asarray(v))).astype(np.float64)  # noqa: E731
    assert joins(x, cand, dist)["two"] == joins(x, cand, dist)["three"] == 0
    y = np.concatenate([x[:10], x[16:22], x[10:16], x[22:]])
    cost = problem.evaluate(y) - problem.evaluate(x)
    found = joins(y, cand, dist)
    assert cost > 0 and found["two"] > 0 and 0 < found["best_two"] <= cost and found["best_three"] <= cost
    assert second_kind(x, cand, dist)["joins3"] == 0
    second = second_kind(y, cand, dist)
    assert second["splits3"] > 0 and second["joins3"] > 0 and 0 < second["best_join3"] <= cost
