"""Tour segments at scale: one tour improved in thousands of places at once (lsmgpu.TourSegments)
beside FocusedACO, on TSPLIB instances and portgen's uniform and portcgen's clustered instances.

For each of ``--segments-instances`` (TSPLIB names, ``portgen:N``: N uniform cities of
benchmarks/portgen.py with seed N, or ``portcgen:N``: N clustered cities, written to a TSPLIB file
and read back), the set-up every row
shares is timed once: reading the file and the quadrant candidate lists; and each start tour
(``start=greedy``, the default, or ``start=hilbert`` in a config).
Each entry of ``--segments-configs`` (``label:option=value,..`` joined by ``;``; the label
``faco`` runs FocusedACO with its defaults, ``ray`` RayTourSegments: the segments over one Ray
actor per GPU, any other label TourSegments) then runs from that tour for ``--segments-seconds``
of wall time less the shared set-up, so the row's budget counts reading and set-up as a user's
``lsmgpu solve --seconds S`` does. The row gives the gap at the end and at the times in
``--segments-marks`` (wall seconds, set-up included) to the optimum (TSPLIB), to
0.7124 sqrt(n A) (portgen) or to the Held-Karp bound (portcgen: ``TSP.lower_bound()``, computed
before the rows and outside their budget), with the rounds, kicks and host memory (peak resident set).

    python -m benchmarks segments --segments-instances portgen:1000000 --segments-seconds 60 --out $OUT

A budget longer than one device call runs in parts: ``--segments-checkpoint FILE`` (one instance,
one config) writes the run's checkpoint every ``--segments-checkpoint-every`` seconds, and a
later call with the same FILE resumes it. The part's set-up (reading, lists, start tour) is
written beside it (FILE.json), and every part's set-up is taken from the budget, so the parts
together run ``--segments-seconds`` of wall time with every set-up counted.
"""
from __future__ import annotations

import json
import resource
import time
from pathlib import Path

import numpy as np

from lsmgpu import FocusedACO, TourSegments
from lsmgpu.parallel.ray_segments import RayTourSegments
from lsmgpu.problems import TSP
from lsmgpu.problems.candidates import greedy_tour, hilbert_tour

from .portgen import portcgen, portgen, uniform_reference

__all__ = ["table_segments", "parse_configs"]

#: the start tours a config may name (``start=``; default greedy)
STARTS = {"greedy": greedy_tour, "hilbert": hilbert_tour}

#: the searches a config's label names; any other label runs TourSegments
SEARCH_OF = {"faco": FocusedACO, "ray": RayTourSegments}


def parse_configs(text: str) -> list[tuple[str, dict]]:
    """``label:option=value,..;..`` as (label, options) pairs; values read as ``option_value`` reads them."""
    configs = []
    for entry in filter(None, (part.strip() for part in text.split(";"))):
        label, _, rest = entry.partition(":")
        options = {}
        for item in filter(None, rest.split(",")):
            key, _, value = item.partition("=")
            options[key.strip()] = option_value(value.strip())
        configs.append((label.strip(), options))
    return configs


def option_value(text: str):
    """A config's option text as what it reads as: None, a bool, an int, a float, else the text."""
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


#: the generated instances' kinds: ``kind:N`` in --segments-instances
GENERATORS = {"portgen": portgen, "portcgen": portcgen}


def write_generated(kind: str, n: int, folder: Path) -> Path:
    """The generator ``kind``'s n cities (seed n) as a TSPLIB file in ``folder`` (made once)."""
    path = folder / f"{kind}{n}.tsp"
    if not path.exists():
        coords = GENERATORS[kind](n, n).astype(np.int64)
        lines = "\n".join(f"{i + 1} {x} {y}" for i, (x, y) in enumerate(coords.tolist()))
        path.write_text(f"NAME : {kind}{n}\nTYPE : TSP\nDIMENSION : {n}\nEDGE_WEIGHT_TYPE : EUC_2D\n"
                        f"NODE_COORD_SECTION\n{lines}\nEOF\n")
    return path


def gap_at(result, seconds: float, reference: float) -> float | None:
    """The gap (%) of the best tour found within ``seconds`` of the run (None before the first)."""
    values = [value for _, elapsed, value in result.improvements if elapsed <= seconds]
    return None if not values else round(100 * (values[-1] / reference - 1), 3)


def run_in_parts(search, args, setup: float):
    """The search's run for ``--segments-seconds`` less ``setup``, or, with a checkpoint file,
    one part of it: started, or resumed where the file exists. Returns the result and the set-up
    of every part so far (the earlier parts' from FILE.json)."""
    path = args.segments_checkpoint
    if not path:
        return search.run(seconds=max(0.0, args.segments_seconds - setup)), setup
    parts = Path(path + ".json")
    setups = json.loads(parts.read_text())["setups"] if parts.exists() and Path(path).exists() else []
    setups.append(setup)
    parts.write_text(json.dumps({"setups": setups}))
    seconds = max(0.0, args.segments_seconds - sum(setups))
    every = args.segments_checkpoint_every
    if len(setups) > 1:
        return search.resume(path, seconds=seconds, checkpoint=path, checkpoint_every=every), sum(setups)
    return search.run(seconds=seconds, checkpoint=path, checkpoint_every=every), setup


def table_segments(args, path_of, emit) -> list[dict]:
    rows, marks = [], [float(m) for m in args.segments_marks.split(",") if m]
    for name in args.segments_instances.split(","):
        t0 = time.perf_counter()
        generator, _, cities = name.partition(":")
        if generator in GENERATORS:
            path = write_generated(generator, int(cities), Path(args.segments_folder))
            if generator == "portgen":
                reference, kind = uniform_reference(int(cities)), "0.7124 sqrt(nA)"
            else:
                # the bound on an instance read apart, so that the row's reading and lists are its own
                reference, kind = float(TSP.from_file(path).lower_bound()), "Held-Karp bound"
            t0 = time.perf_counter()
            problem = TSP.from_file(path)
        else:
            problem = TSP.from_file(path_of("tsplib", name))
            reference, kind = float(problem.best_known), "optimum"
        read = time.perf_counter() - t0
        problem.default_ils()                                   # the quadrant candidate lists, kept on the instance
        lists = time.perf_counter() - t0 - read
        starts = {}
        for label, options in parse_configs(args.segments_configs):
            options = dict(options)
            tour = options.pop("start", "greedy")
            if tour not in starts:
                t1 = time.perf_counter()
                starts[tour] = (STARTS[tour](problem.coords), time.perf_counter() - t1)
            start, start_s = starts[tour]
            setup = read + lists + start_s
            make = SEARCH_OF.get(label, TourSegments)
            search = make(problem, initial=start, seed=0, backend=args.backend_choice, **options)
            result, setup = run_in_parts(search, args, setup)
            row = dict(table="segments", instance=problem.name, n=problem.n, reference=kind, config=label,
                       options=options, start=tour, wall_seconds=args.segments_seconds, read_s=round(read, 2),
                       candidates_s=round(lists, 2), start_s=round(start_s, 2), setup_s=round(setup, 2),
                       start_gap_pct=round(100 * (problem.evaluate(start) / reference - 1), 3),
                       gap_pct=round(100 * (result.fitness / reference - 1), 3), run_s=round(result.seconds, 2),
                       iterations=result.iterations, work=result.work[0], unit=result.work[1],
                       crossing_pct=round(100 * getattr(search, "crossing_share", 0.0), 1),
                       descended_pct=round(100 * getattr(search, "descended_share", 0.0), 1),
                       descent_s=round(getattr(search, "descent_seconds", 0.0), 1), device=result.device,
                       peak_rss_gb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2))
            for mark in marks:
                row[f"gap_at_{mark:g}s"] = gap_at(result, mark - setup, reference)
            rows.append(row)
            emit(row)
    return rows
