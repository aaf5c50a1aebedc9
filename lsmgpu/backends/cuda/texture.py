"""CUDA texture objects for linear device memory, created through the driver API with ctypes.

PyCUDA wraps only texture *references*, which CUDA 12 removed; texture *objects*
(``cuTexObjectCreate``) are plain 64-bit handles passed to a kernel as an argument and read
with ``tex1Dfetch<T>``. Three driver calls and two structs are all that is needed, so they
are declared here with ctypes against ``libcuda`` (the library PyCUDA itself runs on, in
the same context) rather than adding a dependency on cuda-python.
64-bit elements (double, long long) are viewed as two 32-bit channels (``int2``) and put
back together in the kernel (templates/skeleton/evaluate.cu.j2).
"""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

from ...errors import BackendUnavailable

__all__ = ["TextureObject"]

_RESOURCE_TYPE_LINEAR = 0x02
_FORMAT = {np.dtype(np.int32): (0x0A, 1), np.dtype(np.float32): (0x20, 1),
           np.dtype(np.float64): (0x0A, 2), np.dtype(np.int64): (0x0A, 2),
           np.dtype(np.int8): (0x08, 1), np.dtype(np.uint8): (0x01, 1)}
_READ_AS_INTEGER = 0x01


class _Linear(ctypes.Structure):
    _fields_ = [("devPtr", ctypes.c_uint64), ("format", ctypes.c_uint32),
                ("numChannels", ctypes.c_uint32), ("sizeInBytes", ctypes.c_size_t)]


class _ResourceUnion(ctypes.Union):
    _fields_ = [("linear", _Linear), ("reserved", ctypes.c_int * 32)]


class _ResourceDesc(ctypes.Structure):      # CUDA_RESOURCE_DESC
    _fields_ = [("resType", ctypes.c_int), ("res", _ResourceUnion), ("flags", ctypes.c_uint)]


class _TextureDesc(ctypes.Structure):       # CUDA_TEXTURE_DESC
    _fields_ = [("addressMode", ctypes.c_int * 3), ("filterMode", ctypes.c_int), ("flags", ctypes.c_uint),
                ("maxAnisotropy", ctypes.c_uint), ("mipmapFilterMode", ctypes.c_int),
                ("mipmapLevelBias", ctypes.c_float), ("minMipmapLevelClamp", ctypes.c_float),
                ("maxMipmapLevelClamp", ctypes.c_float), ("borderColor", ctypes.c_float * 4),
                ("reserved", ctypes.c_int * 12)]


_driver = None


def _libcuda():
    global _driver
    if _driver is None:
        name = ctypes.util.find_library("cuda") or "libcuda.so.1"
        try:
            _driver = ctypes.CDLL(name)
        except OSError as exc:
            raise BackendUnavailable(f"texture objects need libcuda: {exc}") from None
        _driver.cuTexObjectCreate.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(_ResourceDesc),
                                              ctypes.POINTER(_TextureDesc), ctypes.c_void_p]
        _driver.cuTexObjectDestroy.argtypes = [ctypes.c_uint64]
    return _driver


class TextureObject:
    """A read-only 1D texture over ``nbytes`` of device memory at ``pointer``, holding ``dtype``."""

    def __init__(self, pointer: int, dtype, count: int):
        dtype = np.dtype(dtype)
        if dtype not in _FORMAT:
            raise TypeError(f"texture: unsupported dtype {dtype}")
        fmt, channels = _FORMAT[dtype]
        res = _ResourceDesc()
        res.resType = _RESOURCE_TYPE_LINEAR
        res.res.linear = _Linear(int(pointer), fmt, channels, count * dtype.itemsize)
        tex = _TextureDesc()
        tex.flags = _READ_AS_INTEGER if dtype.kind in "iu" or channels == 2 else 0
        handle = ctypes.c_uint64(0)
        status = _libcuda().cuTexObjectCreate(ctypes.byref(handle), ctypes.byref(res), ctypes.byref(tex), None)
        if status != 0:
            raise BackendUnavailable(f"cuTexObjectCreate failed with CUDA error {status}")
        self.handle = handle.value

    def close(self) -> None:
        if self.handle:
            _libcuda().cuTexObjectDestroy(self.handle)
            self.handle = 0
