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
    with pytest.raises(ValueError):
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
    assert "nz_matrix_wrap_csr" in str(e.value) and "row 0" in str(e.value)
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


def test_mixed_dtype_operand_is_cast(rng):
    A = rand_csr(rng, 10, 10, 0.3, np.float32, np.int32)
    y = nonzero.asmatrix(A) @ np.ones(10)  # float64 x on a float32 matrix
    assert y.dtype == np.float32


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
             "nz_spgemm_options": _lib.SpgemmOptions, "nz_spgemm_info": _lib.SpgemmInfo}
    for cname, cls in pairs.items():
        ours = [f[0] for f in cls._fields_]
        assert ours == _header_struct_fields(text, cname), cname
