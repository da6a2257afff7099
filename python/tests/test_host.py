"""test_host.py: the Python binding on the CPU against SciPy."""
import gc
import glob
import os

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import nonzero
from conftest import DATA

DTYPES = [np.float32, np.float64]
INDEX = [np.int32, np.int64]


def tol(dtype, A):
    row = max(1, int(np.diff(A.indptr).max())) if A.shape[0] else 1
    return 8 * row * np.finfo(dtype).eps


def rand_csr(rng, m, n, density, dtype, index, empty_rows=True):
    A = sp.random(m, n, density, format="csr", dtype=np.float64, random_state=rng).astype(dtype)
    if empty_rows and m > 3:
        A = A.tolil()
        A[1, :] = 0
        A[m - 1, :] = 0
        A = A.tocsr()
    A.indices = A.indices.astype(np.int32)
    A.indptr = A.indptr.astype(index)
    return A


def close(a, b, t):
    scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
    assert a.shape == b.shape
    assert np.abs(a - b).max(initial=0) <= t * scale, (np.abs(a - b).max(), t)


SHAPES = [(0, 0), (0, 5), (5, 0), (1, 1), (7, 3), (3, 9), (50, 50), (200, 120)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index", INDEX)
@pytest.mark.parametrize("shape", SHAPES)
def test_spmv_spmm_against_scipy(rng, dtype, index, shape):
    m, n = shape
    A = rand_csr(rng, m, n, 0.2, dtype, index)
    N = nonzero.csr_matrix(A)
    assert N.shape == A.shape and N.nnz == A.nnz and N.dtype == dtype
    t = tol(dtype, A) * 4
    x = rng.random(n).astype(dtype)
    y = N @ x
    assert isinstance(y, np.ndarray) and y.dtype == dtype
    close(y, A @ x, t)
    xt = rng.random(m).astype(dtype)
    close(N.T @ xt, A.T @ xt, t * max(1, m))
    for k in (1, 3, 64, 70):
        X = rng.random((n, k)).astype(dtype)
        close(N @ X, A @ X, t)
        close(N @ np.asfortranarray(X), A @ X, t)
        Xt = rng.random((m, k)).astype(dtype)
        close(N.T @ Xt, A.T @ Xt, t * max(1, m))


@pytest.mark.parametrize("dtype", DTYPES)
def test_plan_alpha_beta(rng, dtype):
    A = rand_csr(rng, 40, 30, 0.2, dtype, np.int32)
    N = nonzero.asmatrix(A)
    x = rng.random(30).astype(dtype)
    y0 = rng.random(40).astype(dtype)
    for kw in ({}, {"alg": "parallel"}, {"format": "sell"}, {"format": "coo"}, {"format": "auto"},
               {"deterministic": True}):
        p = N.plan(**kw)
        y = y0.copy()
        out = p(x, y, alpha=2.0, beta=-0.5)
        assert out is y
        close(y, 2.0 * (A @ x) - 0.5 * y0, tol(dtype, A) * 4)
        close(p(x), A @ x, tol(dtype, A) * 4)
    info = N.plan(alg="serial").info()
    assert info["alg"] == "serial" and info["backend"] == "cpu" and info["reproducible"]


def test_alg_names():
    names = nonzero.alg_names()
    # every name the C library has, in enum order, none twice
    assert names[0] == "auto" and "serial" in names and "tiles" in names
    assert "unknown" not in names and len(set(names)) == len(names)


def test_zero_copy_wrap(rng):
    A = rand_csr(rng, 30, 30, 0.2, np.float64, np.int64)
    N = nonzero.csr_matrix(A, copy=False)
    x = np.ones(30)
    A.data *= 2  # the wrapped arrays are the caller's: Nonzero sees the change
    close(N @ x, A @ x, 1e-14)


def test_int32_offsets_zero_copy(rng):
    A = rand_csr(rng, 30, 30, 0.2, np.float32, np.int32)
    N = nonzero.csr_matrix(A, copy=False)
    A.data[:] = 1
    close(N @ np.ones(30, np.float32), A @ np.ones(30, np.float32), 1e-6)


def test_copy_true_is_independent(rng):
    A = rand_csr(rng, 30, 30, 0.2, np.float64, np.int32)
    N = nonzero.csr_matrix(A, copy=True)
    ref = A @ np.ones(30)
    A.data *= 3
    close(N @ np.ones(30), ref, 1e-14)


def test_copy_false_refuses():
    A = sp.random(10, 10, 0.3, format="csr", random_state=1)
    with pytest.raises(ValueError, match="copy=False"):
        nonzero.csr_matrix(A.astype(np.int64), copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        nonzero.csr_matrix(A.tocsc(), copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        nonzero.csr_matrix(A.tocoo(), copy=False)
    B = A.copy()
    B.indices = B.indices.astype(np.int64)
    with pytest.raises(ValueError, match="int32"):
        nonzero.csr_matrix(B, copy=False)


@pytest.mark.parametrize("fmt", ["csc", "coo", "lil", "dok", "bsr"])
def test_other_scipy_formats(rng, fmt):
    A = rand_csr(rng, 25, 17, 0.3, np.float64, np.int32)
    N = nonzero.asmatrix(A.asformat(fmt))
    x = rng.random(17)
    close(N @ x, A @ x, 1e-13)


def test_scipy_array_kind(rng):
    if not hasattr(sp, "csr_array"):
        pytest.skip("this SciPy has no csr_array")
    A = sp.csr_array(rand_csr(rng, 20, 20, 0.2, np.float64, np.int32))
    C = nonzero.spgemm(A, A)
    assert isinstance(C, sp.csr_array)
    close(C.toarray(), (A @ A).toarray(), 1e-13)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("copy", [None, True])
def test_non_canonical(dtype, copy):
    # row 0: columns 3, 1, 3 (unsorted, duplicate); row 2: 2, 0
    data = np.array([1.0, 2.0, 4.0, 5.0, 6.0, 7.0], dtype)
    indices = np.array([3, 1, 3, 2, 2, 0], np.int32)
    indptr = np.array([0, 3, 4, 6], np.int64)
    S = sp.csr_matrix((data.copy(), indices.copy(), indptr.copy()), shape=(3, 4))
    N = nonzero.csr_matrix((data, indices, indptr), shape=(3, 4), copy=copy)
    x = np.array([1.0, 10.0, 100.0, 1000.0], dtype)
    close(N @ x, S @ x, 1e-6)
    close(N.T @ np.ones(3, dtype), S.T @ np.ones(3, dtype), 1e-6)
    assert N.nnz == 5  # duplicates summed
    close(N.toscipy().toarray(), S.toarray(), 1e-6)
    # the caller's arrays are not modified
    assert list(indices) == [3, 1, 3, 2, 2, 0]


def test_non_canonical_copy_false():
    data = np.ones(2)
    with pytest.raises(nonzero.NotSortedError, match="copy=False") as e:
        nonzero.csr_matrix((data, np.array([1, 0], np.int32), np.array([0, 2])), shape=(1, 2),
                           copy=False)
    assert isinstance(e.value, ValueError) and e.value.status == -21


def test_wrong_shapes_raise(rng):
    A = rand_csr(rng, 6, 4, 0.5, np.float64, np.int32)
    N = nonzero.asmatrix(A)
    with pytest.raises(nonzero.DimensionMismatchError):
        N @ np.ones(5)
    with pytest.raises(ValueError):
        N @ np.ones((5, 2))
    with pytest.raises(ValueError):
        N.T @ np.ones(4)
    with pytest.raises(ValueError):
        N.plan()(np.ones(4), np.ones(7))
    with pytest.raises(TypeError, match="dtype"):
        N.plan()(np.ones(4), np.ones(6, np.float32))
    with pytest.raises(nonzero.DimensionMismatchError):
        nonzero.spgemm(N, N)
    with pytest.raises(ValueError):
        nonzero.csr_matrix((A.data, A.indices, A.indptr), shape=(7, 4))
    with pytest.raises(ValueError):
        nonzero.csr_matrix((A.data, A.indices, A.indptr))


def test_invalid_structure_messages():
    # column out of range
    with pytest.raises(nonzero.InvalidMatrixError) as e:
        nonzero.csr_matrix((np.ones(1), np.array([5], np.int32), np.array([0, 1])), shape=(1, 3))
    assert "nz_matrix_create_csr" in str(e.value) and "row 0" in str(e.value)
    assert isinstance(e.value, ValueError)
    # decreasing offsets
    with pytest.raises(nonzero.InvalidMatrixError):
        nonzero.csr_matrix((np.ones(2), np.array([0, 1], np.int32), np.array([0, 2, 1, 2])),
                           shape=(3, 3))
    # indptr longer than the arrays: refused before the library reads past them
    with pytest.raises(nonzero.InvalidMatrixError, match="indptr"):
        nonzero.csr_matrix((np.ones(1), np.array([0], np.int32), np.array([0, 3])), shape=(1, 3))
    with pytest.raises(nonzero.InvalidArgumentError):
        nonzero.csr_matrix((np.ones(1, np.complex128), np.array([0], np.int32), np.array([0, 1])),
                           shape=(1, 1))
    with pytest.raises(nonzero.InvalidArgumentError, match="algorithm|alg"):
        nonzero.laplace2d(4).plan(alg="no-such-alg")


def test_error_hierarchy():
    assert issubclass(nonzero.OutOfMemoryError, MemoryError)
    assert issubclass(nonzero.InvalidArgumentError, ValueError)
    assert issubclass(nonzero.NonzeroIOError, OSError)
    for cls in (nonzero.OutOfMemoryError, nonzero.ParseError, nonzero.DeviceError,
                nonzero.NoDeviceError, nonzero.BreakdownError):
        assert issubclass(cls, nonzero.NonzeroError)


def test_io_errors(tmp_path):
    with pytest.raises(nonzero.NonzeroIOError) as e:
        nonzero.mmread(str(tmp_path / "missing.mtx"))
    assert "missing.mtx" in str(e.value)
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 3\n")
    with pytest.raises(nonzero.ParseError) as e:
        nonzero.mmread(str(bad))
    assert "bad.mtx:3" in str(e.value)


DATA_FILES = sorted(glob.glob(os.path.join(DATA, "*.mtx")) + glob.glob(os.path.join(DATA, "*.mtx.gz")))


@pytest.mark.parametrize("path", DATA_FILES, ids=os.path.basename)
@pytest.mark.parametrize("dtype", DTYPES)
def test_data_files_against_scipy(path, dtype, tmp_path):
    import scipy.io
    try:
        S = sp.csr_matrix(scipy.io.mmread(path)).astype(dtype)
    except Exception as e:  # SciPy cannot read it: Nonzero must at least not crash
        pytest.skip("scipy.io.mmread: %s" % e)
    N = nonzero.mmread(path, dtype=dtype)
    assert N.shape == S.shape
    if isinstance(N, np.ndarray):  # an array file: an ndarray, as scipy.io.mmread
        assert N.dtype == dtype
        close(N, S.toarray(), 0)
        out = str(tmp_path / "round.mtx")
        nonzero.mmwrite(out, N)
        close(nonzero.mmread(out, dtype=dtype), N, 0)
        return
    x = np.linspace(-1, 1, S.shape[1]).astype(dtype)
    close(N @ x, S @ x, 64 * np.finfo(dtype).eps * max(1, S.shape[1]))
    out = str(tmp_path / "round.mtx")
    nonzero.mmwrite(out, N)
    R = nonzero.mmread(out, dtype=dtype)
    close(R.toscipy().toarray(), N.toscipy().toarray(), 0)
    assert data_nonempty()


def data_nonempty():
    return len(DATA_FILES) > 0


def test_0x0_file():
    N = nonzero.mmread(os.path.join(DATA, "mmtest_ss_empty_0x0.mtx"))
    assert N.shape == (0, 0) and N.nnz == 0
    assert (N @ np.zeros(0)).shape == (0,)


@pytest.mark.parametrize("dtype", DTYPES)
def test_generators(dtype):
    A = nonzero.laplace2d(6, 5, dtype=dtype).toscipy()
    assert A.shape == (30, 30) and A.dtype == dtype
    assert abs(A - A.T).max() == 0 and np.allclose(A.diagonal(), 4)
    L3 = nonzero.laplace3d(4, dtype=dtype).toscipy()
    assert L3.shape == (64, 64) and np.allclose(L3.diagonal(), 6)
    # 1-D stencil rows of the 3-D Laplacian sum to 0 in the interior
    assert np.isclose(L3.sum(axis=1).min(), 0) and np.isclose(L3.sum(axis=1).max(), 3)
    A, b, u = nonzero.fe3d(5, dtype=dtype)
    assert A.shape == (64, 64) and b.shape == (64,) and u.shape == (64,)
    assert np.abs(A @ u - b).max() < 0.05
    for M in (nonzero.random(50, 40, 3.0, seed=2, dtype=dtype), nonzero.rmat(6, dtype=dtype),
              nonzero.rail(10, 200, 20, dtype=dtype), nonzero.mixed(100, 3, 2, 40, dtype=dtype),
              nonzero.banded(30, 2, 3, dtype=dtype)):
        S = M.toscipy()
        assert S.nnz == M.nnz and S.has_sorted_indices
        x = np.ones(M.shape[1], dtype)
        close(M @ x, S @ x, 1e-5)
    r1 = nonzero.random(30, 30, 2.0, seed=7).toscipy()
    r2 = nonzero.random(30, 30, 2.0, seed=7).toscipy()
    assert (r1 != r2).nnz == 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_convdiff_generators(dtype):
    # peclet=0 is the Laplacian, entry for entry
    for C, L in ((nonzero.convdiff2d(6, 5, peclet=0, dtype=dtype), nonzero.laplace2d(6, 5, dtype=dtype)),
                 (nonzero.convdiff3d(4, 3, 2, peclet=0, dtype=dtype),
                  nonzero.laplace3d(4, 3, 2, dtype=dtype))):
        C, L = C.toscipy(), L.toscipy()
        assert C.dtype == dtype and (C != L).nnz == 0
        assert np.array_equal(C.indptr, L.indptr) and np.array_equal(C.indices, L.indices)
    # P > 0: upwind entries below the diagonal, the Laplacian's pattern, an M-matrix, not symmetric
    P = 1.5
    c = 2 * P / np.sqrt(3)
    A = nonzero.convdiff3d(4, peclet=P, dtype=dtype).toscipy()
    L3 = nonzero.laplace3d(4, dtype=dtype).toscipy()
    assert A.shape == (64, 64) and A.nnz == L3.nnz and A.has_sorted_indices
    t = 1e-5 if dtype == np.float32 else 1e-12
    assert np.allclose(A.diagonal(), 6 + 3 * c, rtol=t)
    lower, upper = sp.tril(A, -1), sp.triu(A, 1)
    assert np.allclose(lower.data, -1 - c, rtol=t) and np.allclose(upper.data, -1, rtol=t)
    assert abs(A - A.T).max() > 1
    rows = np.asarray(A.sum(axis=1)).ravel()
    assert rows.min() >= -t * A.diagonal().max() and np.isclose(rows.min(), 0, atol=1e-4)
    x = np.ones(64, dtype)
    close(nonzero.convdiff3d(4, peclet=P, dtype=dtype) @ x, A @ x, 1e-5)
    B = nonzero.convdiff2d(5, 3, peclet=P, dtype=dtype).toscipy()
    assert B.shape == (15, 15) and B.nnz == 15 + 2 * (4 * 3 + 5 * 2)
    assert np.allclose(B.diagonal(), 4 + 2 * (2 * P / np.sqrt(2)), rtol=t)
    with pytest.raises(nonzero.InvalidArgumentError):
        nonzero.convdiff3d(3, peclet=-1.0)
    with pytest.raises(nonzero.InvalidArgumentError):
        nonzero.convdiff2d(3, peclet=float("nan"))
    with pytest.raises(nonzero.InvalidArgumentError):
        nonzero.convdiff2d(0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alg", ["auto", "cpu"])
def test_spgemm_against_scipy(rng, dtype, alg):
    for (m, k, n) in ((30, 20, 25), (0, 3, 4), (3, 0, 4), (1, 1, 1), (60, 60, 60)):
        A = rand_csr(rng, m, k, 0.2, dtype, np.int64)
        B = rand_csr(rng, k, n, 0.2, dtype, np.int32)
        C = nonzero.spgemm(A, B, alg=alg)
        assert isinstance(C, sp.csr_matrix) and C.shape == (m, n) and C.dtype == dtype
        close(C.toarray(), (A @ B).toarray(), 64 * np.finfo(dtype).eps)
    N = nonzero.asmatrix(A)
    close((N @ N).toarray(), (A @ A).toarray(), 64 * np.finfo(dtype).eps)
    close((N @ A).toarray(), (A @ A).toarray(), 64 * np.finfo(dtype).eps)
    C, info = nonzero.spgemm(N, N, return_info=True)
    assert info["products"] > 0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M", [None, "jacobi"])
def test_cg_against_scipy(dtype, M):
    A = nonzero.laplace2d(12, 10, dtype=dtype)
    S = A.toscipy()
    b = np.linspace(1, 2, S.shape[0]).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    x, info = nonzero.cg(A, b, rtol=rtol, M=M)
    assert info == 0 and x.dtype == dtype
    assert np.linalg.norm(S @ x - b) <= 10 * rtol * np.linalg.norm(b)
    # SciPy input, x0, callback
    seen = []
    x2, info2 = nonzero.cg(S, b, x0=np.zeros_like(b), rtol=rtol, M=M, callback=seen.append)
    assert info2 == 0 and len(seen) > 0
    assert np.linalg.norm(S @ x2 - b) <= 10 * rtol * np.linalg.norm(b)
    # iteration limit: info > 0
    x3, info3 = nonzero.cg(A, b, rtol=1e-30, maxiter=3)
    assert info3 == 3
    # the same from SciPy's cg through A.aslinearoperator()
    op = A.aslinearoperator()
    try:
        xs, infos = spla.cg(op, b, rtol=rtol, atol=0.0)
    except TypeError:  # SciPy < 1.12
        xs, infos = spla.cg(op, b, tol=rtol, atol=0.0)
    assert infos == 0
    assert np.linalg.norm(S @ xs - b) <= 10 * rtol * np.linalg.norm(b)


def test_cg_breakdown_and_args():
    A = sp.diags([-1.0, 2.0, 3.0]).tocsr()
    x, info = nonzero.cg(A, np.ones(3))
    assert info < 0
    with pytest.raises(ValueError):
        nonzero.cg(A, np.ones(4))
    with pytest.raises(ValueError):
        nonzero.cg(sp.random(3, 4, 0.5, format="csr"), np.ones(3))
    with pytest.raises(ValueError):
        nonzero.cg(A, np.ones(3), M=np.eye(3))


def test_linear_operator(rng):
    A = rand_csr(rng, 20, 15, 0.3, np.float64, np.int32)
    op = nonzero.asmatrix(A).aslinearoperator()
    x = rng.random(15)
    close(op @ x, A @ x, 1e-13)
    close(op.rmatvec(np.ones(20)), A.T @ np.ones(20), 1e-13)
    X = rng.random((15, 4))
    close(op.matmat(X), A @ X, 1e-13)


def test_info_reports_the_planner():
    A = nonzero.laplace3d(10)
    i = A.info()
    assert i["format"] == "csr" and i["location"] == "host" and i["nnz"] == A.nnz
    assert i["planner_cpu"]["alg"] and i["planner_cpu"]["why"]
    assert i["plan"]["backend"] == "cpu"


def test_integer_and_bool_values_become_float64():
    A = sp.csr_matrix(np.array([[1, 0], [2, 3]], np.int64))
    N = nonzero.asmatrix(A)
    assert N.dtype == np.float64
    close(N @ np.ones(2), np.array([1.0, 5.0]), 0)


def test_mixed_dtype_follows_numpy_promotion(rng):
    """float32 A @ float64 x is float64 (as SciPy), computed without narrowing x; float32 A @
    float32 x stays float32; A.T and SpMM too."""
    A = rand_csr(rng, 10, 10, 0.3, np.float32, np.int32)
    N = nonzero.asmatrix(A)
    x = np.full(10, 1.0 + 2.0**-40)  # rounds to 1.0 in float32
    ref = A.astype(np.float64) @ x
    y = N @ x
    assert y.dtype == np.float64
    assert np.abs(y - ref).max() <= 1e-15 * max(1.0, np.abs(ref).max())
    assert np.abs(y - A @ np.ones(10, np.float32)).max() > 0  # x was not rounded first
    assert (N @ np.ones(10, np.float32)).dtype == np.float32
    assert (N.T @ x).dtype == np.float64
    close(N.T @ x, A.T.astype(np.float64) @ x, 1e-14)
    X = np.column_stack([x, 2 * x])
    assert (N @ X).dtype == np.float64
    close(N @ X, A.astype(np.float64) @ X, 1e-14)
    assert (N @ np.ones(10, np.int64)).dtype == np.result_type(np.float32, np.int64)
    y64 = np.zeros(10)
    assert N.plan()(x, y64) is y64
    close(y64, ref, 1e-14)


def test_version_and_library():
    assert nonzero.__version__.count(".") == 2
    assert os.path.exists(nonzero.library_path) or "libnonzero" in nonzero.library_path


def _rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_no_leak_10k_cycles(rng):
    A = rand_csr(rng, 200, 200, 0.05, np.float64, np.int32)
    x = rng.random(200)
    ctx = nonzero._context.host_context()

    def cycle(n):
        for _ in range(n):
            N = nonzero.csr_matrix(A)
            y = N @ x
            y = N.T @ x
            del N, y

    cycle(500)
    gc.collect()
    before_rss, before = _rss_kb(), ctx.alloc_stats()
    cycle(10000)
    gc.collect()
    after_rss, after = _rss_kb(), ctx.alloc_stats()
    assert after["live_blocks"] == before["live_blocks"]
    assert after["live_bytes"] == before["live_bytes"]
    if not os.environ.get("NZ_PY_SANITIZED"):  # ASan's quarantine holds freed memory
        assert after_rss - before_rss < 8 * 1024, (before_rss, after_rss)


def test_context_cached_per_thread():
    import threading
    c1 = nonzero._context.host_context()
    assert nonzero._context.host_context() is c1
    other = []
    t = threading.Thread(target=lambda: other.append(nonzero._context.host_context()))
    t.start()
    t.join()
    assert other[0] is not c1


def test_missing_library_message(tmp_path):
    import subprocess
    import sys
    env = dict(os.environ, NONZERO_LIBRARY=str(tmp_path / "nope.so"))
    r = subprocess.run([sys.executable, "-c", "import nonzero"], env=env, capture_output=True,
                       text=True)
    assert r.returncode != 0
    assert "nope.so" in r.stderr and "ImportError" in r.stderr


def test_example_scipy_to_nonzero():
    import subprocess
    import sys
    from conftest import SOURCE
    path = os.path.join(SOURCE, "examples", "scipy_to_nonzero.py")
    r = subprocess.run([sys.executable, path], capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "cg: info 0" in r.stdout
    # the plain SciPy script differs in exactly that one line, and prints the same
    with open(path) as f:
        source = f.read()
    ours = [l for l in source.splitlines() if "# the one line" in l]
    assert len(ours) == 1 and ours[0].startswith("A = nonzero.asmatrix(A0)")
    plain = source.replace(ours[0], "A = A0")
    r2 = subprocess.run([sys.executable, "-c", plain], capture_output=True, text=True,
                        env=dict(os.environ))
    assert r2.returncode == 0, r2.stdout + r2.stderr
    assert r2.stdout.splitlines()[0] == r.stdout.splitlines()[0] and "cg: info 0" in r2.stdout


def test_tol_alias_and_scipy_linear_operator_protocol():
    A = nonzero.laplace2d(10)
    b = np.ones(100)
    x, info = nonzero.cg(A, b, tol=1e-10)
    assert info == 0 and np.linalg.norm(A.toscipy() @ x - b) < 1e-8
    # scipy's solvers accept a nonzero.csr_matrix directly (shape, dtype, matvec)
    x2, info2 = spla.cg(A, b, atol=0.0)
    assert info2 == 0


def test_freed_without_the_garbage_collector(rng):
    """No reference cycles: a matrix and its cached plans go as soon as the last reference does."""
    A = rand_csr(rng, 50, 50, 0.1, np.float64, np.int32)
    ctx = nonzero._context.host_context()
    gc.collect()
    gc.disable()
    try:
        before = ctx.alloc_stats()["live_blocks"]
        N = nonzero.csr_matrix(A)
        N @ np.ones(50)
        N.T @ np.ones(50)
        N @ np.ones((50, 3))
        assert ctx.alloc_stats()["live_blocks"] > before
        del N
        assert ctx.alloc_stats()["live_blocks"] == before
    finally:
        gc.enable()


def test_csr_device_arrays_refuses_host_matrix():
    import ctypes
    from nonzero import _lib
    A = nonzero.laplace2d(3)
    ctx = A._h.ctx
    p = ctypes.c_void_p()
    t = ctypes.c_int()
    st = _lib.lib.nz_matrix_csr_device_arrays(ctx.handle, ctypes.byref(p), ctypes.byref(t), None,
                                              None, A._h.ptr)
    with pytest.raises(nonzero.WrongLocationError, match="on the host"):
        ctx.check(st, "nz_matrix_csr_device_arrays")


def _header_struct_fields(text, name):
    """Member names of `typedef struct name {...}` in the public headers, in order (comments
    removed)."""
    import re
    body = re.search(r"typedef struct %s \{(.*?)\}" % name, text, re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    fields = []
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        # "int64_t rows, cols" / "size_t bytes[NZ_FORMAT_COUNT]" / "double *history"
        head, *rest = decl.split(",")
        names = [head.split()[-1]] + [r.strip() for r in rest]
        fields += [n.lstrip("*").split("[")[0] for n in names]
    return fields


def test_ctypes_structs_match_the_header():
    """Every ctypes mirror of a public struct has the header's members in the header's order: a
    member added in C but not here would make the library write past the Python buffer."""
    from nonzero import _lib
    import glob
    include = os.path.join(os.path.dirname(__file__), "..", "..", "include")
    header = os.path.join(include, "nonzero.h")
    if not os.path.exists(header):
        pytest.skip("nonzero.h not beside the package (installed copy)")
    # the umbrella and its parts (include/nonzero/*.h), where the structs are declared
    parts = sorted(glob.glob(os.path.join(include, "nonzero", "*.h")))
    text = "\n".join(open(path).read() for path in [header] + parts)
    pairs = {"nz_alloc_stats": _lib.AllocStats, "nz_matrix_info": _lib.MatrixInfo,
             "nz_matrix_stats": _lib.MatrixStats, "nz_format_options": _lib.FormatOptions,
             "nz_spmv_plan_info": _lib.SpmvPlanInfo, "nz_spmm_plan_info": _lib.SpmmPlanInfo,
             "nz_cg_options": _lib.CgOptions, "nz_cg_result": _lib.CgResult,
             "nz_spgemm_options": _lib.SpgemmOptions, "nz_spgemm_info": _lib.SpgemmInfo,
             "nz_solve_options": _lib.SolveOptions, "nz_solve_result": _lib.SolveResult,
             "nz_precond_options": _lib.PrecondOptions, "nz_precond_info": _lib.PrecondInfo}
    for cname, cls in pairs.items():
        ours = [f[0] for f in cls._fields_]
        assert ours == _header_struct_fields(text, cname), cname


def test_solve_reason_names_match_the_header():
    """_lib.SOLVE_REASONS (the names result['reason'] reports) is nz_solve_reason_t in order."""
    import re
    from nonzero import _lib
    header = os.path.join(os.path.dirname(__file__), "..", "..", "include", "nonzero", "solver.h")
    if not os.path.exists(header):
        pytest.skip("nonzero/solver.h not beside the package (installed copy)")
    body = re.search(r"typedef enum nz_solve_reason \{(.*?)\}", open(header).read(), re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    pairs = re.findall(r"NZ_SOLVE_(\w+)\s*=\s*(\d+)", body)
    assert [int(v) for _, v in pairs] == list(range(len(pairs)))
    assert tuple(name.lower() for name, _ in pairs) == _lib.SOLVE_REASONS


def test_spgemm_result_is_shared_with_scipy_without_a_copy(rng):
    """The host product's arrays go to SciPy as they are: they outlive every Nonzero object,
    are writable, sorted and canonical, and equal SciPy's product."""
    import gc
    A = rand_csr(rng, 200, 150, 0.05, np.float64, np.int32)
    B = rand_csr(rng, 150, 120, 0.05, np.float64, np.int32)
    C = nonzero.spgemm(A, B)
    gc.collect()
    assert C.has_sorted_indices and C.has_canonical_format
    R = (A @ B).tocsr()
    R.sort_indices()
    assert np.array_equal(C.indptr, R.indptr) and np.array_equal(C.indices, R.indices)
    close(C.data, R.data, 64 * np.finfo(np.float64).eps)
    assert C.data.flags.writeable
    C.data[:] = 1.0  # the result is the caller's to change
    D = nonzero.spgemm(A, B)
    assert not np.array_equal(D.data, C.data) or D.nnz == 0
    del D
    gc.collect()
    assert float(C.sum()) == C.nnz


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_spgemm_plan_against_scipy(rng, dtype):
    """A plan's C is SciPy's product; called with new values it is their product, bitwise the
    CPU algorithm's, in the same object; another pattern or dtype is refused."""
    A = rand_csr(rng, 120, 90, 0.06, dtype, np.int32)
    B = rand_csr(rng, 90, 70, 0.08, dtype, np.int32)
    P = nonzero.spgemm_plan(A, B)
    C = P()
    assert isinstance(C, sp.csr_matrix) and C.shape == (120, 70) and C.dtype == dtype
    close(C.toarray(), (A @ B).toarray(), 64 * np.finfo(dtype).eps)
    A2, B2 = A.copy(), B.copy()
    A2.data = rng.standard_normal(A2.nnz).astype(dtype)
    B2.data = rng.standard_normal(B2.nnz).astype(dtype)
    C2 = P(A2, B2)
    assert C2 is C
    close(C2.toarray(), (A2 @ B2).toarray(), 64 * np.finfo(dtype).eps)
    F = nonzero.spgemm(A2, B2, alg="cpu")
    assert np.array_equal(F.indices, C2.indices)
    assert F.data.tobytes() == C2.data.tobytes()
    # another pattern: a row's entries moved to other columns
    S = A.tolil()
    S[0, :] = 0
    S[0, 5] = 1.0
    S = S.tocsr()
    S.eliminate_zeros()
    if S.nnz == A.nnz:
        with pytest.raises(nonzero.InvalidArgumentError):
            P(S, B)
    with pytest.raises(nonzero.InvalidArgumentError):
        P(rand_csr(rng, 120, 90, 0.03, dtype, np.int32), B)  # another nonzero count
    with pytest.raises(nonzero.InvalidArgumentError):
        P(A.astype(np.float64 if dtype == np.float32 else np.float32), B)
    with pytest.raises(nonzero.DimensionMismatchError):
        nonzero.spgemm_plan(A, A)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_spgeam_against_scipy(rng, dtype):
    A = rand_csr(rng, 60, 80, 0.1, dtype, np.int32)
    B = rand_csr(rng, 60, 80, 0.05, dtype, np.int64)
    for alpha, beta in ((1.0, 1.0), (2.0, -0.5), (0.0, 3.0)):
        C = nonzero.spgeam(A, B, alpha, beta)
        assert isinstance(C, sp.csr_matrix) and C.has_sorted_indices
        close(C.toarray(), (alpha * A + beta * B).toarray(), 8 * np.finfo(dtype).eps)
        union = ((abs(A) + abs(B)) != 0).nnz
        assert C.nnz == union
    D = nonzero.spgeam(A, A, 1.0, -1.0)  # cancellation keeps the pattern, explicit zeros
    assert D.nnz == A.nnz and not np.any(D.data)
    N = A.copy()
    N.data[:] = np.nan
    E = nonzero.spgeam(N, B, 0.0, 2.0)  # alpha == 0 never reads A's values
    assert not np.isnan(E.data).any()
    close(E.toarray(), (2.0 * B).toarray(), 0)
    P = nonzero.spgeam_plan(A, B, 1.0, 2.0)
    A2 = A.copy()
    A2.data = A2.data * 3
    C = P(A2, alpha=0.5)
    close(C.toarray(), (0.5 * A2 + 2.0 * B).toarray(), 8 * np.finfo(dtype).eps)
    with pytest.raises(nonzero.InvalidArgumentError):
        P(B, A)  # swapped patterns
    with pytest.raises(nonzero.DimensionMismatchError):
        nonzero.spgeam(A, A.T.tocsr())


def test_rap_against_scipy(rng):
    A = nonzero.laplace2d(12).toscipy()
    P = sp.random(144, 30, 0.08, format="csr", random_state=rng)
    C = nonzero.rap(A, P)
    close(C.toarray(), (P.T @ A @ P).toarray(), 1e-13)
    R = nonzero.rap_plan(A, P)
    A2, P2 = A.copy(), P.copy()
    A2.data = A2.data * 1.5
    P2.data = rng.standard_normal(P2.nnz)
    C2 = R(A2, P2)
    close(C2.toarray(), (P2.T @ A2 @ P2).toarray(), 1e-12)
    with pytest.raises(nonzero.DimensionMismatchError):
        nonzero.rap(A, P[:100])


@pytest.mark.parametrize("path", DATA_FILES, ids=os.path.basename)
def test_spgeam_rap_real_matrices_against_scipy(path):
    """SpGEAM (A + 2 A^T) and the Galerkin product with a pairwise aggregation on the real
    matrices of the test data, against SciPy."""
    import scipy.io
    try:
        A = sp.csr_matrix(scipy.io.mmread(path)).astype(np.float64)
    except Exception as e:  # an array file, or one SciPy cannot read
        pytest.skip("scipy.io.mmread: %s" % e)
    if A.shape[0] != A.shape[1] or A.shape[0] < 2:
        pytest.skip("not square")
    A.sum_duplicates()
    At = A.T.tocsr()
    At.sort_indices()
    C = nonzero.spgeam(A, At, 1.0, 2.0)
    close(C.toarray(), (A + 2.0 * At).toarray(), 1e-13)
    n = A.shape[0]
    agg = np.arange(n) // 2
    P = sp.csr_matrix((np.ones(n), (np.arange(n), agg)), shape=(n, int(agg[-1]) + 1))
    G = nonzero.rap(A, P)
    close(G.toarray(), (P.T @ A @ P).toarray(), 1e-12)


def test_spgemm_alg_constants_match_the_library():
    """_lib's mirror of nz_spgemm_alg_t, by which spgemm() routes an algorithm, is the library's."""
    import ctypes
    from nonzero import _lib
    a = ctypes.c_int()
    for name, value in (("auto", _lib.SPGEMM_AUTO), ("cpu", _lib.SPGEMM_CPU),
                        ("esc", _lib.SPGEMM_ESC), ("hyspmm", _lib.SPGEMM_HYSPMM),
                        ("hash", _lib.SPGEMM_HASH)):
        assert _lib.lib.nz_spgemm_alg_from_name(ctypes.byref(a), name.encode()) == _lib.SUCCESS
        assert a.value == value, name


# ---- issue 36: answers that are silently wrong, messages ------------------------------------


def test_complex_operands_are_not_dropped(rng):
    A = rand_csr(rng, 12, 9, 0.3, np.float64, np.int32)
    N = nonzero.asmatrix(A)
    x = rng.random(9) + 1j * rng.random(9)
    y = N @ x
    assert y.dtype == np.complex128
    close(y, A @ x, 1e-13)
    xt = rng.random(12) - 1j * rng.random(12)
    close(N.T @ xt, A.T @ xt, 1e-13)
    X = rng.random((9, 3)) + 1j * rng.random((9, 3))
    close(N @ X, A @ X, 1e-13)
    # complex64 with a float32 matrix stays complex64; with alpha/beta into a given y
    A32 = A.astype(np.float32)
    N32 = nonzero.asmatrix(A32)
    assert (N32 @ x.astype(np.complex64)).dtype == np.complex64
    y0 = rng.random(12) + 1j * rng.random(12)
    yy = y0.copy()
    out = N.plan()(x, yy, alpha=2.0, beta=0.5j)
    assert out is yy
    close(yy, 2.0 * (A @ x) + 0.5j * y0, 1e-13)
    with pytest.raises(TypeError, match="dtype"):
        N.plan()(x, np.zeros(12))  # a real y cannot hold a complex product


@pytest.mark.parametrize("callback", [False, True])
def test_cg_complex_b(callback):
    A = nonzero.laplace2d(8)
    S = A.toscipy()
    b = np.linspace(1, 2, 64) + 1j * np.linspace(-1, 3, 64)
    kw = {"callback": (lambda xk: None)} if callback else {}
    x, info = nonzero.cg(A, b, rtol=1e-10, **kw)
    assert info == 0 and x.dtype == np.complex128
    assert np.linalg.norm(S @ x - b) <= 1e-10 * np.linalg.norm(b) * 1.01
    assert np.abs(x.imag).max() > 0.1


def test_plan_op_h_and_unknown_op(rng):
    A = rand_csr(rng, 7, 5, 0.4, np.float64, np.int32)
    N = nonzero.asmatrix(A)
    close(N.plan(op="H")(np.ones(7)), A.T @ np.ones(7), 1e-14)
    assert N.plan(op="H").shape == (5, 7)
    for bad in ("X", "", "conj", 2, None):
        with pytest.raises(ValueError, match="op"):
            N.plan(op=bad)


def test_non_integer_index_arrays_and_shapes_refused():
    data = np.ones(2)
    with pytest.raises(TypeError, match="indices"):
        nonzero.csr_matrix((data, np.array([0.9, 1.9]), np.array([0, 1, 2])), shape=(2, 3))
    with pytest.raises(TypeError, match="indptr"):
        nonzero.csr_matrix((data, np.array([0, 1], np.int32), np.array([0.0, 1.0, 2.0])),
                           shape=(2, 3))
    with pytest.raises(TypeError, match="shape"):
        nonzero.csr_matrix((data, np.array([0, 1], np.int32), np.array([0, 1, 2])),
                           shape=(1.9, 3.5))
    with pytest.raises(TypeError, match="indices"):
        nonzero.csr_matrix((data, np.array([True, False]), np.array([0, 1, 2])), shape=(2, 3))
    with pytest.raises(nonzero.InvalidMatrixError, match="18446744073709551615"):
        nonzero.csr_matrix((np.ones(1), np.array([0], np.int32),
                            np.array([0, 2**64 - 1], np.uint64)), shape=(1, 1))
    # numpy integers and unsigned arrays that fit are fine
    N = nonzero.csr_matrix((data, np.array([0, 2], np.uint16), np.array([0, 1, 2], np.uint64)),
                           shape=(np.int64(2), np.uint8(3)))
    close(N @ np.arange(3.0), np.array([0.0, 2.0]), 0)


def test_borrowing_contract(rng):
    S = rand_csr(rng, 30, 30, 0.2, np.float64, np.int32)
    x = rng.random(30)
    # csr_matrix copies by default: later changes to S are not seen
    C = nonzero.csr_matrix(S)
    ref = S @ x
    S.data *= 2
    close(C @ x, ref, 1e-14)
    # asmatrix borrows: value changes are seen
    B = nonzero.asmatrix(S)
    close(B @ x, S @ x, 1e-14)
    S.data *= 3
    close(B @ x, S @ x, 1e-14)
    # structure changed by SciPy: refused instead of mixing old and new arrays
    S.data[::3] = 0
    S.eliminate_zeros()
    with pytest.raises(nonzero.InvalidMatrixError, match="changed"):
        B @ x
    S2 = rand_csr(rng, 30, 30, 0.2, np.float64, np.int32)
    B2 = nonzero.asmatrix(S2)
    S2.resize((20, 30))
    with pytest.raises(nonzero.InvalidMatrixError, match="changed"):
        B2 @ x
    # in-place corruption of borrowed indices: an exception, never a crash
    S3 = rand_csr(rng, 30, 30, 0.2, np.float64, np.int32)
    B3 = nonzero.asmatrix(S3)
    B3T = B3.T
    p = B3.plan()
    S3.indices[:] = 2**30
    for call in (lambda: B3 @ x, lambda: B3T @ x, lambda: p(x), lambda: B3 @ np.ones((30, 2)),
                 lambda: nonzero.cg(B3, x)):
        with pytest.raises(nonzero.InvalidMatrixError, match="changed|column"):
            call()
    S4 = rand_csr(rng, 30, 30, 0.2, np.float64, np.int32)
    B4 = nonzero.asmatrix(S4)
    S4.indptr[5] = 10**6
    with pytest.raises(nonzero.InvalidMatrixError):
        B4 @ x
    # borrowed raw arrays (tuple input, copy=False) are checked too
    d, i, r = S2.data.copy(), S2.indices.copy(), S2.indptr.copy()
    T = nonzero.csr_matrix((d, i, r), shape=S2.shape, copy=False)
    T @ x
    i[:] = -1
    with pytest.raises(nonzero.InvalidMatrixError):
        T @ x


def test_plan_refuses_read_only_output():
    N = nonzero.laplace2d(3)
    y = np.zeros(9)
    y.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        N.plan()(np.ones(9), y)
    yb = np.frombuffer(bytes(72), np.float64)
    with pytest.raises(ValueError, match="read-only"):
        N.plan()(np.ones(9), yb)
    with pytest.raises(ValueError, match="read-only"):
        N.plan()(np.ones((9, 2)), np.frombuffer(bytes(144), np.float64).reshape(9, 2))
    with pytest.raises(TypeError):
        N.plan()(np.ones(9), [0.0] * 9)


def test_path_with_nul_refused(tmp_path):
    N = nonzero.laplace2d(3)
    target = tmp_path / "a.mtx"
    with pytest.raises(ValueError, match="null"):
        nonzero.mmwrite(str(target) + "\x00.bak", N)
    assert not target.exists()
    with pytest.raises(ValueError, match="null"):
        nonzero.mmread(str(target) + "\x00.bak")


def test_cg_maxiter_checked():
    A = nonzero.laplace2d(6)
    b = np.ones(36)
    with pytest.raises(ValueError, match="maxiter"):
        nonzero.cg(A, b, maxiter=-1)
    with pytest.raises(TypeError):
        nonzero.cg(A, b, maxiter=2.5)
    r = {}
    x, info = nonzero.cg(A, b, maxiter=10**30, result=r)  # clamped: effectively unlimited
    assert info == 0 and r["max_iterations"] == 2**63 - 1
    x, info = nonzero.cg(A, b, maxiter=0)
    assert info > 0  # x0 = 0 does not solve it


def test_cg_caveat_status_is_never_info_0(monkeypatch):
    """Every positive (caveat) status of nz_cg_solve is info > 0; only NZ_SUCCESS is 0."""
    from nonzero import _ops
    A = nonzero.laplace2d(6)
    b = np.ones(36)
    real = _ops.L.nz_cg_solve

    class Fake:
        def __init__(self, status):
            self.status = status

        def __getattr__(self, name):
            return getattr(_lib_obj, name)

        def nz_cg_solve(self, *args):
            real(*args)
            return self.status

    _lib_obj = _ops.L
    for status in (1, 2, 3):
        monkeypatch.setattr(_ops, "L", Fake(status))
        r = {}
        x, info = nonzero.cg(A, b, result=r)
        assert info > 0, status
        assert isinstance(r["status"], str) and r["status_code"] == status
    monkeypatch.setattr(_ops, "L", _lib_obj)


def test_cg_single_precision_tight_rtol_not_converged():
    """float32 cannot reach rtol=1e-8 on this system: info > 0, as SciPy."""
    A = nonzero.laplace2d(40, dtype=np.float32)
    b = np.linspace(1, 2, 1600).astype(np.float32)
    x, info = nonzero.cg(A, b, rtol=1e-8)
    S = A.toscipy().astype(np.float64)
    true = np.linalg.norm(b - S @ x.astype(np.float64)) / np.linalg.norm(b)
    assert info > 0 or true <= 1e-8, (info, true)


def test_plan_format_message_names_value():
    N = nonzero.laplace2d(3)
    with pytest.raises(ValueError) as e:
        N.plan(format="foo")
    assert "'foo'" in str(e.value) and "sell" in str(e.value) and "csr" in str(e.value)
    with pytest.raises(ValueError) as e:
        N.plan(alg="no-such-alg")
    assert "'no-such-alg'" in str(e.value) and "serial" in str(e.value)


def test_messages_name_the_function_once():
    if nonzero.device_count() > 0:
        pytest.skip("a device is present: the GPU SpGEMM runs")
    N = nonzero.laplace2d(3)
    with pytest.raises(nonzero.NoDeviceError) as e:
        nonzero.spgemm(N, N, alg="esc")
    assert str(e.value).count("nz_spgemm") == 1, str(e.value)


def test_result_dicts_use_names():
    A = nonzero.laplace2d(5)
    r = {}
    nonzero.cg(A, np.ones(25), result=r)
    assert isinstance(r["format"], str) and isinstance(r["alg"], str)
    assert r["status"] == "success" and r["status_code"] == 0
    _, info = nonzero.spgemm(A, A, return_info=True)
    assert isinstance(info["alg"], str)
    pi = A.plan(deterministic=True).info()
    assert isinstance(pi["format"], str) and isinstance(pi["alg"], str)
    assert "deterministic" in pi["flags"]


def test_mmread_array_file_gives_ndarray(tmp_path):
    import scipy.io
    path = os.path.join(DATA, "mmtest_fmm_array_real_symmetric.mtx")
    ref = scipy.io.mmread(path)
    got = nonzero.mmread(path)
    assert isinstance(got, np.ndarray) and got.shape == ref.shape
    close(got, ref, 0)
    v = tmp_path / "v.mtx"
    v.write_text("%%MatrixMarket matrix array real general\n3 1\n1.5\n-2\n3\n")
    got = nonzero.mmread(str(v), dtype=np.float32)
    assert isinstance(got, np.ndarray) and got.shape == (3, 1) and got.dtype == np.float32
    close(got, scipy.io.mmread(str(v)), 0)


def test_mmwrite_ndarray_symmetry_and_nzb(tmp_path):
    import scipy.io
    # an ndarray is written as an array file, as SciPy does
    a = np.arange(6.0).reshape(2, 3) / 7
    nonzero.mmwrite(str(tmp_path / "a.mtx"), a)
    assert open(tmp_path / "a.mtx").readline().split()[2] == "array"
    close(scipy.io.mmread(str(tmp_path / "a.mtx")), a, 0)
    v = np.array([1.0, 2.5, -3.0])
    nonzero.mmwrite(str(tmp_path / "v.mtx"), v)
    close(nonzero.mmread(str(tmp_path / "v.mtx")), v.reshape(3, 1), 0)
    # symmetric input: symmetric header (detected, or asked for), lower triangle only
    S = nonzero.laplace2d(4)
    nonzero.mmwrite(str(tmp_path / "s.mtx"), S)
    head = open(tmp_path / "s.mtx").readline().split()
    assert head[4] == "symmetric"
    R = scipy.io.mmread(str(tmp_path / "s.mtx"))
    close(R.toarray(), S.toscipy().toarray(), 0)
    assert nonzero.mmread(str(tmp_path / "s.mtx")).nnz == S.nnz
    nonzero.mmwrite(str(tmp_path / "g.mtx"), S, symmetry="general")
    assert open(tmp_path / "g.mtx").readline().split()[4] == "general"
    with pytest.raises(ValueError, match="symmetry"):
        nonzero.mmwrite(str(tmp_path / "n.mtx"), nonzero.random(5, 5, 2.0), symmetry="symmetric")
    with pytest.raises(ValueError, match="symmetry"):
        nonzero.mmwrite(str(tmp_path / "n.mtx"), S, symmetry="sideways")
    # skew-symmetric, gzip
    K = sp.csr_matrix(np.array([[0, 2.0, 0], [-2.0, 0, 1.0 / 3], [0, -1.0 / 3, 0]]))
    nonzero.mmwrite(str(tmp_path / "k.mtx.gz"), K, symmetry="skew-symmetric")
    close(scipy.io.mmread(str(tmp_path / "k.mtx.gz")).toarray(), K.toarray(), 0)
    # .nzb gets the binary format
    nonzero.mmwrite(str(tmp_path / "m.nzb"), S)
    assert not open(tmp_path / "m.nzb", "rb").read(16).startswith(b"%%MatrixMarket")
    B = nonzero.mmread(str(tmp_path / "m.nzb"))
    close(B.toscipy().toarray(), S.toscipy().toarray(), 0)
    with pytest.raises(ValueError):
        nonzero.mmwrite(str(tmp_path / "a.nzb"), a)


@pytest.mark.parametrize("borrow", [False, True])
def test_pickle_and_copy(rng, borrow):
    import copy
    import pickle
    S = rand_csr(rng, 20, 15, 0.3, np.float32, np.int32)
    N = nonzero.asmatrix(S) if borrow else nonzero.csr_matrix(S)
    x = rng.random(15).astype(np.float32)
    for M in (pickle.loads(pickle.dumps(N)), copy.deepcopy(N), copy.copy(N)):
        assert isinstance(M, nonzero.csr_matrix) and M.shape == N.shape and M.dtype == N.dtype
        close(M @ x, S @ x, 1e-6)
    D = copy.deepcopy(N)
    S.data[:] = 0
    close(D @ x, pickle.loads(pickle.dumps(D)) @ x, 0)
    assert np.abs(D @ x).max() > 0  # the copy owns its arrays
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(N.plan())


def test_wrong_library_message(tmp_path):
    import ctypes.util
    import subprocess
    import sys
    other = ctypes.util.find_library("m") or "libm.so.6"
    env = dict(os.environ, NONZERO_LIBRARY=other)
    r = subprocess.run([sys.executable, "-c", "import nonzero"], env=env, capture_output=True,
                       text=True)
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "AttributeError" not in r.stderr
    assert other in r.stderr and "nz_" in r.stderr


# ---- CPU threads: set_num_threads / get_num_threads / threads ---------------------------------

def test_num_threads_setting_and_results(rng):
    cpus = os.cpu_count() or 1
    A = sp.random(3000, 3000, 0.003, format="csr", random_state=rng)
    x = rng.standard_normal(3000)
    N = nonzero.csr_matrix(A)  # made before the setting: its context takes it at its next use
    default = nonzero.get_num_threads()
    assert 1 <= default <= cpus
    try:
        nonzero.set_num_threads(1)
        assert nonzero.get_num_threads() == 1
        y1 = N @ x
        nonzero.set_num_threads(cpus + 5)  # above the CPUs: clamped, not refused
        assert nonzero.get_num_threads() == cpus
        yn = N @ x
        np.testing.assert_allclose(y1, A @ x, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(y1, yn)  # fixed-order sums: the same for any team
        with nonzero.threads(1):
            assert nonzero.get_num_threads() == 1
        assert nonzero.get_num_threads() == cpus  # restored
        with pytest.raises(RuntimeError):
            with nonzero.threads(1):
                raise RuntimeError("inside")
        assert nonzero.get_num_threads() == cpus  # restored on an exception too
        for bad in (-1, 1025):
            with pytest.raises(nonzero.InvalidArgumentError):
                nonzero.set_num_threads(bad)
        assert nonzero.get_num_threads() == cpus  # a refused value changes nothing
        with pytest.raises(TypeError):
            nonzero.set_num_threads(1.5)
        with pytest.raises(TypeError):
            nonzero.set_num_threads("2")
        with pytest.raises(TypeError):
            nonzero.set_num_threads(True)
        nonzero.set_num_threads(np.int64(1))  # NumPy integers are integers
        assert nonzero.get_num_threads() == 1
    finally:
        nonzero.set_num_threads(None)
    assert nonzero.get_num_threads() == default


def test_num_threads_other_python_thread():
    import threading
    seen = []
    try:
        nonzero.set_num_threads(1)
        t = threading.Thread(target=lambda: seen.append(nonzero.get_num_threads()))
        t.start()
        t.join()
    finally:
        nonzero.set_num_threads(None)
    assert seen == [1]


# ---- SciPy's sparse protocol (issue 43) -------------------------------------------------------

def _dense(a):
    return np.asarray(a.toarray() if hasattr(a, "toarray") else a)


@pytest.mark.parametrize("kind", ["matrix", "array"])
def test_scipy_protocol_matches_scipy(kind):
    """Every operation a SciPy script does with a CSR matrix gives SciPy's answer, in SciPy's
    kind (dense results dense, sparse results a nonzero.csr_matrix), for spmatrix and sparse
    array inputs (where `*` differs)."""
    make = sp.csr_matrix if kind == "matrix" else getattr(sp, "csr_array", None)
    if make is None:
        pytest.skip("this SciPy has no csr_array")
    S = make(sp.random(7, 5, density=0.5, format="csr", random_state=11))
    Q = make(sp.random(7, 5, density=0.4, format="csr", random_state=12))
    A = nonzero.csr_matrix(S)
    x, z, Z = np.arange(5.0), np.arange(7.0), np.random.default_rng(1).random((3, 7))
    cases = {
        "A @ x": (lambda: A @ x, lambda: S @ x),
        "x @ A": (lambda: z @ A, lambda: z @ S),
        "Z @ A": (lambda: Z @ A, lambda: Z @ S),
        "A * x": (lambda: A * x if kind == "matrix" else A @ x, lambda: S @ x),
        "2 * A": (lambda: 2 * A, lambda: 2 * S),
        "A * 2": (lambda: A * 2, lambda: S * 2),
        "A / 2": (lambda: A / 2, lambda: S / 2),
        "A + A": (lambda: A + A, lambda: S + S),
        "A + Q": (lambda: A + Q, lambda: S + Q),
        "Q - A": (lambda: Q - A, lambda: Q - S),
        "-A": (lambda: -A, lambda: -S),
        "S.T @ A": (lambda: S.T @ A, lambda: S.T @ S),
        "A.T @ A": (lambda: A.T @ A, lambda: S.T @ S),
        "A.T + Q.T": (lambda: A.T + Q.T, lambda: S.T + Q.T),
        "A.H @ z": (lambda: A.H @ z, lambda: S.T @ z),
        "toarray": (lambda: A.toarray(), lambda: S.toarray()),
        "todense": (lambda: A.todense(), lambda: S.todense()),
        "A.T.toarray": (lambda: A.T.toarray(), lambda: S.T.toarray()),
        "diagonal": (lambda: A.diagonal(), lambda: S.diagonal()),
        "A[2]": (lambda: A[2], lambda: S[2]),
        "A[1:4]": (lambda: A[1:4], lambda: S[1:4]),
        "sum": (lambda: A.sum(), lambda: S.sum()),
        "sum(axis=1)": (lambda: A.sum(axis=1), lambda: S.sum(axis=1)),
        "copy": (lambda: A.copy(), lambda: S.copy()),
        "conj": (lambda: A.conj(), lambda: S.conj()),
        "multiply": (lambda: A.multiply(Q), lambda: S.multiply(Q)),
        "astype": (lambda: A.astype(np.float32), lambda: S.astype(np.float32)),
    }
    if kind == "array":  # SciPy 1.10's sparse arrays have no 1-D row slices yet
        del cases["A[2]"]
    for name, (ours, theirs) in cases.items():
        a, b = ours(), theirs()
        assert np.allclose(_dense(a), _dense(b)), name
        assert sp.issparse(b) == (isinstance(a, nonzero.csr_matrix) or sp.issparse(a)), name
    # the results stay Nonzero matrices where SciPy's are sparse: products on them run in C
    B = A + A
    assert isinstance(B, nonzero.csr_matrix) and np.allclose(B @ x, 2 * (S @ x))
    assert A.ndim == 2 and A.size == S.nnz and A.count_nonzero() == S.count_nonzero()


def test_scipy_protocol_dense_input_and_copies():
    """csr_matrix / asmatrix take a dense 2-D array as SciPy does; copy() owns its arrays."""
    A = nonzero.asmatrix(np.eye(3))
    assert isinstance(A, nonzero.csr_matrix) and A.nnz == 3
    assert np.array_equal(A.toarray(), np.eye(3))
    with pytest.raises(ValueError):
        nonzero.csr_matrix(np.eye(3), copy=False)
    S = sp.random(6, 6, density=0.5, format="csr", random_state=2)
    A = nonzero.asmatrix(S)  # borrows S's arrays
    C = A.copy()
    S.data[:] = 0.0
    assert C.toarray().any() and not A.toarray().any()
    with pytest.raises(TypeError):
        hash(A)
