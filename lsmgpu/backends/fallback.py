"""Where a population method's kernels run: on the backend where it has them, else on the host,
announced (a BackendFallback warning) when the backend is not the CPU: the ant colonies, the
genetic algorithm's generations, the don't-look descents, ILS chains and focused ants."""
from __future__ import annotations

import warnings

from ..errors import BackendFallback

__all__ = ["kernel_or_host"]


def kernel_or_host(backend, kernel: str, args: tuple, host, *, announce: str, what: str, stacklevel: int = 3):
    """``backend.<kernel>(*args)`` where the backend (not the CPU) has that kernel, else ``host()``;
    the warning says "<announce>: <what> on the host (<backend> has no <kernel> kernel)" and points
    ``stacklevel`` frames up (3: the caller of the function that calls this one)."""
    if backend.name != "cpu":
        make = getattr(backend, kernel, None)
        if make is not None:
            return make(*args)
        warnings.warn(f"{announce}: {what} on the host ({backend.name} has no {kernel} kernel)", BackendFallback,
                      stacklevel=stacklevel)
    return host()
