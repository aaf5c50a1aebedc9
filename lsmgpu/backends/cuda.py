"""placeholder"""
from ..errors import BackendUnavailable


class CudaBackend:
    @staticmethod
    def probe():
        raise BackendUnavailable("not yet")
