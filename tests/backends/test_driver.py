"""The CUDA driver layer's error checks, without a GPU: a stand-in for PyCUDA whose launches and
waits fail the way CUDA does; every failure becomes a KernelLaunchError naming the kernel."""
from pathlib import Path

import pytest

from lsmgpu.backends.cuda import driver
from lsmgpu.budget import deadline_scope
from lsmgpu.errors import KernelLaunchError


class FakeCuda:
    class Error(Exception):
        pass

    class Context:
        fault = None

        @classmethod
        def synchronize(cls):
            if cls.fault:
                raise FakeCuda.Error(cls.fault)

        @staticmethod
        def get_current():
            return None

    @staticmethod
    def module_from_buffer(cubin):
        """A module: here the cubin it was loaded from."""
        return cubin


class FailingKernel:
    def _launch_kernel(self, grid, block, args, shared, stream):
        raise FakeCuda.Error("cuLaunchKernel failed: too many resources requested for launch")


class Kernel:
    def __init__(self):
        self.calls = []

    def _launch_kernel(self, grid, block, args, shared, stream):
        self.calls.append((grid, block, args, shared))


@pytest.fixture
def fake_cuda(monkeypatch):
    """PyCUDA replaced; builds go to the (patched) nvcc, not to a real NVRTC where one is installed."""
    monkeypatch.setattr(driver, "cuda", FakeCuda)
    monkeypatch.setattr(driver.nvrtc, "nvrtc", None)
    FakeCuda.Context.fault = None
    return FakeCuda


def test_a_failed_launch_names_the_kernel_and_its_geometry(fake_cuda):
    """A failed launch names the kernel and its geometry."""
    with pytest.raises(KernelLaunchError, match=r"evaluate_select: cuLaunchKernel failed.*grid=\(4, 1\).*block=\(2048,\)"):
        driver.launch(FailingKernel(), "evaluate_select", (4, 1), 2048, b"")


def test_a_launch_hands_the_packed_arguments_over(fake_cuda):
    """A launch hands the packed arguments over."""
    kernel = Kernel()
    args = driver.pack("Piq", 7, -3, 2**40)
    driver.launch(kernel, "refresh", (2, 1), 256, args, 64)
    assert kernel.calls == [((2, 1), (256, 1, 1), args, 64)]
    assert len(args) == 24      # native alignment: 8 + 4 (+4 padding) + 8, as the kernel's parameters


def test_a_fault_found_at_a_wait_names_what_was_waited_for(fake_cuda):
    """A fault found at a wait names what was waited for."""
    driver.synchronize("apply_given")                        # no fault: nothing raised
    fake_cuda.Context.fault = "an illegal memory access was encountered"
    with pytest.raises(KernelLaunchError, match="batch iterations 0..63: an illegal memory access"):
        driver.synchronize("batch iterations 0..63", (10, 4), (256,))


def test_pack_refuses_a_value_its_type_cannot_hold():
    """Pack refuses a value its type cannot hold."""
    with pytest.raises(Exception, match="format requires|out of range|argument out of range"):
        driver.pack("i", 2**31)


def test_a_kernel_build_past_the_deadline_stops_the_wait(monkeypatch, fake_cuda, tmp_path):
    """nvcc runs in a worker; the search waits no longer than its time left (DeadlineReached),
    and a build within the time hands its cubin to the module loader."""
    import time
    from lsmgpu.budget import DeadlineReached, deadline_scope
    monkeypatch.setattr(fake_cuda, "CompileError", RuntimeError, raising=False)
    monkeypatch.setattr(fake_cuda, "module_from_buffer", staticmethod(lambda cubin: ("module", cubin)))
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    monkeypatch.setattr(driver, "nvcc_to_cubin", lambda source, **options: time.sleep(1.0) or b"cubin")
    monkeypatch.setattr(driver, "_cubins", {})
    monkeypatch.setattr(driver, "_modules", {})
    with deadline_scope(time.perf_counter() + 0.2), pytest.raises(DeadlineReached, match="nvcc"):
        driver.compile_module("// a slow kernel", "sm_90")
    with deadline_scope(time.perf_counter() + 5):
        assert driver.load_module("// a slow kernel", "sm_90") == ("module", b"cubin")


def test_instances_of_one_kind_share_the_build_and_get_their_own_constants(monkeypatch, fake_cuda, tmp_path):
    """One nvcc build per source; one module per set of constant values, each written into
    its own module's constant memory."""
    import numpy as np
    from lsmgpu.kernels import DeviceConstant
    builds, written = [], {}

    class Module:
        def get_global(self, name):
            return (id(self), name), 8

    monkeypatch.setattr(fake_cuda, "module_from_buffer", staticmethod(lambda cubin: Module()))
    write = staticmethod(lambda address, data: written.__setitem__(address, data))
    monkeypatch.setattr(fake_cuda, "memcpy_htod", write, raising=False)
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    monkeypatch.setattr(driver, "nvcc_to_cubin", lambda source, **options: builds.append(source) or b"cubin")
    monkeypatch.setattr(driver, "_cubins", {})
    monkeypatch.setattr(driver, "_modules", {})
    small = driver.load_module("// kind", "sm_90", [DeviceConstant("N", np.int64(52))])
    large = driver.load_module("// kind", "sm_90", [DeviceConstant("N", np.int64(85900))])
    assert builds == ["// kind"] and small is not large
    assert written[(id(small), "N")] == np.int64(52).tobytes()
    assert written[(id(large), "N")] == np.int64(85900).tobytes()
    assert driver.load_module("// kind", "sm_90", [DeviceConstant("N", np.int64(52))]) is small



def test_a_cubin_on_disk_is_loaded_without_nvcc(monkeypatch, fake_cuda, tmp_path):
    """A second process (the memory cache empty) finds the cubin the first one wrote: no nvcc."""
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    builds = []
    monkeypatch.setattr(driver, "nvcc_to_cubin", lambda source, **options: builds.append(options) or b"built")
    monkeypatch.setattr(driver, "_cubins", {})
    assert driver.compile_module("// a kernel", "sm_90") == b"built"
    assert builds[0]["cache_dir"] is False and builds[0]["options"] == list(driver.BUILD_OPTIONS)
    monkeypatch.setattr(driver, "_cubins", {})
    monkeypatch.setattr(driver, "nvcc_to_cubin", lambda source, **options: pytest.fail("nvcc ran again"))
    assert driver.compile_module("// a kernel", "sm_90") == b"built"



def test_the_wait_for_kernel_builds_is_counted_for_the_run_and_its_note(monkeypatch, fake_cuda, tmp_path):
    """The seconds a run waits for builds add up in its scope and the scopes around it (a
    multi-start's; a cubin read from the disk cache adds nothing, a build outside any run counts
    nowhere); ``build_note`` says a result's ``timings["build"]`` from BUILD_NOTE_SECONDS on,
    naming the cache folder. The driver's clock is a stand-in that each build moves on by 0.2 s, so
    no figure depends on the machine's speed."""
    from types import SimpleNamespace
    clock = SimpleNamespace(now=0.0)
    monkeypatch.setattr(driver, "time", SimpleNamespace(perf_counter=lambda: clock.now))

    def nvcc(source, **options):
        clock.now += 0.2
        return b"built"
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    monkeypatch.setattr(driver, "nvcc_to_cubin", nvcc)
    monkeypatch.setattr(driver, "_cubins", {})
    monkeypatch.setattr(driver, "BUILD_NOTE_SECONDS", 0.3)
    driver.compile_module("// outside any run", "sm_90")
    with deadline_scope(None) as outer:
        with deadline_scope(None) as first:
            driver.compile_module("// one kernel", "sm_90")
        with deadline_scope(None) as second:
            driver.compile_module("// another kernel", "sm_90")
            monkeypatch.setattr(driver, "_cubins", {})
            driver.compile_module("// one kernel", "sm_90")           # from the disk: no wait counted
    assert first.build_seconds == pytest.approx(0.2) and second.build_seconds == pytest.approx(0.2)
    assert outer.build_seconds == pytest.approx(0.4)
    assert driver.build_note(SimpleNamespace(seconds=10.0, timings={"build": 0.2})) is None
    assert driver.build_note(SimpleNamespace(seconds=10.0, timings={})) is None
    note = driver.build_note(SimpleNamespace(seconds=10.0, timings={"build": outer.build_seconds}))
    assert note.startswith("0.4 s of the run's 10.0 s went to building its GPU kernels, kept in ")
    assert note.endswith(str(tmp_path / "cubin") + " for the next run of this configuration")


@pytest.fixture
def held_builds(monkeypatch, fake_cuda, tmp_path):
    """Builds (fake nvcc) that wait for ``release`` to be set: (the sources built, release), with
    empty caches in memory and under tmp_path."""
    import threading
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    builds, release = [], threading.Event()

    def nvcc(source, **options):
        builds.append(source)
        release.wait(5)
        return b"built " + source.encode()
    monkeypatch.setattr(driver, "nvcc_to_cubin", nvcc)
    monkeypatch.setattr(driver, "_cubins", {})
    monkeypatch.setattr(driver, "_building", {})
    yield builds, release
    release.set()


def test_a_build_started_ahead_is_the_one_compile_module_waits_for(held_builds, monkeypatch):
    """``prebuild`` starts a build in the background and returns at once (its build still held);
    compile_module of that source then waits for it (one build, its cubin) and counts only its
    wait, none for a build that ended ahead; a source held in memory or on disk is not built again
    ahead. The driver's clock is a stand-in that moves 0.2 s a build started, so no figure depends
    on the machine's speed."""
    from types import SimpleNamespace
    builds, release = held_builds
    monkeypatch.setattr(driver, "time", SimpleNamespace(perf_counter=lambda: 0.2 * len(builds)))
    driver.prebuild("// ants", "sm_90")
    ahead = driver._building[("// ants", "sm_90", driver.BUILD_OPTIONS)]
    assert not ahead.done()                                 # returned while its build waits for `release`
    release.set()
    ahead.result()                                          # built and on disk first: still taken from the build
    with deadline_scope(None) as scope:
        assert driver.compile_module("// ants", "sm_90") == b"built // ants"
    assert builds == ["// ants"] and driver._building == {} and scope.build_seconds == 0
    driver.prebuild("// ants", "sm_90")                           # in memory: nothing started
    monkeypatch.setattr(driver, "_cubins", {})
    driver.prebuild("// ants", "sm_90")                           # on disk: nothing started
    assert builds == ["// ants"] and driver._building == {}


class FakeNvrtc:
    """cuda-bindings' nvrtc module as compile_cubin calls it: compiles sources without "bad"."""

    class nvrtcResult:
        NVRTC_SUCCESS, NVRTC_ERROR_COMPILATION = 0, 6

    def __init__(self):
        self.programs, self.flags = {}, []

    def nvrtcCreateProgram(self, source, name, headers, contents, names):
        self.programs[len(self.programs)] = source
        return 0, len(self.programs) - 1

    def nvrtcCompileProgram(self, program, count, flags):
        self.flags.append(flags)
        return (6 if b"bad" in self.programs[program] else 0,)

    def nvrtcGetProgramLogSize(self, program):
        return 0, len(b"error: bad")

    def nvrtcGetProgramLog(self, program, buffer):
        return (0,)

    def nvrtcGetCUBINSize(self, program):
        return 0, 5

    def nvrtcGetCUBIN(self, program, buffer):
        return (0,)

    def nvrtcDestroyProgram(self, program):
        self.programs.pop(program)


def test_kernels_are_built_by_nvrtc_where_installed_and_by_nvcc_where_it_refuses(monkeypatch, fake_cuda, tmp_path):
    """cuda-bindings present: NVRTC builds in process (its arch flag given); a source NVRTC
    refuses goes to nvcc, whose error message users then read."""
    fake = FakeNvrtc()
    monkeypatch.setattr(driver.nvrtc, "nvrtc", fake)
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    monkeypatch.setattr(driver, "_cubins", {})
    built_by_nvcc = []
    monkeypatch.setattr(driver, "nvcc_to_cubin", lambda source, **options: built_by_nvcc.append(source) or b"nvcc")
    assert len(driver.compile_module("// good kernel", "sm_90")) == 5 and not built_by_nvcc
    assert fake.flags[0][0] == b"--gpu-architecture=sm_90" and not fake.programs      # destroyed
    assert driver.compile_module("// bad kernel", "sm_90") == b"nvcc" and built_by_nvcc == ["// bad kernel"]


def test_a_build_cut_by_the_deadline_runs_on_and_is_the_one_a_later_run_takes(held_builds):
    """A run whose deadline has passed stops at once in a kernel build (DeadlineReached) while the
    build goes on: ``builds_under_way`` counts it (the command says the process ends after it) until
    it ends, and the next compile_module of that source takes its cubin rather than building again."""
    import time

    from lsmgpu.budget import DeadlineReached
    builds, release = held_builds
    assert driver.builds_under_way() == 0
    with deadline_scope(time.perf_counter() - 1.0), pytest.raises(DeadlineReached, match="the process ends after it"):
        driver.compile_module("// slow", "sm_90")
    assert driver.builds_under_way() == 1
    release.set()
    driver._building[("// slow", "sm_90", driver.BUILD_OPTIONS)].result()
    assert driver.builds_under_way() == 0
    assert driver.compile_module("// slow", "sm_90") == b"built // slow" and builds == ["// slow"]
    assert driver._building == {}


def test_finish_builds_waits_for_the_builds_under_way_up_to_its_limit(held_builds):
    """``finish_builds`` (an ending process's, e.g. a Ray actor's): a build held back is still running
    after a wait of 0.05 s (counted), and ended, on disk for the next process, after a wait with no
    limit once it is let go."""
    import threading
    builds, release = held_builds
    driver.prebuild("// full", "sm_90")
    assert driver.finish_builds(0.05) == 1
    threading.Timer(0.1, release.set).start()
    assert driver.finish_builds() == 0
    assert Path(driver.cubin_path("// full", "sm_90", driver.BUILD_OPTIONS)).read_bytes() == b"built // full"


def test_a_first_module_is_a_quick_build_until_the_full_one_is_made(monkeypatch, fake_cuda, tmp_path):
    """Where NVRTC has the fast compile and no full build is held, load_first_module hands over a
    quick build's module (QUICK_BUILD_OPTIONS) at once while the full build runs beside it
    (``built`` false until it ends); once it has ended, and where it is held (in memory or on
    disk), the full module is the first one. Without the fast compile, or with LSMGPU_QUICK_BUILDS=0,
    the full build is waited for; another value of LSMGPU_QUICK_BUILDS is refused by name."""
    import threading
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    monkeypatch.delenv("LSMGPU_QUICK_BUILDS", raising=False)
    for held in ("_cubins", "_modules", "_building"):
        monkeypatch.setattr(driver, held, {})
    release = threading.Event()

    def compile_cubin(source, arch, options):
        if options == driver.QUICK_BUILD_OPTIONS:
            return b"quick " + source.encode()
        release.wait(5)
        return b"full " + source.encode()
    monkeypatch.setattr(driver.nvrtc, "compile_cubin", compile_cubin)
    monkeypatch.setattr(driver.nvrtc, "nvrtc", object())                 # available
    monkeypatch.setattr(driver.nvrtc, "fast_compile", lambda: True)
    assert driver.QUICK_BUILD_OPTIONS[:len(driver.BUILD_OPTIONS)] == driver.BUILD_OPTIONS
    assert driver.load_first_module("// k", "sm_90") == (b"quick // k", True)
    assert not driver.built("// k", "sm_90") and driver.builds_under_way() == 1
    release.set()
    driver._building[("// k", "sm_90", driver.BUILD_OPTIONS)].result()
    assert driver.built("// k", "sm_90")
    assert driver.load_first_module("// k", "sm_90") == (b"full // k", False)
    monkeypatch.setattr(driver, "_cubins", {})                              # on disk
    assert driver.built("// k", "sm_90") and driver.load_first_module("// k", "sm_90")[1] is False
    monkeypatch.setattr(driver.nvrtc, "fast_compile", lambda: False)
    assert driver.load_first_module("// other", "sm_90") == (b"full // other", False)
    monkeypatch.setattr(driver.nvrtc, "fast_compile", lambda: True)
    monkeypatch.setenv("LSMGPU_QUICK_BUILDS", "0")                           # turned off
    assert driver.load_first_module("// third", "sm_90") == (b"full // third", False)
    monkeypatch.setenv("LSMGPU_QUICK_BUILDS", "false")                       # not a silent "on"
    with pytest.raises(ValueError, match="LSMGPU_QUICK_BUILDS must be 0 .* or 1, got 'false'"):
        driver.load_first_module("// fourth", "sm_90")


def test_the_ants_prebuild_starts_the_quick_build_beside_the_full_one(monkeypatch, fake_cuda, tmp_path):
    """prebuild_first starts the builds load_first_module takes: the full one and, with the fast
    compile and no full build held, the quick one; with the full build held, neither."""
    monkeypatch.setenv("LSMGPU_CACHE", str(tmp_path))
    monkeypatch.delenv("LSMGPU_QUICK_BUILDS", raising=False)
    for held in ("_cubins", "_modules", "_building"):
        monkeypatch.setattr(driver, held, {})
    monkeypatch.setattr(driver.nvrtc, "compile_cubin", lambda source, arch, options: b"built")
    monkeypatch.setattr(driver.nvrtc, "nvrtc", object())
    monkeypatch.setattr(driver.nvrtc, "fast_compile", lambda: True)
    driver.prebuild_first("// ants", "sm_90")
    assert set(driver._building) == {("// ants", "sm_90", options)
                                     for options in (driver.BUILD_OPTIONS, driver.QUICK_BUILD_OPTIONS)}
    for future in driver._building.values():
        future.result()
    assert driver.load_first_module("// ants", "sm_90") == (b"built", False)
    driver._building.clear()
    driver.prebuild_first("// ants", "sm_90")
    assert driver._building == {}


@pytest.mark.parametrize("version, fast", [((12, 6), False), ((12, 8), True), ((13, 0), True)])
def test_the_fast_compile_is_taken_from_the_nvrtc_that_has_it(monkeypatch, version, fast):
    """nvrtc.fast_compile: NVRTC 12.8 or later (``--Ofast-compile``); none without cuda-bindings."""
    fake = FakeNvrtc()
    fake.nvrtcVersion = lambda: (0, *version)
    monkeypatch.setattr(driver.nvrtc, "nvrtc", fake)
    assert driver.nvrtc.fast_compile() is fast
    monkeypatch.setattr(driver.nvrtc, "nvrtc", None)
    assert driver.nvrtc.fast_compile() is False
