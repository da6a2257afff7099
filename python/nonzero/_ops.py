"""_ops.py: SpGEMM, conjugate gradients and the nz_solve family (BiCGSTAB / GMRES / MINRES; callbacks through its monitor), Matrix Market I/O and the generators."""
import ctypes
import math
import operator
import os
import stat
import tempfile

import numpy as np

from . import _lib
from ._context import (host_context, device_context, device_count, status_string,
                       cupy_stream_ptr)
from ._errors import DimensionMismatchError, InvalidArgumentError
from ._arrays import _Handle, _cupy, _is_cupy, _is_scipy_array, _is_scipy_sparse, _ptr
from ._matrix import _Transposed, csr_matrix
from ._precond import _native as _native_precond

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
    # borrowed for this call only
    return M if isinstance(M, csr_matrix) else csr_matrix(M, copy=None)


def _host_handle(M, ctx):
    """A host CSR handle of M in context ctx."""
    if not M.on_device:
        return M._handle_in(ctx)
    d = M._handle_in(ctx)
    h = _Handle(ctx)
    ctx.check(L.nz_matrix_to_host(ctx.handle, ctypes.byref(h.ptr), d.ptr), "nz_matrix_to_host")
    return h


def spgemm(A, B, *, alg="auto", out=None, gpu_memory_limit=0, return_info=False):
    """C = A @ B, sparse times sparse.

    Host operands give a scipy.sparse CSR result; device (CuPy) operands a
    cupyx.scipy.sparse.csr_matrix computed on the GPU without host transfers. A device product
    that does not fit the GPU (or out='host') is computed from host copies in row panels on the
    GPU and returned as SciPy.

    Parameters
    ----------
    A, B : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix (or A.T)
        The operands, of one dtype.
    alg : {'auto', 'cpu', 'esc', 'hyspmm', 'hash'}, optional
        The algorithm (default 'auto').
    out : {None, 'host', 'nonzero'}, optional
        'host': compute from host copies; 'nonzero': return a nonzero.csr_matrix.
    gpu_memory_limit : int, optional
        Bytes the GPU product may use (0: what the device has).
    return_info : bool, optional
        Also return a dict of what ran (algorithm, products, timings).

    Returns
    -------
    C : scipy.sparse CSR, cupyx.scipy.sparse.csr_matrix or csr_matrix
        Sorted columns, no duplicates; numerically cancelled entries stay as explicit zeros.

    Raises
    ------
    DimensionMismatchError
        A.shape[1] != B.shape[0].
    InvalidArgumentError
        Operands of different dtypes, or an unknown alg.

    Examples
    --------
    >>> import nonzero
    >>> A = nonzero.laplace2d(8)
    >>> C = nonzero.spgemm(A, A)
    >>> S = A.toscipy()
    >>> C.shape, float(abs(C - S @ S).max())
    ((64, 64), 0.0)
    """
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
            if opts.alg == _lib.SPGEMM_AUTO:
                opts.alg = _lib.SPGEMM_HASH  # in row panels from host copies
        elif opts.alg not in (_lib.SPGEMM_AUTO, _lib.SPGEMM_CPU) and device_count() > 0:
            ctx = device_context()
        else:
            ctx = A._h.ctx
            if opts.alg == _lib.SPGEMM_AUTO:
                opts.alg = _lib.SPGEMM_CPU
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
        R = C._toscipy_shared()  # C is this call's own: SciPy takes its arrays as they are
    if return_info:
        d = {k: getattr(info, k) for k, _ in info._fields_}
        d["alg"] = L.nz_spgemm_alg_name(info.alg).decode()
        return R, d
    return R


_MAXITER_LIMIT = 2**63 - 1
_STATUS_NAMES = {_lib.SUCCESS: "success", _lib.MAX_ITERATIONS: "max_iterations",
                 _lib.STAGNATED: "stagnated"}


def _status_name(st):
    return _STATUS_NAMES.get(st) or status_string(st)


def _square_system(name, A, b, x0, xp):
    """A square, b (a vector or one column) and x0 (None or any shape of n entries) of A's
    size: (n, b as a vector, x0 as a vector or None), else DimensionMismatchError."""
    n = A.shape[0]
    if A.shape[0] != A.shape[1]:
        raise DimensionMismatchError("nonzero: %s needs a square matrix, not %dx%d"
                                     % ((name,) + A.shape))
    b = xp.asarray(b)
    if b.ndim == 2 and b.shape[1] == 1:
        b = b.ravel()
    if b.shape != (n,):
        raise DimensionMismatchError("nonzero: b has shape %s, A is %dx%d" % (b.shape, n, n))
    if x0 is not None:
        x0 = xp.asarray(x0).ravel()
        if x0.shape != (n,):
            raise DimensionMismatchError("nonzero: x0 has shape %s, A is %dx%d" % (x0.shape, n, n))
    return n, b, x0


_SOLVER_PARAMS = """
    Parameters
    ----------
    A : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
        The square system matrix (wrapped without a copy where it can be).
    b : ndarray or cupy.ndarray
        Right-hand side, n entries (one column accepted).
    x0 : array, optional
        Initial guess (default zeros).
    rtol, atol : float, optional
        Converged when the true residual ||b - A x|| <= max(rtol ||b||, atol).
    maxiter : int, optional
        %s
    M : None, str, Preconditioner, callable or LinearOperator, optional
        The preconditioner (see above).
    callback : callable, optional
        %s
    result : dict, optional
        Receives the C solver's report.
    alg : str, optional
        The SpMV algorithm ('auto' or a name of nonzero.alg_names()).
    tol : float, optional
        The older name of rtol.%s

    Returns
    -------
    x : ndarray or cupy.ndarray
        The solution, of A's array kind and np.result_type of the operands.
    info : int
        0: converged (true residual at tolerance); > 0: not converged (iterations done); < 0: a
        breakdown.

    Raises
    ------
    DimensionMismatchError
        A is not square or b / x0 do not match it.
    TypeError
        Operands that are not float32 / float64 (complex b: cg only).
    InvalidArgumentError
        An unknown preconditioner or algorithm name.
"""


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
       alg="auto", use_graph=None, result=None, tol=None):
    """Solve A x = b (A symmetric positive definite) by conjugate gradients, with the signature
    and return value of scipy.sparse.linalg.cg / cupyx.scipy.sparse.linalg.cg: returns (x, info).
    info = 0 only when ||b - A x|| <= max(rtol ||b||, atol) holds for the TRUE residual of the
    returned x; info > 0 when it does not (the iteration limit, or stagnation at the accuracy the
    precision allows, e.g. rtol=1e-8 in float32): the iterations done, at least 1; info < 0 a
    breakdown (A or M not SPD). maxiter: an integer >= 0 (default 10 n; ValueError when
    negative, TypeError when not an integer; above 2^63 - 1 it is clamped to 2^63 - 1, i.e. no
    limit). Types follow NumPy promotion: x has dtype np.result_type(A.dtype, b.dtype,
    x0.dtype): a float64 b with a float32 A solves in float64 (a float64 copy of A); a complex
    b (or x0) with a real A is solved as two real systems, for the real and imaginary parts,
    each to max(rtol ||b||, atol) / sqrt(2), so the complex residual meets the tolerance (info:
    the worse of the two).

    M: None or 'jacobi' run nz_cg_solve (the fused GPU loop, the planner's format); any other
    preconditioner runs nz_solve's CG: 'l1_jacobi', 'ilu0', 'ic0', 'block_jacobi',
    'chebyshev', 'amg' (default options), a preconditioner object (nonzero.ic0(A),
    nonzero.chebyshev(A), nonzero.amg(A), ...: applied in C), or a callable / LinearOperator
    z = M(r) (SPD). The solve runs in C on the CPU (NumPy b) or the GPU (CuPy b).
    callback(xk) is called from inside the C loop (nz_solve's CG with a monitor) once per
    iteration with the current iterate: a read-only NumPy view of the
    solver's x (CuPy: a view of the device x), valid during the call only, as SciPy passes its
    own x (copy it to keep it). For a complex b the callback sees the complex iterate of the
    two real solves (a new array each call): first the real part's iterate + 1j * the
    imaginary part's initial guess, then the real part's solution + 1j * the imaginary part's
    iterate. An exception raised by the callback (or by a Python M) stops the solve at that
    iteration and propagates. result: a dict to receive the C solver's report (names, not
    numbers: 'status' 'success' / 'max_iterations' / 'stagnated', with 'status_code'; from
    nz_cg_solve 'alg' and 'format'; from nz_solve (a callback, another M) 'reason',
    'iterations', 'history', ...; for a complex b the imaginary part's report is under 'imag').
    tol: the older name of rtol (SciPy < 1.12, cupyx).

    %(solver_params)s

    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A = nonzero.laplace2d(32)
    >>> b = np.ones(A.shape[0])
    >>> x, info = nonzero.cg(A, b, rtol=1e-10)
    >>> info
    0
    >>> bool(np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b))
    True
    >>> x, info = nonzero.cg(A, b, rtol=1e-10, M="ic0")  # IC(0), applied in C
    >>> info
    0
    """
    if tol is not None:  # the name of rtol in SciPy < 1.12 and cupyx
        rtol = tol
    if atol is None or atol == "legacy":
        atol = 0.0
    b_cupy = _is_cupy(b)
    if not isinstance(A, csr_matrix):
        A = csr_matrix(A, copy=None, device=True if b_cupy else None)
    if b_cupy and not A.on_device:
        A = A.to_device()
    if not b_cupy and A.on_device:
        cupy = _cupy()
        x, info = cg(A, cupy.asarray(b), None if x0 is None else cupy.asarray(x0), rtol=rtol,
                     atol=atol, maxiter=maxiter, M=M, callback=callback, alg=alg,
                     use_graph=use_graph, result=result)
        return x.get(), info
    xp = _cupy() if A.on_device else np
    n, b, x0 = _square_system("cg", A, b, x0, xp)
    _check_preconditioner("cg", M)
    if maxiter is None:
        maxiter = 10 * n
    else:
        try:
            maxiter = operator.index(maxiter)
        except TypeError:
            raise TypeError("nonzero.cg: maxiter must be an integer, not %r" % (maxiter,)) from None
        if maxiter < 0:
            raise InvalidArgumentError("nonzero.cg: maxiter must be >= 0, not %d" % maxiter)
        maxiter = min(maxiter, _MAXITER_LIMIT)
    try:
        dt = np.result_type(A.dtype, b.dtype, *(() if x0 is None else (x0.dtype,)))
    except TypeError:
        dt = None
    if dt not in (np.float32, np.float64, np.complex64, np.complex128):
        with_x0 = "" if x0 is None else " and x0 of dtype %s" % x0.dtype
        raise TypeError("nonzero.cg: no solve of a %s matrix with b of dtype %s%s (integer, "
                        "float and complex64/128 operands are accepted)"
                        % (A.dtype, b.dtype, with_x0))
    real = np.dtype(dt.char.lower())
    if real != A.dtype:  # a float64 operand with a float32 matrix: solve in float64
        A = A.astype(real)
    if dt.kind == "c":
        return _complex_cg(A, b, x0, dt, rtol, atol, maxiter, M, callback, alg, use_graph,
                           result, xp)
    b = xp.ascontiguousarray(b, dtype=dt)
    x = xp.zeros(n, dt) if x0 is None else xp.array(x0, dtype=dt, order="C", copy=True)
    if n == 0:
        return x, 0
    native = M is None or (isinstance(M, str) and M == "jacobi")
    if maxiter == 0:  # only x0's residual: never info 0 unless it meets the tolerance
        A._handle_in(A._ctx_now())  # a borrowing matrix checks its arrays
        r = float(xp.linalg.norm(b - A @ x))
        return x, 0 if r <= max(rtol * float(xp.linalg.norm(b)), atol) else 1
    if callback is not None or not native:
        # nz_solve's CG (the Krylov table's PCG): every preconditioner, and a monitor that
        # calls the callback from inside the C loop
        return _nz_solve("cg", _lib.METHOD_CG, A, b, x, rtol, atol, maxiter, 0, M, callback,
                         "x", result, alg)
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
        result["status"] = _status_name(st)
        result["status_code"] = st
        result["alg"] = L.nz_alg_name(res.alg).decode()
        result["format"] = L.nz_format_name(res.format).decode()
        result["max_iterations"] = maxiter
    if st == _lib.ERR_BREAKDOWN:
        return x, -1
    ctx.check(st, "nz_cg_solve")
    if st > 0:  # every caveat (iteration limit, stagnation, ...) is "not converged"
        return x, max(int(res.iterations), 1)
    return x, 0


# nz_solve's built-in preconditioners by name (M="jacobi" etc.; docs/SOLVERS.md)
_PRECOND_NAMES = {"jacobi": _lib.PRECOND_JACOBI, "l1_jacobi": _lib.PRECOND_L1_JACOBI,
                  "ilu0": _lib.PRECOND_ILU0, "ic0": _lib.PRECOND_IC0,
                  "block_jacobi": _lib.PRECOND_BLOCK_JACOBI,
                  "chebyshev": _lib.PRECOND_CHEBYSHEV, "amg": _lib.PRECOND_AMG}

_REASON_NAMES = _lib.SOLVE_REASONS


def _check_preconditioner(name, M):
    """InvalidArgumentError unless M is something nz_solve can take (before any work)."""
    if M is None or _native_precond(M) is not None:
        return
    if isinstance(M, str):
        if M not in _PRECOND_NAMES:
            raise InvalidArgumentError("nonzero.%s: unknown preconditioner %r (valid: None, %s, "
                                       "a nonzero preconditioner object such as "
                                       "nonzero.ilu0(A), a callable or a LinearOperator)"
                                       % (name, M, ", ".join(repr(k) for k in _PRECOND_NAMES)))
        return
    if not callable(getattr(M, "matvec", M)):
        raise InvalidArgumentError("nonzero.%s: M must be None, 'jacobi', 'l1_jacobi', 'ilu0', "
                                   "'ic0', 'block_jacobi', 'chebyshev', 'amg', a nonzero "
                                   "preconditioner (nonzero.ilu0(A), ...), a callable or a "
                                   "LinearOperator, not %s" % (name, type(M).__name__))


def _vector_view(ptr, n, dtype, device):
    """The n values of dtype at ptr, not copied: a NumPy view of host memory (device None), or
    a CuPy view of memory on CUDA device `device` (cupy.cuda.UnownedMemory: CuPy neither frees
    nor pools it). Valid as long as the memory is: during a callback, the call."""
    if device is None:
        ctype = ctypes.c_float if dtype == np.float32 else ctypes.c_double
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctype)), (n,))
    cupy = _cupy()
    mem = cupy.cuda.UnownedMemory(ptr, n * np.dtype(dtype).itemsize, None, device)
    return cupy.ndarray((n,), dtype, cupy.cuda.MemoryPointer(mem, 0))


def _on_solve_stream(ctx, fn):
    """fn() for a callback of a device solve, its CuPy work ordered with the solve's: the
    solve's vectors are complete in the order of the context's stream, which is CuPy's current
    stream when the solve started there (A._ctx_now). Otherwise (another current device or
    stream) the context is synchronised before fn and CuPy's stream after it."""
    cupy = _cupy()
    with cupy.cuda.Device(ctx.device):
        ours = ctx.stream.value is not None and cupy_stream_ptr() == ctx.stream.value
        if not ours:
            ctx.synchronize()
        out = fn()
        if not ours:
            cupy.cuda.get_current_stream().synchronize()
    return out


def _monitor(callback, kind, A, ctx, failure):
    """The nz_solve_monitor_t of a Python callback: callback(xk) with a view of the current
    iterate (kind 'x': a read-only NumPy view on the host, a CuPy view on the device) or
    callback(rk) with the residual norm the method records (kind 'norm'), once per iteration.
    An exception is kept in `failure` and an error status returned, which stops the solve."""
    n, dt = A.shape[0], np.dtype(A.dtype)
    device = ctx.device if A.on_device else None

    def monitor(user, iteration, residual_norm, x):
        try:
            if kind == "norm":
                callback(residual_norm)
            elif device is None:
                xk = _vector_view(x, n, dt, None)
                xk.flags.writeable = False  # the solver's own x: a write would corrupt the solve
                callback(xk)
            else:
                _on_solve_stream(ctx, lambda: callback(_vector_view(x, n, dt, device)))
            return _lib.SUCCESS
        except BaseException as e:  # re-raised after the C solve returns
            failure.append(e)
            return _lib.ERR_INVALID_ARGUMENT

    return _lib.SolveMonitor(monitor)


def _set_preconditioner(opts, name, M, A, ctx, failure):
    """M into nz_solve's options: a built-in kind by name, a preconditioner object's C handle,
    or a callable / LinearOperator called through NZ_PRECOND_USER (its exception kept in
    `failure`). Returns what must stay alive during the solve."""
    _check_preconditioner(name, M)
    if M is None:
        opts.precond = _lib.PRECOND_NONE
        return None
    if isinstance(M, str):
        opts.precond = _PRECOND_NAMES[M]
        return None
    where = lambda on_device: "GPU" if on_device else "CPU"
    if _native_precond(M) is not None:
        # a nonzero.Preconditioner: its C object is nz_solve's (no Python call per iteration)
        if M.on_device != A.on_device:
            raise InvalidArgumentError("nonzero.%s: M is a preconditioner on the %s, the solve "
                                       "runs on the %s: build M from the matrix the solve uses"
                                       % (name, where(M.on_device), where(A.on_device)))
        if np.dtype(M.dtype) != np.dtype(A.dtype):
            raise InvalidArgumentError("nonzero.%s: M is %s, the solve runs in %s: build M from "
                                       "a %s matrix" % (name, np.dtype(M.dtype).name,
                                                        np.dtype(A.dtype).name,
                                                        np.dtype(A.dtype).name))
        if A.on_device and M._ctx is not ctx:
            raise InvalidArgumentError("nonzero.%s: M was made on another CUDA device or stream "
                                       "than the solve's (CuPy's current one): make M under the "
                                       "stream the solve runs on" % name)
        opts.precond = _lib.PRECOND_NONE
        opts.preconditioner = M._h.ptr
        return M
    apply = getattr(M, "matvec", M)
    n, dt = A.shape[0], np.dtype(A.dtype)
    device = ctx.device if A.on_device else None

    def set_z(r, z):
        rv, zv = _vector_view(r, n, dt, device), _vector_view(z, n, dt, device)
        xp = np if device is None else _cupy()
        zv[:] = xp.asarray(apply(rv.copy())).reshape(n)

    def trampoline(user, r, z):
        try:
            if device is None:
                set_z(r, z)
            else:
                _on_solve_stream(ctx, lambda: set_z(r, z))
            return _lib.SUCCESS
        except BaseException as e:  # re-raised after the C solve returns
            failure.append(e)
            return _lib.ERR_INVALID_ARGUMENT

    opts.precond = _lib.PRECOND_USER
    opts.precond_apply = fn = _lib.PrecondApply(trampoline)
    return fn


def _nz_solve(name, method, A, b, x, rtol, atol, max_iterations, restart, M, callback,
              callback_kind, result, alg):
    """nz_solve on A (host or device) with b and x arrays where A lives, contiguous, of A's
    dtype, n > 0 (x the initial guess, overwritten by the solution). callback: called from
    inside the C loop through the monitor (_monitor). An exception raised by the callback or by
    a Python M stops the solve and is re-raised once nz_solve has returned (result, when given,
    is filled first)."""
    ctx = A._ctx_now()
    opts = _lib.SolveOptions()
    opts.method = method
    opts.rtol = rtol if rtol > 0 else 1e-300  # 0 means "default" in C
    opts.atol = atol
    opts.max_iterations = max_iterations
    opts.restart = restart
    opts.record_history = 1 if result is not None else 0
    a = ctypes.c_int()
    ctx.check(L.nz_alg_from_name(ctypes.byref(a), alg.encode()), "nz_alg_from_name")
    opts.alg = a.value
    failure = []  # the first exception of a Python callback or M
    keep = [_set_preconditioner(opts, name, M, A, ctx, failure)]
    if callback is not None:
        opts.monitor = fn = _monitor(callback, callback_kind, A, ctx, failure)
        keep.append(fn)
    res = _lib.SolveResult()
    st = L.nz_solve(ctx.handle, A._handle_in(ctx).ptr, _ptr(b), _ptr(x), ctypes.byref(opts),
                    ctypes.byref(res))
    del keep
    history = [res.history[k] for k in range(res.history_length)] if res.history else []
    if res.history:
        L.nz_free(ctx.handle, res.history)
    if result is not None:
        result.update({k: getattr(res, k) for k, _ in res._fields_ if k != "history"})
        result["status"] = _status_name(st)
        result["status_code"] = st
        result["reason"] = _REASON_NAMES[res.reason] if 0 <= res.reason < len(_REASON_NAMES) \
            else str(res.reason)
        result["history"] = history
        result["max_iterations"] = max_iterations
    if failure:
        raise failure[0]
    if st == _lib.ERR_BREAKDOWN and (method == _lib.METHOD_CG or
                                     not math.isnan(res.residual_norm)):
        return x, -1  # cg: every breakdown is info < 0, as nz_cg_solve's
    ctx.check(st, "nz_solve")
    if st > 0:
        return x, max(int(res.iterations), 1)
    return x, 0


def _krylov(name, method, A, b, x0, rtol, atol, max_iterations, restart, M, callback, result,
            alg, callback_kind="x"):
    """nz_solve's BiCGSTAB / GMRES / FGMRES / MINRES: the operands checked and placed where the
    solve runs, as nonzero.cg does (a CuPy b moves a host A to the GPU; a device A with a NumPy
    b solves on the GPU and returns x as NumPy), then _nz_solve."""
    b_cupy = _is_cupy(b)
    if not isinstance(A, csr_matrix):
        A = csr_matrix(A, copy=None, device=True if b_cupy else None)
    if b_cupy and not A.on_device:
        A = A.to_device()
    if not b_cupy and A.on_device:
        cupy = _cupy()
        x, info = _krylov(name, method, A, cupy.asarray(b),
                          None if x0 is None else cupy.asarray(x0), rtol, atol, max_iterations,
                          restart, M, callback, result, alg, callback_kind)
        return x.get(), info
    xp = _cupy() if A.on_device else np
    n, b, x0 = _square_system(name, A, b, x0, xp)
    dt = np.result_type(A.dtype, b.dtype, *(() if x0 is None else (x0.dtype,)))
    if dt not in (np.float32, np.float64):
        raise TypeError("nonzero.%s: float32 / float64 operands only, not %s" % (name, dt))
    if dt != A.dtype:
        A = A.astype(dt)
    _check_preconditioner(name, M)
    b = xp.ascontiguousarray(b, dtype=dt)
    x = xp.zeros(n, dt) if x0 is None else xp.array(x0, dtype=dt, order="C", copy=True)
    if n == 0:
        return x, 0
    if max_iterations == 0:  # x0 (or 0) and whether its residual meets the tolerance
        A._handle_in(A._ctx_now())  # a borrowing matrix checks its arrays
        r = float(xp.linalg.norm(b - A @ x))
        return x, 0 if r <= max(rtol * float(xp.linalg.norm(b)), atol) else 1
    return _nz_solve(name, method, A, b, x, rtol, atol, max_iterations, restart, M, callback,
                     callback_kind, result, alg)


def _maxiter(name, maxiter, default):
    if maxiter is None:
        return default
    try:
        maxiter = operator.index(maxiter)
    except TypeError:
        raise TypeError("nonzero.%s: maxiter must be an integer, not %r" % (name, maxiter)) from None
    if maxiter < 0:
        raise InvalidArgumentError("nonzero.%s: maxiter must be >= 0, not %d" % (name, maxiter))
    return min(maxiter, _MAXITER_LIMIT)


_WHERE = """The solve runs where A lives: NumPy operands on the CPU; a device A (a CuPy sparse
    matrix, nonzero.csr_matrix(..., device=True)) or a CuPy b on the GPU (a host A is copied to
    the device; a NumPy b with a device A gives a NumPy x)."""


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
             result=None, alg="auto", tol=None):
    """Solve A x = b (A square, non-symmetric allowed) by right-preconditioned BiCGSTAB in C,
    with the shape of scipy.sparse.linalg.bicgstab: returns (x, info). info = 0 only when the
    TRUE residual ||b - A x|| <= max(rtol ||b||, atol) for the returned x; info > 0 (the
    iterations done) at the iteration limit or on stagnation; info = -1 on a breakdown (rho = 0,
    omega = 0, NaN). maxiter: iterations (default 10 n). M: None, 'jacobi', 'l1_jacobi', 'ilu0',
    'ic0', 'block_jacobi', 'chebyshev', 'amg' (nz_solve's own; docs/SOLVERS.md), a preconditioner
    object (nonzero.ilu0(A), nonzero.block_jacobi(A, 8), ...: run in C), or a callable /
    LinearOperator applied as z = M(r) (an approximation of A^-1). callback(xk), as SciPy's, is
    called from inside the C loop once per iteration with the current iterate (a read-only
    NumPy view of the solver's x, a CuPy view on the GPU, valid during the call: copy it to
    keep it); an exception it raises stops the solve and propagates. result: a dict receiving
    the C report ('status', 'reason', 'iterations', 'residual_norm', 'history' (the residual
    norms), ...). tol: the older name of rtol. """
    if tol is not None:
        rtol = tol
    n = np.shape(A)[0]
    maxiter = _maxiter("bicgstab", maxiter, 10 * n)
    return _krylov("bicgstab", _lib.METHOD_BICGSTAB, A, b, x0, rtol, atol or 0.0, maxiter, 0, M,
                   callback, result, alg)


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None,
          callback=None, result=None, alg="auto", flexible=False, tol=None):
    """Solve A x = b by restarted GMRES(restart) in C (right-preconditioned, classical
    Gram-Schmidt twice, Givens rotations), with the shape of scipy.sparse.linalg.gmres: returns
    (x, info); info as in nonzero.bicgstab (-1: a breakdown, e.g. a singular invariant Krylov
    space). restart: the Krylov dimension (default 20, SciPy's); maxiter: restart cycles, as in
    SciPy (default 10 n; at most maxiter * restart Arnoldi steps). M: None, 'jacobi', 'l1_jacobi',
    'ilu0', 'ic0', 'block_jacobi', 'chebyshev', 'amg' (nz_solve's own; docs/SOLVERS.md), a
    preconditioner object (nonzero.ilu0(A), ...: run in C), or a
    callable / LinearOperator z = M(r); flexible=True runs FGMRES (M may vary between calls).
    callback(rk) is called from inside the C loop once per Arnoldi step with its least-squares
    residual norm (SciPy's callback_type='pr_norm', the norm not divided by ||b||; GMRES forms
    x only at a restart, so there is no callback(xk)); an exception it raises stops the solve
    and propagates."""
    if tol is not None:
        rtol = tol
    n = np.shape(A)[0]
    restart = 20 if restart is None else operator.index(restart)
    restart = max(1, min(restart, n if n > 0 else 1, 1000))
    maxiter = _maxiter("gmres", maxiter, 10 * n)
    steps = min(maxiter * restart, _MAXITER_LIMIT)
    return _krylov("gmres", _lib.METHOD_FGMRES if flexible else _lib.METHOD_GMRES, A, b, x0,
                   rtol, atol or 0.0, steps, restart, M, callback, result, alg, "norm")


def minres(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None,
           result=None, alg="auto", tol=None):
    """Solve A x = b (A symmetric, possibly indefinite) by preconditioned MINRES in C (Paige &
    Saunders), with the shape of scipy.sparse.linalg.minres: returns (x, info); info as in
    nonzero.bicgstab, judged on the TRUE residual (SciPy's minres stops on its own estimate).
    M: None, 'jacobi', 'l1_jacobi', 'ilu0', 'ic0', 'block_jacobi', 'chebyshev', 'amg', a
    preconditioner object (nonzero.ic0(A), nonzero.chebyshev(A), nonzero.amg(A), ...) or a
    callable / LinearOperator, symmetric positive definite (info = -1 otherwise). maxiter: iterations
    (default 5 n). callback(xk) as in nonzero.bicgstab."""
    if tol is not None:
        rtol = tol
    n = np.shape(A)[0]
    maxiter = _maxiter("minres", maxiter, 5 * n)
    return _krylov("minres", _lib.METHOD_MINRES, A, b, x0, rtol, atol or 0.0, maxiter, 0, M,
                   callback, result, alg)


if cg.__doc__:  # None under python -OO
    cg.__doc__ = cg.__doc__.replace("    %(solver_params)s\n", _SOLVER_PARAMS.lstrip("\n") % (
        "Iteration limit (default 10 n).", "callback(xk) once per iteration.", ""))
_SECTIONS = {
    "bicgstab": _SOLVER_PARAMS % ("Iteration limit (default 10 n).",
                                 "callback(xk) once per iteration.", "") + """
    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A = nonzero.convdiff2d(32, peclet=2.0)  # non-symmetric
    >>> b = np.ones(A.shape[0])
    >>> x, info = nonzero.bicgstab(A, b, rtol=1e-10, M="ilu0")
    >>> info
    0
    >>> bool(np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b))
    True
    """,
    "gmres": _SOLVER_PARAMS % ("Restart cycles (default 10 n).",
                              "callback(rk) once per Arnoldi step with the residual norm.", """
    restart : int, optional
        The Krylov dimension (default 20).
    flexible : bool, optional
        FGMRES: M may change between applications.""") + """
    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A = nonzero.convdiff2d(32, peclet=2.0)
    >>> b = np.ones(A.shape[0])
    >>> x, info = nonzero.gmres(A, b, rtol=1e-10, restart=30, M="jacobi")
    >>> info
    0
    """,
    "minres": _SOLVER_PARAMS % ("Iteration limit (default 5 n).",
                               "callback(xk) once per iteration.", "") + """
    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, nonzero
    >>> S = nonzero.laplace2d(16).toscipy() - 1.5 * sp.identity(256, format="csr")  # indefinite
    >>> b = np.ones(256)
    >>> x, info = nonzero.minres(S, b, rtol=1e-10)
    >>> info
    0
    >>> bool(np.linalg.norm(b - S @ x) <= 1e-10 * np.linalg.norm(b))
    True
    """,
}
for _f in (bicgstab, gmres, minres):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ += "\n\n    " + _WHERE + "\n" + _SECTIONS[_f.__name__]
del _f


def _complex_iterate(callback, part, other, dt, xp):
    """The callback of one real part's solve: the complex iterate, `other` the other part."""
    def cb(xk):
        z = xp.empty(xk.shape[0], dt)
        if part == 0:
            z.real, z.imag = xk, other
        else:
            z.real, z.imag = other, xk
        callback(z)
    return cb


def _complex_cg(A, b, x0, dt, rtol, atol, maxiter, M, callback, alg, use_graph, result, xp):
    """Complex b (or x0) with a real A: two real solves, each to tol / sqrt(2). A callback sees
    the complex iterate (nonzero.cg)."""
    tol = max(rtol * float(xp.linalg.norm(b)), atol)
    part_tol = tol / math.sqrt(2.0)
    real = np.dtype(dt.char.lower())
    parts, infos = [], []
    for k, part in enumerate((b.real, b.imag)):
        guess = None if x0 is None else (x0.real if k == 0 else x0.imag)
        cb = None
        if callback is not None:
            if k == 0:
                other = xp.zeros(b.shape[0], real) if x0 is None else \
                    xp.array(x0.imag, dtype=real)
            else:
                other = parts[0]
            cb = _complex_iterate(callback, k, other, dt, xp)
        rep = {} if result is not None else None
        # rtol 0: the part's tolerance is absolute (||b_part|| is not ||b||)
        xk, info = cg(A, xp.ascontiguousarray(part, dtype=real), guess, rtol=0.0, atol=part_tol,
                      maxiter=maxiter, M=M, callback=cb, alg=alg, use_graph=use_graph,
                      result=rep)
        parts.append(xk)
        infos.append(info)
        if result is not None:
            if k == 0:
                result.update(rep)
            else:
                result["imag"] = rep
    x = xp.empty(b.shape[0], dt)
    x.real, x.imag = parts
    if min(infos) < 0:
        return x, min(infos)
    return x, max(infos)


# ---- Matrix Market ------------------------------------------------------------------------------

def _path(path):
    """path (str, bytes or os.PathLike) as bytes for the library; an embedded NUL is refused as
    open() refuses it (the library would silently stop the name there)."""
    p = os.fsencode(path)
    if b"\0" in p:
        raise ValueError("embedded null byte in path %r" % (path,))
    return p


def _mm_object(p):
    """The object of a Matrix Market header ('coordinate' or 'array'), None when p is not a
    regular file that reads as one (the library then reports what is wrong)."""
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):
            return None
        with open(p, "rb") as f:
            magic = f.read(2)
            if magic == b"\x1f\x8b":
                import gzip
                f.seek(0)
                line = gzip.GzipFile(fileobj=f).readline(1024)
            else:
                line = magic + f.readline(1024)
    except (OSError, EOFError, ValueError):
        return None
    words = line.lower().split()
    if len(words) >= 3 and words[0] == b"%%matrixmarket":
        return words[2].decode(errors="replace")
    return None


def mmread(path, dtype=np.float64, device=None):
    """Read a Matrix Market file (.mtx, .mtx.gz) or a .nzb.

    A coordinate file or a .nzb gives a nonzero.csr_matrix; an array (dense) file gives a 2-D
    ndarray (rows x cols; a vector is rows x 1), as scipy.io.mmread does (a CuPy array with
    device=True). Pattern files read their entries as 1; symmetric files are expanded.

    Parameters
    ----------
    path : str, bytes or os.PathLike
        The file.
    dtype : {float64, float32}, optional
        Value type (default float64).
    device : None, bool or int, optional
        True or an int: the result on that GPU.

    Returns
    -------
    csr_matrix or ndarray
        The matrix (coordinate, .nzb) or the dense array (array files).

    Raises
    ------
    ParseError
        A malformed file (the message names the file, line and problem).
    NonzeroIOError
        The file cannot be read.

    Examples
    --------
    >>> import os, tempfile, nonzero
    >>> d = tempfile.mkdtemp()
    >>> path = os.path.join(d, "A.mtx")
    >>> nonzero.mmwrite(path, nonzero.laplace2d(4))
    >>> nonzero.mmread(path).shape
    (16, 16)
    """
    p = _path(path)
    ctx = host_context()
    vt = _vt(dtype)
    if _mm_object(p) == "array":
        data, rows, cols = ctypes.c_void_p(), ctypes.c_int64(), ctypes.c_int64()
        ctx.check(L.nz_mm_read_dense(ctx.handle, ctypes.byref(data), ctypes.byref(rows),
                                     ctypes.byref(cols), p, vt), "nz_mm_read_dense")
        m, n = rows.value, cols.value
        out = np.zeros((m, n), np.dtype(dtype), order="F")
        try:
            if m * n:
                ct = ctypes.c_float if vt == _lib.F32 else ctypes.c_double
                flat = np.ctypeslib.as_array(ctypes.cast(data, ctypes.POINTER(ct)), (m * n,))
                out[...] = flat.reshape((m, n), order="F")  # the file is column-major
        finally:
            if data.value:
                L.nz_free(ctx.handle, data)
        if device is not None and device is not False:
            return _cupy().asarray(out)
        return out
    h = _Handle(ctx)
    ctx.check(L.nz_matrix_read(ctx.handle, ctypes.byref(h.ptr), p, vt), "nz_matrix_read")
    return csr_matrix(h, device=device)


_SYMMETRIES = ("general", "symmetric", "skew-symmetric")


def mmwrite(path, A, symmetry=None):
    """Write A to path, the format chosen by the extension: '.nzb' the binary format (sparse A
    only), otherwise Matrix Market ('.gz' compresses). A NumPy array (1-D: a column) is written
    as a dense 'array real general' file (nz_mm_write_dense). A sparse A (nonzero, SciPy or
    CuPy) is written as 'coordinate real' with the symmetry given, as scipy.io.mmwrite:
    symmetry=None detects it ('symmetric' or 'skew-symmetric' when A equals A^T or -A^T, which
    stores the lower triangle only; else 'general'); 'general', 'symmetric', 'skew-symmetric'
    ask for one (ValueError when A does not have it). Values keep round-trip precision. The file
    appears only complete: a temporary file in the target's directory is renamed over it.

    Parameters
    ----------
    path : str, bytes or os.PathLike
        The file to write ('.mtx', '.mtx.gz' or '.nzb').
    A : csr_matrix, scipy.sparse, cupyx.scipy.sparse matrix, ndarray or cupy.ndarray
        What to write.
    symmetry : {None, 'general', 'symmetric', 'skew-symmetric'}, optional
        None detects it.

    Raises
    ------
    ValueError
        An unknown symmetry, or one A does not have.
    NonzeroIOError
        The file cannot be written (the target is left as it was).

    Examples
    --------
    >>> import os, tempfile, numpy as np, nonzero
    >>> path = os.path.join(tempfile.mkdtemp(), "x.mtx")
    >>> nonzero.mmwrite(path, np.array([1.0, 2.0, 3.0]))
    >>> nonzero.mmread(path).ravel().tolist()
    [1.0, 2.0, 3.0]
    """
    p = _path(path)
    if symmetry is not None and symmetry not in _SYMMETRIES:
        raise ValueError("nonzero.mmwrite: unknown symmetry %r (valid: %s)"
                         % (symmetry, ", ".join(_SYMMETRIES)))
    binary = p.endswith(b".nzb")
    if isinstance(A, np.ndarray) or _is_cupy(A):
        if binary:
            raise ValueError("nonzero.mmwrite: %s: a .nzb file holds a sparse matrix, not a "
                             "dense array" % os.fsdecode(p))
        if symmetry not in (None, "general"):
            raise ValueError("nonzero.mmwrite: symmetry=%r: dense arrays are written as "
                             "general" % (symmetry,))
        a = A.get() if _is_cupy(A) else A
        if a.ndim == 1:
            a = a.reshape(-1, 1)
        if a.ndim != 2:
            raise ValueError("nonzero.mmwrite: an array must be 1-D or 2-D, not %d-D" % a.ndim)
        if a.dtype.kind not in "biuf":
            raise TypeError("nonzero.mmwrite: cannot write a %s array (real values only)"
                            % a.dtype)
        dt = np.float32 if a.dtype == np.float32 else np.float64
        a = np.asfortranarray(a, dtype=dt)
        ctx = host_context()
        ctx.check(L.nz_mm_write_dense(ctx.handle, p, _vt(dt), a.shape[0], a.shape[1],
                                      a.ctypes.data if a.size else None), "nz_mm_write_dense")
        return
    A = A if isinstance(A, csr_matrix) else csr_matrix(A, copy=None)
    A = A.to_host()
    ctx = A._h.ctx
    h = A._handle_in(ctx)  # a borrowing matrix checks its arrays
    if binary:
        if symmetry not in (None, "general"):
            raise ValueError("nonzero.mmwrite: symmetry=%r: a .nzb file stores all entries"
                             % (symmetry,))
        ctx.check(L.nz_binary_write(ctx.handle, p, h.ptr), "nz_binary_write")
        return
    if symmetry != "general":
        S = A.toscipy(array=False)
        found = _symmetry_of(S)
        if symmetry is None:
            symmetry = found
        elif found != symmetry and not (symmetry == "symmetric" and found == "skew-symmetric"
                                        and S.nnz == 0):
            raise ValueError("nonzero.mmwrite: symmetry=%r but the matrix is %s"
                             % (symmetry, "not square" if S.shape[0] != S.shape[1] else
                                "not " + symmetry))
    if symmetry == "general":
        ctx.check(L.nz_mm_write(ctx.handle, p, h.ptr), "nz_mm_write")
        return
    _write_mm_triangle(p, S, symmetry)


def _symmetry_of(S):
    """'symmetric', 'skew-symmetric' or 'general' for a SciPy CSR matrix (values compared
    exactly, as scipy.io.mmwrite does)."""
    if S.shape[0] != S.shape[1]:
        return "general"
    T = S.T.tocsr()
    if (S != T).nnz == 0:
        return "symmetric"
    if (S != -T).nnz == 0:
        return "skew-symmetric"
    return "general"


def _write_mm_triangle(p, S, symmetry):
    """The lower triangle of S (strictly lower for skew-symmetric) as 'coordinate real
    <symmetry>', through a temporary file renamed over p (as the library's writers do)."""
    import scipy.sparse as sp
    L_ = sp.tril(S, k=-1 if symmetry == "skew-symmetric" else 0, format="coo")
    order = np.lexsort((L_.row, L_.col))  # column by column, as scipy writes
    rows, cols, vals = L_.row[order] + 1, L_.col[order] + 1, L_.data[order]
    fmt = "%.9g" if S.dtype == np.float32 else "%.17g"
    head = ("%%%%MatrixMarket matrix coordinate real %s\n%d %d %d\n"
            % (symmetry, S.shape[0], S.shape[1], len(vals))).encode()
    body = "".join("%d %d %s\n" % (r, c, fmt % v) for r, c, v in
                   zip(rows.tolist(), cols.tolist(), vals.tolist())).encode()
    _write_replacing(p, head + body, p.endswith(b".gz"))


def _write_replacing(p, content, gz):
    """Write content to p: to a temporary file beside p's target (a symbolic link is followed),
    fsync, then rename over it; an existing character device or FIFO is written in place."""
    target = os.path.realpath(p)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if gz:
        import gzip
        content = gzip.compress(content, mtime=0)
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(target, "wb") as f:
            f.write(content)
        return
    if st is not None:
        mode = stat.S_IMODE(st.st_mode)
    else:
        umask = os.umask(0o022)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=b".nz-", suffix=b".tmp", dir=os.path.dirname(target) or b".")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode)
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---- generators ---------------------------------------------------------------------------------

def _gen(fn, name, *args, dtype=np.float64, device=None):
    ctx = host_context()
    h = _Handle(ctx)
    ctx.check(fn(ctx.handle, ctypes.byref(h.ptr), *args, _vt(dtype)), name)
    return csr_matrix(h, device=device)


def laplace2d(nx, ny=None, *, dtype=np.float64, device=None):
    """The 5-point 2-D Laplacian on an nx x ny grid (Dirichlet boundary).

    Rows and columns in natural order (x fastest); diagonal 4, neighbours -1; symmetric positive
    definite.

    Parameters
    ----------
    nx : int
        Grid points in x.
    ny : int, optional
        Grid points in y (default nx).
    %(generator_common)s

    Examples
    --------
    >>> import nonzero
    >>> A = nonzero.laplace2d(4)
    >>> A.shape, A.nnz
    ((16, 16), 64)
    """
    return _gen(L.nz_gen_laplace2d, "nz_gen_laplace2d", nx, nx if ny is None else ny,
                dtype=dtype, device=device)


def laplace3d(nx, ny=None, nz=None, *, dtype=np.float64, device=None):
    """The 7-point 3-D Laplacian on an nx x ny x nz grid (Dirichlet boundary).

    Rows and columns in natural order (x fastest, then y); diagonal 6, neighbours -1; symmetric
    positive definite.

    Parameters
    ----------
    nx : int
        Grid points in x.
    ny, nz : int, optional
        Grid points in y and z (default nx).
    %(generator_common)s

    Examples
    --------
    >>> import nonzero
    >>> A = nonzero.laplace3d(3)
    >>> A.shape, A.nnz
    ((27, 27), 135)
    """
    return _gen(L.nz_gen_laplace3d, "nz_gen_laplace3d", nx, nx if ny is None else ny,
                nx if nz is None else nz, dtype=dtype, device=device)


def convdiff2d(nx, ny=None, *, peclet=1.0, dtype=np.float64, device=None):
    """Upwind convection-diffusion -Δu + w·∇u on an nx x ny grid (Dirichlet), non-symmetric.

    The wind points along (1, 1); peclet is the mesh Péclet number P = |w| h / 2 (>= 0). The
    matrix is h^2 times the operator, like laplace2d: diagonal 4 + 2c, -x/-y neighbours -1 - c,
    +x/+y neighbours -1, with c = 2P / sqrt(2). peclet=0 gives laplace2d exactly; for every P
    the matrix is a diagonally dominant M-matrix.

    Parameters
    ----------
    nx : int
        Grid points in x.
    ny : int, optional
        Grid points in y (default nx).
    peclet : float, optional
        The mesh Péclet number, finite and >= 0 (default 1).
    %(generator_common)s

    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A = nonzero.convdiff2d(8, peclet=2.0)
    >>> S = A.toscipy()
    >>> bool(abs(S - S.T).max() > 0)  # non-symmetric
    True
    """
    return _gen(L.nz_gen_convdiff2d, "nz_gen_convdiff2d", nx, nx if ny is None else ny,
                float(peclet), dtype=dtype, device=device)


def convdiff3d(nx, ny=None, nz=None, *, peclet=1.0, dtype=np.float64, device=None):
    """Upwind convection-diffusion -Δu + w·∇u on an nx x ny x nz grid (Dirichlet), non-symmetric.

    The wind points along (1, 1, 1); peclet is the mesh Péclet number P = |w| h / 2 (>= 0).
    The matrix is h^2 times the operator, like laplace3d: diagonal 6 + 3c, -x/-y/-z neighbours
    -1 - c, +x/+y/+z neighbours -1, with c = 2P / sqrt(3). peclet=0 gives laplace3d exactly;
    for every P the matrix is a diagonally dominant M-matrix.

    Parameters
    ----------
    nx : int
        Grid points in x.
    ny, nz : int, optional
        Grid points in y and z (default nx).
    peclet : float, optional
        The mesh Péclet number, finite and >= 0 (default 1).
    %(generator_common)s

    Examples
    --------
    >>> import nonzero
    >>> C, L = nonzero.convdiff3d(4, peclet=0.0), nonzero.laplace3d(4)
    >>> bool((C.toscipy() != L.toscipy()).nnz == 0)
    True
    """
    return _gen(L.nz_gen_convdiff3d, "nz_gen_convdiff3d", nx, nx if ny is None else ny,
                nx if nz is None else nz, float(peclet), dtype=dtype, device=device)


def random(rows, cols, mean_row_length, seed=1, *, dtype=np.float64, device=None):
    """A uniformly random sparse matrix: row lengths uniform in [0, 2 mean_row_length], distinct
    uniform columns, values in [-1, 1); the same for the same seed.

    Parameters
    ----------
    rows, cols : int
        The shape.
    mean_row_length : float
        Mean nonzeros a row.
    seed : int, optional
        Random seed (default 1).
    %(generator_common)s

    Examples
    --------
    >>> import nonzero
    >>> A = nonzero.random(1000, 500, 8, seed=7)
    >>> A.shape
    (1000, 500)
    >>> A.nnz == nonzero.random(1000, 500, 8, seed=7).nnz
    True
    """
    return _gen(L.nz_gen_random, "nz_gen_random", rows, cols, float(mean_row_length), seed,
                dtype=dtype, device=device)


def rmat(scale, edge_factor=16, a=0.0, b=0.0, c=0.0, seed=1, *, dtype=np.float64, device=None):
    """A Kronecker / R-MAT power-law graph (Graph500's generator): 2^scale vertices,
    edge_factor x 2^scale edges drawn with quadrant probabilities (a, b, c, 1 - a - b - c);
    duplicates merged, values in (0, 1], vertex labels scrambled by a seeded permutation.

    Parameters
    ----------
    scale : int
        log2 of the vertices, 1 to 30.
    edge_factor : int, optional
        Edges a vertex before duplicates merge (default 16).
    a, b, c : float, optional
        Quadrant probabilities; all 0 (the default) selects Graph500's 0.57, 0.19, 0.19.
    seed : int, optional
        Random seed (default 1).
    %(generator_common)s

    Examples
    --------
    >>> import nonzero
    >>> A = nonzero.rmat(10)
    >>> A.shape
    (1024, 1024)
    >>> 0 < A.nnz <= 16 * 1024
    True
    """
    return _gen(L.nz_gen_rmat, "nz_gen_rmat", scale, edge_factor, a, b, c, seed, dtype=dtype,
                device=device)


def rail(rows, cols, row_length, seed=1, *, dtype=np.float64, device=None):
    """A rail-like matrix (crew scheduling LPs): few rows, many columns, every row long (mean
    row_length, +-50%), columns clustered; values in [-1, 1).

    Parameters
    ----------
    rows, cols : int
        The shape.
    row_length : int
        Mean nonzeros a row.
    seed : int, optional
        Random seed (default 1).
    %(generator_common)s

    Examples
    --------
    >>> import nonzero
    >>> A = nonzero.rail(16, 100000, 500)
    >>> A.shape
    (16, 100000)
    """
    return _gen(L.nz_gen_rail, "nz_gen_rail", rows, cols, row_length, seed, dtype=dtype,
                device=device)


def mixed(rows, short_length, long_rows, long_length, seed=1, *, dtype=np.float64, device=None):
    """A square matrix of short rows (lengths uniform in [1, 2 short_length - 1]) with long_rows
    rows of long_length nonzeros spread over it; values in [-1, 1).

    Parameters
    ----------
    rows : int
        Rows and columns.
    short_length : int
        Mean length of the short rows.
    long_rows : int
        How many long rows.
    long_length : int
        Nonzeros of each long row.
    seed : int, optional
        Random seed (default 1).
    %(generator_common)s

    Examples
    --------
    >>> import nonzero
    >>> A = nonzero.mixed(10000, 4, 3, 2000)
    >>> A.shape
    (10000, 10000)
    """
    return _gen(L.nz_gen_mixed, "nz_gen_mixed", rows, short_length, long_rows, long_length, seed,
                dtype=dtype, device=device)


def banded(n, lower, upper, *, dtype=np.float64, device=None):
    """A diagonally dominant n x n band matrix with `lower` sub- and `upper` super-diagonals.

    Parameters
    ----------
    n : int
        Rows and columns.
    lower, upper : int
        Diagonals below and above the main one.
    %(generator_common)s

    Examples
    --------
    >>> import nonzero
    >>> A = nonzero.banded(5, 1, 2)
    >>> A.nnz
    16
    """
    return _gen(L.nz_gen_banded, "nz_gen_banded", n, lower, upper, dtype=dtype, device=device)


# The parameters, returns and errors every generator shares, put into their docstrings below.
_GENERATOR_COMMON = """dtype : {float64, float32}, optional
        Value type of the matrix (default float64).
    device : None, bool or int, optional
        None or False: a host matrix; True: on the current GPU; an int: on that GPU.

    Returns
    -------
    csr_matrix
        The matrix, its columns sorted in every row.

    Raises
    ------
    InvalidArgumentError
        A size or parameter out of range.
    NoDeviceError
        device asks for a GPU and none is present."""


def fe3d(n, *, dtype=np.float64, device=None):
    """The Q1 finite-element Poisson problem on the unit cube with n elements a side.

    Parameters
    ----------
    n : int
        Elements a side (>= 2); (n - 1)^3 unknowns.
    dtype : {float64, float32}, optional
        Value type (default float64).
    device : None, bool or int, optional
        None or False: host arrays; True or an int: the matrix on that GPU, b and u as CuPy.

    Returns
    -------
    A : csr_matrix
        The stiffness matrix (symmetric positive definite, 27-point rows).
    b : ndarray
        The load vector.
    u_exact : ndarray
        The exact solution of the continuous problem at the nodes: the discrete solution
        approaches it as O(h^2).

    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A, b, u = nonzero.fe3d(8)
    >>> A.shape
    (343, 343)
    >>> x, info = nonzero.cg(A, b, rtol=1e-10)
    >>> info, bool(np.abs(x - u).max() < 0.05)
    (0, True)
    """
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


for _f in (laplace2d, laplace3d, convdiff2d, convdiff3d, random, rmat, rail, mixed, banded):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ = _f.__doc__.replace("%(generator_common)s", _GENERATOR_COMMON)
del _f
