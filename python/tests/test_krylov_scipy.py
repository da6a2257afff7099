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
