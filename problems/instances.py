"""The instances bundled with the package (the few small TSPLIB and QAPLIB files the README and
the tests use), and instance names resolved to paths."""
from __future__ import annotations

from pathlib import Path

__all__ = ["DATA", "shipped", "shipped_names", "resolve_path", "read_text"]

#: folder of the instances bundled with the package
DATA = Path(__file__).parent / "data"


def shipped(name: str) -> Path:
    """Path of a bundled instance: ``shipped("berlin52")`` or ``shipped("tai12a.dat")``."""
    for candidate in (DATA / name, DATA / f"{name}.tsp", DATA / f"{name}.dat"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no shipped instance {name!r}; shipped: {', '.join(shipped_names())}")


def shipped_names() -> list[str]:
    """The bundled instances' names, TSPLIB's then QAPLIB's."""
    return sorted(p.stem for p in DATA.glob("*.tsp")) + sorted(p.stem for p in DATA.glob("*.dat"))


def resolve_path(instance) -> Path:
    """``instance`` as a file path: an existing path, or the name of a shipped instance."""
    path = Path(instance)
    if path.is_file():
        return path
    if path.is_dir():
        raise IsADirectoryError(f"{instance} is a folder, not an instance file (.tsp, .dat, .ppp or .col)")
    if path.parent == Path(".") and (DATA / path.name).is_file():     # a shipped file by its name: berlin52.tsp
        return DATA / path.name
    if path.suffix or path.parent != Path("."):
        raise FileNotFoundError(f"no such instance file: {instance}")
    return shipped(str(instance))


def read_text(path, owner: str) -> str:
    """The text of an instance, tour or solution file; ValueError naming ``owner`` and the file where
    it is no UTF-8 text (a binary file given by mistake), not a decoder's traceback."""
    try:
        return Path(path).read_text()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{owner}: {Path(path).name} is not a text file (byte {exc.start} is not UTF-8)") from None
