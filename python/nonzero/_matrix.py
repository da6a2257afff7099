"""_matrix.py: csr_matrix over nz_matrix_t (host or device): construction, moves, views, info; A.T."""
import ctypes
import operator
import sys

import numpy as np

from . import _lib
from ._context import host_context, device_context
from ._arrays import (_DT, _VT, _Borrow, _Handle, _cupy, _is_cupy, _is_cupy_sparse,
                      _is_scipy_array, _is_scipy_sparse, _ptr, _value_dtype, check_borrows)
from ._errors import (DimensionMismatchError, InvalidArgumentError, InvalidMatrixError,
                      NotSortedError)
from ._plan import Plan

L = _lib.lib
_I32_MAX = 2**31 - 1


def _shape_pair(shape):
    """(rows, cols) as Python ints; floats (1.9 -> 1) and other non-integers are refused."""
    try:
        rows, cols = shape
        return operator.index(rows), operator.index(cols)
    except (TypeError, ValueError):
        raise TypeError("nonzero: shape must be a pair of integers, not %r" % (shape,)) from None


def _integer_array(a, name):
    if a.dtype.kind not in "iu":
        raise TypeError("nonzero: %s must be an integer array, not %s (floats are not truncated)"
                        % (name, a.dtype))


def _to_int32_indices(indices, cols, reasons):
    if indices.dtype != np.int32:
        reasons.append("column indices are %s, not int32" % indices.dtype)
        if indices.size and (int(indices.max()) > _I32_MAX or int(indices.min()) < -2**31):
            raise InvalidMatrixError("nonzero: column index %d out of int32 range"
                                     % (int(indices.max()) if int(indices.max()) > _I32_MAX
                                        else int(indices.min())))
        return indices.astype(np.int32)
    return indices


class _Shared:
    """A host array of a library matrix, seen by NumPy through the array interface; the NumPy
    array's base, so the matrix lives as long as any array over it."""

    def __init__(self, handle, address, n, typestr):
        self._handle = handle
        self.__array_interface__ = {"data": (address, False), "shape": (n,),
                                    "typestr": typestr, "version": 3}


class csr_matrix:
    """A sparse matrix held by Nonzero (host or device CSR).

    csr_matrix(A) for a scipy.sparse matrix/array (CSC, COO, ... converted), a
    cupyx.scipy.sparse matrix (device), another nonzero.csr_matrix, or
    csr_matrix((data, indices, indptr), shape=(m, n)) with NumPy or CuPy arrays (indices and
    indptr integer arrays, shape a pair of integers: floats are refused, never truncated).
    dtype: float32 or float64 (default: the data's, integers become float64).
    copy: True (the default, as scipy.sparse.csr_matrix) = the matrix owns a copy: later changes
    to the input are not seen. None = borrow the caller's arrays when dtype and layout allow
    (as np.asarray; nonzero.asmatrix does this), else copy everything. False = borrow, or raise
    ValueError when a copy would be needed. A borrowing matrix sees in-place changes of the
    values; its structure must stay as it was: before every use it checks in O(1) that the
    borrowed arrays (and the SciPy/CuPy matrix holding them) are the same objects with the
    same pointers, sizes and shape, and, for host arrays, in one vectorised pass, that indptr
    still runs from 0 to nnz and every column index lies in range; a change raises
    InvalidMatrixError (never a mix of old and new arrays, never a crash).
    device: None = where the input lives, True or an int = the GPU (CuPy's current device by
    default), False = the host.
    validate (device input): check the structure on the host (one device-to-host copy);
    default: True for raw device arrays, False for cupyx.scipy.sparse matrices (whose
    has_canonical_format is checked instead: unsorted or duplicate input is never used as is).

    Parameters
    ----------
    arg : scipy.sparse, cupyx.scipy.sparse, csr_matrix or (data, indices, indptr)
        The matrix.
    shape : (int, int), optional
        Required with (data, indices, indptr).
    dtype : {None, float32, float64}, optional
        Value type (default: the data's).
    copy : {True, None, False}, optional
        Own a copy (default), borrow when possible, or borrow or raise.
    device : None, bool or int, optional
        Where the matrix lives.
    validate : bool, optional
        Check device input's structure on the host.

    Raises
    ------
    InvalidArgumentError
        An input of another kind, or (data, indices, indptr) without shape.
    InvalidMatrixError, NotSortedError
        A broken or unsorted structure.
    ValueError
        copy=False where a copy is needed.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, nonzero
    >>> S = sp.csr_matrix(np.array([[2.0, 0.0], [1.0, 3.0]]))
    >>> A = nonzero.csr_matrix(S)
    >>> A
    <nonzero.csr_matrix 2x2, 3 nonzeros, float64, csr>
    >>> (A @ np.array([1.0, 1.0])).tolist(), (A.T @ np.array([1.0, 1.0])).tolist()
    ([2.0, 4.0], [3.0, 3.0])
    """

    __array_priority__ = 100

    def __init__(self, arg, shape=None, dtype=None, copy=True, device=None, validate=None):
        self._plans = {}
        self._host_arrays = None
        self._ncalls = 0
        if isinstance(arg, _Handle):  # internal: a handle the library made
            self._h = arg
            self._fill_info()
            self._move(device)
            return
        if isinstance(arg, csr_matrix):
            b = arg._h.borrow
            if b is not None and copy is True:  # a borrowing matrix: copy what it borrows
                check_borrows(arg._h)
                data, indices, indptr = b.arrays
                self._from_arrays(data, indices, indptr, b.shape, dtype, True, validate)
            else:
                self._h = arg._h
            self._scipy_array = getattr(arg, "_scipy_array", False)
            self._fill_info()
            if dtype is not None and np.dtype(dtype) != self.dtype:
                self._h = self.astype(dtype)._h
                self._fill_info()
            self._move(device)
            return
        if _is_cupy_sparse(arg):
            A = arg
            if A.format != "csr":
                if copy is False:
                    raise ValueError("nonzero: copy=False but a %s matrix must be converted to CSR"
                                     % A.format)
                A = A.tocsr()
            data, indices, indptr, shape = A.data, A.indices, A.indptr, A.shape
            if validate is None:
                validate = False  # CuPy built the structure; canonical form is still checked
            # CuPy caches has_canonical_format on the matrix: checked once, not per wrap
            self._known_canonical = bool(A.has_canonical_format)
            self._from_arrays(data, indices, indptr, shape, dtype, copy, validate,
                              owner=arg if A is arg else None)
        elif _is_scipy_sparse(arg):
            A = arg
            self._scipy_array = _is_scipy_array(arg)
            if A.format != "csr":
                if copy is False:
                    raise ValueError("nonzero: copy=False but a %s matrix must be converted to CSR"
                                     % A.format)
                A = A.tocsr()
            self._from_arrays(A.data, A.indices, A.indptr, A.shape, dtype, copy, validate,
                              owner=arg if A is arg else None)
        elif (isinstance(arg, np.ndarray) or _is_cupy(arg)) and getattr(arg, "ndim", 0) == 2:
            # a dense 2-D array, as scipy.sparse.csr_matrix(dense) takes it: its nonzeros
            if copy is False:
                raise ValueError("nonzero: copy=False but a dense array must be converted")
            if _is_cupy(arg):
                import cupyx.scipy.sparse as csp
                A = csp.csr_matrix(arg)
                self._known_canonical = True
            else:
                import scipy.sparse as sp
                A = sp.csr_matrix(arg)
                self._scipy_array = False
            if device is None and _is_cupy(arg):
                device = True
            self._from_arrays(A.data, A.indices, A.indptr, A.shape, dtype, True, validate)
        elif isinstance(arg, tuple) and len(arg) == 3:
            if shape is None:
                raise InvalidArgumentError("nonzero: (data, indices, indptr) needs shape=(rows, cols)")
            self._from_arrays(arg[0], arg[1], arg[2], shape, dtype, copy, validate)
        else:
            raise InvalidArgumentError("nonzero: cannot make a csr_matrix from %s" % type(arg).__name__)
        self._fill_info()
        self._move(device)

    # ---- construction ---------------------------------------------------------------------
    def _from_arrays(self, data, indices, indptr, shape, dtype, copy, validate, owner=None):
        rows, cols = _shape_pair(shape)
        if rows < 0 or cols < 0:
            raise InvalidArgumentError("nonzero: negative shape %r" % (shape,))
        on_device = _is_cupy(data) or _is_cupy(indices) or _is_cupy(indptr)
        xp = _cupy() if on_device else np
        given = (data, indices, indptr)  # the owner's own array objects, for _Borrow
        data, indices, indptr = xp.asarray(data), xp.asarray(indices), xp.asarray(indptr)
        _integer_array(indices, "indices (column indices)")
        _integer_array(indptr, "indptr (row offsets)")
        reasons = []
        vdt = _value_dtype(dtype if dtype is not None else data.dtype)
        if data.dtype != vdt:
            reasons.append("values are %s, not %s" % (data.dtype, vdt))
            data = data.astype(vdt)
        if data.ndim != 1 or indices.ndim != 1 or indptr.ndim != 1:
            raise InvalidArgumentError("nonzero: data, indices and indptr must be 1-D")
        if indptr.shape[0] != rows + 1:
            raise DimensionMismatchError("nonzero: indptr has %d entries, shape %r needs %d"
                                         % (indptr.shape[0], (rows, cols), rows + 1))
        if indptr.dtype not in (np.int32, np.int64):
            reasons.append("indptr is %s" % indptr.dtype)
            if indptr.dtype.kind == "u" and indptr.size and int(indptr.max()) > 2**63 - 1:
                raise InvalidMatrixError("nonzero: indptr holds %d, beyond the int64 range (row "
                                         "offsets lie in [0, nnz])" % int(indptr.max()))
            indptr = indptr.astype(np.int64)
        indices = _to_int32_indices(indices, cols, reasons)
        if not (data.flags.c_contiguous and indices.flags.c_contiguous and indptr.flags.c_contiguous):
            reasons.append("arrays are not contiguous")
            data, indices, indptr = (xp.ascontiguousarray(a) for a in (data, indices, indptr))
        nnz = int(indptr[rows]) if rows >= 0 else 0
        if int(indptr[0]) != 0 or nnz < 0:
            raise InvalidMatrixError("nonzero: indptr must start at 0 (indptr[0] = %d)" % int(indptr[0]))
        if indices.shape[0] < nnz or data.shape[0] < nnz:
            raise InvalidMatrixError("nonzero: indptr[-1] = %d but indices has %d and data %d entries"
                                     % (nnz, indices.shape[0], data.shape[0]))
        if reasons and copy is False:
            raise ValueError("nonzero: copy=False but a copy is needed: " + "; ".join(reasons))
        if reasons:
            # converted arrays are ours: copy all three, never borrow some of the caller's
            # arrays beside converted copies of the others (a later change would mix them)
            copy = True
        vt = _VT[vdt]
        ot = _lib.I32 if indptr.dtype == np.int32 else _lib.I64
        if on_device:
            self._from_device_arrays(data, indices, indptr, rows, cols, nnz, vt, ot, copy,
                                     True if validate is None else validate, owner, given)
            return
        ctx = host_context()
        h = _Handle(ctx, (data, indices, indptr))
        if copy is True:
            ctx.check(L.nz_matrix_create_csr(ctx.handle, ctypes.byref(h.ptr), rows, cols, ot,
                                             indptr.ctypes.data, indices.ctypes.data, vt,
                                             data.ctypes.data), "nz_matrix_create_csr")
            h.keep = ()
            self._h = h
            return
        st = L.nz_matrix_wrap_csr(ctx.handle, ctypes.byref(h.ptr), rows, cols, ot,
                                  indptr.ctypes.data, indices.ctypes.data, vt, data.ctypes.data)
        if st == _lib.ERR_NOT_SORTED:
            msg = ctx.last_error()
            if copy is False:
                raise NotSortedError("nonzero: copy=False but the input is not canonical (%s); "
                                     "sort and sum duplicates first (A.sum_duplicates())" % msg,
                                     st)
            h = _Handle(ctx)
            st = L.nz_matrix_create_csr(ctx.handle, ctypes.byref(h.ptr), rows, cols, ot,
                                        indptr.ctypes.data, indices.ctypes.data, vt,
                                        data.ctypes.data)
            ctx.check(st, "nz_matrix_create_csr")
        else:
            ctx.check(st, "nz_matrix_wrap_csr")
            lib_offsets = None
            if ot == _lib.I32:  # the library widened them into a copy of its own
                rp = ctypes.c_void_p()
                ctx.check(L.nz_matrix_csr_arrays(ctx.handle, ctypes.byref(rp), None, None, h.ptr),
                          "nz_matrix_csr_arrays")
                lib_offsets = np.ctypeslib.as_array(
                    ctypes.cast(rp, ctypes.POINTER(ctypes.c_int64)), (rows + 1,))
            h.borrow = _Borrow(owner, given, data, indices, indptr, (rows, cols), nnz,
                               lib_offsets)
        self._h = h

    def _from_device_arrays(self, data, indices, indptr, rows, cols, nnz, vt, ot, copy, validate,
                            owner=None, given=None):
        cupy = _cupy()
        import cupyx.scipy.sparse as csp
        dev = data.device.id
        ctx = device_context(dev)
        if copy is True:
            data, indices, indptr = data.copy(), indices.copy(), indptr.copy()
        canonical = None
        borrowed = copy is not True
        h = _Handle(ctx, (data, indices, indptr))
        st = L.nz_matrix_wrap_csr_device(ctx.handle, ctypes.byref(h.ptr), rows, cols, nnz, ot,
                                         _ptr(indptr) or None, _ptr(indices) or None, vt,
                                         _ptr(data) or None, 1 if validate else 0)
        known = getattr(self, "_known_canonical", False) and copy is not True
        if st == _lib.ERR_NOT_SORTED or (st == 0 and not validate and nnz > 0 and not known):
            if st == 0:
                M = csp.csr_matrix((data[:nnz], indices[:nnz], indptr), shape=(rows, cols))
                canonical = bool(M.has_canonical_format)
            else:
                canonical = False
            if not canonical:
                h.ptr and L.nz_matrix_destroy(ctypes.byref(h.ptr))
                if copy is False:
                    raise NotSortedError("nonzero: copy=False but the device input is not canonical "
                                         "(unsorted or duplicate column indices)", _lib.ERR_NOT_SORTED)
                M = csp.csr_matrix((data[:nnz].copy(), indices[:nnz].copy(), indptr.astype(cupy.int64)),
                                   shape=(rows, cols))
                M.sum_duplicates()
                if not M.has_sorted_indices:
                    M.sort_indices()
                borrowed = False
                data, indices, indptr = M.data, M.indices, M.indptr
                nnz = int(indptr[rows])
                ot = _lib.I32 if indptr.dtype == np.int32 else _lib.I64
                h = _Handle(ctx, (data, indices, indptr))
                st = L.nz_matrix_wrap_csr_device(ctx.handle, ctypes.byref(h.ptr), rows, cols, nnz,
                                                 ot, _ptr(indptr) or None, _ptr(indices) or None,
                                                 vt, _ptr(data) or None, 1 if validate else 0)
        ctx.check(st, "nz_matrix_wrap_csr_device")
        if borrowed:
            h.borrow = _Borrow(owner, given, data, indices, indptr, (rows, cols), nnz)
        self._h = h

    def _handle_in(self, ctx):
        """A handle of this matrix in context ctx (the library refuses objects of another
        context): its own, or a borrowed wrap of its CSR arrays made once and cached. A
        matrix that borrows its caller's arrays checks them first (_Borrow)."""
        if self._h.borrow is not None:
            check_borrows(self._h)
        if ctx is self._h.ctx:
            return self._h
        wraps = self.__dict__.setdefault("_wraps", {})
        h = wraps.get(id(ctx))
        if h is not None:
            return h
        src = self._h
        h = _Handle(ctx, (src,))
        rows, cols = self.shape
        if self.on_device:
            rp, ci, vp, ot = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_int()
            src.ctx.check(L.nz_matrix_csr_device_arrays(src.ctx.handle, ctypes.byref(rp),
                                                        ctypes.byref(ot), ctypes.byref(ci),
                                                        ctypes.byref(vp), src.ptr),
                          "nz_matrix_csr_device_arrays")
            ctx.check(L.nz_matrix_wrap_csr_device(ctx.handle, ctypes.byref(h.ptr), rows, cols,
                                                  self.nnz, ot.value, rp, ci, self._vt, vp, 0),
                      "nz_matrix_wrap_csr_device")
        else:
            rp, ci, vp = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
            src.ctx.check(L.nz_matrix_csr_arrays(src.ctx.handle, ctypes.byref(rp), ctypes.byref(ci),
                                                 ctypes.byref(vp), src.ptr), "nz_matrix_csr_arrays")
            ctx.check(L.nz_matrix_wrap_csr(ctx.handle, ctypes.byref(h.ptr), rows, cols, _lib.I64,
                                           rp, ci, self._vt, vp), "nz_matrix_wrap_csr")
        wraps[id(ctx)] = h
        return h

    def _fill_info(self):
        info = _lib.MatrixInfo()
        ctx = self._h.ctx
        ctx.check(L.nz_matrix_info(ctx.handle, ctypes.byref(info), self._h.ptr), "nz_matrix_info")
        self.shape = (int(info.rows), int(info.cols))
        self.nnz = int(info.nnz)
        self.dtype = _DT[info.value_type]
        self._vt = info.value_type
        self.on_device = info.location == _lib.DEVICE
        self.format = L.nz_format_name(info.format).decode()
        self._info = info

    def _move(self, device):
        if device is None:
            return
        want = not (device is False or device == "cpu" or device == "host")
        if want and not self.on_device:
            self._to_device(None if device is True or device in ("gpu", "cuda") else int(device))
        elif not want and self.on_device:
            self._to_host()

    def _to_device(self, dev):
        ctx = device_context(dev)
        h = _Handle(ctx)
        ctx.check(L.nz_matrix_to_device(ctx.handle, ctypes.byref(h.ptr), self._handle_in(ctx).ptr,
                                        _lib.INDEX_AUTO), "nz_matrix_to_device")
        self._h, self._plans, self._wraps = h, {}, {}
        self._fill_info()

    def _to_host(self):
        ctx = self._h.ctx  # the host copy is allocated (and freed) through the device context
        h = _Handle(ctx)
        ctx.check(L.nz_matrix_to_host(ctx.handle, ctypes.byref(h.ptr), self._h.ptr),
                  "nz_matrix_to_host")
        self._h, self._plans, self._wraps = h, {}, {}
        self._fill_info()

    # ---- conversions back -------------------------------------------------------------------
    def to_device(self, device=None):
        """A device copy (or self if already on the device).

        Parameters
        ----------
        device : None or int, optional
            The GPU (default: CuPy's current device, else 0).

        Returns
        -------
        csr_matrix
            On the device.

        Raises
        ------
        NoDeviceError
            No GPU, or a library built without CUDA.
        """
        if self.on_device:
            return self
        B = csr_matrix(self)
        B._to_device(device)
        return B

    def to_host(self):
        """A host copy (or self if already on the host).

        Returns
        -------
        csr_matrix
            On the host.

        Examples
        --------
        >>> import nonzero
        >>> A = nonzero.laplace2d(4)
        >>> A.to_host() is A
        True
        """
        if not self.on_device:
            return self
        B = csr_matrix(self)
        B._to_host()
        return B

    def _csr_arrays_host(self):
        """(data, indices, indptr) NumPy copies of a host matrix (CSR; other formats converted)."""
        ctx = self._h.ctx
        check_borrows(self._h)
        rp, ci, vp = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        ctx.check(L.nz_matrix_csr_arrays(ctx.handle, ctypes.byref(rp), ctypes.byref(ci),
                                         ctypes.byref(vp), self._h.ptr), "nz_matrix_csr_arrays")
        rows, nnz = self.shape[0], self.nnz
        indptr = np.ctypeslib.as_array(ctypes.cast(rp, ctypes.POINTER(ctypes.c_int64)), (rows + 1,)).copy()
        if nnz:
            indices = np.ctypeslib.as_array(ctypes.cast(ci, ctypes.POINTER(ctypes.c_int32)), (nnz,)).copy()
            ct = ctypes.c_float if self.dtype == np.float32 else ctypes.c_double
            data = np.ctypeslib.as_array(ctypes.cast(vp, ctypes.POINTER(ct)), (nnz,)).copy()
        else:
            indices = np.zeros(0, np.int32)
            data = np.zeros(0, self.dtype)
        if nnz <= _I32_MAX:
            indptr = indptr.astype(np.int32)
        return data, indices, indptr

    def _toscipy_shared(self):
        """SciPy CSR over this host matrix's own arrays, without a copy: for a result that no
        one else holds (the matrix must not be changed through this object afterwards). The
        arrays keep the library matrix alive; only the row offsets are narrowed to int32 (a
        copy of rows + 1 entries) when the nonzeros fit. Rows are marked sorted and canonical,
        as the library's CSR always is."""
        import scipy.sparse as sp
        h = self._h
        ctx = h.ctx
        if h.borrow is not None or self.on_device or self.format != "csr":
            return self.toscipy()
        rp, ci, vp = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        ctx.check(L.nz_matrix_csr_arrays(ctx.handle, ctypes.byref(rp), ctypes.byref(ci),
                                         ctypes.byref(vp), h.ptr), "nz_matrix_csr_arrays")
        rows, nnz = self.shape[0], self.nnz
        indptr = np.asarray(_Shared(h, rp.value, rows + 1, "<i8"))
        if nnz:
            indices = np.asarray(_Shared(h, ci.value, nnz, "<i4"))
            data = np.asarray(_Shared(h, vp.value, nnz, np.dtype(self.dtype).str))
        else:
            indices = np.zeros(0, np.int32)
            data = np.zeros(0, self.dtype)
        if nnz <= _I32_MAX and max(self.shape) <= _I32_MAX:
            indptr = indptr.astype(np.int32)
        cls = sp.csr_array if getattr(self, "_scipy_array", False) and hasattr(sp, "csr_array") \
            else sp.csr_matrix
        M = cls((data, indices, indptr), shape=self.shape)
        M.has_sorted_indices = True
        M.has_canonical_format = True
        return M

    def toscipy(self, array=None):
        """A scipy.sparse CSR copy (csr_array when the input was one, else csr_matrix).

        Parameters
        ----------
        array : bool, optional
            True: csr_array; False: csr_matrix; None: as the input was.

        Returns
        -------
        scipy.sparse.csr_matrix or scipy.sparse.csr_array

        Examples
        --------
        >>> import nonzero
        >>> S = nonzero.laplace2d(3).toscipy()
        >>> S.shape, S.nnz, S.diagonal().tolist()[:3]
        ((9, 9), 33, [4.0, 4.0, 4.0])
        """
        import scipy.sparse as sp
        A = self.to_host()
        data, indices, indptr = A._csr_arrays_host()
        if array is None:
            array = getattr(self, "_scipy_array", False)
        cls = sp.csr_array if array and hasattr(sp, "csr_array") else sp.csr_matrix
        return cls((data, indices, indptr), shape=self.shape)

    def tocupy(self):
        """A cupyx.scipy.sparse.csr_matrix (a view of the device arrays when possible).

        Returns
        -------
        cupyx.scipy.sparse.csr_matrix
            On the device (a host matrix is copied there first).

        Raises
        ------
        ImportError
            CuPy is not installed.
        """
        import cupyx.scipy.sparse as csp
        A = self.to_device()
        data, indices, indptr = _device_arrays(A._h, A.shape[0], A.nnz, A.dtype)
        return csp.csr_matrix((data, indices, indptr), shape=A.shape, copy=False)

    def _like_input(self):
        """The result kind the caller passed in: CuPy for device matrices, else SciPy."""
        return self.tocupy() if self.on_device else self.toscipy()

    # ---- operations -------------------------------------------------------------------------
    @property
    def T(self):
        return _Transposed(self)

    def transpose(self):
        return _Transposed(self)

    def _default_plan(self, op):
        ctx = self._ctx_now()
        key = (id(ctx), op)
        p = self._plans.get(key)
        if p is None:
            p = self._plans[key] = Plan(self, op=op, _ctx=ctx)
        return p

    def _ctx_now(self):
        """The context for work now: the matrix's own on the host; on the device, the one of
        CuPy's current stream (a plan per stream, so work orders with the caller's)."""
        ctx = self._h.ctx
        if not self.on_device:
            return ctx
        cupy = sys.modules.get("cupy")
        if cupy is None or cupy.cuda.runtime.getDevice() != ctx.device:
            return ctx  # another current device: keep the matrix's own stream
        s = cupy.cuda.get_current_stream().ptr or 1  # legacy default stream: cudaStreamLegacy
        if s == ctx.stream.value or (s == 1 and ctx.stream.value in (None, 1)):
            return ctx
        return device_context(ctx.device, s)

    def __matmul__(self, other):
        if isinstance(other, (csr_matrix, _Transposed)) or _is_scipy_sparse(other) or _is_cupy_sparse(other):
            from ._ops import spgemm
            return spgemm(self, other)
        return self._default_plan(_lib.OP_N)(other)

    def dot(self, other):
        """A @ other: SpMV / SpMM for a dense other, SpGEMM for a sparse one.

        Parameters
        ----------
        other : ndarray, cupy.ndarray or a sparse matrix
            A vector (n,), a block (n, k), or a sparse matrix.

        Returns
        -------
        ndarray, cupy.ndarray or sparse matrix
            Of the caller's kind (see Plan for the dtype rules).

        Examples
        --------
        >>> import numpy as np, nonzero
        >>> A = nonzero.laplace2d(2)
        >>> A.dot(np.ones(4)).tolist()
        [2.0, 2.0, 2.0, 2.0]
        """
        return self.__matmul__(other)

    def matvec(self, x):
        """y = A x (SciPy's LinearOperator spelling of A @ x).

        Examples
        --------
        >>> import numpy as np, nonzero
        >>> nonzero.laplace2d(2).matvec(np.arange(4.0)).tolist()
        [-3.0, 1.0, 5.0, 9.0]
        """
        return self._default_plan(_lib.OP_N)(x)

    def rmatvec(self, x):
        """y = A^T x (A^H x for real A).

        Examples
        --------
        >>> import numpy as np, scipy.sparse as sp, nonzero
        >>> A = nonzero.csr_matrix(sp.csr_matrix(np.array([[1.0, 2.0], [0.0, 3.0]])))
        >>> A.rmatvec(np.array([1.0, 1.0])).tolist()
        [1.0, 5.0]
        """
        return self._default_plan(_lib.OP_T)(x)

    def plan(self, format=None, alg="auto", deterministic=False, tune=False, mixed=False,
             op="N", reuse=False, **format_options):
        """A reusable SpMV/SpMM plan: plan(x, y=None, alpha=1, beta=0) -> y = alpha op(A) x + beta y.
        op: 'N' (A), 'T' (A^T) or 'H' (the conjugate transpose A^H, which is A^T for real A);
        anything else raises ValueError.
        format: None/'csr', or 'sell', 'ell', 'hyb', 'bsr', 'dia', 'coo' (converted once, on the
        host; options sell_chunk, sell_sigma, bsr_block, hyb_ell_width, max_padding_ratio);
        'auto': the planner's format (nonzero.format_names()). alg: an algorithm name
        (nonzero.alg_names()) or 'auto'. reuse=True: the plan will run many times, so set-up
        that pays back only over hundreds of products (column renumbering) is allowed
        (NZ_PLAN_REUSE; tune=True implies it). A plan in another format is a snapshot of A's
        values.

        Parameters
        ----------
        format : str, optional
            None / 'csr', a format name, or 'auto'.
        alg : str, optional
            An algorithm name or 'auto' (default).
        deterministic : bool, optional
            Bitwise reproducible algorithms only.
        tune : bool, optional
            Time the plausible candidates once and keep the fastest.
        mixed : bool, optional
            float32 storage with float64 accumulation.
        op : {'N', 'T', 'H'}, optional
            The operation (default 'N').
        reuse : bool, optional
            The plan will run many times.
        **format_options
            Conversion options of the format.

        Returns
        -------
        Plan
            Callable: plan(x, y=None, alpha=1, beta=0).

        Raises
        ------
        ValueError
            An unknown op.
        InvalidArgumentError, UnsupportedError
            An unknown name, or a pair the backend does not have.

        Examples
        --------
        >>> import numpy as np, nonzero
        >>> A = nonzero.laplace2d(8)
        >>> p = A.plan(alg="auto")
        >>> y = np.zeros(64)
        >>> _ = p(np.ones(64), y, alpha=2.0)
        >>> float(y.sum()) == 2.0 * float((A @ np.ones(64)).sum())
        True
        """
        opv = _op_value(op)
        return Plan(self, op=opv, format=format, alg=alg, deterministic=deterministic, tune=tune,
                    mixed=mixed, reuse=reuse, format_options=format_options)

    def astype(self, dtype):
        """A copy with float32 or float64 values (self when the dtype is already dtype).

        Parameters
        ----------
        dtype : {float32, float64}
            The value type.

        Returns
        -------
        csr_matrix

        Raises
        ------
        TypeError
            Another dtype.

        Examples
        --------
        >>> import numpy as np, nonzero
        >>> nonzero.laplace2d(4).astype(np.float32).dtype
        dtype('float32')
        """
        dt = _value_dtype(dtype)
        if dt == self.dtype:
            return self
        host = self.to_host()
        ctx = host._h.ctx
        src = host._handle_in(ctx)
        h = _Handle(ctx)
        ctx.check(L.nz_matrix_convert_values(ctx.handle, ctypes.byref(h.ptr), src.ptr, _VT[dt]),
                  "nz_matrix_convert_values")
        B = csr_matrix(h)
        B._scipy_array = getattr(self, "_scipy_array", False)
        if self.on_device:
            B._to_device(self._h.ctx.device)
        return B

    def __reduce__(self):
        """Pickling and copy.copy / copy.deepcopy: the CSR arrays (host copies) and where the
        matrix lived; the copy owns its arrays (it borrows nothing)."""
        host = self.to_host()
        data, indices, indptr = host._csr_arrays_host()
        return (_unpickle, (data, indices, indptr, self.shape, self.on_device,
                            getattr(self, "_scipy_array", False)))

    def aslinearoperator(self):
        """A SciPy LinearOperator (host matrix) or CuPy LinearOperator (device matrix) whose
        matvec, rmatvec and matmat run Nonzero's SpMV / SpMM.

        Returns
        -------
        scipy.sparse.linalg.LinearOperator or cupyx.scipy.sparse.linalg.LinearOperator

        Examples
        --------
        >>> import numpy as np, scipy.sparse.linalg as spla, nonzero
        >>> A = nonzero.laplace2d(16)
        >>> x, info = spla.cg(A.aslinearoperator(), np.ones(256), atol=1e-10)
        >>> info
        0
        """
        if self.on_device:
            from cupyx.scipy.sparse.linalg import LinearOperator
        else:
            from scipy.sparse.linalg import LinearOperator
        return LinearOperator(self.shape, matvec=self.matvec, rmatvec=self.rmatvec,
                              matmat=lambda X: self @ X, dtype=self.dtype)

    def info(self):
        """Storage, and the planner's choice of SpMV algorithm and why.

        Returns
        -------
        dict
            shape, nnz, dtype, format, location, offset_type, bytes, the matrix statistics
            ('stats'), the planner's choice on each backend ('planner_cpu', 'planner_gpu': alg
            and why) and the default plan's info ('plan').

        Examples
        --------
        >>> import nonzero
        >>> i = nonzero.laplace2d(8).info()
        >>> i["shape"], i["nnz"], i["location"]
        ((64, 64), 288, 'host')
        """
        i = self._info
        out = {"shape": self.shape, "nnz": self.nnz, "dtype": str(self.dtype),
               "format": self.format, "location": "device" if self.on_device else "host",
               "offset_type": "int%d" % (8 * i.offset_type) if i.offset_type else "auto",
               "bytes": int(i.bytes)}
        if self.on_device:
            out["device"] = self._h.ctx.device_name()
        host = self.to_host()
        ctx = host._h.ctx
        stats = _lib.MatrixStats()
        ctx.check(L.nz_matrix_stats(ctx.handle, ctypes.byref(stats), host._h.ptr), "nz_matrix_stats")
        out["stats"] = {k: getattr(stats, k) for k, _ in stats._fields_ if k != "bytes"}
        for backend, name in ((_lib.BACKEND_CPU, "cpu"), (_lib.BACKEND_CUDA, "gpu")):
            fmt, alg = ctypes.c_int(), ctypes.c_int()
            why = ctypes.create_string_buffer(512)
            st = L.nz_spmv_plan_choose(ctypes.byref(fmt), ctypes.byref(alg), why, 512,
                                       ctypes.byref(stats), backend, _lib.FORMAT_CSR, 0)
            out["planner_" + name] = {
                "alg": L.nz_alg_name(alg.value).decode() if st >= 0 else None,
                "why": why.value.decode(errors="replace")}
        p = self._default_plan(_lib.OP_N)
        out["plan"] = p.info()
        return out

    def alloc_stats(self):
        return self._h.ctx.alloc_stats()

    def __repr__(self):
        return "<nonzero.csr_matrix %dx%d, %d nonzeros, %s, %s%s>" % (
            self.shape[0], self.shape[1], self.nnz, self.dtype, self.format,
            ", device %d" % self._h.ctx.device if self.on_device else "")

    def __len__(self):
        raise TypeError("sparse matrix length is ambiguous; use .shape or .nnz")

    # ---- SciPy's sparse protocol ------------------------------------------------------------
    # Products run in Nonzero (SpMV, SpMM, SpGEMM, transposes); element-wise arithmetic,
    # indexing and reductions are delegated to SciPy (host) or CuPy (device) on a copy, and
    # a sparse result comes back as a nonzero.csr_matrix where the matrix lives. `*` follows
    # the input's kind, as SciPy does: a matrix product for spmatrix input, element-wise for
    # sparse arrays (csr_array).
    __array_ufunc__ = None  # NumPy defers x @ A, x * A, ... to the methods below

    def _wrap(self, R):
        """R (a SciPy / CuPy result) as the caller expects it: a sparse R as a csr_matrix where
        self lives, keeping the array / matrix kind; anything else as it is."""
        if _is_scipy_sparse(R) or _is_cupy_sparse(R):
            B = csr_matrix(R, device=self._h.ctx.device if self.on_device else None)
            if _is_scipy_sparse(R):
                B._scipy_array = _is_scipy_array(R)
            else:
                B._scipy_array = getattr(self, "_scipy_array", False)
            return B
        return R

    @staticmethod
    def _other(other):
        """A nonzero operand as SciPy / CuPy for a delegated operation; others unchanged."""
        if isinstance(other, csr_matrix):
            return other._like_input()
        if isinstance(other, _Transposed):
            return other.A._like_input().T
        return other

    def _is_array_kind(self):
        return bool(getattr(self, "_scipy_array", False))

    def toarray(self, order=None, out=None):
        """A dense copy (NumPy; CuPy for a device matrix), as scipy.sparse's toarray.

        Examples
        --------
        >>> import nonzero
        >>> nonzero.laplace2d(2).toarray()[0].tolist()
        [4.0, -1.0, -1.0, 0.0]
        """
        return self._like_input().toarray(order=order, out=out)

    def todense(self, order=None, out=None):
        """A dense copy as np.matrix (SciPy's spmatrix) or ndarray (sparse arrays, CuPy)."""
        return self._like_input().todense(order=order, out=out)

    def diagonal(self, k=0):
        """The k-th diagonal as a dense 1-D array.

        Examples
        --------
        >>> import nonzero
        >>> nonzero.laplace2d(2).diagonal().tolist()
        [4.0, 4.0, 4.0, 4.0]
        """
        return self._like_input().diagonal(k)

    def sum(self, axis=None, dtype=None, out=None):
        """The sum of the entries (axis=None), of the rows' entries (axis=1) or the columns'."""
        return self._like_input().sum(axis=axis, dtype=dtype, out=out)

    def mean(self, axis=None, dtype=None, out=None):
        """The mean, as scipy.sparse's mean."""
        return self._like_input().mean(axis=axis, dtype=dtype, out=out)

    def __getitem__(self, key):
        """Indexing and slicing as scipy.sparse (a row A[i], A[i, j], A[rows] ...); a sparse
        result is a csr_matrix."""
        return self._wrap(self._like_input()[key])

    def copy(self):
        """A copy that borrows nothing: a borrowing matrix's arrays are copied; an owned matrix's
        storage, which nothing can change, is shared."""
        return csr_matrix(self, copy=True)

    def conj(self, copy=True):
        """The complex conjugate: the matrix itself for real values (a copy unless copy=False)."""
        return self.copy() if copy else self

    conjugate = conj

    @property
    def H(self):
        """The conjugate transpose, which is A.T for real A (products with it run in Nonzero)."""
        return _Transposed(self)

    def getH(self):
        return _Transposed(self)

    def tocsr(self, copy=False):
        """Itself (a copy with copy=True): the matrix is CSR."""
        return self.copy() if copy else self

    def __neg__(self):
        return self._wrap(-self._like_input())

    def __pos__(self):
        return self

    def __abs__(self):
        return self._wrap(abs(self._like_input()))

    def __mul__(self, other):
        if np.isscalar(other):
            return self._wrap(self._like_input() * other)
        if not self._is_array_kind() and not (_is_scipy_sparse(other) and _is_scipy_array(other)):
            return self.__matmul__(other)  # spmatrix: `*` is the matrix product
        return self._wrap(self._like_input() * self._other(other))

    def __rmul__(self, other):
        if np.isscalar(other):
            return self._wrap(other * self._like_input())
        if not self._is_array_kind():
            return self.__rmatmul__(other)
        return self._wrap(self._other(other) * self._like_input())

    def __truediv__(self, other):
        return self._wrap(self._like_input() / self._other(other))

    def __add__(self, other):
        return self._wrap(self._like_input() + self._other(other))

    def __radd__(self, other):
        return self._wrap(self._other(other) + self._like_input())

    def __sub__(self, other):
        return self._wrap(self._like_input() - self._other(other))

    def __rsub__(self, other):
        return self._wrap(self._other(other) - self._like_input())

    def multiply(self, other):
        """The element-wise product, as scipy.sparse's multiply."""
        return self._wrap(self._like_input().multiply(self._other(other)))

    def __rmatmul__(self, other):
        return _rmatmul(other, self, _Transposed(self))

    def __eq__(self, other):
        return self._wrap(self._like_input() == self._other(other))

    def __ne__(self, other):
        return self._wrap(self._like_input() != self._other(other))

    __hash__ = None  # sparse matrices compare element-wise, so they are not hashable

    def count_nonzero(self):
        """Stored entries that are not zero."""
        return int(self._like_input().count_nonzero())

    @property
    def ndim(self):
        return 2

    @property
    def size(self):
        """The stored entries (scipy.sparse's size), nnz."""
        return self.nnz


class _Transposed:
    """A.T: products with op(A) = A^T (no copy; the plan transposes where the backend needs)."""
    __array_priority__ = 100

    def __init__(self, A):
        self.A = A
        self.shape = (A.shape[1], A.shape[0])
        self.dtype = A.dtype

    @property
    def T(self):
        return self.A

    def __matmul__(self, other):
        if isinstance(other, (csr_matrix, _Transposed)) or _is_scipy_sparse(other) or _is_cupy_sparse(other):
            from ._ops import spgemm
            return spgemm(self, other)
        return self.A._default_plan(_lib.OP_T)(other)

    def dot(self, other):
        return self.__matmul__(other)

    def plan(self, **kw):
        if "op" in kw:
            raise TypeError("nonzero: A.T.plan() takes no op: use A.plan(op=...)")
        return self.A.plan(op="T", **kw)

    # SciPy's protocol on A.T: products stay transposed products (above); anything else works
    # on A^T made explicit, as SciPy's A.T is a matrix of its own
    __array_ufunc__ = None

    def __getattr__(self, name):
        if name.startswith("_") or name == "A":
            raise AttributeError(name)
        return getattr(self.materialize(), name)

    def __rmatmul__(self, other):
        return _rmatmul(other, self, self.A)

    def __mul__(self, other):
        if not np.isscalar(other) and not getattr(self.A, "_scipy_array", False):
            return self.__matmul__(other)
        return self.materialize() * other

    def __rmul__(self, other):
        return other * self.materialize()

    def __add__(self, other):
        return self.materialize() + other

    def __radd__(self, other):
        return other + self.materialize()

    def __sub__(self, other):
        return self.materialize() - other

    def __rsub__(self, other):
        return other - self.materialize()

    def __neg__(self):
        return -self.materialize()

    def __repr__(self):
        return "<transpose of %r>" % (self.A,)

    def materialize(self):
        """A^T as a new csr_matrix where A is (a device CSR matrix is transposed on the device)."""
        if self.A.on_device and self.A.format == "csr":
            ctx = self.A._ctx_now()
            src = self.A._handle_in(ctx)
            h = _Handle(ctx)
            ctx.check(L.nz_matrix_transpose(ctx.handle, ctypes.byref(h.ptr), src.ptr),
                      "nz_matrix_transpose")
            B = csr_matrix(h)
            B._scipy_array = getattr(self.A, "_scipy_array", False)
            return B
        host = self.A.to_host()
        ctx = host._h.ctx
        h = _Handle(ctx)
        ctx.check(L.nz_matrix_transpose(ctx.handle, ctypes.byref(h.ptr), host._h.ptr),
                  "nz_matrix_transpose")
        B = csr_matrix(h)
        B._scipy_array = getattr(self.A, "_scipy_array", False)
        return B.to_device() if self.A.on_device else B

    @property
    def nnz(self):
        return self.A.nnz

    @property
    def on_device(self):
        return self.A.on_device


def _rmatmul(other, op, op_t):
    """other @ op for op = A or A^T (op_t its transpose): SpGEMM for a sparse other; for a dense
    x, (op^T x^T)^T by Nonzero's product with op_t."""
    if isinstance(other, (csr_matrix, _Transposed)) or _is_scipy_sparse(other) or \
            _is_cupy_sparse(other):
        from ._ops import spgemm
        return spgemm(other, op)
    if np.isscalar(other):
        raise ValueError("matmul: a scalar operand is not allowed; use '*' instead")
    x = other if getattr(other, "ndim", None) is not None else np.asarray(other)
    return op_t @ x if x.ndim == 1 else (op_t @ x.T).T


def _device_arrays(h, rows, nnz, dtype):
    """CuPy views of a device CSR matrix's arrays; they keep the handle alive."""
    cupy = _cupy()
    if not _lib.HAVE_DEVICE_ARRAYS:
        raise NotImplementedError("nonzero: this libnonzero lacks nz_matrix_csr_device_arrays")
    rp, ci, vp, ot = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_int()
    ctx = h.ctx
    ctx.check(L.nz_matrix_csr_device_arrays(ctx.handle, ctypes.byref(rp), ctypes.byref(ot),
                                            ctypes.byref(ci), ctypes.byref(vp), h.ptr),
              "nz_matrix_csr_device_arrays")
    dev = ctx.device

    def view(ptr, n, dt):
        if n == 0 or not ptr:
            return cupy.zeros(n, dt)
        mem = cupy.cuda.UnownedMemory(ptr, n * np.dtype(dt).itemsize, h, dev)
        return cupy.ndarray((n,), dt, cupy.cuda.MemoryPointer(mem, 0))

    with cupy.cuda.Device(dev):
        indptr = view(rp.value, rows + 1, np.int32 if ot.value == _lib.I32 else np.int64)
        return view(vp.value, nnz, dtype), view(ci.value, nnz, np.int32), indptr


def _op_value(op):
    """'N', 'T' or 'H' (either case; 0 and 1 for nz_operation_t) -> nz_operation_t. Values are
    real, so the conjugate transpose is the transpose."""
    if isinstance(op, str) and op.upper() in ("N", "T", "H"):
        return _lib.OP_N if op.upper() == "N" else _lib.OP_T
    if type(op) is int and op in (_lib.OP_N, _lib.OP_T):
        return op
    raise InvalidArgumentError("nonzero: unknown op %r (valid: 'N' = A, 'T' = A^T, 'H' = A^H, "
                               "the conjugate transpose)" % (op,))


def _unpickle(data, indices, indptr, shape, on_device, scipy_array):
    M = csr_matrix((data, indices, indptr), shape=shape, copy=True,
                   device=True if on_device else None)
    M._scipy_array = scipy_array
    return M


def asmatrix(A, **kw):
    """A as a nonzero.csr_matrix (itself if it already is one), borrowing A's arrays when dtype
    and layout allow, as np.asarray does (copy=None; see csr_matrix for the contract).

    Parameters
    ----------
    A : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix, or (data, indices, indptr)
        The matrix; non-CSR SciPy formats are converted (a copy).
    **kw
        csr_matrix's keywords (shape, dtype, device, validate; copy defaults to None).

    Returns
    -------
    csr_matrix
        Products with it (A @ x, A.T @ x, nonzero.cg(A, b), ...) run in Nonzero and return the
        caller's array kind.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, nonzero
    >>> S = sp.random(100, 80, density=0.05, format="csr", random_state=1)
    >>> A = nonzero.asmatrix(S)  # borrows S's arrays
    >>> x = np.arange(80.0)
    >>> bool(np.allclose(A @ x, S @ x))
    True
    """
    if isinstance(A, csr_matrix) and not kw:
        return A
    kw.setdefault("copy", None)
    return csr_matrix(A, **kw)
