"""Where a population method's kernels run: on the backend where it has them, else on the host,
announced (a BackendFallback warning) when the backend is not the CPU: the ant colonies, the
genetic algorithm's generations, the don't-look descents, ILS chains and focused ants."""
from __future__ import annotations

from ..errors import announce_fallback

__all__ = ["kernel_or_host"]


def kernel_or_host(backend, kernel: str, args: tuple, host, *, announce: str, what: str):
    """``backend.<kernel>(*args)`` where the backend (not the CPU) has that kernel, else ``host()``;
    the warning says "<announce>: <what> on the host (<backend> has no <kernel> kernel)" and points
    at the user's line."""
    if backend.name != "cpu":
        make = getattr(backend, kernel, None)
        if make is not None:
            return make(*args)
        announce_fallback(f"{announce}: {what} on the host ({backend.name} has no {kernel} kernel)")
    return host()
