"""The lsmgpu command, end to end on shipped instances."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

from lsmgpu import DontLookILS, FocusedACO
from lsmgpu.cli import main
from lsmgpu.problems import QAP, TSP
from lsmgpu.problems.qap import read_solution


def test_solve_qap_writes_solution(tmp_path, capsys):
    """`lsmgpu solve tai12a` reaches the optimum, prints the gap and writes a valid .sln."""
    out = tmp_path / "tai12a.sln"
    assert main(["solve", "tai12a", "--backend", "cpu", "--iterations", "5000", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "best fitness: 224416" in printed and "gap to best known 224416: 0.00 %" in printed
    value, p = read_solution(out)
    assert value == QAP.from_file(QAP.shipped("tai12a")).evaluate(p) == 224416


def test_solve_tsp_file_with_ils(tmp_path, capsys):
    """ILS on a .tsp path writes a tour whose length is the printed fitness."""
    out = tmp_path / "b.tour"
    path = str(TSP.shipped("berlin52"))
    assert main(["solve", path, "--algorithm", "ils", "--iterations", "50", "--backend", "cpu",
                 "--seed", "1", "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    lines = out.read_text().split("\n")
    tour = np.array([int(v) - 1 for v in lines[lines.index("TOUR_SECTION") + 1:lines.index("-1")]])
    length = TSP.from_file(path).evaluate(tour)
    assert f"best fitness: {length}" in printed


def test_bad_instance_exits_2(tmp_path, capsys):
    """A missing or malformed file gives exit status 2 and a one-line message, no traceback."""
    bad = tmp_path / "bad.tsp"
    bad.write_text("NAME: x\nTYPE: TSP\nEDGE_WEIGHT_TYPE: EUC_2D\n")
    assert main(["solve", str(bad)]) == 2
    assert "no DIMENSION" in capsys.readouterr().err
    assert main(["solve", "no-such-instance"]) == 2


def test_console_script_runs_with_time_budget():
    """`python -m lsmgpu.cli` with --time stops by seconds."""
    run = subprocess.run([sys.executable, "-m", "lsmgpu.cli", "solve", "nug12", "--time", "0.3",
                          "--backend", "cpu", "--quiet"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "best fitness" in run.stdout


def test_solve_dimacs_graph(tmp_path, capsys):
    """A .col graph is coloured with --colors; without it the command says what is missing."""
    from lsmgpu.problems.coloring import random_graph
    edges = random_graph(40, 0.3, 1, planted_colors=3)
    path = tmp_path / "g.col"
    path.write_text(f"p edge 40 {len(edges)}\n" + "".join(f"e {u + 1} {v + 1}\n" for u, v in edges))
    assert main(["solve", str(path), "--colors", "3", "--backend", "cpu", "--iterations", "3000", "--quiet"]) == 0
    assert "best fitness: 0" in capsys.readouterr().out
    assert main(["solve", str(path)]) == 2
    assert "--colors" in capsys.readouterr().err


def test_the_tsp_start_tour_is_chosen_with_start(tmp_path, capsys):
    """--start sets a TSP's start tour (hill climbing with no iteration writes it back: the greedy
    tour); many tabu starts from one tour are warned about, from drawn tours not; a bad kind or a
    non-TSP instance exits 2 naming it."""
    from lsmgpu.problems.candidates import greedy_tour
    out, path = tmp_path / "k.tour", str(TSP.shipped("kroA100"))
    assert main(["solve", path, "--algorithm", "hc", "--start", "greedy", "--iterations", "0", "--backend", "cpu",
                 "--out", str(out), "--quiet"]) == 0
    lines = out.read_text().split("\n")
    tour = np.array([int(v) - 1 for v in lines[lines.index("TOUR_SECTION") + 1:lines.index("-1")]])
    problem = TSP.from_file(path)
    assert problem.evaluate(tour) == problem.evaluate(greedy_tour(problem.coords))
    with pytest.warns(UserWarning, match="the 3 TabuSearch starts begin from one solution"):
        assert main(["solve", path, "--start", "greedy", "--algorithm", "tabu", "--starts", "3", "--iterations", "5", "--backend", "cpu",
                     "--quiet"]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert main(["solve", path, "--start", "nearest", "--algorithm", "tabu", "--starts", "3", "--iterations", "5", "--backend", "cpu",
                     "--quiet"]) == 0
    capsys.readouterr()
    assert main(["solve", path, "--start", "spiral", "--backend", "cpu"]) == 2
    assert "spiral" in capsys.readouterr().err
    assert main(["solve", "chr12a", "--start", "greedy", "--backend", "cpu"]) == 2
    assert "--start applies to a TSPLIB .tsp" in capsys.readouterr().err


def test_solve_many_starts(tmp_path, capsys):
    """--starts runs spawned-seed starts with one bar over them and reports the best start (its
    --json figures count the starts that ran)."""
    import json

    from lsmgpu.cli import main
    figures = tmp_path / "starts.json"
    assert main(["solve", "chr12a", "--starts", "3", "--iterations", "50", "--backend", "cpu", "--quiet",
                 "--json", str(figures)]) == 0
    out, err = capsys.readouterr()
    assert "3 starts of tabu" in err and "3 of 3 ran" in err and "best fitness:" in out
    written = json.loads(figures.read_text())
    assert (written["runs"], written["ran"], written["lost"]) == (3, 3, []) and f"{written['fitness']:.0f}" in out
    assert main(["solve", "chr12a", "--starts", "0", "--backend", "cpu"]) == 2
    # islands: exchanges between the batched starts; refused with one start after another
    assert main(["solve", "chr12a", "--starts", "4", "--exchange-every", "64", "--iterations", "256",
                 "--backend", "cpu", "--quiet"]) == 0
    assert main(["solve", "chr12a", "--starts", "4", "--exchange-every", "64", "--algorithm", "hc",
                 "--backend", "cpu", "--quiet"]) == 2
    assert "exchange_every" in capsys.readouterr().err
    capsys.readouterr()
    # batched tabu starts: the bar counts their iterations and shows the best so far
    assert main(["solve", "chr12a", "--starts", "3", "--iterations", "100", "--backend", "cpu"]) == 0
    err = capsys.readouterr().err
    assert "100/100" in err and "it" in err and "best=" in err


def test_solve_ils_over_candidate_lists_with_polish(capsys):
    """ILS over candidate 2-opt is polished by Or-opt then 3-opt by default, by either alone on
    request, or not at all: each prints the length the same ILS reaches from Python; --polish
    outside an ILS over candidate lists is refused."""
    from lsmgpu import CandidateThreeOpt, IteratedLocalSearch, OrOpt, candidate_polish
    tsp = TSP.from_file(TSP.shipped("kroA100"), neighbourhood="2opt-candidates")
    cand = tsp.neighbourhood.candidates
    for option, polish in (([], candidate_polish(cand)), (["--polish", "oropt"], OrOpt(cand)),
                           (["--polish", "3opt-candidates"], CandidateThreeOpt(cand)), (["--polish", "none"], None)):
        expected = IteratedLocalSearch(tsp, seed=0, backend="cpu", polish=polish).run(20).fitness
        assert main(["solve", "kroA100", "--algorithm", "ils", "--neighbourhood", "2opt-candidates", "--iterations", "20",
                     "--backend", "cpu", "--quiet", *option]) == 0
        assert f"best fitness: {expected}\n" in capsys.readouterr().out
    assert main(["solve", "kroA100", "--neighbourhood", "2opt", "--polish", "oropt", "--backend", "cpu", "--quiet"]) == 2
    assert "--polish applies to --algorithm ils" in capsys.readouterr().err


def _chosen(monkeypatch, argv, gpu=False):
    """The flags `lsmgpu solve` runs with after its defaults, the search itself replaced."""
    import lsmgpu.cli as cli
    import lsmgpu.cli_method as method
    seen = {}
    monkeypatch.setattr(method, "cuda_available", lambda: (gpu, "a test GPU" if gpu else "no GPU here"))
    monkeypatch.setattr(cli, "_run", lambda args, problem, iterations: seen.update(vars(args), problem=problem))
    assert main(["solve", *argv, "--quiet"]) == 2          # the replaced search returns no result
    return seen


def test_solve_picks_the_measured_default_per_problem_type_and_backend(monkeypatch):
    """TSP on the CPU: the don't-look ILS chain where it has coordinates, else (and with --starts,
    --neighbourhood or --polish) an ILS over the ILS's own default; QAP on a GPU: 256 island
    starts; QAP on the CPU: one tabu search; given flags win; no budget means 10 s."""
    tsp = _chosen(monkeypatch, ["berlin52"])
    assert tsp["algorithm"] == "dontlook-ils" and tsp["starts"] == 1 and tsp["seconds"] == 10.0
    for flags in (["--starts", "4"], ["--neighbourhood", "2opt-candidates"], ["--polish", "oropt"]):
        assert _chosen(monkeypatch, ["berlin52", *flags])["algorithm"] == "ils"
    assert _chosen(monkeypatch, ["berlin52"])["problem"].default_ils()["neighbourhood"].move_kind == "twoopt"
    gpu = _chosen(monkeypatch, ["tai12a"], gpu=True)
    assert (gpu["algorithm"], gpu["starts"], gpu["exchange_every"]) == ("tabu", 256, 1000)
    cpu = _chosen(monkeypatch, ["tai12a"])
    assert (cpu["algorithm"], cpu["starts"], cpu["exchange_every"]) == ("tabu", 1, None)
    given = _chosen(monkeypatch, ["tai12a", "--starts", "8", "--iterations", "30"], gpu=True)
    assert (given["starts"], given["exchange_every"], given["seconds"], given["iterations"]) == (8, None, None, 30)
    assert _chosen(monkeypatch, ["tai12a", "--algorithm", "hc"])["seconds"] == 10.0   # or its local optimum


def test_solve_gives_the_cpu_chain_the_5opt_chains_where_its_budget_allows(monkeypatch, tmp_path):
    """On the CPU the don't-look ILS chain, chosen or given (--algorithm dontlook-ils; on a GPU the
    chains keep their own defaults), takes the 5-opt chains of FIVE_OPT_DEPTH levels alone over
    the α-nearest where the run has CPU_FIVE_OPT_SECONDS_PER_CITY seconds a city or more (berlin52:
    52 times that), none of --candidates, --lk-depth, --lk-move given (--no-chain-alone kept), and
    none of focused ACO's restarts or lists; without seconds (--iterations alone) the 2-opt + Or-opt
    chain, with neither the command's 10 s (DEFAULT_SECONDS) decide; a resumed run keeps the options its
    checkpoint holds."""
    import lsmgpu.cli_population as defaults
    monkeypatch.setattr(defaults, "CPU_FIVE_OPT_SECONDS_PER_CITY", 0.5)          # berlin52: 26 s
    five = ("alpha", defaults.FIVE_OPT_DEPTH, 5, True)
    names = ("candidates", "lk_depth", "lk_move", "chain_alone")
    for flags, expected in ((["--seconds", "26"], five), (["--seconds", "25.9"], (None,) * 4), ([], (None,) * 4),
                            (["--iterations", "50", "--seconds", "26"], five),
                            (["--iterations", "50"], (None,) * 4), (["--seconds", "30", "--no-chain-alone"],
                                                                    five[:3] + (False,)),
                            (["--seconds", "30", "--lk-depth", "6"], (None, 6, None, None)),
                            (["--seconds", "30", "--candidates", "8"], (8, None, None, None))):
        for given in ([], ["--algorithm", "dontlook-ils"]):
            seen = _chosen(monkeypatch, ["berlin52", *given, *flags])
            assert seen["algorithm"] == "dontlook-ils" and tuple(seen[k] for k in names) == expected, flags
            assert (seen["restart_after"], seen["ant_lists"], seen["moves"]) == (None, None, None)
    assert tuple(_chosen(monkeypatch, ["berlin52", "--algorithm", "dontlook-ils", "--seconds", "26"],
                         gpu=True)[k] for k in names) == (None,) * 4          # the GPU's chains: their own defaults
    monkeypatch.setattr(defaults, "CPU_FIVE_OPT_SECONDS_PER_CITY", 0.1)          # berlin52: 5.2 s, under 10
    assert tuple(_chosen(monkeypatch, ["berlin52"])[k] for k in names) == five
    saved = str(tmp_path / "chain.ckpt")
    DontLookILS(TSP.from_file(TSP.shipped("berlin52")), chains=1, backend="cpu", seed=1, candidates="alpha",
                lk_depth=100, lk_move=5, chain_alone=True).run(iterations=2, seconds=60, checkpoint=saved)
    monkeypatch.setattr(defaults, "CPU_FIVE_OPT_SECONDS_PER_CITY", 10.0)         # its budget alone: too short now
    assert tuple(_chosen(monkeypatch, ["berlin52", "--resume", saved])[k] for k in names) == five


def test_solve_runs_focused_aco_by_default_for_a_tsp_on_a_gpu(monkeypatch, tmp_path):
    """A TSP on a GPU: focused ACO, unless flags ask for starts or a neighbourhood; --chains only
    with the don't-look ILS chains, and their flags refused where they do not apply."""
    assert _chosen(monkeypatch, ["berlin52"], gpu=True)["algorithm"] == "faco"
    saved = str(tmp_path / "run.ckpt")
    FocusedACO(TSP.from_file(TSP.shipped("berlin52")), backend="cpu", seed=1, ants=4).run(1, checkpoint=saved)
    for flags in (["--checkpoint", "run.ckpt"], ["--resume", saved]):          # checkpointed and resumed alike
        assert _chosen(monkeypatch, ["berlin52", *flags], gpu=True)["algorithm"] == "faco"
    for flags in (["--starts", "4"], ["--neighbourhood", "2opt-candidates"], ["--polish", "oropt"]):
        assert _chosen(monkeypatch, ["berlin52", *flags], gpu=True)["algorithm"] == "ils"
    assert _chosen(monkeypatch, ["berlin52", "--algorithm", "dontlook-ils", "--chains", "8"])["chains"] == 8
    assert _chosen(monkeypatch, ["tai12a"], gpu=True)["algorithm"] == "tabu"


@pytest.mark.parametrize("flags,message", [
    (["--algorithm", "ils", "--chains", "4"], "--chains applies to --algorithm dontlook-ils"),
    (["--algorithm", "dontlook-ils", "--starts", "4"], "--starts does not apply to --algorithm dontlook-ils"),
    (["--algorithm", "dontlook-ils", "--polish", "oropt"], "--polish does not apply to --algorithm dontlook-ils"),
    (["--algorithm", "dontlook-ils", "--chains", "0"], "argument --chains: must be at least 1"),
    (["--algorithm", "faco", "--starts", "4"], "--starts does not apply to --algorithm faco"),
    (["--algorithm", "faco", "--exchange-every", "4"], "--exchange-every does not apply to --algorithm faco"),
    (["--algorithm", "faco", "--ants", "0"], "argument --ants: must be at least 1"),
    (["--algorithm", "tabu", "--ants", "4"], "--ants applies to --algorithm acs, mmas or faco"),
    (["--algorithm", "mmas", "--colonies", "2"], "--colonies applies to --algorithm faco"),
    (["--algorithm", "faco", "--colonies", "0"], "argument --colonies: must be at least 1"),
    (["--algorithm", "ils", "--moves", "16"], "--moves applies to --algorithm faco"),
    (["--algorithm", "ils", "--bridges"], "--bridges applies to --algorithm faco"),
    (["--algorithm", "mmas", "--ant-lists", "3"], "--ant-lists applies to --algorithm faco"),
    (["--algorithm", "faco", "--ant-lists", "-1"], "argument --ant-lists: must be at least 0"),
    (["--algorithm", "faco", "--moves", "0"], "argument --moves: must be at least 1"),
])
def test_solve_refuses_what_the_dontlook_chains_do_not_take(flags, message, capsys):
    """Solve refuses what the dontlook chains do not take."""
    assert main(["solve", "berlin52", *flags, "--iterations", "5", "--backend", "cpu", "--quiet"]) == 2
    assert message in capsys.readouterr().err


def test_solve_with_the_dontlook_chains(tmp_path, capsys):
    """`--algorithm dontlook-ils` (here on the CPU, two chains as islands) reaches berlin52's
    optimum, continues from --initial and writes its tour."""
    out = tmp_path / "b.tour"
    assert main(["solve", "berlin52", "--algorithm", "dontlook-ils", "--chains", "2", "--exchange-every", "2",
                 "--iterations", "150", "--backend", "cpu", "--out", str(out), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "DontLookILS on berlin52 (n = 52, 2 chains" in captured.err and "gap to best known 7542: 0.00 %" in captured.out
    tour = TSP.from_file(TSP.shipped("berlin52")).read_solution(str(out))
    assert main(["solve", "berlin52", "--algorithm", "dontlook-ils", "--initial", str(out), "--iterations", "1",
                 "--backend", "cpu", "--quiet"]) == 0
    assert "best fitness: 7542" in capsys.readouterr().out and len(tour) == 52


def test_solve_with_focused_aco(tmp_path, capsys):
    """`--algorithm faco` (on the CPU, 8 ants) reaches berlin52's optimum and writes its tour."""
    out = tmp_path / "b.tour"
    assert main(["solve", "berlin52", "--algorithm", "faco", "--ants", "8", "--iterations", "30", "--backend", "cpu",
                 "--out", str(out), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "FocusedACO on berlin52 (n = 52, 8 ants moving 128 cities" in captured.err
    assert "gap to best known 7542: 0.00 %" in captured.out
    assert TSP.from_file(TSP.shipped("berlin52")).fitness(TSP.from_file(TSP.shipped("berlin52")).read_solution(str(out))) == 7542


def test_solve_with_focused_aco_colonies(capsys):
    """`--colonies 2 --moves 16` runs two colonies of --ants ants moving 16 cities each, says so, and
    reaches berlin52's optimum."""
    assert main(["solve", "berlin52", "--algorithm", "faco", "--ants", "4", "--colonies", "2", "--moves", "16",
                 "--iterations", "30", "--backend", "cpu", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "FocusedACO on berlin52 (n = 52, 2 colonies of 4 ants moving 16 cities" in captured.err
    assert "gap to best known 7542: 0.00 %" in captured.out


def test_solve_with_focused_aco_bridges(capsys):
    """`--bridges` gives the ants bridging moves, says so, and reaches berlin52's optimum."""
    assert main(["solve", "berlin52", "--algorithm", "faco", "--ants", "8", "--bridges", "--iterations", "30",
                 "--backend", "cpu", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "descents, bridging moves" in captured.err
    assert "gap to best known 7542: 0.00 %" in captured.out


def test_solve_with_lists_from_the_ants_tours(capsys):
    """`--ant-lists N` makes the ants' candidate lists over their tours after N iterations, says so,
    and reaches berlin52's optimum; `--ant-lists 0` leaves the lists as they are."""
    assert main(["solve", "berlin52", "--algorithm", "faco", "--ants", "8", "--ant-lists", "3", "--iterations", "30",
                 "--backend", "cpu", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "descents, candidate lists from the ants' tours after 3 iterations" in captured.err
    assert "gap to best known 7542: 0.00 %" in captured.out
    assert main(["solve", "berlin52", "--algorithm", "faco", "--ants", "8", "--ant-lists", "0", "--iterations", "2",
                 "--backend", "cpu", "--quiet"]) == 0
    assert "the ants' tours" not in capsys.readouterr().err


def test_solve_time_counts_from_the_command_start(monkeypatch):
    """--time is wall time from main(): reading the instance comes out of it."""
    import time
    import lsmgpu.cli as cli
    started = time.perf_counter()
    seen = _chosen(monkeypatch, ["berlin52", "--time", "5"])
    assert started <= seen["t0"] <= time.perf_counter()
    assert cli.DEFAULT_SECONDS == 10.0


def test_solve_with_a_short_tabu_search_on_every_ant(capsys):
    """`--local-search tabu` gives every ant (or child) a short tabu search, `dontlook` every tour
    a don't-look descent; the summary names it."""
    assert main(["solve", "tai12a", "--algorithm", "mmas", "--ants", "8", "--local-search", "tabu",
                 "--iterations", "3", "--backend", "cpu", "--seed", "0"]) == 0
    assert "ShortTabuSearch(iterations=None" in capsys.readouterr().err
    assert main(["solve", "berlin52", "--algorithm", "ga", "--genes", "16", "--local-search", "dontlook",
                 "--iterations", "2", "--backend", "cpu", "--seed", "0"]) == 0
    assert "DontLookDescent(candidates=problem's, segment=3)" in capsys.readouterr().err


def test_solve_with_the_genetic_algorithm(tmp_path, capsys):
    """`--algorithm ga` runs the GA (plain by default, memetic with --local-search auto) and
    writes its best tour; colony and GA options are refused where they do not apply."""
    out = tmp_path / "b.tour"
    assert main(["solve", "berlin52", "--algorithm", "ga", "--genes", "64", "--groups", "2", "--iterations", "20",
                 "--backend", "cpu", "--seed", "0", "--out", str(out), "--quiet"]) == 0
    assert "best fitness" in capsys.readouterr().out and out.is_file()
    assert main(["solve", "berlin52", "--algorithm", "ga", "--genes", "16", "--local-search", "auto",
                 "--iterations", "3", "--backend", "cpu", "--quiet"]) == 0
    assert main(["solve", "berlin52", "--algorithm", "ils", "--genes", "16", "--iterations", "3",
                 "--backend", "cpu", "--quiet"]) != 0
    assert "--genes and --groups apply to --algorithm ga" in capsys.readouterr().err
    assert main(["solve", "berlin52", "--algorithm", "ga", "--ants", "16", "--iterations", "3",
                 "--backend", "cpu", "--quiet"]) != 0


def test_solve_checkpoint_and_resume_end_as_one_run(tmp_path, capsys):
    """--checkpoint after 150 iterations, then --resume to 300, prints the same best fitness and
    writes the same solution as one run of 300 iterations (seeded, iteration budgets)."""
    whole, part, resumed = tmp_path / "whole.sln", tmp_path / "part.sln", tmp_path / "resumed.sln"
    saved = tmp_path / "run.ckpt"
    common = ["solve", "tai12a", "--backend", "cpu", "--quiet", "--seed", "4"]
    assert main(common + ["--iterations", "300", "--out", str(whole)]) == 0
    one = capsys.readouterr().out
    assert main(common + ["--iterations", "150", "--checkpoint", str(saved), "--out", str(part)]) == 0
    capsys.readouterr()
    assert saved.exists()
    assert main(common + ["--iterations", "300", "--resume", str(saved), "--out", str(resumed)]) == 0
    two = capsys.readouterr().out
    assert one.splitlines()[0] == two.splitlines()[0]          # best fitness
    assert "300 iterations" in two
    assert whole.read_text() == resumed.read_text()


def check_colony_resume_from_the_command(tmp_path, flags):
    whole, resumed, saved = tmp_path / "whole.sol", tmp_path / "resumed.sol", tmp_path / "run.ckpt"
    common = ["solve", "kroA100", "--ants", "8", "--seed", "3", "--quiet", *flags]
    assert main(common + ["--iterations", "30", "--out", str(whole)]) in (0, 1)
    assert main(common + ["--iterations", "15", "--checkpoint", str(saved)]) in (0, 1)
    assert main(common + ["--iterations", "30", "--resume", str(saved), "--out", str(resumed)]) in (0, 1)
    assert resumed.read_text() == whole.read_text()


def test_focused_aco_checkpoint_and_resume_from_the_command(tmp_path):
    """--algorithm faco --checkpoint at 15 iterations, --resume to 30: the same tour as one run of 30."""
    check_colony_resume_from_the_command(tmp_path, ["--algorithm", "faco", "--backend", "cpu"])


@pytest.mark.gpu
def test_the_default_tsp_search_on_a_gpu_resumes_from_the_command(tmp_path):
    """On a GPU the default (focused ACO) with --checkpoint, then --resume: as one run."""
    check_colony_resume_from_the_command(tmp_path, ["--backend", "cuda"])


def test_solve_budget_flags(capsys):
    """--seconds (with --time its alias), --target and --stagnation end a run by their own status."""
    assert main(["solve", "tai12a", "--backend", "cpu", "--quiet", "--seconds", "0.5", "--target", "1e12"]) == 0
    assert "stopped by target" in capsys.readouterr().out
    assert main(["solve", "tai12a", "--backend", "cpu", "--quiet", "--time", "30", "--stagnation", "40"]) == 0
    assert "stopped by stagnation" in capsys.readouterr().out
    assert main(["solve", "tai12a", "--backend", "cpu", "--quiet", "--target", "nan"]) == 2
    assert "--target: must be a finite number" in capsys.readouterr().err


def test_checkpoint_every_alone_is_refused(tmp_path, capsys):
    """--checkpoint-every without --checkpoint is refused in one line."""
    assert main(["solve", "tai12a", "--backend", "cpu", "--checkpoint-every", "5"]) == 2
    assert "--checkpoint-every needs --checkpoint" in capsys.readouterr().err


def test_many_starts_checkpoint_and_resume_from_the_command(tmp_path, capsys):
    """--starts 3 (batched tabu searches) writes a checkpoint at 40 iterations; --resume takes it to
    80 and writes the same best as one run of 80."""
    ckpt, half, whole = tmp_path / "run.ckpt", tmp_path / "half.sol", tmp_path / "whole.sol"
    common = ["solve", "tai12a", "--backend", "cpu", "--starts", "3", "--seed", "2", "--quiet", "--target", "0"]
    assert main(common + ["--iterations", "80", "--out", str(whole)]) in (0, 1)
    assert main(common + ["--iterations", "40", "--checkpoint", str(ckpt)]) in (0, 1)
    assert main(common + ["--iterations", "80", "--resume", str(ckpt), "--out", str(half)]) in (0, 1)
    assert half.read_text() == whole.read_text()


def test_the_progress_bar_shows_the_best_and_its_gap_whenever_it_changes():
    """The bar's postfix follows every new best (not every 16th iteration: a round of the tour
    segments takes seconds) with its gap to the known optimum where the problem has one."""
    from lsmgpu.callbacks import State
    from lsmgpu.progress import ProgressBar
    problem = TSP.from_file(TSP.shipped("berlin52"))
    bar = ProgressBar(10, None, problem.gap)
    bar.show()
    bar.on_iteration(State(1, 7600.0, 7600.0, None, 0.1, 10))
    assert bar.bar.postfix == "best=7600, gap=0.769 %"
    bar.on_iteration(State(2, 7542.0, 7542.0, None, 0.2, 20))
    assert bar.bar.postfix == "best=7542, gap=0.000 %"
    plain = ProgressBar(None, 5.0, lambda fitness: None)
    plain.show()
    plain.on_iteration(State(1, 3.0, 3.0, None, 0.1, 10))
    assert plain.bar.postfix == "best=3"
    plain.on_end(type("Result", (), {"fitness": 2.0})())


def test_solve_shows_the_gap_to_a_reference(tmp_path, monkeypatch, capsys):
    """--reference VALUE or uniform (0.7124 sqrt(n A) over the bounding box): the progress bar's
    gap and the printed one are to it; "uniform" on a QAP, 0 and text are refused naming the flag."""
    import lsmgpu.cli as cli
    shown = []

    class Bar(cli.ProgressBar):
        def __init__(self, iterations, seconds, gap=None):
            super().__init__(iterations, seconds, gap)
            shown.append(gap)
    monkeypatch.setattr(cli, "ProgressBar", Bar)
    coords = np.random.default_rng(2).integers(0, 1000, (200, 2))
    path = tmp_path / "u200.tsp"
    path.write_text("NAME : u200\nTYPE : TSP\nDIMENSION : 200\nEDGE_WEIGHT_TYPE : EUC_2D\nNODE_COORD_SECTION\n"
                    + "".join(f"{i + 1} {x} {y}\n" for i, (x, y) in enumerate(coords)) + "EOF\n")
    problem = TSP.from_file(path)
    span = coords.max(axis=0) - coords.min(axis=0)
    assert problem.uniform_length() == pytest.approx(0.7124 * np.sqrt(200 * span[0] * span[1]))
    for given, reference in (("uniform", problem.uniform_length()), ("5000", 5000.0)):
        assert main(["solve", str(path), "--algorithm", "ils", "--iterations", "3", "--backend", "cpu",
                     "--reference", given]) == 0
        printed = capsys.readouterr().out
        fitness = float(printed.split("best fitness: ")[1].split()[0])
        assert shown[-1](fitness) == pytest.approx(fitness / reference - 1)
        assert f"gap to reference {reference:.10g}: {100 * (fitness / reference - 1):.2f} %" in printed
    assert main(["solve", "tai12a", "--iterations", "3", "--reference", "uniform", "--backend", "cpu"]) == 2
    assert "--reference uniform applies to a TSP" in capsys.readouterr().err
    for bad in ("0", "far"):
        assert main(["solve", "berlin52", "--iterations", "3", "--reference", bad]) == 2
        assert "--reference" in capsys.readouterr().err
    with pytest.raises(ValueError, match="Euclidean"):
        TSP(np.ones((5, 2)) * np.arange(5)[:, None], weight_type="GEO").uniform_length()


def test_a_run_the_budget_ended_before_its_first_iteration_says_where(monkeypatch, capsys):
    """A run stopped by seconds at iteration 0 says where the budget went: into the set-up and the
    first descent where it evaluated moves, else into the set-up or the first iteration (a focused
    ant colony's cut iteration counts nothing); a run that made iterations says neither."""
    import dataclasses

    import lsmgpu.cli as cli
    done = FocusedACO(TSP.from_file(TSP.shipped("berlin52")), backend="cpu", seed=1, ants=4).run(1)
    for changes, said in ((dict(iterations=0, evaluations=5, status="seconds"), "0 iterations (the budget went to "
                           "the set-up and the first descent), 5 evaluations"),
                          (dict(iterations=0, evaluations=0, status="seconds"), "0 iterations (the budget ended in "
                           "the set-up or the first iteration), 0 evaluations"),
                          (dict(iterations=1, evaluations=0, status="seconds"), "1 iterations, 0 evaluations")):
        monkeypatch.setattr(cli, "_run", lambda args, problem, iterations: dataclasses.replace(done, **changes))
        assert main(["solve", "berlin52", "--backend", "cpu", "--quiet"]) == 0
        assert said in capsys.readouterr().out


def test_a_gpu_run_whose_kernel_builds_took_long_says_so(monkeypatch, capsys):
    """A GPU run that waited BUILD_NOTE_SECONDS or more for its kernel builds (a first run of its
    configuration on the machine) says how much of its time they took and where they are kept; a
    run that waited less, or a CPU run, says nothing of builds; builds still running when it ends
    (the process waits for them) are said too."""
    import dataclasses

    import lsmgpu.cli as cli
    done = FocusedACO(TSP.from_file(TSP.shipped("berlin52")), backend="cpu", seed=1, ants=4).run(1)
    from lsmgpu.backends.cuda import driver
    for backend, waited, said in (("cuda", 42.9, True), ("cuda", 0.5, False), ("cpu", 42.9, False)):
        ran = dataclasses.replace(done, backend=backend, device="a GPU", seconds=60.0, timings={"build": waited})
        monkeypatch.setattr(cli, "_run", lambda args, problem, iterations: ran)
        assert main(["solve", "berlin52", "--backend", "cpu", "--quiet"]) == 0
        err = capsys.readouterr().err
        assert ("lsmgpu: 42.9 s of the run's 60.0 s went to building its GPU kernels, kept in " in err) == said
        assert ("building" in err) == said and "still running" not in err
    monkeypatch.setattr(driver, "builds_under_way", lambda: 2)               # the ants' build started ahead
    for backend, said in (("cuda", True), ("cpu", False)):
        monkeypatch.setattr(cli, "_run", lambda args, problem, iterations: dataclasses.replace(done, backend=backend))
        assert main(["solve", "berlin52", "--backend", "cpu", "--quiet"]) == 0
        err = capsys.readouterr().err
        assert ("lsmgpu: the process ends when the 2 kernel build(s) still running end" in err) == said


def test_solve_writes_the_run_s_figures_as_json(tmp_path, monkeypatch, capsys):
    """--json FILE: the run's figures (fitness as printed and as the written tour's length, the gap
    to the best known value, iterations, status, method, backend, the instance's size) as JSON;
    a GPU run's kernel-build wait among its timings; an interrupted run writes them too; a file
    that cannot be written is refused before the search, naming the flag."""
    import dataclasses
    import json

    import lsmgpu.cli as cli
    out, figures = tmp_path / "b.tour", tmp_path / "b.json"
    assert main(["solve", "berlin52", "--algorithm", "tabu", "--iterations", "20", "--backend", "cpu", "--seed", "1",
                 "--out", str(out), "--json", str(figures), "--quiet"]) == 0
    printed = capsys.readouterr().out
    written = json.loads(figures.read_text())
    berlin = TSP.from_file(TSP.shipped("berlin52"))
    assert f"best fitness: {written['fitness']:.0f}" in printed and f"figures written to {figures}" in printed
    assert written["fitness"] == berlin.evaluate(berlin.read_solution(out))
    assert written["gap"] == pytest.approx(written["fitness"] / 7542 - 1) and written["best_known"] == 7542
    assert (written["iterations"], written["status"], written["n"], written["backend"]) == (20, "iterations", 52, "cpu")
    assert written["algorithm"] == "TabuSearch" and written["instance"] == "berlin52"
    assert "build" not in written["timings"] and written["reference"] is None and "runs" not in written
    done = FocusedACO(berlin, backend="cpu", seed=1, ants=4).run(1)
    for changes in (dict(backend="cuda", device="a GPU", timings={"build": 7.5}), dict(status="interrupted")):
        monkeypatch.setattr(cli, "_run", lambda args, problem, iterations: dataclasses.replace(done, **changes))
        main(["solve", "berlin52", "--backend", "cpu", "--json", str(figures), "--quiet"])
        written = json.loads(figures.read_text())
        assert written["fitness"] == done.fitness and written["status"] == changes.get("status", done.status)
        assert written["timings"].get("build") == changes.get("timings", {}).get("build")
    capsys.readouterr()
    assert main(["solve", "berlin52", "--iterations", "3", "--json", str(tmp_path / "no" / "b.json")]) == 2
    assert "--json" in capsys.readouterr().err
