"""test_krylov_scipy.py: nonzero.bicgstab and nonzero.gmres against SciPy's iteration counts, with the true residual at the tolerance."""
import os

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import nonzero
from conftest import DATA


def convdiff(nx, peclet):
    """5-point upwind convection-diffusion (the matrix tests/unit/test_krylov.c builds)."""
    rows, cols, vals = [], [], []
    for j in range(nx):
        for i in range(nx):
            r = j * nx + i
            entries = []
            if j > 0:
                entries.append((r - nx, -1.0 - peclet))
            if i > 0:
                entries.append((r - 1, -1.0 - peclet))
            entries.append((r, 4.0 + 2.0 * peclet))
            if i + 1 < nx:
                entries.append((r + 1, -1.0))
            if j + 1 < nx:
                entries.append((r + nx, -1.0))
            for c, v in entries:
                rows.append(r)
                cols.append(c)
                vals.append(v)
    return sp.csr_matrix((vals, (rows, cols)), shape=(nx * nx, nx * nx))


def true_relres(A, b, x):
    return np.linalg.norm(b - A @ x.astype(np.float64)) / np.linalg.norm(b)


def scipy_bicgstab_iterations(A, b, rtol, maxiter=10000):
    count = [0]

    def cb(xk):
        count[0] += 1
    x, info = spla.bicgstab(A, b, tol=rtol, atol=0.0, maxiter=maxiter, callback=cb)
    return count[0], info


def scipy_gmres_iterations(A, b, rtol, restart, maxiter=10000):
    count = [0]

    def cb(rk):
        count[0] += 1
    x, info = spla.gmres(A, b, tol=rtol, atol=0.0, restart=restart, maxiter=maxiter,
                         callback=cb, callback_type="pr_norm")
    return count[0], info


def within(ours, theirs, share=0.10):
    return abs(ours - theirs) <= max(2, share * theirs)


@pytest.mark.parametrize("peclet", [0.5, 5.0])
@pytest.mark.parametrize("nx", [16, 32])
def test_bicgstab_matches_scipy(rng, nx, peclet):
    A = convdiff(nx, peclet)
    b = rng.uniform(-1, 1, A.shape[0])
    rtol = 1e-8
    res = {}
    x, info = nonzero.bicgstab(A, b, rtol=rtol, result=res)
    assert info == 0, res
    assert true_relres(A, b, x) <= rtol * 1.001
    theirs, their_info = scipy_bicgstab_iterations(A, b, rtol)
    assert their_info == 0
    assert within(res["iterations"], theirs), (res["iterations"], theirs)


@pytest.mark.parametrize("restart", [1, 5, 30])
@pytest.mark.parametrize("peclet", [0.5, 5.0])
def test_gmres_matches_scipy(rng, restart, peclet):
    A = convdiff(16, peclet)
    b = rng.uniform(-1, 1, A.shape[0])
    rtol = 1e-8
    for flexible in (False, True):
        res = {}
        x, info = nonzero.gmres(A, b, rtol=rtol, restart=restart, maxiter=20000,
                                flexible=flexible, result=res)
        assert info == 0, res
        assert true_relres(A, b, x) <= rtol * 1.001
        theirs, their_info = scipy_gmres_iterations(A, b, rtol, restart, maxiter=20000)
        assert their_info == 0
        assert within(res["iterations"], theirs), (restart, flexible, res["iterations"], theirs)


def test_preconditioners_agree(rng):
    """M='jacobi', a callable and a LinearOperator applying D^-1 give the same iterations; the
    result is at the tolerance in float32 too."""
    A = convdiff(20, 3.0)
    A = A + sp.diags(rng.uniform(0, 4, A.shape[0]))  # a non-constant diagonal
    A = A.tocsr()
    b = rng.uniform(-1, 1, A.shape[0])
    dinv = 1.0 / A.diagonal()
    op = spla.LinearOperator(A.shape, matvec=lambda r: dinv * r)
    for solve in (nonzero.bicgstab, nonzero.gmres):
        its = []
        for M in ("jacobi", lambda r: dinv * r, op):
            res = {}
            x, info = solve(A, b, rtol=1e-9, M=M, result=res)
            assert info == 0 and true_relres(A, b, x) <= 1e-9 * 1.001
            its.append(res["iterations"])
        assert its[0] == its[1] == its[2], its
    x, info = nonzero.gmres(A.astype(np.float32), b.astype(np.float32), rtol=1e-5)
    assert info == 0 and x.dtype == np.float32
    assert true_relres(A, b, x) <= 1e-5 * 1.1


def test_statuses(rng):
    A = convdiff(16, 2.0)
    b = rng.uniform(-1, 1, A.shape[0])
    res = {}
    x, info = nonzero.bicgstab(A, b, rtol=1e-10, maxiter=2, result=res)
    assert info == 2 and res["status"] == "max_iterations" and res["reason"] == "max_iterations"
    assert abs(res["relative_residual"] - true_relres(A, b, x)) <= 1e-9
    x, info = nonzero.gmres(sp.csr_matrix([[0.0, 1.0], [-1.0, 0.0]]), np.ones(2), restart=1,
                            result=res)
    assert info > 0 and res["reason"] == "stagnated"
    x, info = nonzero.bicgstab(sp.csr_matrix([[0.0, 1.0], [-1.0, 0.0]]), np.ones(2), result=res)
    assert info == -1 and res["reason"] == "breakdown_rho"
    x, info = nonzero.gmres(A, np.zeros(A.shape[0]), x0=np.ones(A.shape[0]))
    assert info == 0 and not x.any()

    def broken(r):
        raise RuntimeError("no preconditioner today")
    with pytest.raises(RuntimeError):
        nonzero.gmres(A, b, M=broken)
    norms = []
    x, info = nonzero.gmres(A, b, rtol=1e-8, callback=norms.append, result=res)
    assert info == 0 and len(norms) == res["iterations"]


def test_minres_indefinite(rng):
    """MINRES on a symmetric indefinite matrix (a shifted Laplacian): the true residual at the
    tolerance, iterations near SciPy's (whose stopping test is an estimate), plain and Jacobi."""
    A = (convdiff(20, 0.0) - 0.5 * sp.identity(400)).tocsr()
    b = rng.uniform(-1, 1, A.shape[0])
    for M in (None, "jacobi"):
        res = {}
        x, info = nonzero.minres(A, b, rtol=1e-9, M=M, result=res)
        assert info == 0 and true_relres(A, b, x) <= 1e-9 * 1.001, res
        count = [0]

        def cb(xk):
            count[0] += 1
        spla.minres(A, b, tol=1e-9, callback=cb)
        assert abs(res["iterations"] - count[0]) <= max(3, 0.15 * count[0]), (res["iterations"],
                                                                               count[0])


def test_west0067():
    """A real non-symmetric matrix (zero diagonal entries): full GMRES converges in n steps, as
    SciPy's does."""
    A = scipy.io.mmread(os.path.join(DATA, "west0067.mtx")).tocsr()
    b = np.ones(A.shape[0])
    res = {}
    x, info = nonzero.gmres(A, b, rtol=1e-8, restart=67, result=res)
    assert info == 0 and true_relres(A, b, x) <= 1e-8 * 1.001
    theirs, their_info = scipy_gmres_iterations(A, b, 1e-8, 67)
    assert their_info == 0 and within(res["iterations"], theirs), (res["iterations"], theirs)


def test_builtin_preconditioners(rng):
    """M='ilu0' with BiCGSTAB and GMRES converges at the true tolerance in fewer iterations than
    without M, M='l1_jacobi' converges; M='ic0' with MINRES on the SPD Laplacian likewise; the
    shift report stays 0 on these M-matrices. (SciPy's spilu(drop_tol=0, fill_factor=1) is a
    threshold ILU, not ILU(0), so only the counts without M are compared.)"""
    A = convdiff(24, 2.0)
    b = rng.standard_normal(A.shape[0])
    for solver in (nonzero.bicgstab, nonzero.gmres):
        plain = {}
        x, info = solver(A, b, rtol=1e-8, maxiter=5000, result=plain)
        assert info == 0
        for M in ("ilu0", "l1_jacobi"):
            res = {}
            x, info = solver(A, b, rtol=1e-8, maxiter=5000, M=M, result=res)
            assert info == 0 and true_relres(A, b, x) <= 1e-8 * 1.001
            # l1-Jacobi is a scaling here (constant diagonal and row sums): convergence only
            assert M != "ilu0" or res["iterations"] < plain["iterations"], (
                res["iterations"], plain["iterations"])
            assert res["precond_shift"] == 0.0
    L = convdiff(20, 0.0)  # the 2-D Laplacian: symmetric positive definite
    b = rng.standard_normal(L.shape[0])
    plain, res = {}, {}
    x, info = nonzero.minres(L, b, rtol=1e-8, result=plain)
    assert info == 0
    x, info = nonzero.minres(L, b, rtol=1e-8, M="ic0", result=res)
    assert info == 0 and true_relres(L, b, x) <= 1e-8 * 1.001
    assert res["iterations"] < plain["iterations"] and res["precond_attempts"] == 1
    with pytest.raises(nonzero.InvalidArgumentError):
        nonzero.bicgstab(A, np.ones(A.shape[0]), M="ilu1")


# ---- callbacks through the C solver's monitor; preconditioners for nonzero.cg -----------------

def poisson(nx):
    return convdiff(nx, 0.0)  # the 5-point Laplacian: symmetric positive definite


def scipy_cg_iterations(A, b, rtol, M=None):
    count = [0]

    def cb(xk):
        count[0] += 1
    x, info = spla.cg(A, b, tol=rtol, atol=0.0, maxiter=10000, M=M, callback=cb)
    return count[0], info


class Stop(Exception):
    pass


def stop_at(k, seen):
    """A callback that keeps copies of its iterates and raises at call k."""
    def cb(xk):
        seen.append(np.array(xk, copy=True))
        if len(seen) == k:
            raise Stop("stop at %d" % k)
    return cb


def test_cg_callback_runs_in_c(rng):
    """cg(callback=...) is nz_solve's CG with a monitor: the iterations of the plain solve, one
    call per iteration with a read-only NumPy view of the iterate, the last one the returned x."""
    A = poisson(24)
    n = A.shape[0]
    b = rng.uniform(-1, 1, n)
    plain, res = {}, {}
    x0, info0 = nonzero.cg(A, b, rtol=1e-9, result=plain)
    seen, kinds = [], []

    def cb(xk):
        kinds.append((type(xk), xk.shape, xk.dtype, xk.flags.writeable))
        seen.append(xk.copy())
    x, info = nonzero.cg(A, b, rtol=1e-9, callback=cb, result=res)
    assert info == 0 == info0 and true_relres(A, b, x) <= 1e-9 * 1.001
    assert res["reason"] == "converged"
    assert abs(res["iterations"] - plain["iterations"]) <= 1, (res["iterations"],
                                                              plain["iterations"])
    assert len(seen) == res["iterations"]
    assert set(kinds) == {(np.ndarray, (n,), np.dtype(np.float64), False)}
    np.testing.assert_array_equal(seen[-1], x)
    # the iterates are CG's: the A-norm of the error decreases monotonically
    e = [xk - x for xk in seen]
    energy = [float(v @ (A @ v)) for v in e[:-1]]
    assert all(a > c for a, c in zip(energy, energy[1:]))
    # float32 operands give float32 iterates
    dt = []
    nonzero.cg(A.astype(np.float32), b.astype(np.float32), rtol=1e-4,
               callback=lambda xk: dt.append(xk.dtype))
    assert dt and set(dt) == {np.dtype(np.float32)}


@pytest.mark.parametrize("solver", ["cg", "bicgstab", "minres"])
def test_callback_exception_stops_the_solve(rng, solver):
    """An exception raised in the callback propagates after the C solve stopped at that
    iteration (the report says so)."""
    A = poisson(20) if solver != "bicgstab" else convdiff(20, 2.0)
    b = rng.uniform(-1, 1, A.shape[0])
    seen, res = [], {}
    with pytest.raises(Stop, match="stop at 3"):
        getattr(nonzero, solver)(A, b, rtol=1e-10, callback=stop_at(3, seen), result=res)
    assert len(seen) == 3
    assert res["iterations"] == 3 and res["reason"] == "monitor_stopped", res
    assert res["status_code"] < 0


@pytest.mark.parametrize("solver", ["bicgstab", "minres"])
def test_bicgstab_minres_callback_iterates(rng, solver):
    """callback(xk) once per iteration with NumPy iterates of shape (n,), the last the returned
    x, and the iteration count of the solve without a callback."""
    A = convdiff(20, 2.0) if solver == "bicgstab" else (poisson(20) - 0.5 * sp.identity(400))
    A = A.tocsr()
    b = rng.uniform(-1, 1, A.shape[0])
    plain, res, seen = {}, {}, []

    def cb(xk):
        assert isinstance(xk, np.ndarray) and xk.shape == (A.shape[0],)
        seen.append(xk.copy())
    solve = getattr(nonzero, solver)
    solve(A, b, rtol=1e-9, result=plain)
    x, info = solve(A, b, rtol=1e-9, callback=cb, result=res)
    assert info == 0 and true_relres(A, b, x) <= 1e-9 * 1.001
    assert res["iterations"] == plain["iterations"] and len(seen) == res["iterations"]
    np.testing.assert_array_equal(seen[-1], x)
    # the iterates approach the solution
    errs = [np.linalg.norm(xk - x) for xk in seen]
    assert errs[len(errs) // 2] < 0.5 * errs[0]


def test_gmres_callback_residual_norms(rng):
    """gmres's callback(rk): one residual norm per Arnoldi step, during the solve, equal to the
    recorded history (SciPy's 'pr_norm' kind, not divided by ||b||); an exception stops it."""
    A = convdiff(16, 3.0)
    b = rng.uniform(-1, 1, A.shape[0])
    norms, res = [], {}
    x, info = nonzero.gmres(A, b, rtol=1e-8, restart=10, callback=norms.append, result=res)
    assert info == 0 and len(norms) == res["iterations"]
    assert all(isinstance(r, float) for r in norms)
    hist = np.array(res["history"][1:])
    same = np.isclose(norms, hist, rtol=1e-12, atol=0)
    # the history keeps the true residual where one was computed (a restart); the rest agree
    assert same.sum() >= 0.8 * len(norms), (norms, hist)
    assert norms[0] < np.linalg.norm(b) and norms[-1] <= 1.5e-8 * np.linalg.norm(b)
    calls = []

    def boom(rk):
        calls.append(rk)
        if len(calls) == 4:
            raise Stop("gmres")
    with pytest.raises(Stop):
        nonzero.gmres(A, b, rtol=1e-8, restart=10, callback=boom, result=res)
    assert len(calls) == 4 and res["iterations"] == 4


def test_cg_preconditioner_objects(rng):
    """nonzero.cg takes any preconditioner: IC(0) as an object, by name, and as a Python
    callable give the same iterations, fewer than without M, within 10% of SciPy's cg with the
    same preconditioner as a LinearOperator; the true residual meets the tolerance."""
    A = poisson(32)
    n = A.shape[0]
    b = rng.uniform(-1, 1, n)
    rtol = 1e-8
    plain = {}
    x, info = nonzero.cg(A, b, rtol=rtol, result=plain)
    assert info == 0
    P = nonzero.ic0(A)
    its = []
    for M in (P, "ic0", lambda r: P @ r, spla.LinearOperator(A.shape, matvec=P.matvec)):
        res = {}
        x, info = nonzero.cg(A, b, rtol=rtol, M=M, result=res)
        assert info == 0 and true_relres(A, b, x) <= rtol * 1.001, res
        its.append(res["iterations"])
    assert len(set(its)) == 1, its
    assert its[0] < 0.7 * plain["iterations"], (its[0], plain["iterations"])
    theirs, their_info = scipy_cg_iterations(A, b, rtol, M=P.aslinearoperator())
    assert their_info == 0 and within(its[0], theirs), (its[0], theirs)
    # the other objects and names converge too; a callback still sees every iterate
    for M in (nonzero.jacobi(A), nonzero.block_jacobi(A, 8), nonzero.chebyshev(A), "l1_jacobi",
              "block_jacobi", "chebyshev"):
        res, seen = {}, []
        x, info = nonzero.cg(A, b, rtol=rtol, M=M, callback=seen.append, result=res)
        assert info == 0 and true_relres(A, b, x) <= rtol * 1.001, (M, res)
        assert len(seen) == res["iterations"]
    # errors before any work: a wrong name, a wrong dtype object
    with pytest.raises(nonzero.InvalidArgumentError, match="ilu1"):
        nonzero.cg(A, b, M="ilu1")
    with pytest.raises(nonzero.InvalidArgumentError, match="float32"):
        nonzero.cg(A, b, M=nonzero.ic0(A.astype(np.float32)))


def test_cg_python_preconditioner_exception(rng):
    A = poisson(12)
    b = rng.uniform(-1, 1, A.shape[0])

    def broken(r):
        raise RuntimeError("no preconditioner today")
    with pytest.raises(RuntimeError, match="today"):
        nonzero.cg(A, b, M=broken)


def test_cg_complex_callback(rng):
    """A complex b with a callback: the two real solves report the complex iterate."""
    A = poisson(10)
    n = A.shape[0]
    b = rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)
    seen = []
    res = {}
    x, info = nonzero.cg(A, b, rtol=1e-10, callback=lambda xk: seen.append(xk.copy()),
                         result=res)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b) * 1.01
    assert len(seen) == res["iterations"] + res["imag"]["iterations"]
    assert all(v.dtype == np.complex128 and v.shape == (n,) for v in seen)
    k = res["iterations"]
    assert not seen[k - 1].imag.any() and np.array_equal(seen[-1], x)
    np.testing.assert_array_equal(seen[k].real, x.real)
    with pytest.raises(Stop):
        nonzero.cg(A, b, callback=stop_at(2, []))
