"""TSPLIB reader (symmetric TSP): coordinates or explicit matrices, with clear errors.

Supported: EDGE_WEIGHT_TYPE EUC_2D, CEIL_2D, ATT, GEO (coordinates, distances computed
on the fly by :mod:`problems.distances`) and EXPLICIT with EDGE_WEIGHT_FORMAT
FULL_MATRIX, UPPER_ROW, LOWER_ROW, UPPER_DIAG_ROW, LOWER_DIAG_ROW
(G. Reinelt, "TSPLIB 95", section 2). A FIXED_EDGES_SECTION with edges (edges every tour must
hold, as linhp318's) is refused by name: solved without them the instance is another one, and its
optimum in optimal.txt (the path's) would give a wrong gap.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .instances import read_text

__all__ = ["TsplibInstance", "read_tsplib", "read_optimum", "read_tour", "write_tour", "COORDINATE_TYPES",
           "MATRIX_FORMATS"]

COORDINATE_TYPES = ("EUC_2D", "CEIL_2D", "ATT", "GEO")
MATRIX_FORMATS = ("FULL_MATRIX", "UPPER_ROW", "LOWER_ROW", "UPPER_DIAG_ROW", "LOWER_DIAG_ROW")
_SECTIONS = ("NODE_COORD_SECTION", "EDGE_WEIGHT_SECTION", "DISPLAY_DATA_SECTION",
             "FIXED_EDGES_SECTION", "TOUR_SECTION", "EOF")


@dataclass
class TsplibInstance:
    name: str
    n: int
    weight_type: str
    coords: np.ndarray | None
    matrix: np.ndarray | None


def _fail(path, why) -> ValueError:
    return ValueError(f"TSP: {Path(path).name}: {why}")


def _split_sections(path) -> tuple[dict[str, str], dict[str, list[str]]]:
    header: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current = None
    for raw in read_text(path, "TSP").splitlines():
        line = raw.strip()
        if not line:
            continue
        if current is not None and (line[0].isdigit() or line[0] in "+-."):
            sections[current].append(line)           # a data line: no keyword starts with these
            continue
        key = line.split(":")[0].strip().upper() if ":" in line else line.split()[0].upper()
        if key in _SECTIONS:
            if key == "EOF":
                break
            current = key
            sections[current] = []
        elif current is None or (":" in line and key.replace("_", "").isalpha()):
            if ":" not in line:
                raise _fail(path, f"unexpected line {line!r} in the header")
            header[key] = line.split(":", 1)[1].strip()
            current = None
        else:
            sections[current].append(line)
    return header, sections


def _numbers(path, lines, what) -> np.ndarray:
    try:
        values = np.array(" ".join(lines).split(), dtype=np.float64)
    except ValueError:
        raise _fail(path, f"{what} holds something that is not a number") from None
    if not np.all(np.isfinite(values)):
        raise _fail(path, f"{what} holds NaN or infinite values")
    return values


def _matrix(path, values, n, fmt) -> np.ndarray:
    expected = {"FULL_MATRIX": n * n, "UPPER_ROW": n * (n - 1) // 2, "LOWER_ROW": n * (n - 1) // 2,
                "UPPER_DIAG_ROW": n * (n + 1) // 2, "LOWER_DIAG_ROW": n * (n + 1) // 2}[fmt]
    if values.size != expected:
        raise _fail(path, f"EDGE_WEIGHT_SECTION holds {values.size} values, {fmt} with DIMENSION {n} "
                          f"needs {expected} (truncated file or wrong DIMENSION)")
    if fmt == "FULL_MATRIX":
        m = values.reshape(n, n)
    else:
        m = np.zeros((n, n))
        diag = fmt.endswith("DIAG_ROW")
        if fmt.startswith("UPPER"):
            rows, cols = np.triu_indices(n, 0 if diag else 1)
        else:  # lower, row by row: (0,0), (1,0), (1,1), ... is the upper part of the transpose
            cols, rows = np.triu_indices(n, 0 if diag else 1)
            order = np.lexsort((cols, rows))
            rows, cols = rows[order], cols[order]
        m[rows, cols] = values
        m = np.maximum(m, m.T) if not diag else m + m.T - np.diag(np.diag(m))
    if not np.array_equal(m, m.T):
        raise _fail(path, "EDGE_WEIGHT_SECTION is not symmetric")
    return m.astype(np.int64)


def _check_node_ids(path, ids: np.ndarray, n: int) -> None:
    """Node ids must be the integers 1..DIMENSION, each once: ValueError naming the line of the
    section that breaks it (a repeated or out-of-range id would silently make another instance)."""
    whole = np.all(ids == np.round(ids)) and np.all((ids >= 1) & (ids <= n))
    if whole and np.bincount(ids.astype(np.int64), minlength=n + 1).max() <= 1:
        return                                     # all well: the line-by-line look below names the fault
    seen = np.zeros(n + 1, dtype=bool)
    for line, node in enumerate(ids, 1):
        if node != int(node) or not 1 <= node <= n:
            raise _fail(path, f"NODE_COORD_SECTION line {line}: node id {node:g} is not an integer "
                              f"in 1..{n} (DIMENSION)")
        if seen[int(node)]:
            raise _fail(path, f"NODE_COORD_SECTION line {line}: node id {int(node)} appears twice")
        seen[int(node)] = True


def read_tsplib(path) -> TsplibInstance:
    """Parse a TSPLIB ``.tsp`` file; raise ValueError naming the file and the fault."""
    path = Path(path)
    header, sections = _split_sections(path)
    if "DIMENSION" not in header:
        raise _fail(path, "no DIMENSION in the header")
    try:
        n = int(header["DIMENSION"])
    except ValueError:
        raise _fail(path, f"DIMENSION {header['DIMENSION']!r} is not an integer") from None
    kind = header.get("TYPE", "TSP").split()[0].upper()
    if kind != "TSP":
        raise _fail(path, f"TYPE {kind} is not supported (symmetric TSP only)")
    wtype = header.get("EDGE_WEIGHT_TYPE", "").upper()
    name = header.get("NAME", path.stem).split()[0]
    fixed = _numbers(path, sections.get("FIXED_EDGES_SECTION", []), "FIXED_EDGES_SECTION")
    if len(fixed) and fixed[0] != -1:
        raise _fail(path, "FIXED_EDGES_SECTION holds edges every tour must keep; lsmgpu does not fix edges, and "
                          "without them this is another instance (its optimum another length)")
    if wtype in COORDINATE_TYPES:
        if "NODE_COORD_SECTION" not in sections:
            raise _fail(path, f"EDGE_WEIGHT_TYPE {wtype} needs a NODE_COORD_SECTION")
        lines = sections["NODE_COORD_SECTION"]
        if len(lines) != n:
            raise _fail(path, f"NODE_COORD_SECTION has {len(lines)} lines, DIMENSION says {n} "
                              "(truncated file or wrong DIMENSION)")
        values = _numbers(path, lines, "NODE_COORD_SECTION")
        if values.size != 3 * n:
            raise _fail(path, "NODE_COORD_SECTION lines must be 'index x y'")
        table = values.reshape(n, 3)
        _check_node_ids(path, table[:, 0], n)
        coords = np.empty((n, 2))
        coords[table[:, 0].astype(np.int64) - 1] = table[:, 1:]    # rows in node order
        return TsplibInstance(name, n, wtype, coords, None)
    if wtype == "EXPLICIT":
        fmt = header.get("EDGE_WEIGHT_FORMAT", "").upper()
        if fmt not in MATRIX_FORMATS:
            raise _fail(path, f"EDGE_WEIGHT_FORMAT {fmt or '(missing)'} is not one of {MATRIX_FORMATS}")
        if "EDGE_WEIGHT_SECTION" not in sections:
            raise _fail(path, "EXPLICIT weights need an EDGE_WEIGHT_SECTION")
        values = _numbers(path, sections["EDGE_WEIGHT_SECTION"], "EDGE_WEIGHT_SECTION")
        return TsplibInstance(name, n, wtype, None, _matrix(path, values, n, fmt))
    raise _fail(path, f"EDGE_WEIGHT_TYPE {wtype or '(missing)'} is not supported "
                      f"(supported: {', '.join(COORDINATE_TYPES)}, EXPLICIT)")


def read_optimum(path) -> int | None:
    """The optimal length of the instance in ``path`` from an ``optimal.txt`` beside it
    (lines ``name : length``), or None."""
    path = Path(path)
    table = path.parent / "optimal.txt"
    if not table.is_file():
        return None
    for line in table.read_text().splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            if key.strip() == path.stem:
                return int(value.split()[0])  # some lines add a note: "18660188 (CEIL_2D)"
    return None


def read_tour(path, n: int) -> np.ndarray:
    """The 0-based cities of a TSPLIB ``.tour`` file: the 1-based numbers after TOUR_SECTION up
    to -1 or EOF; ValueError naming the file (and line) where it has no tour section, is a tour
    of another size, or holds something that is not a city number."""
    lines = read_text(path, "TSP").splitlines()
    starts = [k for k, line in enumerate(lines) if line.strip().upper().startswith("TOUR_SECTION")]
    if not starts:
        raise ValueError(f"TSP: {Path(path).name} has no TOUR_SECTION (not a TSPLIB tour)")
    for line in lines[:starts[0]]:
        key, _, value = line.partition(":")
        if key.strip().upper() == "DIMENSION" and value.strip() != str(n):
            raise ValueError(f"TSP: {Path(path).name} is a tour of {value.strip()} cities, not {n}")
    cities = []
    for number, line in enumerate(lines[starts[0] + 1:], starts[0] + 2):
        for token in line.split():
            if token in ("-1", "EOF"):
                return np.array(cities) - 1
            try:
                cities.append(int(token))
            except ValueError:
                raise ValueError(f"TSP: {Path(path).name} line {number}: {token!r} is not a city number") from None
    return np.array(cities) - 1


def write_tour(path, name: str, tour, length: int) -> None:
    """``tour`` (0-based) as a TSPLIB ``.tour`` file, its length in the comment."""
    lines = [f"NAME : {name}.tour", "TYPE : TOUR", f"COMMENT : length {length}", f"DIMENSION : {len(tour)}",
             "TOUR_SECTION", *(str(c + 1) for c in tour), "-1", "EOF"]
    Path(path).write_text("\n".join(lines) + "\n")
