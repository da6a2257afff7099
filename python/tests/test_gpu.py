"""test_gpu.py: the binding on the GPU with CuPy, against SciPy; skips without CuPy or a device."""
import gc

import numpy as np
import pytest
import scipy.sparse as sp

import nonzero

cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
csp = pytest.importorskip("cupyx.scipy.sparse", reason="cupyx.scipy.sparse is not available")
try:
    _ndev = cupy.cuda.runtime.getDeviceCount()
except Exception:  # no driver
    _ndev = 0
if _ndev == 0:
    pytest.skip("no CUDA device visible to CuPy", allow_module_level=True)
if nonzero.device_count() == 0:
    pytest.skip("libnonzero was built without CUDA (nz_device_count() == 0)",
                allow_module_level=True)

DTYPES = [np.float32, np.float64]


def rand(rng, m, n, density, dtype):
    A = sp.random(m, n, density, format="csr", random_state=rng).astype(dtype)
    if m > 3:
        A = A.tolil()
        A[2, :] = 0
        A = A.tocsr()
    return A


def close(a, b, t):
    a = cupy.asnumpy(a) if isinstance(a, cupy.ndarray) else a
    scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
    assert a.shape == b.shape
    assert np.abs(a - b).max(initial=0) <= t * scale


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0, 0), (5, 0), (0, 5), (1, 1), (37, 21), (300, 500)])
def test_cupy_spmv_spmm(rng, dtype, shape):
    m, n = shape
    S = rand(rng, m, n, 0.1, dtype)
    D = csp.csr_matrix(S)
    N = nonzero.asmatrix(D)
    assert N.on_device and N.shape == S.shape
    t = 64 * np.finfo(dtype).eps * max(1, n)
    x = rng.random(n).astype(dtype)
    y = N @ cupy.asarray(x)
    assert isinstance(y, cupy.ndarray) and y.dtype == dtype
    close(y, S @ x, t)
    xt = rng.random(m).astype(dtype)
    close(N.T @ cupy.asarray(xt), S.T @ xt, 64 * np.finfo(dtype).eps * max(1, m))
    for k in (1, 4, 65):
        X = rng.random((n, k)).astype(dtype)
        close(N @ cupy.asarray(X), S @ X, t)
        close(N @ cupy.asfortranarray(cupy.asarray(X)), S @ X, t)
    # NumPy in, NumPy out on a device matrix
    assert isinstance(N @ x, np.ndarray)


def test_zero_copy_device(rng):
    S = rand(rng, 50, 50, 0.1, np.float64)
    D = csp.csr_matrix(S)
    N = nonzero.csr_matrix(D, copy=False)
    D.data *= 2
    close(N @ cupy.ones(50), 2 * (S @ np.ones(50)), 1e-13)


def test_scipy_to_device(rng):
    S = rand(rng, 40, 30, 0.2, np.float32)
    N = nonzero.csr_matrix(S, device=True)
    assert N.on_device
    close(N @ cupy.ones(30, np.float32), S @ np.ones(30, np.float32), 1e-5)
    assert N.info()["location"] == "device"


@pytest.mark.parametrize("copy", [None, True])
def test_non_canonical_device(copy):
    data = cupy.asarray([1.0, 2.0, 4.0, 5.0, 6.0, 7.0])
    indices = cupy.asarray([3, 1, 3, 2, 2, 0], dtype=cupy.int32)
    indptr = cupy.asarray([0, 3, 4, 6], dtype=cupy.int32)
    S = sp.csr_matrix((cupy.asnumpy(data), cupy.asnumpy(indices), cupy.asnumpy(indptr)), shape=(3, 4))
    for validate in (True, False):
        N = nonzero.csr_matrix((data, indices, indptr), shape=(3, 4), copy=copy, validate=validate)
        x = np.array([1.0, 10.0, 100.0, 1000.0])
        close(N @ cupy.asarray(x), S @ x, 1e-14)
    with pytest.raises(ValueError):
        nonzero.csr_matrix((data, indices, indptr), shape=(3, 4), copy=False)


def test_wrong_shapes_device(rng):
    N = nonzero.asmatrix(csp.csr_matrix(rand(rng, 6, 4, 0.5, np.float64)))
    with pytest.raises(ValueError):
        N @ cupy.ones(5)
    with pytest.raises(ValueError):
        N.plan()(cupy.ones(4), cupy.ones(7))


@pytest.mark.parametrize("dtype", DTYPES)
def test_spgemm_device(rng, dtype):
    A = rand(rng, 200, 150, 0.05, dtype)
    B = rand(rng, 150, 170, 0.05, dtype)
    C = nonzero.spgemm(csp.csr_matrix(A), csp.csr_matrix(B))
    assert isinstance(C, csp.csr_matrix) and C.shape == (200, 170)
    close(C.toarray(), (A @ B).toarray(), 64 * np.finfo(dtype).eps)
    H = nonzero.spgemm(csp.csr_matrix(A), csp.csr_matrix(B), out="host")
    assert isinstance(H, sp.csr_matrix)
    close(H.toarray(), (A @ B).toarray(), 64 * np.finfo(dtype).eps)
    N = nonzero.asmatrix(csp.csr_matrix(A))
    close((N @ N.T).toarray(), (A @ A.T).toarray(), 64 * np.finfo(dtype).eps * 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_spgemm_plan_spgeam_rap_device(rng, dtype):
    """Device plans, sums and Galerkin products on CuPy matrices: bitwise the host's results."""
    A = rand(rng, 200, 150, 0.05, dtype)
    B = rand(rng, 150, 170, 0.05, dtype)
    dA, dB = csp.csr_matrix(A), csp.csr_matrix(B)
    P = nonzero.spgemm_plan(dA, dB)
    C = P()
    assert isinstance(C, csp.csr_matrix) and C.shape == (200, 170)
    H = nonzero.spgemm_plan(A, B)()
    assert np.array_equal(cupy.asnumpy(C.indices), H.indices)
    assert cupy.asnumpy(C.data).tobytes() == H.data.tobytes()
    A2 = A.copy()
    A2.data = rng.standard_normal(A2.nnz).astype(dtype)
    C2 = P(csp.csr_matrix(A2), dB)
    F = nonzero.spgemm(A2, B, alg="cpu")
    assert cupy.asnumpy(C2.data).tobytes() == F.data.tobytes()
    S = rand(rng, 200, 150, 0.03, dtype)
    with pytest.raises(nonzero.InvalidArgumentError):
        P(csp.csr_matrix(S), dB)
    Q = rand(rng, 200, 150, 0.08, dtype)
    G = nonzero.spgeam(dA, csp.csr_matrix(Q), 2.0, -1.0)
    Gh = nonzero.spgeam(A, Q, 2.0, -1.0)
    assert isinstance(G, csp.csr_matrix)
    assert np.array_equal(cupy.asnumpy(G.indices), Gh.indices)
    assert cupy.asnumpy(G.data).tobytes() == Gh.data.tobytes()
    L = nonzero.laplace2d(12, dtype=dtype).toscipy()
    Pr = rand(rng, 144, 30, 0.08, dtype)
    R = nonzero.rap(csp.csr_matrix(L), csp.csr_matrix(Pr))
    Rh = nonzero.rap(L, Pr)
    assert cupy.asnumpy(R.data).tobytes() == Rh.data.tobytes()
    close(Rh.toarray(), (Pr.T @ L @ Pr).toarray(), 256 * np.finfo(dtype).eps)


def test_spgemm_host_operands_gpu_panels(rng):
    # a budget that holds A (twice, ~170 KB) and some rows of C at a time (far smaller ones are
    # refused cleanly: a panel must hold at least one row of C), so C comes back in panels
    A = rand(rng, 800, 800, 0.01, np.float64)
    C, info = nonzero.spgemm(A, A, alg="hash", gpu_memory_limit=400000, return_info=True)
    assert isinstance(C, sp.csr_matrix)
    assert info["panels"] > 1, info
    close(C.toarray(), (A @ A).toarray(), 1e-12)
    with pytest.raises(nonzero.NonzeroError):
        nonzero.spgemm(A, A, alg="hash", gpu_memory_limit=1 << 12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M", [None, "jacobi"])
def test_cg_device(dtype, M):
    A = nonzero.laplace3d(12, dtype=dtype)
    S = A.toscipy()
    b = np.ones(S.shape[0], dtype)
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    x, info = nonzero.cg(csp.csr_matrix(S), cupy.asarray(b), rtol=rtol, M=M)
    assert info == 0 and isinstance(x, cupy.ndarray)
    assert np.linalg.norm(S @ cupy.asnumpy(x) - b) <= 10 * rtol * np.linalg.norm(b)
    x, info = nonzero.cg(A.to_device(), cupy.asarray(b), rtol=1e-30, maxiter=5)
    assert info == 5


def test_cupy_solver_through_linear_operator():
    from cupyx.scipy.sparse.linalg import cg as cupy_cg
    A = nonzero.laplace2d(20, device=True)
    b = cupy.ones(A.shape[0])
    try:
        x, info = cupy_cg(A.aslinearoperator(), b, tol=1e-10)
    except TypeError:
        x, info = cupy_cg(A.aslinearoperator(), b, rtol=1e-10)
    assert info == 0
    S = A.toscipy()
    assert np.linalg.norm(S @ cupy.asnumpy(x) - 1) < 1e-8 * np.sqrt(S.shape[0])


def test_stream_ordering():
    """Work on a CuPy stream: Nonzero's SpMV must see the x written just before on that stream."""
    S = sp.random(20000, 20000, 1e-3, format="csr", random_state=3)
    N = nonzero.asmatrix(csp.csr_matrix(S))
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x = cupy.zeros(20000)
        for _ in range(20):
            x += 1.0  # queued work on s
        y = N @ x
        ref = N @ cupy.ones(20000) * 20
    s.synchronize()
    close(y, cupy.asnumpy(ref), 1e-12)


def test_contexts_cached():
    from nonzero import _context
    assert _context.device_context() is _context.device_context()


def test_no_device_leak_10k_cycles(rng):
    S = rand(rng, 1000, 1000, 0.01, np.float64)
    D = csp.csr_matrix(S)
    x = cupy.ones(1000)
    pool = cupy.get_default_memory_pool()

    def cycle(n):
        for _ in range(n):
            N = nonzero.csr_matrix(D, validate=False)
            y = N @ x
            del N, y

    cycle(200)
    gc.collect()
    cupy.cuda.runtime.deviceSynchronize()
    ctx = nonzero._context.device_context()
    before, free_before = ctx.alloc_stats(), cupy.cuda.runtime.memGetInfo()[0]
    pool_before = pool.used_bytes()
    cycle(10000)
    gc.collect()
    cupy.cuda.runtime.deviceSynchronize()
    after, free_after = ctx.alloc_stats(), cupy.cuda.runtime.memGetInfo()[0]
    assert after["live_blocks"] == before["live_blocks"]
    assert after["live_bytes"] == before["live_bytes"]
    assert pool.used_bytes() - pool_before < (1 << 20)
    assert free_before - free_after < (64 << 20)


def test_device_promotion_complex_and_borrowing(rng):
    """issue 36 on the device: NumPy promotion (float32 A @ float64 x is float64), complex x from
    two real products, and a borrowed cupyx matrix whose arrays were replaced raises."""
    import copy
    import pickle
    S = rand(rng, 40, 30, 0.2, np.float32)
    N = nonzero.csr_matrix(S, device=True)
    x = rng.random(30)
    y = N @ cupy.asarray(x)
    assert y.dtype == np.float64
    close(y, S.astype(np.float64) @ x, 1e-12)
    xc = x + 1j * rng.random(30)
    yc = N @ cupy.asarray(xc)
    assert yc.dtype == np.complex128
    close(yc, S.astype(np.float64) @ xc, 1e-12)
    for M in (pickle.loads(pickle.dumps(N)), copy.deepcopy(N)):
        assert M.on_device
        close(M @ cupy.asarray(x, np.float32), S @ x.astype(np.float32), 1e-5)
    D = csp.csr_matrix(rand(rng, 30, 30, 0.2, np.float64))
    B = nonzero.asmatrix(D)
    B @ cupy.ones(30)
    D.data[::2] = 0
    D.eliminate_zeros()
    with pytest.raises(nonzero.InvalidMatrixError, match="changed"):
        B @ cupy.ones(30)


# ---- nz_solve on the GPU: BiCGSTAB / GMRES / MINRES / CG, callbacks, preconditioners -----------

def _problem(kind):
    """(nonzero matrix, SciPy matrix, b): 2-D convection-diffusion or the 5-point Laplacian."""
    A = nonzero.convdiff2d(24, peclet=2.0) if kind == "convdiff" else nonzero.laplace2d(24)
    S = A.toscipy()
    b = np.random.default_rng(7).uniform(-1, 1, S.shape[0])
    return A, S, b


def _at_tolerance(S, b, x, rtol):
    xs = cupy.asnumpy(x) if isinstance(x, cupy.ndarray) else x
    return np.linalg.norm(b - S @ xs) <= rtol * np.linalg.norm(b) * 1.001


KRYLOV = [("bicgstab", "convdiff"), ("gmres", "convdiff"), ("minres", "laplace"),
          ("cg", "laplace")]


@pytest.mark.parametrize("solver,kind", KRYLOV)
@pytest.mark.parametrize("where", ["cupy_matrix", "host_matrix"])
def test_krylov_device_matches_host(solver, kind, where):
    """A device solve (a cupyx matrix, or a host matrix with a CuPy b, moved to the device as
    nonzero.cg does) converges at the true tolerance in the host's iterations within 2, x a
    CuPy array; a device matrix with a NumPy b gives a NumPy x."""
    A, S, b = _problem(kind)
    rtol = 1e-8
    solve = getattr(nonzero, solver)
    host, dev = {}, {}
    xh, info = solve(S, b, rtol=rtol, result=host)
    assert info == 0 and _at_tolerance(S, b, xh, rtol)
    Ad = csp.csr_matrix(S) if where == "cupy_matrix" else S
    x, info = solve(Ad, cupy.asarray(b), rtol=rtol, result=dev)
    assert info == 0 and isinstance(x, cupy.ndarray) and x.dtype == np.float64
    assert _at_tolerance(S, b, x, rtol), dev
    assert abs(dev["iterations"] - host["iterations"]) <= 2, (dev["iterations"],
                                                             host["iterations"])
    x2, info = solve(csp.csr_matrix(S), b, rtol=rtol)
    assert info == 0 and isinstance(x2, np.ndarray) and _at_tolerance(S, b, x2, rtol)


@pytest.mark.parametrize("solver,kind", [("cg", "laplace"), ("bicgstab", "convdiff"),
                                         ("minres", "laplace")])
def test_device_callbacks_see_cupy_iterates(solver, kind):
    """callback(xk) on the GPU: once per iteration, a CuPy view of the device iterate (the last
    one the returned x), the host's iteration count within 2; an exception stops the solve at
    that iteration and propagates."""
    A, S, b = _problem(kind)
    n = S.shape[0]
    D = csp.csr_matrix(S)
    solve = getattr(nonzero, solver)
    seen, res, host = [], {}, {}

    def cb(xk):
        assert isinstance(xk, cupy.ndarray) and xk.shape == (n,) and xk.dtype == np.float64
        seen.append(xk.copy())
    x, info = solve(D, cupy.asarray(b), rtol=1e-8, callback=cb, result=res)
    assert info == 0 and _at_tolerance(S, b, x, 1e-8)
    assert len(seen) == res["iterations"]
    assert bool(cupy.array_equal(seen[-1], x))
    solve(S, b, rtol=1e-8, callback=lambda xk: None, result=host)
    assert abs(res["iterations"] - host["iterations"]) <= 2
    calls = []

    def stop(xk):
        calls.append(float(cupy.linalg.norm(xk)))
        if len(calls) == 3:
            raise RuntimeError("stop at 3")
    with pytest.raises(RuntimeError, match="stop at 3"):
        solve(D, cupy.asarray(b), rtol=1e-8, callback=stop, result=res)
    assert len(calls) == 3 and res["iterations"] == 3 and res["reason"] == "monitor_stopped"


def test_device_gmres_callback_norms():
    A, S, b = _problem("convdiff")
    norms, res = [], {}
    x, info = nonzero.gmres(csp.csr_matrix(S), cupy.asarray(b), rtol=1e-8, restart=10,
                            callback=norms.append, result=res)
    assert info == 0 and _at_tolerance(S, b, x, 1e-8)
    assert len(norms) == res["iterations"] and all(isinstance(r, float) for r in norms)
    assert norms[-1] <= 1.5e-8 * np.linalg.norm(b)


@pytest.mark.parametrize("solver,kind", [("cg", "laplace"), ("bicgstab", "convdiff"),
                                         ("gmres", "convdiff")])
def test_device_preconditioners(solver, kind):
    """M on the GPU: 'jacobi', a device Jacobi object and a Python callable on CuPy arrays give
    the host's Jacobi iterations within 2, at the true tolerance."""
    A, S, b = _problem(kind)
    D = csp.csr_matrix(S)
    solve = getattr(nonzero, solver)
    host = {}
    solve(S, b, rtol=1e-8, M="jacobi", result=host)
    d = cupy.asarray(S.diagonal())
    kinds = []

    def jac(r):
        kinds.append(type(r))
        return r / d
    for M in ("jacobi", nonzero.jacobi(D), jac):
        res = {}
        x, info = solve(D, cupy.asarray(b), rtol=1e-8, M=M, result=res)
        assert info == 0 and _at_tolerance(S, b, x, 1e-8), (M, res)
        assert abs(res["iterations"] - host["iterations"]) <= 2, (M, res["iterations"],
                                                                 host["iterations"])
    assert kinds and set(kinds) == {cupy.ndarray}
    with pytest.raises(nonzero.InvalidArgumentError, match="CPU"):
        solve(D, cupy.asarray(b), M=nonzero.jacobi(S))


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_spsolve_triangular_device(lower, unit):
    """nz_spsv on the GPU against SciPy's spsolve_triangular: a cupyx T with CuPy b (one and
    three columns), a host T with a CuPy b, a device T with a NumPy b; a zero diagonal raises
    LinAlgError."""
    import scipy.sparse.linalg as spla
    rng = np.random.default_rng(3)
    n = 300
    S = (sp.random(n, n, 0.02, format="csr", random_state=rng) +
         sp.diags(rng.uniform(1, 2, n))).tocsr()
    T = (sp.tril if lower else sp.triu)(S, format="csr")
    # the reference solves with the unit diagonal written out (SciPy 1.10's unit_diagonal reads
    # the last entry of a row as its diagonal)
    R = (T - sp.diags(T.diagonal()) + sp.identity(n)).tocsr() if unit else T
    b = rng.uniform(-1, 1, n)
    B = rng.uniform(-1, 1, (n, 3))
    for rhs in (b, B):
        ref = spla.spsolve_triangular(R, rhs, lower=lower)
        x = nonzero.spsolve_triangular(csp.csr_matrix(S), cupy.asarray(rhs), lower=lower,
                                       unit_diagonal=unit)
        assert isinstance(x, cupy.ndarray) and x.shape == rhs.shape and x.dtype == np.float64
        close(x, ref, 1e-10)
    ref = spla.spsolve_triangular(R, b, lower=lower)
    x = nonzero.spsolve_triangular(T, cupy.asarray(b), lower=lower, unit_diagonal=unit)
    assert isinstance(x, cupy.ndarray)
    close(x, ref, 1e-10)
    x = nonzero.spsolve_triangular(csp.csr_matrix(T), b, lower=lower, unit_diagonal=unit)
    assert isinstance(x, np.ndarray)
    close(x, ref, 1e-10)
    if not unit:
        Z = T.tolil()
        Z[7, 7] = 0
        Z = Z.tocsr()
        Z.eliminate_zeros()
        with pytest.raises(np.linalg.LinAlgError, match="singular"):
            nonzero.spsolve_triangular(csp.csr_matrix(Z), cupy.asarray(b), lower=lower)
