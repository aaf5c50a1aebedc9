"""Exceptions for backend failures, and the warning that announces a fallback to the CPU. Bad input
raises the built-in ValueError / TypeError."""
import os
import sys
import warnings


class LsmgpuError(Exception):
    """Base of lsmgpu's own exceptions."""


class BackendUnavailable(LsmgpuError):
    """The requested backend cannot run here (no PyCUDA, no GPU, no nvcc)."""


class KernelCompileError(LsmgpuError):
    """nvcc rejected a rendered kernel; the message holds its stderr and the source path."""

    def __init__(self, message: str, source_path: str | None = None):
        super().__init__(message)
        self.source_path = source_path


class KernelLaunchError(LsmgpuError):
    """A kernel launch failed (too many threads or registers, bad configuration)."""

    def __init__(self, message: str, grid=None, block=None):
        super().__init__(f"{message} (grid={grid}, block={block})")
        self.message, self.grid, self.block = message, grid, block


class BackendFallback(UserWarning):
    """A search runs on the CPU where another backend was asked for or would have been chosen
    (``backend="auto"`` without a GPU, a neighbourhood without device code): said, never silent."""


def announce_fallback(message: str) -> None:
    """A BackendFallback warning pointing at the user's line (the first frame outside lsmgpu),
    not at the library line that noticed it."""
    package = os.path.dirname(os.path.abspath(__file__))
    problems = os.path.join(os.path.dirname(package), "problems")
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith((package, problems)):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, BackendFallback, stacklevel=level)
