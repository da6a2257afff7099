"""_plan.py: Plan, SpMV / SpMM made once for a csr_matrix and run many times; format conversion for it."""
import ctypes

import numpy as np

from . import _lib
from ._arrays import _Handle, _PlanHandle, _cupy, _is_cupy, _ptr
from ._errors import DimensionMismatchError, InvalidArgumentError

L = _lib.lib


class Plan:
    """y = alpha op(A) x + beta y with a plan made once (see csr_matrix.plan)."""

    def __init__(self, A, op=_lib.OP_N, format=None, alg="auto", deterministic=False, tune=False,
                 mixed=False, format_options=None, _ctx=None):
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
        algv = ctypes.c_int()
        ctx.check(L.nz_alg_from_name(ctypes.byref(algv), str(alg).encode()), "nz_alg_from_name")
        self.alg = algv.value
        self.flags = ((_lib.PLAN_DETERMINISTIC if deterministic else 0) |
                      (_lib.PLAN_TUNE if tune else 0) | (_lib.PLAN_MIXED if mixed else 0))
        if format not in (None, "csr"):
            # converted once in the matrix's own context (and stream)
            self.mh = _convert(A, format, format_options or {})
            self.ctx = ctx = self.mh.ctx
        else:
            self.mh = A._handle_in(ctx)
        self._spmv = None
        self._spmm = {}
        self._ncalls = 0

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
        """The plan's format, algorithm, reproducibility, plan time and workspace (dict)."""
        i = _lib.SpmvPlanInfo()
        p = self._spmv_plan()
        self.ctx.check(L.nz_spmv_plan_info(p.ptr, ctypes.byref(i)), "nz_spmv_plan_info")
        return {"format": L.nz_format_name(i.format).decode(), "alg": L.nz_alg_name(i.alg).decode(),
                "backend": "cuda" if i.backend == _lib.BACKEND_CUDA else "cpu",
                "reproducible": bool(i.reproducible), "vector_width": i.vector_width,
                "plan_seconds": i.plan_seconds, "workspace_bytes": int(i.workspace_bytes),
                "flags": int(i.flags), "layout_parts": i.layout_parts,
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
        self._ncalls += 1
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
        xp = _cupy() if self.on_device else np
        m, n = self.shape
        if x.ndim not in (1, 2):
            raise DimensionMismatchError("nonzero: x must be 1-D or 2-D, not %d-D" % x.ndim)
        if x.shape[0] != n:
            raise DimensionMismatchError("nonzero: op(A) is %dx%d but x has %d rows"
                                         % (m, n, x.shape[0]))
        if x.dtype != self.dtype:
            x = x.astype(self.dtype)
        out_shape = (m,) + x.shape[1:]
        if y is None:
            if x.ndim == 2 and x.flags.f_contiguous and not x.flags.c_contiguous:
                y = xp.empty(out_shape, self.dtype, order="F")
            else:
                y = xp.empty(out_shape, self.dtype)
            beta = 0.0
        else:
            if back is not None:
                raise InvalidArgumentError("nonzero: y must be the same kind of array as the matrix "
                                           "location (NumPy for host, CuPy for device)")
            if y.shape != out_shape or y.dtype != self.dtype:
                raise DimensionMismatchError("nonzero: y is %s %s, expected %s %s"
                                             % (y.shape, y.dtype, out_shape, self.dtype))
        if m == 0:
            return back(y) if back else y
        if n == 0 or (x.ndim == 2 and x.shape[1] == 0):
            if beta == 0:
                y[...] = 0
            else:
                y *= beta
            return back(y) if back else y
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
        return back(y) if back else y

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
        ctx.check(L.nz_format_from_name(ctypes.byref(fmt), str(format).encode()), "nz_format_from_name")
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
