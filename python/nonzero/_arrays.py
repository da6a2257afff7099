"""_arrays.py: what the binding's modules share: NumPy / CuPy / SciPy array kinds, value dtypes, native handles."""
import ctypes
import sys

import numpy as np

from . import _lib
from ._errors import InvalidArgumentError, InvalidMatrixError

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


def format_names():
    """The library's format names, in enum order."""
    return [L.nz_format_name(f).decode() for f in range(_lib.FORMAT_COUNT)]


def alg_names():
    """SpMV algorithm names accepted by plan(alg=...), in enum order."""
    names = []
    for a in range(64):  # the enum's values, gaps included; the library names each one it has
        name = L.nz_alg_name(a).decode()
        if name != "unknown":
            names.append(name)
    return names


def alg_value(ctx, alg):
    """The nz_alg_t of an algorithm name; InvalidArgumentError naming the value and the valid
    ones."""
    a = ctypes.c_int()
    st = L.nz_alg_from_name(ctypes.byref(a), str(alg).encode()) if isinstance(alg, str) else -2
    if st < 0:
        raise InvalidArgumentError("nonzero: unknown SpMV algorithm %r (valid: %s)"
                                   % (alg, ", ".join(alg_names())), st)
    return a.value


class _Borrow:
    """What a matrix that borrows its caller's CSR arrays checks before every use, so a change
    to those arrays raises instead of mixing old and new arrays or reading out of bounds.

    O(1): the owner (a SciPy or CuPy matrix) still holds the very array objects and shape it had,
    and the arrays' data pointers and lengths are unchanged (a reallocating resize). Host arrays
    also get an O(rows + nnz) vectorised bounds check, about the cost of the product itself:
    row offsets start at 0, never decrease and end at nnz (int32 offsets, which the library
    widened into its own copy, must equal that copy), and every column index lies in [0, cols).
    So an in-place edit of the structure can never make the library read out of bounds. Device
    arrays get the O(1) checks only (a device bounds check would synchronise every call)."""

    def __init__(self, owner, owner_arrays, data, indices, indptr, shape, nnz, lib_offsets=None):
        self.owner = owner  # None for raw arrays
        self.owner_arrays = owner_arrays  # the owner's data, indices, indptr objects
        self.arrays = (data, indices, indptr)
        self.ptrs = tuple(_ptr(a) for a in self.arrays)
        self.sizes = tuple(a.shape[0] for a in self.arrays)
        self.shape = tuple(shape)
        self.nnz = nnz
        self.lib_offsets = lib_offsets
        self.host = isinstance(data, np.ndarray)

    def _changed(self, what):
        raise InvalidMatrixError(
            "nonzero: the arrays this matrix borrows were changed (%s) after it was made; a "
            "borrowing matrix (nonzero.asmatrix, copy=False) needs its structure unchanged: make "
            "it again, or use nonzero.csr_matrix(...), which copies" % what, -20)

    def check(self):
        o = self.owner
        data, indices, indptr = self.arrays
        if o is not None:
            od, oi, op = self.owner_arrays
            if o.data is not od or o.indices is not oi or o.indptr is not op:
                self._changed("the matrix holds other data, indices or indptr arrays, e.g. "
                              "after eliminate_zeros, sum_duplicates or resize")
            if tuple(o.shape) != self.shape:
                self._changed("shape %s, was %s" % (tuple(o.shape), self.shape))
        for a, p, n in zip(self.arrays, self.ptrs, self.sizes):
            if a.shape[0] != n or _ptr(a) != p:
                self._changed("an array was resized")
        if not self.host:
            return
        rows, cols = self.shape
        nnz = self.nnz
        if self.lib_offsets is not None:
            if not np.array_equal(indptr, self.lib_offsets):
                self._changed("indptr")
        elif int(indptr[0]) != 0 or int(indptr[rows]) != nnz or (
                rows > 1 and bool((indptr[1:] < indptr[:-1]).any())):
            self._changed("indptr no longer runs from 0 to nnz = %d without decreasing" % nnz)
        if nnz and int(indices[:nnz].view(np.uint32).max()) >= cols:  # negatives wrap above
            self._changed("a column index lies outside [0, %d)" % cols)


def check_borrows(h):
    """Run the _Borrow checks of handle h and of the handles it keeps alive (wraps in other
    contexts, conversions): nothing to do for a matrix that owns its arrays."""
    b = h.borrow
    if b is not None:
        b.check()
    for k in h.keep:
        if isinstance(k, _Handle):
            check_borrows(k)


class _Handle:
    """Owns one nz_matrix_t; keeps its context and any borrowed arrays alive."""

    borrow = None  # a _Borrow when the matrix wraps caller arrays

    def __init__(self, ctx, keep=()):
        self.ctx = ctx
        self.ptr = ctypes.c_void_p()
        self.keep = keep

    def __reduce__(self):
        raise TypeError("nonzero: a native matrix handle cannot be pickled")

    _destroy = L.nz_matrix_destroy  # bound here: module globals may be gone at exit
    _byref = ctypes.byref
    # At interpreter exit finalizers run in no fixed order (a context can go before the matrices
    # and plans made with it): the process exit frees everything instead.
    _finalizing = sys.is_finalizing

    def __del__(self):
        if self.ptr and not self._finalizing():
            self._destroy(self._byref(self.ptr))


class _PlanHandle:
    borrow = None

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
