"""_ops.py: SpGEMM, conjugate gradients, Matrix Market I/O and the generators."""
import ctypes
import os

import numpy as np

from . import _lib
from ._context import host_context, device_context, device_count
from ._errors import DimensionMismatchError, InvalidArgumentError
from ._arrays import _Handle, _cupy, _is_cupy, _is_scipy_array, _is_scipy_sparse, _ptr
from ._matrix import _Transposed, csr_matrix

L = _lib.lib


def _vt(dtype):
    dt = np.dtype(dtype)
    if dt == np.float32:
        return _lib.F32
    if dt == np.float64:
        return _lib.F64
    raise InvalidArgumentError("nonzero: dtype must be float32 or float64, not %s" % dt)


def _operand(M):
    if isinstance(M, _Transposed):
        return M.materialize()
    return M if isinstance(M, csr_matrix) else csr_matrix(M)


def _host_handle(M, ctx):
    """A host CSR handle of M in context ctx."""
    if not M.on_device:
        return M._handle_in(ctx)
    d = M._handle_in(ctx)
    h = _Handle(ctx)
    ctx.check(L.nz_matrix_to_host(ctx.handle, ctypes.byref(h.ptr), d.ptr), "nz_matrix_to_host")
    return h


def spgemm(A, B, *, alg="auto", out=None, gpu_memory_limit=0, return_info=False):
    """C = A @ B. Host operands give a scipy.sparse CSR result; device (CuPy) operands a
    cupyx.scipy.sparse.csr_matrix computed on the GPU without host transfers. A device product
    that does not fit the GPU (or out='host') is computed from host copies in row panels on the
    GPU and returned as SciPy. out='nonzero' returns a nonzero.csr_matrix. alg: 'auto', 'cpu',
    'esc', 'hyspmm', 'hash'."""
    kind_scipy_array = getattr(A, "_scipy_array", None)
    if _is_scipy_sparse(A):
        kind_scipy_array = _is_scipy_array(A)
    A, B = _operand(A), _operand(B)
    if A.shape[1] != B.shape[0]:
        raise DimensionMismatchError("nonzero: spgemm shapes %s and %s do not agree"
                                     % (A.shape, B.shape))
    if A.dtype != B.dtype:
        raise InvalidArgumentError("nonzero: spgemm operands have dtypes %s and %s"
                                   % (A.dtype, B.dtype))
    opts = _lib.SpgemmOptions()
    a = ctypes.c_int()
    host_context().check(L.nz_spgemm_alg_from_name(ctypes.byref(a), alg.encode()),
                         "nz_spgemm_alg_from_name")
    opts.alg = a.value
    opts.gpu_memory_limit = gpu_memory_limit
    info = _lib.SpgemmInfo()
    if A.on_device != B.on_device:
        B = B.to_device() if A.on_device else B.to_host()
    C = None
    if A.on_device and out != "host":
        ctx = A._ctx_now()
        ha, hb = A._handle_in(ctx), B._handle_in(ctx)
        h = _Handle(ctx, (ha, hb))
        st = L.nz_spgemm(ctx.handle, ctypes.byref(h.ptr), ha.ptr, hb.ptr, ctypes.byref(opts),
                         ctypes.byref(info))
        if st != _lib.ERR_DEVICE_OUT_OF_MEMORY:
            ctx.check(st, "nz_spgemm")
            h.keep = ()
            C = csr_matrix(h)
    if C is None:
        if A.on_device:
            ctx = A._ctx_now()
            if opts.alg == 0:
                opts.alg = 4  # hash, in row panels from host copies
        elif opts.alg not in (0, 1) and device_count() > 0:
            ctx = device_context()
        else:
            ctx = A._h.ctx
            if opts.alg == 0:
                opts.alg = 1
        ha, hb = _host_handle(A, ctx), _host_handle(B, ctx)
        h = _Handle(ctx, (ha, hb))
        ctx.check(L.nz_spgemm(ctx.handle, ctypes.byref(h.ptr), ha.ptr, hb.ptr,
                              ctypes.byref(opts), ctypes.byref(info)), "nz_spgemm")
        h.keep = ()
        C = csr_matrix(h)
    if kind_scipy_array is not None:
        C._scipy_array = kind_scipy_array
    if out == "nonzero":
        R = C
    elif C.on_device:
        R = C.tocupy()
    else:
        R = C.toscipy()
    if return_info:
        return R, {k: getattr(info, k) for k, _ in info._fields_}
    return R


def _python_cg(A, b, x, rtol, atol, maxiter, jacobi, callback, xp):
    """CG in Python over Nonzero's SpMV, used when a callback must see every iterate."""
    d = None
    if jacobi:
        d = _diagonal(A, xp)
    r = b - A @ x
    z = r / d if jacobi else r
    p = z.copy()
    rz = float(xp.vdot(r, z))
    bnorm = float(xp.linalg.norm(b))
    tol = max(rtol * bnorm, atol)
    if float(xp.linalg.norm(r)) <= tol:
        return x, 0
    for k in range(1, maxiter + 1):
        Ap = A @ p
        pAp = float(xp.vdot(p, Ap))
        if not pAp > 0:
            return x, -1
        alpha = rz / pAp
        x += alpha * p
        r -= alpha * Ap
        callback(x)
        if float(xp.linalg.norm(r)) <= tol:
            return x, 0
        z = r / d if jacobi else r
        rz_new = float(xp.vdot(r, z))
        p *= rz_new / rz
        p += z
        rz = rz_new
    return x, maxiter


def _diagonal(A, xp):
    S = A.toscipy().diagonal()
    return xp.asarray(S)


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
       alg="auto", use_graph=None, result=None, tol=None):
    """Solve A x = b (A symmetric positive definite) by conjugate gradients, with the signature
    and return value of scipy.sparse.linalg.cg / cupyx.scipy.sparse.linalg.cg: returns (x, info),
    info = 0 converged, > 0 the iteration count at which it stopped unconverged, < 0 breakdown.
    Stops when ||b - A x|| <= max(rtol ||b||, atol). M: None or 'jacobi'. The solve runs in C on
    the CPU (NumPy b) or the GPU (CuPy b); with a callback, a Python loop over Nonzero's SpMV
    calls callback(xk) after each iteration. result: a dict to receive the C solver's report.
    tol: the older name of rtol (SciPy < 1.12, cupyx)."""
    if tol is not None:  # the name of rtol in SciPy < 1.12 and cupyx
        rtol = tol
    if atol is None or atol == "legacy":
        atol = 0.0
    b_cupy = _is_cupy(b)
    A = A if isinstance(A, csr_matrix) else csr_matrix(A, device=True if b_cupy else None)
    if b_cupy and not A.on_device:
        A = A.to_device()
    if not b_cupy and A.on_device:
        cupy = _cupy()
        x, info = cg(A, cupy.asarray(b), None if x0 is None else cupy.asarray(x0), rtol=rtol,
                     atol=atol, maxiter=maxiter, M=M, callback=callback, alg=alg,
                     use_graph=use_graph, result=result)
        return x.get(), info
    xp = _cupy() if A.on_device else np
    n = A.shape[0]
    if A.shape[0] != A.shape[1]:
        raise DimensionMismatchError("nonzero: cg needs a square matrix, not %dx%d" % A.shape)
    b = xp.asarray(b)
    if b.ndim == 2 and b.shape[1] == 1:
        b = b.ravel()
    if b.shape != (n,):
        raise DimensionMismatchError("nonzero: b has shape %s, A is %dx%d" % (b.shape, n, n))
    b = xp.ascontiguousarray(b, dtype=A.dtype)
    if x0 is None:
        x = xp.zeros(n, A.dtype)
    else:
        x0 = xp.asarray(x0).ravel()
        if x0.shape != (n,):
            raise DimensionMismatchError("nonzero: x0 has shape %s, A is %dx%d" % (x0.shape, n, n))
        x = xp.array(x0, dtype=A.dtype, order="C", copy=True)
    if M is not None and not (isinstance(M, str) and M == "jacobi"):
        raise InvalidArgumentError("nonzero.cg: M must be None or 'jacobi' (a general "
                                   "preconditioner: use scipy's cg with A.aslinearoperator())")
    maxiter = 10 * n if maxiter is None else int(maxiter)
    if n == 0:
        return x, 0
    if callback is not None:
        return _python_cg(A, b, x, rtol, atol, maxiter, M == "jacobi", callback, xp)
    if maxiter <= 0:
        r = float(xp.linalg.norm(b - A @ x))
        return x, 0 if r <= max(rtol * float(xp.linalg.norm(b)), atol) else maxiter
    ctx = A._ctx_now()
    opts = _lib.CgOptions()
    opts.rtol = rtol if rtol > 0 else 1e-300  # 0 means "default" in C; 1e-300 never stops early
    opts.atol = atol
    opts.max_iterations = maxiter
    opts.precond = _lib.PRECOND_JACOBI if M == "jacobi" else _lib.PRECOND_NONE
    a = ctypes.c_int()
    ctx.check(L.nz_alg_from_name(ctypes.byref(a), alg.encode()), "nz_alg_from_name")
    opts.alg = a.value
    if use_graph is None:
        # graphs cannot be captured on the legacy default stream
        use_graph = A.on_device and ctx.stream.value not in (None, 1, 2)
    opts.use_graph = 1 if use_graph else 0
    res = _lib.CgResult()
    st = L.nz_cg_solve(ctx.handle, A._handle_in(ctx).ptr, _ptr(b), _ptr(x), ctypes.byref(opts),
                       ctypes.byref(res))
    if result is not None:
        result.update({k: getattr(res, k) for k, _ in res._fields_ if k != "history"})
        result["status"] = st
        result["alg"] = L.nz_alg_name(res.alg).decode()
    if st == _lib.ERR_BREAKDOWN:
        return x, -1
    ctx.check(st, "nz_cg_solve")
    if st == _lib.MAX_ITERATIONS:
        return x, int(res.iterations) if res.iterations > 0 else maxiter
    return x, 0


# ---- Matrix Market ------------------------------------------------------------------------------

def mmread(path, dtype=np.float64, device=None):
    """Read a Matrix Market file (.mtx, .mtx.gz) or a .nzb into a nonzero.csr_matrix."""
    ctx = host_context()
    h = _Handle(ctx)
    ctx.check(L.nz_matrix_read(ctx.handle, ctypes.byref(h.ptr), os.fsencode(path), _vt(dtype)),
              "nz_matrix_read")
    return csr_matrix(h, device=device)


def mmwrite(path, A):
    """Write A (nonzero, SciPy or CuPy sparse) as coordinate real general (.gz compresses)."""
    A = A if isinstance(A, csr_matrix) else csr_matrix(A)
    A = A.to_host()
    ctx = A._h.ctx
    ctx.check(L.nz_mm_write(ctx.handle, os.fsencode(path), A._h.ptr), "nz_mm_write")


# ---- generators ---------------------------------------------------------------------------------

def _gen(fn, name, *args, dtype=np.float64, device=None):
    ctx = host_context()
    h = _Handle(ctx)
    ctx.check(fn(ctx.handle, ctypes.byref(h.ptr), *args, _vt(dtype)), name)
    return csr_matrix(h, device=device)


def laplace2d(nx, ny=None, *, dtype=np.float64, device=None):
    """5-point 2-D Laplacian on an nx x ny grid."""
    return _gen(L.nz_gen_laplace2d, "nz_gen_laplace2d", nx, nx if ny is None else ny,
                dtype=dtype, device=device)


def laplace3d(nx, ny=None, nz=None, *, dtype=np.float64, device=None):
    """7-point 3-D Laplacian on an nx x ny x nz grid."""
    return _gen(L.nz_gen_laplace3d, "nz_gen_laplace3d", nx, nx if ny is None else ny,
                nx if nz is None else nz, dtype=dtype, device=device)


def random(rows, cols, mean_row_length, seed=1, *, dtype=np.float64, device=None):
    return _gen(L.nz_gen_random, "nz_gen_random", rows, cols, float(mean_row_length), seed,
                dtype=dtype, device=device)


def rmat(scale, edge_factor=16, a=0.0, b=0.0, c=0.0, seed=1, *, dtype=np.float64, device=None):
    return _gen(L.nz_gen_rmat, "nz_gen_rmat", scale, edge_factor, a, b, c, seed, dtype=dtype,
                device=device)


def rail(rows, cols, row_length, seed=1, *, dtype=np.float64, device=None):
    return _gen(L.nz_gen_rail, "nz_gen_rail", rows, cols, row_length, seed, dtype=dtype,
                device=device)


def mixed(rows, short_length, long_rows, long_length, seed=1, *, dtype=np.float64, device=None):
    return _gen(L.nz_gen_mixed, "nz_gen_mixed", rows, short_length, long_rows, long_length, seed,
                dtype=dtype, device=device)


def banded(n, lower, upper, *, dtype=np.float64, device=None):
    return _gen(L.nz_gen_banded, "nz_gen_banded", n, lower, upper, dtype=dtype, device=device)


def fe3d(n, *, dtype=np.float64, device=None):
    """Q1 finite-element Poisson problem: (A, b, u_exact), (n-1)^3 unknowns."""
    ctx = host_context()
    h = _Handle(ctx)
    bp, up = ctypes.c_void_p(), ctypes.c_void_p()
    ctx.check(L.nz_gen_fe3d(ctx.handle, ctypes.byref(h.ptr), ctypes.byref(bp), ctypes.byref(up),
                            n, _vt(dtype)), "nz_gen_fe3d")
    A = csr_matrix(h)
    m = A.shape[0]
    ct = ctypes.c_float if np.dtype(dtype) == np.float32 else ctypes.c_double
    out = []
    for p in (bp, up):
        if m and p.value:
            out.append(np.ctypeslib.as_array(ctypes.cast(p, ctypes.POINTER(ct)), (m,)).copy())
        else:
            out.append(np.zeros(m, dtype))
        if p.value:
            L.nz_free(ctx.handle, p)
    if device is not None and device is not False:
        A = A.to_device(None if device is True else device)
        cupy = _cupy()
        out = [cupy.asarray(v) for v in out]
    return A, out[0], out[1]
