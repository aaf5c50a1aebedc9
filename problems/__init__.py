"""Problems shipped with lsmgpu, written against the same contract as a user's own.

Installed as ``lsmgpu.problems``. ``load(path)`` picks the problem from the file's
extension; ``shipped(name)`` is the path of an instance bundled with the package
(the few small TSPLIB and QAPLIB files the README and the tests use).
"""
from __future__ import annotations

from pathlib import Path

from .coloring import GraphColoring
from .ppp import PPP
from .qap import QAP
from .tsp import TSP
from .weierstrass import Weierstrass

__all__ = ["GraphColoring", "PPP", "QAP", "TSP", "Weierstrass", "load", "resolve_path", "shipped", "DATA"]

#: folder of the instances bundled with the package
DATA = Path(__file__).parent / "data"


def shipped(name: str) -> Path:
    """Path of a bundled instance: ``shipped("berlin52")`` or ``shipped("tai12a.dat")``."""
    for candidate in (DATA / name, DATA / f"{name}.tsp", DATA / f"{name}.dat"):
        if candidate.is_file():
            return candidate
    names = sorted(p.stem for p in DATA.glob("*.tsp")) + sorted(p.stem for p in DATA.glob("*.dat"))
    raise FileNotFoundError(f"no shipped instance {name!r}; shipped: {', '.join(names)}")


def resolve_path(instance) -> Path:
    """``instance`` as a file path: an existing path, or the name of a shipped instance."""
    path = Path(instance)
    if path.is_file():
        return path
    if path.suffix or path.parent != Path("."):
        raise FileNotFoundError(f"no such instance file: {instance}")
    return shipped(str(instance))


def load(path, **options):
    """The problem stored in ``path``: ``.tsp`` is a TSPLIB TSP, ``.dat`` a QAPLIB QAP, ``.ppp`` a
    permuted perceptron, ``.col`` a DIMACS graph to colour (``colors=K`` required).
    ``path`` may also name a shipped instance ("berlin52")."""
    path = resolve_path(path)
    suffix = path.suffix.lower()
    if suffix == ".tsp":
        return TSP.from_file(path, **options)
    if suffix == ".dat":
        return QAP.from_file(path, **options)
    if suffix == ".ppp":
        return PPP.from_file(path, **options)
    if suffix == ".col":
        if "colors" not in options:
            raise ValueError(f"{path.name} is a graph colouring instance: give the number of colours (colors=K)")
        return GraphColoring.from_file(path, k=options.pop("colors"), **options)
    raise ValueError(f"cannot tell the problem of {path.name!r}: expected a .tsp (TSPLIB), .dat (QAPLIB), "
                     ".ppp (permuted perceptron) or .col (DIMACS) file")
