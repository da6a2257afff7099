"""_plan.py: Plan, SpMV / SpMM made once for a csr_matrix and run many times; format conversion for it."""
import ctypes

import numpy as np

from . import _lib
from ._arrays import (_Handle, _PlanHandle, _cupy, _is_cupy, _ptr, alg_value, check_borrows,
                      format_names)
from ._errors import DimensionMismatchError, InvalidArgumentError

# result dtypes a plan can produce; complex ones as two real products
_RESULT_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))

_FLAG_NAMES = ((_lib.PLAN_DETERMINISTIC, "deterministic"), (_lib.PLAN_TUNE, "tune"),
               (_lib.PLAN_MIXED, "mixed"), (_lib.PLAN_CACHE_HINTS, "cache_hints"),
               (_lib.PLAN_LIGHT_PER_ROW, "light_per_row"),
               (_lib.PLAN_COLUMN_PANELS, "column_panels"), (_lib.PLAN_REORDER, "reorder"),
               (_lib.PLAN_COMPRESS_INDICES, "compress_indices"), (_lib.PLAN_REUSE, "reuse"))


def flag_names(flags):
    """The names of the NZ_PLAN_* bits set in flags (unknown bits as hex)."""
    names = [name for bit, name in _FLAG_NAMES if flags & bit]
    rest = flags & ~sum(bit for bit, _ in _FLAG_NAMES)
    if rest:
        names.append(hex(rest))
    return names

L = _lib.lib


class Plan:
    """y = alpha op(A) x + beta y with a plan made once (see csr_matrix.plan).

    Types follow NumPy promotion, as SciPy's products do: the result has dtype
    np.result_type(A.dtype, x.dtype, alpha, beta). A float64 (or int64) x with a float32 matrix
    gives float64, computed by a float64 copy of the matrix (made once; per call for a matrix
    that borrows its arrays, whose values may change), never by rounding x to float32. A complex
    x (or alpha, beta) gives a complex result from two real products, of x.real and x.imag.
    Other dtypes (float16 and integers promote to float; longdouble, object) raise TypeError.
    y, when given, must be a writable array of the result's dtype and shape (TypeError for
    another dtype, ValueError when read-only)."""

    def __reduce__(self):
        raise TypeError("nonzero: a Plan cannot be pickled or copied; pickle the matrix and "
                        "make the plan again from it")

    def __init__(self, A, op=_lib.OP_N, format=None, alg="auto", deterministic=False, tune=False,
                 mixed=False, format_options=None, _ctx=None, reuse=False):
        # no reference to A itself: A caches its default plans, and a cycle would keep the C
        # handles (device memory) alive until the garbage collector runs; self.mh keeps A's
        # arrays alive
        self.op = op
        ctx = _ctx if _ctx is not None else A._ctx_now()
        self.ctx = ctx
        self.on_device = A.on_device
        self.dtype = A.dtype
        m, n = A.shape
        self.shape = (n, m) if op == _lib.OP_T else (m, n)
        self.alg = alg_value(ctx, alg)
        if format is not None and format not in format_names() + ["auto"]:
            raise InvalidArgumentError("nonzero: unknown format %r (valid: %s, auto)"
                                       % (format, ", ".join(format_names())))
        self.flags = ((_lib.PLAN_DETERMINISTIC if deterministic else 0) |
                      (_lib.PLAN_TUNE if tune else 0) | (_lib.PLAN_MIXED if mixed else 0) |
                      (_lib.PLAN_REUSE if reuse else 0))
        if format not in (None, "csr"):
            # converted once in the matrix's own context (and stream)
            self.mh = _convert(A, format, format_options or {})
            self.ctx = ctx = self.mh.ctx
        else:
            self.mh = A._handle_in(ctx)
        self._spmv = None
        self._spmm = {}
        self._ncalls = 0
        self._promoted = None  # the float64 plan of a float32 matrix, made on first use

    def _float64_plan(self):
        """This plan over a float64 copy of the matrix (for float64 or complex128 operands of a
        float32 matrix). Cached, except when the matrix borrows arrays whose values may change."""
        if self._promoted is not None:
            return self._promoted
        src = self.mh
        if self.on_device:
            ctx = self.ctx
            host = _Handle(ctx, (src,))
            ctx.check(L.nz_matrix_to_host(ctx.handle, ctypes.byref(host.ptr), src.ptr),
                      "nz_matrix_to_host (float64 copy for a float64 operand)")
        else:
            host = src
        hctx = host.ctx
        h64 = _Handle(hctx, (src,))  # keeps src: its borrow checks run for the copy too
        hctx.check(L.nz_matrix_convert_values(hctx.handle, ctypes.byref(h64.ptr), host.ptr,
                                              _lib.F64), "nz_matrix_convert_values")
        if self.on_device:
            d = _Handle(self.ctx, (src,))
            self.ctx.check(L.nz_matrix_to_device(self.ctx.handle, ctypes.byref(d.ptr), h64.ptr,
                                                 _lib.INDEX_AUTO), "nz_matrix_to_device")
            h64 = d
        p = Plan.__new__(Plan)
        p.op, p.ctx, p.on_device, p.shape = self.op, self.ctx, self.on_device, self.shape
        p.dtype, p.alg, p.flags, p.mh = np.dtype(np.float64), self.alg, self.flags, h64
        p._spmv, p._spmm, p._ncalls, p._promoted = None, {}, 0, None
        if not _borrows(src):
            self._promoted = p
        return p

    def _spmv_plan(self):
        if self._spmv is None:
            p = _PlanHandle(self.ctx, L.nz_spmv_plan_destroy, self.mh)
            self.ctx.check(L.nz_spmv_plan_create(self.ctx.handle, ctypes.byref(p.ptr), self.mh.ptr,
                                                 self.op, self.alg, self.flags),
                           "nz_spmv_plan_create")
            self._spmv = p
        return self._spmv

    def _spmm_plan(self, k, layout):
        key = (k, layout)
        p = self._spmm.get(key)
        if p is None:
            p = _PlanHandle(self.ctx, L.nz_spmm_plan_destroy, self.mh)
            alg = self.alg if self.alg in (0, 1, 2, 10, 11) else 0
            self.ctx.check(L.nz_spmm_plan_create(self.ctx.handle, ctypes.byref(p.ptr), self.mh.ptr,
                                                 self.op, k, layout, alg, self.flags),
                           "nz_spmm_plan_create")
            self._spmm[key] = p
        return p

    def info(self):
        """What the planner chose and what it cost (nz_spmv_plan_info).

        Returns
        -------
        dict
            'format', 'alg', 'backend' ('cpu' or 'cuda'), 'reproducible', 'vector_width',
            'plan_seconds', 'workspace_bytes' and the planner's reasons.

        Examples
        --------
        >>> import nonzero
        >>> P = nonzero.laplace2d(8).plan()
        >>> P.info()["backend"]
        'cpu'
        """
        i = _lib.SpmvPlanInfo()
        p = self._spmv_plan()
        self.ctx.check(L.nz_spmv_plan_info(p.ptr, ctypes.byref(i)), "nz_spmv_plan_info")
        return {"format": L.nz_format_name(i.format).decode(), "alg": L.nz_alg_name(i.alg).decode(),
                "backend": "cuda" if i.backend == _lib.BACKEND_CUDA else "cpu",
                "reproducible": bool(i.reproducible), "vector_width": i.vector_width,
                "plan_seconds": i.plan_seconds, "workspace_bytes": int(i.workspace_bytes),
                "flags": flag_names(int(i.flags)), "layout_parts": i.layout_parts,
                "vector_warps": i.vector_warps}

    def _operand(self, x):
        """x as an array of the plan's kind and dtype; returns (x, back) with back() converting
        the result to the caller's kind."""
        x_cupy = _is_cupy(x)
        if self.on_device:
            if x_cupy:
                return x, None
            cupy = _cupy()
            return cupy.asarray(np.asarray(x)), (lambda y: y.get())
        if x_cupy:
            cupy = _cupy()
            return x.get(), (lambda y: cupy.asarray(y))
        return np.asarray(x), None

    def __call__(self, x, y=None, alpha=1.0, beta=0.0):
        """y = alpha op(A) x + beta y.

        Parameters
        ----------
        x : array_like
            A vector of op(A)'s columns, or a matrix of them (columns: SpMM); NumPy on the
            host, CuPy on the device.
        y : ndarray, optional
            The output, written in place (beta == 0 never reads it); a new array when None.
        alpha, beta : float or complex, optional
            The scalars (default 1 and 0).

        Returns
        -------
        ndarray
            y, of dtype np.result_type(A.dtype, x.dtype, alpha, beta).

        Examples
        --------
        >>> import numpy as np, nonzero
        >>> P = nonzero.laplace2d(3).plan()
        >>> P(np.ones(9)).tolist()[:3]
        [2.0, 1.0, 2.0]
        """
        self._ncalls += 1
        if self.mh.borrow is not None or self.mh.keep:
            check_borrows(self.mh)
        # fast path: a contiguous 1-D array of the right dtype and length
        if (y is None and type(x) is np.ndarray and not self.on_device and x.ndim == 1
                and x.dtype == self.dtype and x.flags.c_contiguous and x.shape[0] == self.shape[1]
                and self.shape[0] > 0 and self.shape[1] > 0):
            p = self._spmv if self._spmv is not None else self._spmv_plan()
            out = np.empty(self.shape[0], self.dtype)
            st = L.nz_spmv_execute(p.ptr, alpha, x.ctypes.data, 0.0, out.ctypes.data)
            if st < 0:
                self.ctx.check(st, "nz_spmv_execute")
            return out
        x, back = self._operand(x)
        m, n = self.shape
        if x.ndim not in (1, 2):
            raise DimensionMismatchError("nonzero: x must be 1-D or 2-D, not %d-D" % x.ndim)
        if x.shape[0] != n:
            raise DimensionMismatchError("nonzero: op(A) is %dx%d but x has %d rows"
                                         % (m, n, x.shape[0]))
        rdt = self._result_dtype(x.dtype, alpha, beta)
        out_shape = (m,) + x.shape[1:]
        if y is not None:
            self._check_output(y, back, out_shape, rdt, x.dtype)
        if rdt.kind == "c":
            return self._complex_call(x, y, alpha, beta, rdt, out_shape, back)
        if rdt != self.dtype:  # a float64 operand of a float32 matrix
            r = self._float64_plan()._run(x.astype(rdt, copy=False), y, alpha, beta)
            return back(r) if back else r
        if x.dtype != self.dtype:  # integers, bool, float16: exact in the result's dtype
            x = x.astype(self.dtype)
        r = self._run(x, y, alpha, beta)
        return back(r) if back else r

    def _result_dtype(self, xdt, alpha, beta):
        try:
            rdt = np.result_type(self.dtype, xdt, alpha, beta)
        except TypeError:
            rdt = None
        if rdt not in _RESULT_DTYPES:
            raise TypeError("nonzero: no product of a %s matrix with x of dtype %s (and alpha "
                            "%r, beta %r): the result would be %s; operands may be integer, "
                            "float16/32/64 or complex64/128" % (self.dtype, xdt, alpha, beta, rdt))
        return rdt

    def _check_output(self, y, back, out_shape, rdt, xdt):
        if back is not None:
            raise InvalidArgumentError("nonzero: y must be the same kind of array as the matrix "
                                       "location (NumPy for host, CuPy for device)")
        if not (isinstance(y, np.ndarray) or _is_cupy(y)):
            raise TypeError("nonzero: y must be a NumPy or CuPy array, not %s" % type(y).__name__)
        if isinstance(y, np.ndarray) and not y.flags.writeable:
            raise ValueError("nonzero: output array y is read-only")
        if y.shape != out_shape:
            raise DimensionMismatchError("nonzero: y has shape %s, op(A) @ x needs %s"
                                         % (y.shape, out_shape))
        if y.dtype != rdt:
            raise TypeError("nonzero: y has dtype %s, but the product of a %s matrix and %s x "
                            "is %s: y must have that dtype" % (y.dtype, self.dtype, xdt, rdt))

    def _complex_call(self, x, y, alpha, beta, rdt, out_shape, back):
        """A complex product from two real ones: op(A) x = op(A) x.real + 1j op(A) x.imag (A
        is real), then y = alpha * that + beta * y in complex arithmetic."""
        xp = _cupy() if self.on_device else np
        real = np.dtype(rdt.char.lower())  # complex64 -> float32, complex128 -> float64
        plan = self if real == self.dtype else self._float64_plan()
        prod = xp.empty(out_shape, rdt)
        prod.real = plan._run(xp.ascontiguousarray(x.real, dtype=real), None, 1.0, 0.0)
        if x.dtype.kind == "c":
            prod.imag = plan._run(xp.ascontiguousarray(x.imag, dtype=real), None, 1.0, 0.0)
        else:
            prod.imag = 0
        if alpha != 1:
            prod *= alpha
        if y is None:
            return back(prod) if back else prod
        if beta == 0:
            y[...] = prod
        else:
            y *= beta
            y += prod
        return y

    def _run(self, x, y, alpha, beta):
        """y = alpha op(A) x + beta y for x of the plan's kind and dtype, y None or checked."""
        xp = _cupy() if self.on_device else np
        m, n = self.shape
        out_shape = (m,) + x.shape[1:]
        if y is None:
            if x.ndim == 2 and x.flags.f_contiguous and not x.flags.c_contiguous:
                y = xp.empty(out_shape, self.dtype, order="F")
            else:
                y = xp.empty(out_shape, self.dtype)
            beta = 0.0
        if m == 0:
            return y
        if n == 0 or (x.ndim == 2 and x.shape[1] == 0):
            if beta == 0:
                y[...] = 0
            else:
                y *= beta
            return y
        if x.ndim == 1:
            if not x.flags.c_contiguous:
                x = xp.ascontiguousarray(x)
            if not y.flags.c_contiguous:
                raise InvalidArgumentError("nonzero: y must be contiguous")
            p = self._spmv_plan()
            self.ctx.check(L.nz_spmv_execute(p.ptr, float(alpha), _ptr(x), float(beta), _ptr(y)),
                           "nz_spmv_execute")
        else:
            self._spmm_call(x, y, float(alpha), float(beta))
        return y

    def _spmm_call(self, X, Y, alpha, beta):
        xp = _cupy() if self.on_device else np
        m, n = self.shape
        k = X.shape[1]
        if X.flags.c_contiguous:
            layout = _lib.ROW_MAJOR
        elif X.flags.f_contiguous:
            layout = _lib.COL_MAJOR
        else:
            X = xp.ascontiguousarray(X)
            layout = _lib.ROW_MAJOR
        want_c = layout == _lib.ROW_MAJOR
        if (want_c and not Y.flags.c_contiguous) or (not want_c and not Y.flags.f_contiguous):
            Yw = xp.ascontiguousarray(Y) if want_c else xp.asfortranarray(Y)
        else:
            Yw = Y
        isz = self.dtype.itemsize
        for j in range(0, k, 64):
            kk = min(64, k - j)
            p = self._spmm_plan(kk, layout)
            if want_c:
                xo, yo, ldx, ldy = j * isz, j * isz, k, k
            else:
                xo, yo, ldx, ldy = j * n * isz, j * m * isz, max(n, 1), max(m, 1)
            self.ctx.check(L.nz_spmm_execute(p.ptr, alpha, _ptr(X) + xo, ldx, beta, _ptr(Yw) + yo,
                                             ldy), "nz_spmm_execute")
        if Yw is not Y:
            Y[...] = Yw


def _borrows(h):
    """True when handle h, or a handle it keeps alive, wraps caller arrays."""
    if h.borrow is not None:
        return True
    return any(isinstance(k, _Handle) and _borrows(k) for k in h.keep)


def _convert(A, format, options):
    """A handle of A in another format (host conversion; uploaded again for device A)."""
    host = A.to_host()
    ctx = host._h.ctx
    opts = _lib.FormatOptions()
    for k, v in options.items():
        if not hasattr(opts, k):
            raise InvalidArgumentError("nonzero: unknown format option %r" % k)
        setattr(opts, k, v)
    if format == "auto":
        stats = _lib.MatrixStats()
        ctx.check(L.nz_matrix_stats(ctx.handle, ctypes.byref(stats), host._h.ptr), "nz_matrix_stats")
        f, a = ctypes.c_int(), ctypes.c_int()
        backend = _lib.BACKEND_CUDA if A.on_device else _lib.BACKEND_CPU
        ctx.check(L.nz_spmv_plan_choose(ctypes.byref(f), ctypes.byref(a), None, 0,
                                        ctypes.byref(stats), backend, _lib.FORMAT_COUNT, 0),
                  "nz_spmv_plan_choose")
        fv = f.value
    else:
        fmt = ctypes.c_int()
        if L.nz_format_from_name(ctypes.byref(fmt), str(format).encode()) < 0:
            raise InvalidArgumentError("nonzero: unknown format %r (valid: %s, auto)"
                                       % (format, ", ".join(format_names())))
        fv = fmt.value
    h = _Handle(ctx, (host._h,))
    ctx.check(L.nz_matrix_convert(ctx.handle, ctypes.byref(h.ptr), host._h.ptr, fv, ctypes.byref(opts)),
              "nz_matrix_convert")
    if not A.on_device:
        return h
    dctx = A._h.ctx
    d = _Handle(dctx, (h,))
    dctx.check(L.nz_matrix_to_device(dctx.handle, ctypes.byref(d.ptr), h.ptr, _lib.INDEX_AUTO),
               "nz_matrix_to_device")
    d.keep = ()
    return d
