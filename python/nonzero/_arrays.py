"""_arrays.py: what the binding's modules share: NumPy / CuPy / SciPy array kinds, value dtypes, native handles."""
import ctypes
import sys

import numpy as np

from . import _lib
from ._errors import InvalidArgumentError

L = _lib.lib
_VT = {np.dtype(np.float32): _lib.F32, np.dtype(np.float64): _lib.F64}
_DT = {_lib.F32: np.dtype(np.float32), _lib.F64: np.dtype(np.float64)}


# ---- array kinds --------------------------------------------------------------------------------

def _is_cupy(a):
    return type(a).__module__.startswith("cupy") and hasattr(a, "data") and hasattr(a, "__cuda_array_interface__")


def _is_cupy_sparse(a):
    return type(a).__module__.startswith("cupyx.scipy.sparse")


def _is_scipy_sparse(a):
    if "scipy.sparse" not in sys.modules:
        return False
    return sys.modules["scipy.sparse"].issparse(a) and not _is_cupy_sparse(a)


def _is_scipy_array(a):
    """True for the scipy.sparse *_array classes (sparray; _is_array before SciPy 1.11)."""
    sparse = sys.modules["scipy.sparse"]
    if hasattr(sparse, "sparray"):
        return isinstance(a, sparse.sparray)
    return bool(getattr(a, "_is_array", False))


def _cupy():
    import cupy
    return cupy


def _ptr(a):
    """Data pointer of a NumPy or CuPy array."""
    if isinstance(a, np.ndarray):
        return a.ctypes.data
    return a.data.ptr


def _value_dtype(dtype):
    dt = np.dtype(dtype)
    if dt not in _VT:
        if dt.kind in "biuf":
            return np.dtype(np.float64)
        raise InvalidArgumentError("nonzero: unsupported value dtype %s (float32 or float64; "
                                   "integers and booleans become float64)" % dt)
    return dt


class _Handle:
    """Owns one nz_matrix_t; keeps its context and any borrowed arrays alive."""

    def __init__(self, ctx, keep=()):
        self.ctx = ctx
        self.ptr = ctypes.c_void_p()
        self.keep = keep

    _destroy = L.nz_matrix_destroy  # bound here: module globals may be gone at exit
    _byref = ctypes.byref
    # At interpreter exit finalizers run in no fixed order (a context can go before the matrices
    # and plans made with it): the process exit frees everything instead.
    _finalizing = sys.is_finalizing

    def __del__(self):
        if self.ptr and not self._finalizing():
            self._destroy(self._byref(self.ptr))


class _PlanHandle:
    def __init__(self, ctx, destroy, keep):
        self.ctx = ctx
        self.ptr = ctypes.c_void_p()
        self.destroy = destroy
        self.keep = keep  # the matrix handle: A must outlive the plan

    _byref = ctypes.byref
    _finalizing = sys.is_finalizing  # see _Handle

    def __del__(self):
        if self.ptr and not self._finalizing():
            self.destroy(self._byref(self.ptr))
