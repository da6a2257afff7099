"""bench.py: Nonzero against CuPy (one process, one GPU) or SciPy (CPU-only), on the same matrices.

    python3 -m nonzero.bench [--size small|medium|large] [--only spmv,spgemm,cg,overhead]
                             [--cg-n 200] [--cg-iters 200] [--repeat 30] [--cpu]

SpMV `A @ x`, SpGEMM `A @ B`, CG with a fixed iteration count (cupyx.scipy.sparse.linalg.cg or
scipy.sparse.linalg.cg vs nonzero.cg) on the generated matrices of `nz bench` (medium suite by
default; the CG matrix is the 3-D Laplacian cg-n^3, f64). GPU timings: CUDA events on one
non-blocking CuPy stream that both libraries use, after warm-up, median of --repeat runs.
Also the Python-call overhead: a plan call from Python against the bare ctypes call of
nz_spmv_execute with the same arguments, on a tiny matrix (launch-bound).
"""
import argparse
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


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m nonzero.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--size", choices=sorted(SUITES), default=None,
                    help="matrix suite (default: medium on the GPU, small on the CPU)")
    ap.add_argument("--only", default="spmv,spgemm,cg,overhead")
    ap.add_argument("--cg-n", type=int, default=None, help="CG grid (default 200 GPU, 48 CPU)")
    ap.add_argument("--cg-iters", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--cpu", action="store_true", help="compare with SciPy on the CPU even with a GPU")
    args = ap.parse_args(argv)
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
