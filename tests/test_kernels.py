"""Rendering every kernel and compiling it with nvcc for sm_90 (no GPU needed), and the
errors a broken template or a missing GPU gives."""

import numpy as np
import pytest

from lsmgpu import CandidateThreeOpt, Swap, TabuSearch, ThreeExchange
from lsmgpu.errors import BackendFallback, BackendUnavailable, KernelCompileError
from lsmgpu.cubins import nvcc_compile
from lsmgpu.kernels import KernelSpec, render, template_names
from lsmgpu.problems import PPP, QAP, TSP, GraphColoring, Weierstrass
from lsmgpu.problems.candidates import quadrant_candidates
from lsmgpu.problems.coloring import random_graph

from .backends.linear import LinearBits, ValueTable


def shipped_problems():
    pts = np.random.default_rng(0).uniform(0, 100, (30, 2))
    out = [QAP.from_file(QAP.shipped("tai12a")), QAP.from_file(QAP.shipped("chr12a"))]
    three = QAP.from_file(QAP.shipped("nug12")).with_neighbourhood(ThreeExchange())
    three.name = "nug12-3exchange"
    out.append(three)
    for name in ("tai12a", "chr12a"):   # Taillard's delta table (symmetric and asymmetric)
        table = QAP.from_file(QAP.shipped(name), delta_table=True)
        table.name = f"{name}-table"
        out.append(table)
    for kind in ["EUC_2D", "CEIL_2D", "ATT", "GEO"]:
        for nb in ["swap", "2opt"]:
            t = TSP(pts, weight_type=kind, neighbourhood=nb, name=f"{kind}-{nb}")
            fly = TSP(pts, weight_type=kind, neighbourhood=nb, name=f"{kind}-{nb}-coords")
            fly.matrix = None
            out += [t, fly]
    for kind in ["EUC_2D", "GEO"]:       # candidate 2-opt (moves found from the tour's positions)
        out.append(TSP(pts if kind == "EUC_2D" else pts / 2, weight_type=kind, neighbourhood="2opt-candidates",
                       name=f"{kind}-2opt-candidates"))
    for kind, scale in [("EUC_2D", 1), ("GEO", 0.5), ("EUC_2D", 100)]:   # Or-opt: block exchanges
        coords = np.round(pts * scale) if scale > 1 else pts * scale
        for nb in ("oropt", "3opt-candidates"):
            out.append(TSP(coords, weight_type=kind, neighbourhood=nb, name=f"{kind}-{nb}-x{scale:g}"))
        four = CandidateThreeOpt(quadrant_candidates(coords, 8), reconnections=4)
        out.append(TSP(coords, weight_type=kind, neighbourhood=four, name=f"{kind}-3opt-four-x{scale:g}"))
    for kind in ["EUC_2D", "CEIL_2D"]:
        out.append(TSP(np.round(pts * 100), weight_type=kind, neighbourhood="2opt", name=f"{kind}-integer"))
        out.append(TSP(np.round(pts * 100), weight_type=kind, neighbourhood="swap", name=f"{kind}-integer-swap"))
    out += [LinearBits(np.arange(20), distance=d) for d in (1, 2, 3)]
    out += [ValueTable(np.arange(40).reshape(10, 4))]
    out += [GraphColoring(40, random_graph(40, 0.2, 0), 4)]
    out += [PPP.planted(21, 23, 0, distance=d)[0] for d in (1, 2, 3)]
    out += [Weierstrass(4, form=f, precision=p, m=100) for f in ("luong", "cec") for p in ("float32", "float64")]
    return out


@pytest.mark.nvcc
@pytest.mark.parametrize("problem", shipped_problems(), ids=lambda p: p.name)
def test_every_kernel_compiles_for_sm90(problem):
    """Each problem's kernel compiles to a cubin, and to PTX (the front end's errors and warnings;
    the policies change loads, not shared memory) with every other memory policy, one lane, and
    host generation."""
    names = list(problem.device_data())
    state = list(problem.solution_data(problem.encoding.random(np.random.default_rng(0))))
    assert nvcc_compile(render(problem, memory={n: "global" for n in names}))
    for policy in ("readonly", "texture", "shared"):
        assert b".entry" in nvcc_compile(render(problem, memory={n: policy for n in names}), ptx=True)
    assert nvcc_compile(render(problem, lanes=1), ptx=True)      # what a batch that fills the GPU renders
    if problem.neighbourhood.static:
        assert nvcc_compile(render(problem, memory={n: "global" for n in state}, generation="host"), ptx=True)
    else:
        with pytest.raises(ValueError, match="generation='host'"):
            render(problem, generation="host")


@pytest.mark.nvcc
def test_example_kernel_compiles():
    """The user example's template, found next to its module, compiles."""
    import importlib.util
    import sys
    from pathlib import Path
    path = Path(__file__).parent.parent / "examples" / "maxcut.py"
    spec = importlib.util.spec_from_file_location("maxcut_for_nvcc", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["maxcut_for_nvcc"] = module
    spec.loader.exec_module(module)
    assert nvcc_compile(render(module.MaxCut(module.random_graph(40, 0.3, 0))))


def test_templates_are_installed():
    """The skeleton, every neighbourhood's move code and the shipped problem templates (beside
    their problems) are package data."""
    from importlib import resources
    import lsmgpu
    names = template_names()
    for name in ["skeleton/evaluate.cu.j2", "skeleton/moves.cu.j2", "skeleton/mappings.cu.j2"]:
        assert name in names
    codes = {getattr(lsmgpu, n).device_code for n in lsmgpu.__all__
             if isinstance(getattr(lsmgpu, n), type) and issubclass(getattr(lsmgpu, n), lsmgpu.Neighbourhood)}
    assert {f"moves/{code}.cu.j2" for code in codes - {None}} <= set(names)
    problems = resources.files("lsmgpu.problems")
    for name in ["qap.cu.j2", "tsp.cu.j2", "ppp.cu.j2", "weierstrass.cu.j2", "coloring.cu.j2"]:
        assert problems.joinpath(name).is_file(), name


def test_rendered_source_holds_the_policies_and_not_the_sizes():
    """Each array's policy decides the code; n and the neighbourhood size are constants set
    when the module is loaded, with their values in KernelSpec.constants."""
    qap = QAP.from_file(QAP.shipped("tai12a"))
    src = render(qap, memory={"a": "texture", "b": "shared"})
    assert "__constant__ long long N;" in src and "__constant__ long long NB_SIZE;" in src
    assert "12" not in src.split("#define NI")[0] and "66" not in src
    assert "tex_int(d.a," in src and "unsigned long long arr_a" in src
    assert "d.b = staged_;" in src
    constants = {c.name: c.value for c in KernelSpec(qap).constants()}
    assert constants["N"] == 12 and constants["NB_SIZE"] == 66 and constants["LEN_a"] == 144


def _same_kind_pairs():
    rng = np.random.default_rng(3)
    tsp = lambda n, nb: TSP(np.round(rng.random((n, 2)) * 1000), neighbourhood=nb)  # noqa: E731
    yield "tsp-candidates", tsp(30, "2opt-candidates"), tsp(500, "2opt-candidates")
    yield "tsp-oropt", tsp(40, "oropt"), tsp(90, "oropt")
    flows = rng.integers(0, 9, (15, 15))   # 13..16 facilities: one lanes-per-move class
    distances = rng.integers(0, 9, (15, 15))
    symmetric = [np.triu(m, 1) + np.triu(m, 1).T for m in (flows, distances)]
    yield "qap", QAP.from_file(QAP.shipped("tai12a")), QAP(*symmetric).with_neighbourhood(Swap())
    yield "ppp", PPP.planted(21, 23, 0)[0], PPP.planted(41, 57, 1)[0]
    yield "coloring", GraphColoring(40, random_graph(40, 0.2, 0), 4), GraphColoring(90, random_graph(90, 0.1, 1), 4)
    yield "crowns", Weierstrass(4, seed=1), Weierstrass(9, seed=2)


def test_baked_constants_are_literals_of_the_source():
    """Full 2-opt bakes N and NB_SIZE (measured faster): another n is another source."""
    pts = np.random.default_rng(4).uniform(0, 1000, (60, 2))
    small, large = TSP(pts[:30], neighbourhood="2opt"), TSP(pts, neighbourhood="2opt")
    assert "#define N ((long long)30LL)" in render(small) and "#define NB_SIZE ((long long)405LL)" in render(small)
    assert render(small) != render(large) and "__constant__ long long N;" not in render(small)
    colors = render(GraphColoring(40, random_graph(40, 0.2, 0), 4))
    assert "#define K ((int)4)" in colors and "__constant__ long long N;" in colors


@pytest.mark.parametrize("kind, first, second", list(_same_kind_pairs()), ids=lambda v: v if isinstance(v, str) else "")
def test_instances_of_one_kind_render_one_source(kind, first, second):
    """A second instance (other sizes, other seed) reuses the first one's build: same source,
    other constants."""
    assert render(first) == render(second)
    assert ({c.name: c.value.item() for c in KernelSpec(first).constants()}
            != {c.name: c.value.item() for c in KernelSpec(second).constants()})


class MyTour(TSP):
    """A user's TSP defined outside lsmgpu's problems folder."""


def test_a_subclass_elsewhere_keeps_its_bases_templates():
    """A subclass elsewhere keeps its bases templates."""
    problem = MyTour(np.random.default_rng(0).uniform(0, 100, (30, 2)), name="mine")
    dirs = problem.template_dirs()
    assert dirs[0].name == "tests" and any((d / "tsp_edge.cu.j2").is_file() for d in dirs)
    assert "__global__" in render(problem) and "edge_distance" in problem.edge_distance().device_source()
    ad_hoc = type("AdHoc", (TSP,), {"__module__": "builtins"})       # no file: skipped, not an error
    assert ad_hoc(np.ones((5, 2)) * np.arange(5)[:, None]).template_dirs() == dirs[1:]


class Broken(QAP):
    template = "broken.cu.j2"

    def template_dirs(self):
        return [self._dir]


@pytest.fixture
def broken(tmp_path):
    def make(body):
        (tmp_path / "broken.cu.j2").write_text('{% extends "skeleton/evaluate.cu.j2" %}{% block delta %}'
                                               + body + "{% endblock %}")
        problem = Broken(np.ones((5, 5)), np.ones((5, 5)), name="broken")
        problem._dir = tmp_path
        return problem
    return make


def test_undefined_template_variable_is_a_clear_error(broken):
    """A template naming an unknown variable fails at render time, naming it."""
    with pytest.raises(KernelCompileError, match="undefined name.*no_such_constant"):
        render(broken("{{ no_such_constant }}"))


def test_unknown_array_in_load_is_a_clear_error(broken):
    """load() of an array the problem does not declare says which arrays exist."""
    with pytest.raises(KeyError, match="unknown array 'w'.*'a', 'b'"):
        render(broken('{{ load("w", "0") }}'))


def test_state_arrays_refuse_texture_and_shared():
    """Arrays rewritten on the GPU cannot be read through textures or staged copies."""
    tsp = TSP(np.random.default_rng(0).random((10, 2)) * 100, neighbourhood="2opt")
    for policy in ("texture", "shared"):
        with pytest.raises(ValueError, match="rewritten on the GPU"):
            render(tsp, memory={"succ": policy})


def test_unknown_policy_and_array_names_raise(broken):
    """Unknown policy and array names raise."""
    qap = QAP.from_file(QAP.shipped("tai12a"))
    with pytest.raises(ValueError, match="policy"):
        render(qap, memory={"a": "constant"})
    with pytest.raises(ValueError, match="no device array named"):
        render(qap, memory={"z": "shared"})


@pytest.mark.nvcc
def test_cuda_syntax_error_reports_nvcc_stderr_and_source(broken):
    """Broken CUDA in the delta block: KernelCompileError with nvcc's message and the .cu path."""
    with pytest.raises(KernelCompileError, match="error") as info:
        nvcc_compile(render(broken("__device__ fitness_t delta(const sol_t* x, const move_t m, const data_t& d) "
                                   "{ return undeclared_thing; }")))
    assert info.value.source_path.endswith(".cu")


@pytest.mark.nvcc
def test_a_checked_kernel_is_read_back_from_the_cache(tmp_path, monkeypatch):
    """nvcc_compile keeps each cubin (a PTX check's PTX, named so) in the cache folder: the same source
    and options again are the same bytes without nvcc, other options (or PTX) build anew, and a failed
    build leaves nothing."""
    import subprocess
    import lsmgpu.cubins as cubins
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    source = render(QAP.from_file(QAP.shipped("tai12a")))
    first = nvcc_compile(source)
    builds = []
    run = subprocess.run
    monkeypatch.setattr(cubins.subprocess, "run", lambda args, **kw: builds.append(args) or run(args, **kw))
    assert nvcc_compile(source) == first and builds == []
    assert nvcc_compile(source, options=("-Werror", "all-warnings")) and len(builds) == 1
    assert b".entry" in nvcc_compile(source, ptx=True) and len(builds) == 2
    files = sorted((tmp_path / "cubin").iterdir())
    assert sorted(f.suffix for f in files) == [".cubin", ".cubin", ".ptx"]
    with pytest.raises(KernelCompileError):
        nvcc_compile(source + "\nthis is not CUDA;")
    assert sorted((tmp_path / "cubin").iterdir()) == files and len(files) == 3


@pytest.mark.nvcc
def test_a_cache_folder_that_cannot_be_written_still_gives_the_cubin(tmp_path, monkeypatch):
    """Where the cubin folder cannot be made (a file in its place), the compile check and
    keep_cubin pass the cache over: the cubin comes back, nothing is raised, nothing is kept."""
    from lsmgpu.cubins import keep_cubin
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    (tmp_path / "cubin").write_bytes(b"not a folder")
    assert nvcc_compile(render(QAP.from_file(QAP.shipped("tai12a"))))[:4] == b"\x7fELF"
    keep_cubin(str(tmp_path / "cubin" / "k.cubin"), b"bytes")
    assert (tmp_path / "cubin").read_bytes() == b"not a folder"


def test_a_saved_source_is_never_seen_in_part(monkeypatch, tmp_path):
    """save_source writes the file whole while others write and read it (xdist workers render the
    same kernels at once): every read while four threads write it again finds all of the source,
    never a part of it (an empty or half-written file compiles, to a PTX without the kernel). The
    5 MB source goes to the test's own temporary folder."""
    import tempfile
    import threading
    from lsmgpu.cubins import save_source
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    source = "// a kernel of many lines\n" * 200_000 + "extern \"C\" __global__ void k() {}\n"
    path, stop, seen = save_source(source), threading.Event(), []

    def write():
        while not stop.is_set():
            save_source(source)
    writers = [threading.Thread(target=write) for _ in range(4)]
    for writer in writers:
        writer.start()
    try:
        for _ in range(200):
            with open(path) as f:
                seen.append(len(f.read()))
    finally:
        stop.set()
        for writer in writers:
            writer.join()
    assert set(seen) == {len(source)} and path.startswith(str(tmp_path))


def test_missing_template_is_a_clear_error(broken):
    """Missing template is a clear error."""
    problem = broken("")
    problem.template = "nowhere.cu.j2"
    with pytest.raises(KernelCompileError, match="nowhere.cu.j2.*not found"):
        render(problem)


def test_cuda_backend_unavailable_and_auto_falls_back():
    """Without PyCUDA or a GPU, backend='cuda' raises BackendUnavailable and 'auto' uses the CPU, saying so."""
    from lsmgpu.backends import cuda_available
    if cuda_available()[0]:
        pytest.skip("a GPU is present")
    qap = QAP.from_file(QAP.shipped("tai12a"))
    with pytest.raises(BackendUnavailable):
        TabuSearch(qap, backend="cuda")
    with pytest.warns(BackendFallback, match="runs this search on the CPU"):
        search = TabuSearch(qap, backend="auto")
    assert search.backend.name == "cpu"


def test_auto_asks_the_problem_what_it_evaluates_on_the_gpu(monkeypatch):
    """'auto' picks the CPU, even where a GPU is available, and says why, when the problem
    cannot evaluate its neighbourhood on the GPU: a user's neighbourhood without device code,
    or a kind the problem's template does not handle (TSP + 3-exchange); one query answers."""
    import lsmgpu.backends as backends
    from lsmgpu import Neighbourhood, Permutation
    from lsmgpu.backends import resolve

    class Insertion(Neighbourhood):   # a new neighbourhood of a kind the TSP's delta knows
        arity, encodings, move_kind = 2, (Permutation,), "swap"
        size = property(lambda self: self.n * (self.n - 1))

    monkeypatch.setattr(backends, "cuda_available", lambda: (True, "a pretend GPU"))
    tsp = TSP.from_file(TSP.shipped("berlin52")).with_neighbourhood(Insertion())
    assert tsp.unsupported(tsp.neighbourhood, "cpu") is None
    assert "no CUDA move code" in tsp.unsupported(tsp.neighbourhood, "cuda")
    oropt = TSP.from_file(TSP.shipped("berlin52"), neighbourhood="oropt")
    assert oropt.unsupported(oropt.neighbourhood, "cuda") is None
    three = TSP.from_file(TSP.shipped("berlin52"), neighbourhood="3exchange")
    assert three.unsupported(three.neighbourhood, "cpu") is None
    assert "not the three moves" in three.unsupported(three.neighbourhood, "cuda")
    with pytest.warns(BackendFallback, match="no CUDA move code"):
        assert resolve("auto", tsp).name == "cpu"
    with pytest.warns(BackendFallback, match="not the three moves"):
        assert resolve("auto", three).name == "cpu"
    with pytest.raises(TypeError, match="backend 'cuda': .*not the three moves"):
        resolve("cuda", three)
    with pytest.raises(TypeError, match="not the three moves"):
        render(three)
    qap = QAP.from_file(QAP.shipped("tai12a")).with_neighbourhood(Insertion())
    assert qap.unsupported(qap.neighbourhood, "cpu") is None

    class Reinsert(Insertion):        # a kind no shipped problem evaluates
        move_kind = "reinsert"

    other = TSP.from_file(TSP.shipped("berlin52")).with_neighbourhood(Reinsert())
    assert "evaluates block_exchange, swap, three, twoopt moves, not the reinsert moves" in \
        other.unsupported(other.neighbourhood, "cpu")
    with pytest.raises(TypeError, match="not the reinsert moves"):
        other.delta(np.arange(52), np.array([[0, 1]]))


@pytest.mark.parametrize("items, message", [(-1, "non-negative int"), (2.5, "non-negative int"),
                                            (10, "declares no state")])
def test_bad_refresh_items_are_clear_errors(items, message):
    """A grid-wide refresh needs a count of items and state arrays for it to write."""
    problem = QAP.from_file(QAP.shipped("tai12a"))
    problem.refresh_items = lambda: items
    with pytest.raises(ValueError, match=message):
        render(problem)


def test_refresh_kernel_only_where_asked():
    """The `refresh` kernel is rendered for problems with refresh items (PPP, the QAP's delta
    table), not for others."""
    assert "void refresh(" in render(PPP.planted(20, 21, 0, distance=2)[0])
    assert "void refresh(" in render(QAP.from_file(QAP.shipped("tai12a"), delta_table=True))
    assert "void refresh(" not in render(QAP.from_file(QAP.shipped("tai12a")))


def test_batch_kernels_take_fewer_lanes_as_starts_fill_the_gpu():
    """A batch keeps the problem's lanes per move while the GPU has room, down to 1 when the
    starts' moves fill it; the kernel is rendered with that count."""
    from lsmgpu.backends.cuda.batch import batch_lanes, resident_lanes
    problem = QAP(np.random.default_rng(0).integers(0, 9, (100, 100)), np.random.default_rng(1).integers(0, 9, (100, 100)),
                  delta_table=False)
    lanes = [batch_lanes(problem, problem.neighbourhood, b, 270_336) for b in (1, 4, 16, 64, 256)]
    assert lanes == [32, 16, 4, 1, 1]
    small = QAP(np.random.default_rng(2).integers(0, 9, (40, 40)), np.random.default_rng(3).integers(0, 9, (40, 40)))
    # one block per start: at most 8 lane-tasks per thread (780 moves, 16 lanes by default)
    assert [resident_lanes(small, small.neighbourhood, b) for b in (256, 1024)] == [2, 8]
    assert "#define LANES 1\n" in render(problem, lanes=1) and "#define LANES 32\n" in render(problem)


@pytest.mark.nvcc
def test_check_compiles_builds_the_kernels_and_names_the_template_line_of_an_error(broken):
    """lsmgpu.testing.check_compiles: the QAP's kernels for its neighbourhoods build without a GPU;
    a template with a CUDA error fails naming the template file and line nvcc pointed at."""
    from lsmgpu.neighbourhoods import ThreeExchange
    from lsmgpu.testing import check_compiles
    qap = QAP.from_file(QAP.shipped("nug12"))
    built = check_compiles(qap, [ThreeExchange()])
    assert len(built) == 2 and all(size > 1000 for size in built.values())
    problem = broken("\n__device__ fitness_t delta(const sol_t* x, const move_t m, const data_t& d) {\n"
                     "    return no_such_variable;\n}\n")
    with pytest.raises(KernelCompileError, match=r"broken.cu.j2 line 3: error.*no_such_variable"):
        check_compiles(problem)
