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
