"""bench.py: Nonzero against CuPy (one process, one GPU) or SciPy (CPU-only), on the same matrices.

    python3 -m nonzero.bench [--size small|medium|large] [--only spmv,spgemm,cg,overhead]
                             [--cg-n 200] [--cg-iters 200] [--repeat 30] [--cpu]
    python3 -m nonzero.bench --solve [--quick] [--repeat 30]

SpMV `A @ x`, SpGEMM `A @ B`, CG with a fixed iteration count (cupyx.scipy.sparse.linalg.cg or
scipy.sparse.linalg.cg vs nonzero.cg) on the generated matrices of `nz bench` (medium suite by
default; the CG matrix is the 3-D Laplacian cg-n^3, f64). GPU timings: CUDA events on one
non-blocking CuPy stream that both libraries use, after warm-up, median of --repeat runs.
Also the Python-call overhead: a plan call from Python against the bare ctypes call of
nz_spmv_execute with the same arguments, on a tiny matrix (launch-bound).

--solve (GPU and CuPy only; instead of the modes above): cupyx spsolve_triangular on the lower
triangle of the 7-point Laplacian 128^3 and 200^3 (128^3 only with --quick) against Nonzero's
SpSV (nonzero.spsolve_triangular where the package has it, and an nz_spsv plan through ctypes);
CuPy's bicgstab / gmres(30) per iteration on convdiff3d 128^3 (64^3 with --quick) against
nonzero.bicgstab / nonzero.gmres on the same CuPy arrays (nz_solve through ctypes when the
package still refuses device operands); time to rtol 1e-8, CuPy with a Jacobi M against
Nonzero's ILU(0).
"""
import argparse
import ctypes
import statistics
import sys
import time

import numpy as np

import nonzero
from nonzero import _lib

SUITES = {
    "small": [("laplace3d-16", "laplace3d", (16,)), ("fe3d-12", "fe3d", (12,)),
              ("random-16K-16", "random", (16384, 16384, 16)), ("rmat-12-16", "rmat", (12, 16)),
              ("rail-64x16K", "rail", (64, 16384, 500)), ("mixed-16K", "mixed", (16384, 8, 2, 8192))],
    "medium": [("laplace3d-128", "laplace3d", (128,)), ("fe3d-80", "fe3d", (80,)),
               ("random-1M-16", "random", (1048576, 1048576, 16)), ("rmat-18-16", "rmat", (18, 16)),
               ("rail-1024x256K", "rail", (1024, 262144, 2500)),
               ("mixed-512K", "mixed", (524288, 8, 8, 262144))],
    "large": [("laplace3d-200", "laplace3d", (200,)), ("fe3d-128", "fe3d", (128,)),
              ("random-4M-16", "random", (4194304, 4194304, 16)), ("rmat-20-16", "rmat", (20, 16)),
              ("rail-4096x1M", "rail", (4096, 1048576, 2500)),
              ("mixed-2M", "mixed", (2097152, 8, 8, 1048576))],
}
# SpGEMM: square matrices whose product fits both libraries comfortably (A @ A).
SPGEMM = {
    "small": [("laplace3d-16", "laplace3d", (16,)), ("fe3d-12", "fe3d", (12,)),
              ("random-16K-16", "random", (16384, 16384, 16)), ("rmat-12-16", "rmat", (12, 16))],
    "medium": [("laplace3d-64", "laplace3d", (64,)), ("fe3d-40", "fe3d", (40,)),
               ("random-256K-8", "random", (262144, 262144, 8)), ("rmat-16-8", "rmat", (16, 8)),
               ("mixed-128K", "mixed", (131072, 8, 4, 16384))],
    "large": [("laplace3d-128", "laplace3d", (128,)), ("fe3d-80", "fe3d", (80,)),
              ("random-1M-16", "random", (1048576, 1048576, 16)), ("rmat-18-16", "rmat", (18, 16))],
}


def generate(kind, params):
    fn = getattr(nonzero, kind)
    A = fn(*params)
    return A[0] if isinstance(A, tuple) else A


class Timer:
    """Median seconds of fn() over repeat runs after warm-up; CUDA events when gpu."""

    def __init__(self, gpu):
        self.gpu = gpu
        if gpu:
            import cupy
            self.cupy = cupy

    def __call__(self, fn, repeat, warmup=3):
        for _ in range(warmup):
            fn()
        times = []
        if self.gpu:
            cp = self.cupy
            s = cp.cuda.get_current_stream()
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            for _ in range(repeat):
                e0.record(s)
                fn()
                e1.record(s)
                e1.synchronize()
                times.append(cp.cuda.get_elapsed_time(e0, e1) * 1e-3)
        else:
            for _ in range(repeat):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
        return statistics.median(times)


def row(cols, widths):
    return "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(cols, widths)))


def bench_spmv(suite, gpu, timer, repeat, out):
    print("\n== SpMV y = A @ x (f64), median of %d; ratio = other / nonzero (> 1: nonzero faster)"
          % repeat)
    other = "cupy" if gpu else "scipy"
    w = [16, 10, 10, 12, 12, 12, 8, 14]
    print(row(["matrix", "rows", "nnz", other + " us", "nz A@x us", "nz plan us", "ratio",
               "alg"], w))
    for name, kind, params in suite:
        A = generate(kind, params)
        S = A.toscipy()
        if gpu:
            import cupy
            import cupyx.scipy.sparse as csp
            D = csp.csr_matrix(S)
            N = nonzero.asmatrix(D)
            x = cupy.asarray(np.random.default_rng(1).random(S.shape[1]))
            y = cupy.empty(S.shape[0])
            ref = D @ x
        else:
            D = S
            N = A
            x = np.random.default_rng(1).random(S.shape[1])
            y = np.empty(S.shape[0])
            ref = D @ x
        p = N.plan()
        got = N @ x
        err = float(abs(got - ref).max()) / max(1.0, float(abs(ref).max()))
        t_other = timer(lambda: D @ x, repeat)
        t_nz = timer(lambda: N @ x, repeat)
        t_plan = timer(lambda: p(x, y), repeat)
        alg = p.info()["alg"]
        ratio = t_other / t_nz
        print(row([name, S.shape[0], S.nnz, "%.1f" % (t_other * 1e6), "%.1f" % (t_nz * 1e6),
                   "%.1f" % (t_plan * 1e6), "%.2f" % ratio, alg], w) +
              ("" if err < 1e-10 else "  (max rel diff %.1e!)" % err))
        out.append(("spmv", name, t_other, t_nz, ratio))
        del D, N, p, x, y, S, A


def bench_spgemm(suite, gpu, timer, repeat, out):
    print("\n== SpGEMM C = A @ A (f64), median of %d" % repeat)
    other = "cupy" if gpu else "scipy"
    w = [16, 10, 10, 12, 12, 12, 8]
    print(row(["matrix", "rows", "nnz(A)", "nnz(C)", other + " ms", "nonzero ms", "ratio"], w))
    for name, kind, params in suite:
        A = generate(kind, params)
        S = A.toscipy()
        if gpu:
            import cupyx.scipy.sparse as csp
            D = csp.csr_matrix(S)
        else:
            D = S
        N = nonzero.asmatrix(D)  # wrapped once, as SpMV and CG do (no copy)
        C_ref = D @ D
        C = nonzero.spgemm(N, N)
        try:
            diff = float(abs(C - C_ref).max()) if C.nnz else 0.0
            diff /= max(1.0, float(abs(C_ref).max()))
        except Exception:  # a sparse max this CuPy lacks
            diff = 0.0 if C.nnz == C_ref.nnz else float("inf")
        t_other = timer(lambda: D @ D, repeat, warmup=1)
        t_nz = timer(lambda: nonzero.spgemm(N, N), repeat, warmup=1)
        ratio = t_other / t_nz
        print(row([name, S.shape[0], S.nnz, C_ref.nnz, "%.2f" % (t_other * 1e3),
                   "%.2f" % (t_nz * 1e3), "%.2f" % ratio], w) +
              ("" if diff < 1e-10 else "  (max rel diff %.1e!)" % diff))
        out.append(("spgemm", name, t_other, t_nz, ratio))
        del C, C_ref, D, N, S, A


def bench_cg(n, iters, gpu, timer, repeat, out):
    print("\n== CG, 3-D Laplacian %d^3 f64, %d iterations (fixed: rtol = atol = 0), median of %d"
          % (n, iters, repeat))
    A = nonzero.laplace3d(n)
    S = A.toscipy()
    if gpu:
        import cupy
        import cupyx.scipy.sparse as csp
        import cupyx.scipy.sparse.linalg as cla
        D = csp.csr_matrix(S)
        N = nonzero.asmatrix(D)
        b = cupy.ones(S.shape[0])

        def other():
            try:
                return cla.cg(D, b, tol=0.0, atol=0.0, maxiter=iters)
            except TypeError:  # newer CuPy: rtol
                return cla.cg(D, b, rtol=0.0, atol=0.0, maxiter=iters)
    else:
        import scipy.sparse.linalg as sla
        D = S
        N = A
        b = np.ones(S.shape[0])

        def other():
            try:
                return sla.cg(D, b, rtol=0.0, atol=0.0, maxiter=iters)
            except TypeError:
                return sla.cg(D, b, tol=0.0, atol=0.0, maxiter=iters)
    res = {}
    x_nz, info = nonzero.cg(N, b, rtol=0.0, atol=0.0, maxiter=iters, result=res)
    x_o, info_o = other()
    rel = lambda x: float(((b - D @ x) ** 2).sum() ** 0.5 / (b ** 2).sum() ** 0.5)
    t_other = timer(other, repeat, warmup=1)
    t_nz = timer(lambda: nonzero.cg(N, b, rtol=0.0, atol=0.0, maxiter=iters), repeat, warmup=1)
    ratio = t_other / t_nz
    print("  %s: %.1f ms (%.1f us/iteration), ||r||/||b|| = %.2e, info %d"
          % ("cupy " if gpu else "scipy", t_other * 1e3, t_other / iters * 1e6, rel(x_o), info_o))
    print("  nonzero: %.1f ms (%.1f us/iteration), ||r||/||b|| = %.2e, info %d, spmv alg %s, "
          "CUDA graph %s" % (t_nz * 1e3, t_nz / iters * 1e6, rel(x_nz), info, res.get("alg"),
                             bool(res.get("used_graph"))))
    print("  ratio %.2f (> 1: nonzero faster)" % ratio)
    out.append(("cg", "laplace3d-%d" % n, t_other, t_nz, ratio))


def bench_overhead(gpu, out, calls=20000):
    print("\n== Python-call overhead (tiny matrix: 16 rows; %d calls, wall clock)" % calls)
    A = nonzero.laplace2d(4, device=True if gpu else None)
    if gpu:
        import cupy
        x, y = cupy.ones(16), cupy.empty(16)
        sync = cupy.cuda.get_current_stream().synchronize
    else:
        x, y = np.ones(16), np.empty(16)
        sync = lambda: None
    p = A.plan()
    p(x, y)
    ex = _lib.lib.nz_spmv_execute
    handle, xp, yp = p._spmv.ptr, nonzero._arrays._ptr(x), nonzero._arrays._ptr(y)
    version = _lib.lib.nz_version

    def loop(fn):
        best = float("inf")
        for _ in range(5):
            sync()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            sync()
            best = min(best, (time.perf_counter() - t0) / calls)
        return best

    t_plan = loop(lambda: p(x, y))
    t_matmul = loop(lambda: A @ x)
    t_bare = loop(lambda: ex(handle, 1.0, xp, 0.0, yp))
    t_ctypes = loop(version)
    c_call = max(t_bare - t_ctypes, 0.0)
    print("  plan(x, y) from Python        %7.2f us/call" % (t_plan * 1e6))
    print("  A @ x (allocates y)           %7.2f us/call" % (t_matmul * 1e6))
    print("  bare ctypes nz_spmv_execute   %7.2f us/call" % (t_bare * 1e6))
    print("  ctypes call of nz_version()   %7.2f us/call (the ctypes cost itself)" % (t_ctypes * 1e6))
    print("  => the C call: ~%.2f us; Python overhead over it: plan(x, y) %.2f us, A @ x %.2f us"
          % (c_call * 1e6, (t_plan - c_call) * 1e6, (t_matmul - c_call) * 1e6))
    out.append(("overhead", "plan(x,y)-C", t_plan - c_call, c_call, 0.0))


# ---- --solve: triangular solves and Krylov solvers against CuPy's -----------------------------

class _SpsvPlanInfo(ctypes.Structure):
    """nz_spsv_plan_info_t (include/nonzero/spsv.h)."""
    _fields_ = [("backend", ctypes.c_int), ("op", ctypes.c_int), ("fill", ctypes.c_int),
                ("diag", ctypes.c_int), ("rows", ctypes.c_int64), ("nnz", ctypes.c_int64),
                ("levels", ctypes.c_int64), ("max_level_rows", ctypes.c_int64),
                ("reproducible", ctypes.c_int), ("analysis_seconds", ctypes.c_double),
                ("workspace_bytes", ctypes.c_size_t)]


def _c_function(name, restype, *argtypes):
    """A private ctypes function object for a C symbol the package does not declare (lib[name]
    makes a new object, so the package's own declarations are left alone); None if absent."""
    try:
        fn = _lib.lib[name]
    except (AttributeError, KeyError):
        return None
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


def _last_error(ctx):
    msg = _lib.lib.nz_context_last_error(ctx.handle)
    return msg.decode(errors="replace") if msg else ""


class _SpsvPlan:
    """nz_spsv_plan_create / execute / destroy on a device matrix through ctypes (the package
    has no SpSV binding of its own yet). .error is a 'not available' reason, or None."""
    ERR_UNSUPPORTED = -40

    def __init__(self, N, lower=True):
        c_void_p = ctypes.c_void_p
        self.create = _c_function("nz_spsv_plan_create", ctypes.c_int, c_void_p,
                                  ctypes.POINTER(c_void_p), c_void_p, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_int, ctypes.c_uint)
        self.execute = _c_function("nz_spsv_execute", ctypes.c_int, c_void_p, ctypes.c_double,
                                   c_void_p, c_void_p)
        self.destroy = _c_function("nz_spsv_plan_destroy", ctypes.c_int, ctypes.POINTER(c_void_p))
        self.info_fn = _c_function("nz_spsv_plan_info", ctypes.c_int, c_void_p,
                                   ctypes.POINTER(_SpsvPlanInfo))
        self.plan = c_void_p()
        self.error = None
        self.info = None
        if None in (self.create, self.execute, self.destroy, self.info_fn):
            self.error = "libnonzero has no nz_spsv_* symbols"
            return
        self.ctx = N._ctx_now()
        st = self.create(self.ctx.handle, ctypes.byref(self.plan), N._handle_in(self.ctx).ptr,
                         _lib.OP_N, 0 if lower else 1, 0, 0)
        if st != _lib.SUCCESS:
            self.error = "%s%s" % ("unsupported on the device: " if st == self.ERR_UNSUPPORTED
                                   else "nz_spsv_plan_create failed: ", _last_error(self.ctx))
            self.plan = c_void_p()
            return
        info = _SpsvPlanInfo()
        self.ctx.check(self.info_fn(self.plan, ctypes.byref(info)), "nz_spsv_plan_info")
        self.info = info

    def __call__(self, b, y):
        self.ctx.check(self.execute(self.plan, 1.0, b.data.ptr, y.data.ptr), "nz_spsv_execute")
        return y

    def close(self):
        if self.plan:
            self.destroy(ctypes.byref(self.plan))


def _cupy_kw(fn, *args, **kw):
    """Call a cupyx solver with rtol=..., or tol=... on an older CuPy."""
    try:
        return fn(*args, **kw)
    except TypeError:
        if "rtol" not in kw:
            raise
        kw["tol"] = kw.pop("rtol")
        return fn(*args, **kw)


def _events_ms(fn):
    """Run fn once between CUDA events on CuPy's current stream: (result, milliseconds)."""
    import cupy
    s = cupy.cuda.get_current_stream()
    e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
    e0.record(s)
    r = fn()
    e1.record(s)
    e1.synchronize()
    return r, cupy.cuda.get_elapsed_time(e0, e1)


def _nz_solve_device(N, b, method, maxiter, rtol, restart=30, precond="none", sweeps=0):
    """nz_solve on the device matrix N with CuPy b through ctypes, for when the package's
    bicgstab / gmres refuse device operands. Returns (x, result dict)."""
    import cupy
    ctx = N._ctx_now()
    x = cupy.zeros_like(b)
    opts = _lib.SolveOptions()
    opts.method = method
    opts.rtol = rtol if rtol > 0 else 1e-300
    opts.max_iterations = maxiter
    opts.restart = restart
    opts.precond = {"none": _lib.PRECOND_NONE, "jacobi": _lib.PRECOND_JACOBI,
                    "ilu0": _lib.PRECOND_ILU0}[precond]
    opts.precond_sweeps = sweeps
    res = _lib.SolveResult()
    st = _lib.lib.nz_solve(ctx.handle, N._handle_in(ctx).ptr, b.data.ptr, x.data.ptr,
                           ctypes.byref(opts), ctypes.byref(res))
    if st < 0 and st != _lib.ERR_BREAKDOWN:
        ctx.check(st, "nz_solve")
    out = {k: getattr(res, k) for k, _ in res._fields_ if k != "history"}
    out["status_code"] = st
    return x, out


def _nz_krylov(N, b, name, maxiter_steps, rtol, restart=30, M=None, sweeps=0):
    """nonzero.bicgstab / nonzero.gmres on CuPy operands (GMRES: maxiter_steps Arnoldi steps);
    when the package refuses device operands, nz_solve directly through ctypes. M="ilu0" with
    sweeps > 0: nonzero.ilu0(N, sweeps=sweeps), made inside the call. Returns (x, result dict,
    how)."""
    res = {}
    precond = M
    try:
        if M == "ilu0" and sweeps > 0:
            M = nonzero.ilu0(N, sweeps=sweeps)
        if name == "bicgstab":
            x, _ = nonzero.bicgstab(N, b, rtol=rtol, maxiter=maxiter_steps, M=M, result=res)
        else:
            cycles = max(1, maxiter_steps // restart)
            x, _ = nonzero.gmres(N, b, rtol=rtol, restart=restart, maxiter=cycles, M=M,
                                 result=res)
        return x, res, "nonzero.%s" % name
    except (nonzero.InvalidArgumentError, nonzero.UnsupportedError) as e:
        if "host" not in str(e) and not isinstance(e, nonzero.UnsupportedError):
            raise
    method = _lib.METHOD_BICGSTAB if name == "bicgstab" else _lib.METHOD_GMRES
    x, res = _nz_solve_device(N, b, method, maxiter_steps, rtol, restart, precond or "none",
                              sweeps)
    return x, res, "nz_solve (ctypes)"


def _rel_residual(D, x, b):
    import cupy
    return float(cupy.linalg.norm(b - D @ x) / cupy.linalg.norm(b))


def _solve_spsv(ns, repeat, rows):
    import cupy
    import scipy.sparse as sp
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla
    print("\n== (a) SpSV y = L^-1 b, L = tril of the 7-point Laplacian n^3, f64, median of %d "
          "(CUDA events)" % repeat)
    print("   cupy: cupyx.scipy.sparse.linalg.spsolve_triangular (analysis inside every call); "
          "nz plan: nz_spsv_plan_create once, nz_spsv_execute timed (ctypes); nz one-shot: "
          "nonzero.spsolve_triangular if the package has it, timed as the package runs it "
          "(where it solves on the host, its copies are in the time)")
    w = [16, 9, 9, 7, 12, 12, 12, 12, 8, 11]
    print(row(["matrix", "rows", "nnz", "levels", "cupy us", "nz one-shot us", "nz analysis ms",
               "nz solve us", "ratio", "max diff"], w))
    for n in ns:
        name = "laplace3d-%d L" % n
        L = sp.tril(nonzero.laplace3d(n).toscipy(), format="csr")
        L.sort_indices()
        D = csp.csr_matrix(L)
        N = nonzero.asmatrix(D)
        b = cupy.asarray(np.random.default_rng(1).random(L.shape[0]) + 0.5)
        ref = _cupy_kw(cla.spsolve_triangular, D, b, lower=True)
        t_cupy = Timer(True)(lambda: cla.spsolve_triangular(D, b, lower=True), repeat, warmup=1)
        scale = float(abs(ref).max())
        levels, t_an, t_plan, t_one, diffs, notes = "-", None, None, None, [], []
        one_shot = getattr(nonzero, "spsolve_triangular", None)
        if one_shot is None:
            notes.append("nonzero.spsolve_triangular not available")
        else:
            try:
                y1 = one_shot(N, b, lower=True, unit_diagonal=False)
                diffs.append(float(abs(y1 - ref).max()) / scale)
                t_one = Timer(True)(lambda: one_shot(N, b, lower=True, unit_diagonal=False),
                                    repeat, warmup=1)
            except (nonzero.NonzeroError, TypeError) as e:
                notes.append("nonzero.spsolve_triangular: %s" % e)
        plan = _SpsvPlan(N, lower=True)
        if plan.error:
            notes.append("nz plan not available: %s" % plan.error)
        else:
            y = cupy.empty_like(b)
            plan(b, y)
            diffs.append(float(abs(y - ref).max()) / scale)
            levels, t_an = plan.info.levels, plan.info.analysis_seconds
            t_plan = Timer(True)(lambda: plan(b, y), repeat, warmup=1)
        plan.close()
        best = min([t for t in (t_plan, t_one) if t is not None], default=None)
        fmt = lambda t, k=1e6, f="%.1f": "-" if t is None else f % (t * k)
        diff = max(diffs) if diffs else None
        print(row([name, L.shape[0], L.nnz, levels, fmt(t_cupy), fmt(t_one),
                   fmt(t_an, 1e3, "%.2f"), fmt(t_plan),
                   "-" if best is None else "%.2f" % (t_cupy / best),
                   "-" if diff is None else "%.1e%s" % (diff, "" if diff <= 1e-8 else " FAIL")],
                  w))
        for note in notes:
            print("   %s: %s" % (name, note))
        rows.append(("spsv", name, t_cupy, best, None if best is None else t_cupy / best))


def _solve_per_iteration(n, iters, gmres_cycles, repeat, rows):
    import cupy
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla
    restart = 30
    print("\n== (b) Krylov per iteration, convdiff3d %d^3 (Peclet 1) f64, no preconditioner, "
          "fixed work (rtol = atol = 0), CUDA events around the call / iterations, median of %d"
          % (n, repeat))
    S = nonzero.convdiff3d(n).toscipy()
    D = csp.csr_matrix(S)
    N = nonzero.asmatrix(D)
    b = cupy.ones(S.shape[0])
    spmv = Timer(True)(lambda: D @ b, 20)
    p = N.plan(reuse=True)
    y = cupy.empty_like(b)
    nz_spmv = Timer(True)(lambda: p(b, y), 20)
    print("   one SpMV: cupy %.1f us, nonzero %.1f us (%s)"
          % (spmv * 1e6, nz_spmv * 1e6, p.info()["alg"]))
    w = [12, 11, 20, 7, 10, 10, 13, 14]
    print(row(["method", "library", "call", "iter", "us/iter", "iter/SpMV", "rel resid",
               "status"], w))
    cases = [("bicgstab", iters), ("gmres(30)", gmres_cycles * restart)]
    for label, steps in cases:
        kind = label.split("(")[0]
        # CuPy
        fn = getattr(cla, kind, None)
        if fn is None:
            print(row([label, "cupy", "-", "-", "-", "-", "-", "not in this CuPy"], w))
            t_c = None
        else:
            count = [0]

            def cb(*_):
                count[0] += 1

            if kind == "bicgstab":
                run = lambda: _cupy_kw(fn, D, b, rtol=0.0, atol=0.0, maxiter=steps, callback=cb)
            else:
                run = lambda: _cupy_kw(fn, D, b, rtol=0.0, atol=0.0, restart=restart,
                                       maxiter=steps, callback=cb, callback_type="pr_norm")
            run()
            times = []
            for _ in range(repeat):
                count[0] = 0
                (x, info), ms = _events_ms(run)
                times.append(ms)
            done = count[0] * (restart if kind == "gmres" else 1)
            t_c = statistics.median(times) * 1e3 / max(done, 1)
            print(row([label, "cupy", "cupyx %s" % kind, done, "%.1f" % t_c,
                       "%.2f" % (t_c / (spmv * 1e6)), "%.2e" % _rel_residual(D, x, b),
                       "info %d" % info], w))
        # Nonzero
        try:
            _nz_krylov(N, b, kind, steps, 0.0, restart)  # warm-up
            times, per_it = [], []
            for _ in range(repeat):
                (x, res, how), ms = _events_ms(lambda: _nz_krylov(N, b, kind, steps, 0.0,
                                                                  restart))
                times.append(ms / max(res["iterations"], 1))
                per_it.append(res["solve_seconds"] / max(res["iterations"], 1))
            t_n = statistics.median(times) * 1e3
            print(row([label, "nonzero", how, res["iterations"], "%.1f" % t_n,
                       "%.2f" % (t_n / (nz_spmv * 1e6)), "%.2e" % _rel_residual(D, x, b),
                       "%s (C: %.1f us/iter)" % (res.get("status", res.get("status_code")),
                                                 statistics.median(per_it) * 1e6)], w))
            if t_c is not None:
                print("   %s: cupy / nonzero per iteration = %.2f" % (label, t_c / t_n))
                rows.append(("krylov", label, t_c, t_n, t_c / t_n))
        except nonzero.NonzeroError as e:
            print(row([label, "nonzero", "-", "-", "-", "-", "-", "not available"], w))
            print("   %s: %s" % (label, e))
    return D, N, b


def _solve_to_tolerance(D, N, b, rows, maxiter=10000, rtol=1e-8):
    import cupy
    import cupyx.scipy.sparse.linalg as cla
    n = D.shape[0]
    print("\n== (c) time to rtol %.0e (same matrix, b = ones, x0 = 0), one run after a short "
          "warm-up, CUDA events" % rtol)
    dinv = 1.0 / D.diagonal()
    jacobi = cla.LinearOperator((n, n), matvec=lambda r: dinv * r.ravel(), dtype=D.dtype)
    w = [24, 30, 10, 7, 12, 16]
    print(row(["library", "solver", "ms", "iter", "rel resid", "status"], w))
    best_cupy = None
    for kind in ("bicgstab", "gmres"):
        fn = getattr(cla, kind, None)
        if fn is None:
            print(row(["cupy", kind, "-", "-", "-", "not in this CuPy"], w))
            continue
        count = [0]

        def cb(*_):
            count[0] += 1

        def run(it):
            count[0] = 0
            if kind == "bicgstab":
                return _cupy_kw(fn, D, b, rtol=rtol, atol=0.0, maxiter=it, M=jacobi, callback=cb)
            return _cupy_kw(fn, D, b, rtol=rtol, atol=0.0, restart=30, maxiter=it, M=jacobi,
                            callback=cb, callback_type="pr_norm")

        run(2 if kind == "bicgstab" else 60)
        (x, info), ms = _events_ms(lambda: run(maxiter if kind == "bicgstab" else 30 * maxiter))
        its = count[0] * (30 if kind == "gmres" else 1)
        rr = _rel_residual(D, x, b)
        label = "%s + jacobi M" % ("gmres(30)" if kind == "gmres" else kind)
        print(row(["cupy %s" % cupy.__version__, label, "%.1f" % ms, its, "%.2e" % rr,
                   "info %d" % info], w))
        if info == 0 and rr <= 1.01 * rtol and (best_cupy is None or ms < best_cupy[0]):
            best_cupy = (ms, label)
    best_nz = None
    for kind, sweeps in (("bicgstab", 0), ("gmres", 0), ("bicgstab", 2), ("gmres", 2),
                         ("bicgstab", 3), ("gmres", 3)):
        label = "%s + ilu0%s" % ("gmres(30)" if kind == "gmres" else kind,
                                 " (%d sweeps)" % sweeps if sweeps else "")
        try:
            _nz_krylov(N, b, kind, 2 if kind == "bicgstab" else 30, rtol, M="ilu0",
                       sweeps=sweeps)
            (x, res, how), ms = _events_ms(lambda: _nz_krylov(N, b, kind, maxiter, rtol,
                                                              M="ilu0", sweeps=sweeps))
        except nonzero.NonzeroError as e:
            print(row(["nonzero", label, "-", "-", "-", "not available"], w))
            print("   %s: %s" % (label, e))
            continue
        rr = _rel_residual(D, x, b)
        status = res.get("status", res.get("status_code"))
        print(row(["nonzero (%s)" % how.split(" ")[0], label, "%.1f" % ms, res["iterations"],
                   "%.2e" % rr, "%s, setup %.1f ms" % (status, res["setup_seconds"] * 1e3)], w))
        if rr <= 1.01 * rtol and (best_nz is None or ms < best_nz[0]):
            best_nz = (ms, label)
    if best_cupy and best_nz:
        print("   fastest: cupy %s %.1f ms, nonzero %s %.1f ms: cupy / nonzero = %.2f"
              % (best_cupy[1], best_cupy[0], best_nz[1], best_nz[0], best_cupy[0] / best_nz[0]))
        rows.append(("tts", "convdiff3d", best_cupy[0], best_nz[0], best_cupy[0] / best_nz[0]))
    else:
        print("   no comparison: %s" % ("no CuPy solver reached the tolerance" if not best_cupy
                                         else "no nonzero solver reached the tolerance"))


def bench_solve(args):
    """--solve: SpSV, Krylov per iteration and time to tolerance, against CuPy on one GPU."""
    try:
        import cupy
        import cupyx.scipy.sparse.linalg  # noqa: F401
        if cupy.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError("CuPy sees no device")
        if nonzero.device_count() == 0:
            raise RuntimeError("libnonzero was built without CUDA")
    except Exception as e:  # noqa: BLE001 - any import or driver failure means "not here"
        print("nonzero.bench --solve: needs CuPy and a CUDA device (%s)" % e, file=sys.stderr)
        return 1
    dev = cupy.cuda.Device()
    name = cupy.cuda.runtime.getDeviceProperties(dev.id)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    print("nonzero %s (%s), CuPy %s, numpy %s" % (nonzero.__version__, nonzero.library_path,
                                                  cupy.__version__, np.__version__))
    print("device %d: %s; %s" % (dev.id, name, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    rows = []
    t0 = time.time()
    with cupy.cuda.Stream(non_blocking=True):
        _solve_spsv([128] if args.quick else [128, 200], args.repeat, rows)
        n = 64 if args.quick else 128
        D, N, b = _solve_per_iteration(n, 50, 2, min(args.repeat, 5), rows)
        _solve_to_tolerance(D, N, b, rows)
    print("\n== summary (ratio = cupy time / nonzero time; > 1: nonzero faster)")
    for kind, label, t_c, t_n, ratio in rows:
        if ratio is not None:
            print("  %-7s %-18s %.2f" % (kind, label, ratio))
    print("total %.0f s" % (time.time() - t0))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m nonzero.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--size", choices=sorted(SUITES), default=None,
                    help="matrix suite (default: medium on the GPU, small on the CPU)")
    ap.add_argument("--only", default="spmv,spgemm,cg,overhead")
    ap.add_argument("--cg-n", type=int, default=None, help="CG grid (default 200 GPU, 48 CPU)")
    ap.add_argument("--cg-iters", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--cpu", action="store_true", help="compare with SciPy on the CPU even with a GPU")
    ap.add_argument("--solve", action="store_true",
                    help="instead: triangular solves and Krylov solvers against CuPy's (GPU)")
    ap.add_argument("--quick", action="store_true", help="--solve: smaller problems")
    args = ap.parse_args(argv)
    if args.solve:
        return bench_solve(args)
    gpu, why = False, ""
    if not args.cpu:
        try:
            import cupy
            import cupyx.scipy.sparse  # noqa: F401
            if cupy.cuda.runtime.getDeviceCount() == 0:
                why = "CuPy sees no device"
            elif nonzero.device_count() == 0:
                why = "libnonzero was built without CUDA"
            else:
                gpu = True
        except Exception as e:
            why = "CuPy unavailable (%s)" % e
    only = set(args.only.split(","))
    print("nonzero %s (%s), numpy %s" % (nonzero.__version__, nonzero.library_path, np.__version__))
    out = []
    if gpu:
        import cupy
        dev = cupy.cuda.Device()
        name = cupy.cuda.runtime.getDeviceProperties(dev.id)["name"]
        name = name.decode() if isinstance(name, bytes) else name
        print("GPU comparison vs CuPy %s on device %d: %s; %s"
              % (cupy.__version__, dev.id, name, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
        stream = cupy.cuda.Stream(non_blocking=True)
        ctxm = stream
    else:
        import contextlib
        import scipy
        print("CPU-ONLY comparison vs SciPy %s (%s)" % (scipy.__version__, why or "--cpu"))
        ctxm = contextlib.nullcontext()
        if args.size is None or args.cg_n is None:
            print("(CPU: small suite and a 48^3 CG unless --size / --cg-n are given)")
    args.size = args.size or ("medium" if gpu else "small")
    args.cg_n = args.cg_n or (200 if gpu else 48)
    timer = Timer(gpu)
    t0 = time.time()
    with ctxm:
        if "overhead" in only:
            bench_overhead(gpu, out)
        if "spmv" in only:
            bench_spmv(SUITES[args.size], gpu, timer, args.repeat, out)
        if "spgemm" in only:
            bench_spgemm(SPGEMM[args.size], gpu, timer, max(3, args.repeat // 6), out)
        if "cg" in only:
            bench_cg(args.cg_n, args.cg_iters, gpu, timer, 3, out)
    print("\n== summary (ratio = %s time / nonzero time; > 1: nonzero faster)"
          % ("cupy" if gpu else "scipy"))
    for kind in ("spmv", "spgemm", "cg"):
        rs = [r[4] for r in out if r[0] == kind]
        if rs:
            print("  %-7s min %.2f  geomean %.2f  max %.2f  (%d matrices)"
                  % (kind, min(rs), float(np.exp(np.mean(np.log(rs)))), max(rs), len(rs)))
    for r in out:
        if r[0] == "overhead":
            print("  overhead of plan(x, y) over the C call: %.2f us" % (r[2] * 1e6))
    print("total %.0f s" % (time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
