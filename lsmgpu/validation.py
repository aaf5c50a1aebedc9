"""Input checks shared by the problems, the searches and the multi-starts: each raises ValueError
or TypeError naming the argument (and its owner), never a NumPy message without the name."""
from __future__ import annotations

import difflib
import numbers
import os
from pathlib import Path

import numpy as np

__all__ = ["check_square", "check_size", "check_count", "check_seconds", "check_number", "check_flag",
           "check_seed", "check_writable", "nearest_hint", "check_host_memory", "check_points", "check_options",
           "INT32_MAX"]

#: the largest value a 32-bit signed integer holds (GPU edge lengths, tabu stamps, step counters)
INT32_MAX = 2**31 - 1


def check_square(owner: str, name: str, a, dtype=None) -> np.ndarray:
    """``a`` as a finite square numeric matrix, or ValueError "Owner: `name` must be ..."."""
    try:
        a = np.asarray(a, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ValueError(f"{owner}: `{name}` must be a square matrix of numbers ({exc})") from None
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{owner}: `{name}` must be a square matrix, got shape {a.shape}")
    if a.dtype.kind not in "iuf" or a.dtype == object:
        raise ValueError(f"{owner}: `{name}` must hold numbers, got {a.dtype} entries")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise ValueError(f"{owner}: `{name}` contains NaN or infinity")
    if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{owner}: `{name}` has entries of 2^63 or more, more than 64-bit arithmetic holds")
    return a


def nearest_hint(name, names) -> str:
    """" (did you mean 'x'?)" for the valid name nearest to a misspelt ``name``, else ""."""
    near = difflib.get_close_matches(str(name), list(names), n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


def check_options(owner: str, cls, options: dict, taken=()) -> None:
    """Refuse, at construction, a keyword in ``options`` that the search class ``cls`` does not
    take (``cls.option_names()``): TypeError naming it and the nearest valid name (a typo would
    otherwise surface only when the search is made, at run()). ``taken``: names the caller itself
    sets, refused too."""
    valid = cls.option_names()
    for name in options:
        if name in taken:
            raise TypeError(f"{owner}: `{name}` is set by {owner} itself, not passed to {cls.__name__}")
        if name not in valid:
            raise TypeError(f"{owner}: {cls.__name__} takes no option `{name}`{nearest_hint(name, valid)}")


def check_host_memory(owner: str, what: str, need: int, each: int | None = None) -> None:
    """Refuse, before anything is allocated, ``need`` bytes of host memory for ``what`` (e.g.
    "`ants`=1,000,000") where they exceed half this machine's memory: ValueError naming it, the
    size, and (given ``each``, the bytes of one unit) how many units would fit."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):      # not a POSIX system: no limit known
        return
    if need <= memory // 2:
        return
    fit = f"; at most {memory // 2 // each:,} fit" if each else ""
    raise ValueError(f"{owner}: {what} needs about {need / 2**30:,.1f} GiB{fit} in half of this machine's "
                     f"{memory / 2**30:,.0f} GiB")


def check_size(owner: str, n: int, minimum: int) -> None:
    """Raise ValueError unless the instance has at least ``minimum`` elements."""
    if n < minimum:
        raise ValueError(f"{owner}: n must be >= {minimum}, got {n}")


def _is_integer(value) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_count(owner: str, name: str, value, minimum: int = 0, maximum: int | None = None) -> int | None:
    """``value`` as an int in [minimum, maximum] (None passes through); True/False, floats and
    strings are refused, NumPy integers accepted."""
    if value is None:
        return None
    if not _is_integer(value):
        raise TypeError(f"{owner}: `{name}` must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{owner}: `{name}` must be an integer {bound}, got {value}")
    return value


def check_number(owner: str, name: str, value, minimum: float | None = None) -> float | None:
    """``value`` as a finite real number, at least ``minimum`` where given (None passes through)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise TypeError(f"{owner}: `{name}` must be a number, got {value!r} ({type(value).__name__})")
    if not np.isfinite(value):
        raise ValueError(f"{owner}: `{name}` must be a finite number, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{owner}: `{name}` must be >= {minimum}, got {value!r}")
    return value


def check_points(owner: str, name: str, points) -> np.ndarray:
    """``points`` as an (n, 2) float64 array of finite real coordinates, or ValueError naming it
    (complex numbers, strings, NaN and a wrong shape refused, not converted with a warning)."""
    a = np.asarray(points)
    if a.dtype.kind not in "biuf":
        raise ValueError(f"{owner}: `{name}` must hold real numbers, got {a.dtype} entries")
    a = a.astype(np.float64)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"{owner}: `{name}` must have shape (n, 2), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{owner}: `{name}` contain NaN or infinite values")
    return a


def check_seconds(owner: str, value, name: str = "seconds") -> float | None:
    """A time budget: a finite number of seconds >= 0 (None passes through)."""
    value = check_number(owner, name, value)
    if value is not None and value < 0:
        raise ValueError(f"{owner}: `{name}` must be >= 0, got {value!r}")
    return None if value is None else float(value)


def check_flag(owner: str, name: str, value) -> bool:
    """A yes/no option: True or False only (a string such as "no" is refused, not taken as true)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: `{name}` must be True or False, got {value!r}")
    return bool(value)


def check_seed(owner: str, seed):
    """A seed for numpy.random.default_rng: None, an integer >= 0, a SeedSequence or a Generator."""
    if seed is None or isinstance(seed, (np.random.SeedSequence, np.random.Generator)):
        return seed
    if not _is_integer(seed):
        raise TypeError(f"{owner}: `seed` must be None, an integer >= 0, a numpy SeedSequence or Generator, "
                        f"got {seed!r} ({type(seed).__name__})")
    if seed < 0:
        raise ValueError(f"{owner}: `seed` must be >= 0, got {seed}")
    return int(seed)


def check_writable(path: str | None, flag: str) -> None:
    """Refuse, before the search, a file the run will write (``flag``: --out, --plot) that cannot
    be written (missing folder, a folder, no permission): ValueError naming it."""
    if path is None:
        return
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise ValueError(f"{flag} {path} is a folder; give a file name")
    if not folder.is_dir():
        raise ValueError(f"{flag} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise ValueError(f"{flag} {path} is not writable")
