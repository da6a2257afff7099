#!/usr/bin/env python3
"""cupy_cg.py: CuPy's cg on the 7-point Laplacian n^3 in double, b = ones, x0 = 0, a fixed
iteration count (rtol = atol = 0), timed with CUDA events after one warm-up solve, median of
`repeat` solves. `nz bench --cg` runs this in the same run to compare on the same device.

usage: cupy_cg.py N ITERATIONS [REPEAT]
prints one line: "cupy_cg n=N iterations=K us_per_iteration=T device=NAME"
exit 0 measured, 3 CuPy or a GPU is not available (the reason on stderr), 1 an error.
"""
import statistics
import sys


def laplace3d(n):
    import numpy as np
    import scipy.sparse as sp
    one = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")
    eye = sp.identity(n, format="csr")
    A = (sp.kron(sp.kron(one, eye), eye) + sp.kron(sp.kron(eye, one), eye) +
         sp.kron(sp.kron(eye, eye), one))
    A = A.tocsr()
    A.sort_indices()
    return A


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 1
    n, iters = int(argv[1]), int(argv[2])
    repeat = int(argv[3]) if len(argv) > 3 else 5
    try:
        import cupy
        import cupyx.scipy.sparse as csp
        import cupyx.scipy.sparse.linalg as cla
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
    except Exception as e:  # noqa: BLE001 - any import or driver failure means "not here"
        print("cupy_cg: CuPy not available: %s" % e, file=sys.stderr)
        return 3
    D = csp.csr_matrix(laplace3d(n))
    b = cupy.ones(D.shape[0])

    def solve():
        try:
            return cla.cg(D, b, tol=0.0, atol=0.0, maxiter=iters)
        except TypeError:  # newer CuPy: rtol
            return cla.cg(D, b, rtol=0.0, atol=0.0, maxiter=iters)

    solve()
    stream = cupy.cuda.get_current_stream()
    e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(repeat):
        e0.record(stream)
        solve()
        e1.record(stream)
        e1.synchronize()
        times.append(cupy.cuda.get_elapsed_time(e0, e1) * 1e-3)
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    print("cupy_cg n=%d iterations=%d us_per_iteration=%.1f device=%s"
          % (n, iters, statistics.median(times) / iters * 1e6, name.replace(" ", "_")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
