"""Problems shipped with lsmgpu, written against the same contract as a user's own.

Installed as ``lsmgpu.problems``. ``load(path)`` picks the problem from the file's
extension; ``shipped(name)`` is the path of an instance bundled with the package
(the few small TSPLIB and QAPLIB files the README and the tests use).
"""
from __future__ import annotations

from .coloring import GraphColoring
from .instances import DATA, resolve_path, shipped, shipped_names
from .ppp import PPP
from .qap import QAP
from .tsp import TSP
from .weierstrass import Weierstrass

__all__ = ["GraphColoring", "PPP", "QAP", "TSP", "Weierstrass", "load", "resolve_path", "shipped", "shipped_names",
           "DATA"]


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
