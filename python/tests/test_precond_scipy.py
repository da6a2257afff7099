"""test_precond_scipy.py: nonzero's preconditioner objects against NumPy / SciPy references, as M in SciPy's and nonzero's solvers; spsolve_triangular against SciPy's."""
import glob
import os

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import nonzero
from conftest import DATA


def convdiff(nx, peclet):
    """5-point upwind convection-diffusion (as test_krylov_scipy.py and tests/unit/test_krylov.c)."""
    n = nx * nx
    main = np.full(n, 4.0 + 2.0 * peclet)
    west = np.full(n - 1, -1.0 - peclet)
    east = np.full(n - 1, -1.0)
    west[nx - 1::nx] = 0.0  # no coupling across grid rows
    east[nx - 1::nx] = 0.0
    south = np.full(n - nx, -1.0 - peclet)
    north = np.full(n - nx, -1.0)
    return sp.diags([main, west, east, south, north], [0, -1, 1, -nx, nx], format="csr")


def laplace(nx):
    return convdiff(nx, 0.0)


def rand_vec(rng, n):
    return rng.uniform(-1, 1, n)


def close(a, b, tol):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.max(np.abs(a - b)) <= tol * max(np.max(np.abs(b)), 1e-300)


# ---- each constructor's apply against a reference ---------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jacobi_kinds(rng, dtype):
    A = convdiff(9, 1.0).astype(dtype)
    r = rand_vec(rng, A.shape[0]).astype(dtype)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    d = A.diagonal().astype(np.float64)
    l1 = np.asarray(abs(A).sum(axis=1)).ravel().astype(np.float64)
    M = nonzero.jacobi(A)
    assert M.shape == A.shape and M.dtype == dtype and M.kind == "jacobi"
    assert close(M @ r, r / d, tol)
    assert close(nonzero.l1_jacobi(A).matvec(r), r / l1, tol)


def dense_block_inverse_apply(A, b, r):
    D = A.toarray().astype(np.float64)
    n = D.shape[0]
    z = np.empty(n)
    for r0 in range(0, n, b):
        r1 = min(r0 + b, n)
        z[r0:r1] = np.linalg.inv(D[r0:r1, r0:r1]) @ r[r0:r1]
    return z


@pytest.mark.parametrize("block_size", [1, 2, 4, 5, 7, 32])
def test_block_jacobi(rng, block_size):
    A = convdiff(10, 2.0)  # n = 100: 5, 7 and 32 leave a shorter last block
    r = rand_vec(rng, 100)
    M = nonzero.block_jacobi(A, block_size=block_size)
    assert M.info()["block_size"] == block_size
    assert close(M @ r, dense_block_inverse_apply(A, block_size, r), 1e-12)


def test_block_jacobi_float32_and_errors(rng):
    A = convdiff(8, 1.0).astype(np.float32)
    r = rand_vec(rng, 64).astype(np.float32)
    M = nonzero.block_jacobi(A)
    assert M.dtype == np.float32
    assert close(M @ r, dense_block_inverse_apply(A, 4, r.astype(np.float64)), 1e-5)
    S = sp.csr_matrix(np.kron(np.eye(2), np.array([[1.0, 2.0], [2.0, 4.0]])))
    with pytest.raises(nonzero.BreakdownError, match="rows 1 .. 2"):
        nonzero.block_jacobi(S, block_size=2)
    for bad in (0, 33):
        with pytest.raises(ValueError):
            nonzero.block_jacobi(A, block_size=bad)


def chebyshev_reference(A, r, degree, lmin, lmax):
    """Saad's Alg. 12.1 on D^-1 A z = D^-1 r from z = 0, the residual kept Jacobi-scaled."""
    D = A.diagonal().astype(np.float64)
    A = A.astype(np.float64)
    theta, delta = (lmax + lmin) / 2, (lmax - lmin) / 2
    sigma = theta / delta
    rho = 1 / sigma
    res = r / D
    d = res / theta
    z = d.copy()
    for _ in range(1, degree):
        rho_next = 1 / (2 * sigma - rho)
        res = res - (A @ d) / D
        d = rho_next * rho * d + 2 * rho_next / delta * res
        z = z + d
        rho = rho_next
    return z


@pytest.mark.parametrize("degree", [1, 2, 3, 6])
def test_chebyshev(rng, degree):
    A = laplace(12)
    r = rand_vec(rng, A.shape[0])
    M = nonzero.chebyshev(A, degree=degree)
    info = M.info()
    assert info["degree"] == degree
    exact = 1 + np.cos(np.pi / 13)  # lambda_max(D^-1 A) of the 2-D Laplacian
    assert 0.9 * exact <= info["lambda_estimate"] <= exact * (1 + 1e-12)
    assert info["lambda_max"] == pytest.approx(1.1 * info["lambda_estimate"], rel=1e-14)
    assert info["lambda_min"] == pytest.approx(info["lambda_max"] / 30, rel=1e-14)
    z = chebyshev_reference(A, r, degree, info["lambda_min"], info["lambda_max"])
    assert close(M @ r, z, 1e-12)
    G = nonzero.chebyshev(A, degree=degree, lambda_min=0.1, lambda_max=2.5)
    assert G.info()["lambda_estimate"] == 0
    assert close(G @ r, chebyshev_reference(A, r, degree, 0.1, 2.5), 1e-12)


def ilu0_reference(A):
    """ILU(0) in NumPy (IKJ, updates kept on A's pattern): L (unit) and U."""
    D = A.toarray().astype(np.float64)
    pattern = D != 0
    n = D.shape[0]
    for i in range(1, n):
        for k in range(i):
            if not pattern[i, k]:
                continue
            D[i, k] /= D[k, k]
            for j in range(k + 1, n):
                if pattern[i, j]:
                    D[i, j] -= D[i, k] * D[k, j]
    return np.tril(D, -1) + np.eye(n), np.triu(D)


def test_ilu0_against_numpy_and_spilu(rng):
    A = convdiff(8, 1.5)
    r = rand_vec(rng, 64)
    Lf, Uf = ilu0_reference(A)
    z_ref = np.linalg.solve(Uf, np.linalg.solve(Lf, r))
    M = nonzero.ilu0(A)
    assert M.info()["attempts"] == 1 and M.info()["shift"] == 0
    assert close(M @ r, z_ref, 1e-12)
    # SuperLU's ILU with no dropping, fill bounded by nnz(A) and no pivoting: where its factors
    # keep A's pattern it is ILU(0); compare where it does
    lu = spla.spilu(A.tocsc(), drop_tol=0, fill_factor=1, permc_spec="NATURAL",
                    diag_pivot_thresh=0)
    if (lu.L + lu.U).nnz == A.nnz + A.shape[0] * 0 and np.all(lu.perm_r == np.arange(64)):
        assert close(M @ r, lu.solve(r), 1e-10)


def jacobi_triangular(T, r, sweeps):
    """k Jacobi sweeps on the triangular T: y0 = D^-1 r, y = D^-1 (r - E y)."""
    d = np.diag(T)
    E = T - np.diag(d)
    y = r / d
    for _ in range(sweeps):
        y = (r - E @ y) / d
    return y


@pytest.mark.parametrize("sweeps", [1, 3, 20])
def test_ilu0_sweeps(rng, sweeps):
    A = convdiff(8, 1.5)
    r = rand_vec(rng, 64)
    Lf, Uf = ilu0_reference(A)
    z_ref = jacobi_triangular(Uf, jacobi_triangular(Lf, r, sweeps), sweeps)
    M = nonzero.ilu0(A, sweeps=sweeps)
    assert M.info()["sweeps"] == sweeps
    assert close(M @ r, z_ref, 1e-12)
    exact = np.linalg.solve(Uf, np.linalg.solve(Lf, r))
    if sweeps < 3:  # a few sweeps approximate; more than the 15 levels are exact
        assert not close(M @ r, exact, 1e-12)
    if sweeps >= 15:
        assert close(M @ r, exact, 1e-12)
    # as M of BiCGSTAB: converged, the true residual at the tolerance
    b = rand_vec(rng, 64)
    res = {}
    x, info = nonzero.bicgstab(A, b, M=M, rtol=1e-10, result=res)
    assert info == 0 and np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b) * 1.0001
    for bad in (0, 256, -1):
        with pytest.raises(nonzero.InvalidArgumentError):
            nonzero.ilu0(A, sweeps=bad)
    Mi = nonzero.ic0(laplace(8), sweeps=sweeps)
    assert Mi.info()["sweeps"] == sweeps


def test_ic0(rng):
    A = laplace(8)
    r = rand_vec(rng, 64)
    D = A.toarray()
    pattern = np.tril(D != 0)
    Lf = np.zeros_like(D)
    for i in range(64):  # row form of IC(0) on the lower pattern
        for k in range(i):
            if pattern[i, k]:
                Lf[i, k] = (D[i, k] - Lf[i, :k] @ Lf[k, :k]) / Lf[k, k]
        Lf[i, i] = np.sqrt(D[i, i] - Lf[i, :i] @ Lf[i, :i])
    z_ref = np.linalg.solve(Lf.T, np.linalg.solve(Lf, r))
    assert close(nonzero.ic0(A) @ r, z_ref, 1e-12)


def test_operator_protocol(rng):
    A = convdiff(6, 1.0)
    M = nonzero.ilu0(A)
    assert isinstance(M, spla.LinearOperator)
    r = rand_vec(rng, 36)
    R = np.stack([r, 2 * r, -r], axis=1)
    Z = M @ R
    assert Z.shape == (36, 3) and close(Z[:, 1], 2 * (M @ r), 1e-14)
    assert (M @ r.reshape(36, 1)).shape == (36, 1)
    assert close(M.aslinearoperator().matvec(r), M @ r, 0)
    assert close(spla.aslinearoperator(M).matvec(r), M @ r, 0)
    assert M(r).shape == (36,)
    with pytest.raises(ValueError):
        M @ np.ones(35)
    with pytest.raises(nonzero.DimensionMismatchError):
        nonzero.jacobi(sp.random(4, 5, density=0.5, format="csr"))


# ---- as M in SciPy's and nonzero's GMRES -------------------------------------------------------

def scipy_gmres(A, b, M, rtol, restart):
    count = [0]

    def cb(rk):
        count[0] += 1
    x, info = spla.gmres(A, b, M=M, tol=rtol, atol=0.0, restart=restart, maxiter=1000,
                         callback=cb, callback_type="pr_norm")
    return x, info, count[0]


def scipy_bicgstab(A, b, M, rtol):
    count = [0]

    def cb(xk):
        count[0] += 1
    x, info = spla.bicgstab(A, b, M=M, tol=rtol, atol=0.0, maxiter=5000, callback=cb)
    return x, info, count[0]


@pytest.mark.parametrize("make", ["jacobi", "block_jacobi", "chebyshev", "ilu0"])
def test_as_m_in_gmres(rng, make):
    A = convdiff(24, 1.0)
    b = rand_vec(rng, A.shape[0])
    M = getattr(nonzero, make)(A)
    rtol = 1e-8
    x, info, theirs = scipy_gmres(A, b, M, rtol, 20)
    assert info == 0
    # SciPy stops on the preconditioned residual: check that it solved, loosely
    assert np.linalg.norm(b - A @ x) <= 1e-5 * np.linalg.norm(b)
    res = {}
    x, info = nonzero.gmres(A, b, M=M, rtol=rtol, restart=20, result=res)
    assert info == 0, res
    assert np.linalg.norm(b - A @ x) <= rtol * np.linalg.norm(b) * 1.001
    none = {}
    nonzero.gmres(A, b, rtol=rtol, restart=20, result=none)
    # (Jacobi on this constant diagonal only scales: the same iterations)
    assert res["iterations"] < none["iterations"] or make == "jacobi"
    # BiCGSTAB is right-preconditioned in both: the same method, the same counts within 10%
    x, info, theirs_b = scipy_bicgstab(A, b, M, rtol)
    assert info == 0
    resb = {}
    x, info = nonzero.bicgstab(A, b, M=M, rtol=rtol, result=resb)
    assert info == 0
    assert abs(resb["iterations"] - theirs_b) <= max(2, 0.1 * theirs_b), (resb["iterations"], theirs_b)
    # the object runs in C: the same iterations as the built-in kind by name
    if make in ("jacobi", "ilu0", "block_jacobi", "chebyshev"):
        byname = {}
        nonzero.bicgstab(A, b, M=make, rtol=rtol, result=byname)
        assert byname["iterations"] == resb["iterations"]


def test_gmres_iterations_match_scipy(rng):
    """GMRES with the same preconditioner: nonzero's Arnoldi steps within ~10% of SciPy's."""
    A = convdiff(24, 1.0)
    b = rand_vec(rng, A.shape[0])
    for make in ("jacobi", "block_jacobi", "ilu0"):
        M = getattr(nonzero, make)(A)
        x, info, theirs = scipy_gmres(A, b, M, 1e-8, 30)
        res = {}
        nonzero.gmres(A, b, M=M, rtol=1e-8, restart=30, result=res)
        assert abs(res["iterations"] - theirs) <= max(3, 0.10 * theirs), (make, res["iterations"], theirs)


def test_minres_chebyshev_spd(rng):
    A = laplace(20)
    b = rand_vec(rng, A.shape[0])
    plain, cheb = {}, {}
    x, info = nonzero.minres(A, b, rtol=1e-10, result=plain)
    assert info == 0
    x, info = nonzero.minres(A, b, rtol=1e-10, M=nonzero.chebyshev(A, degree=4), result=cheb)
    assert info == 0
    assert 2 * cheb["iterations"] < plain["iterations"]
    with pytest.raises(Exception):
        nonzero.gmres(laplace(5), np.ones(25), M=nonzero.jacobi(A))  # another dimension


# ---- spsolve_triangular -------------------------------------------------------------------------

def real_matrices():
    out = []
    for path in sorted(glob.glob(os.path.join(DATA, "*.mtx"))):
        try:
            M = scipy.io.mmread(path)
        except Exception:
            continue
        if not sp.issparse(M) or M.shape[0] != M.shape[1] or M.shape[0] < 2 or \
                not np.isrealobj(M.data):
            continue
        out.append((os.path.basename(path), sp.csr_matrix(M, dtype=np.float64)))
    return out


REAL = real_matrices()


@pytest.mark.skipif(not REAL, reason="no square real matrices in tests/data")
@pytest.mark.parametrize("name,A", REAL, ids=[n for n, _ in REAL])
def test_spsolve_triangular_real(rng, name, A):
    n = A.shape[0]
    # a dominant diagonal so every triangle is non-singular and the solves are well conditioned
    rowsum = np.asarray(abs(A).sum(axis=1)).ravel()
    B = (A + sp.diags(rowsum + 1.0)).tocsr()
    b = rand_vec(rng, n)
    for lower in (True, False):
        T = (sp.tril(B) if lower else sp.triu(B)).tocsr()
        ours = nonzero.spsolve_triangular(T, b, lower=lower)
        theirs = spla.spsolve_triangular(T, b, lower=lower)
        assert close(ours, theirs, 1e-10), (name, lower)
        Tu = (sp.tril(B, -1) if lower else sp.triu(B, 1)).tocsr() + sp.eye(n, format="csr")
        ours = nonzero.spsolve_triangular(Tu, b, lower=lower, unit_diagonal=True)
        theirs = spla.spsolve_triangular(Tu, b, lower=lower, unit_diagonal=True)
        assert close(ours, theirs, 1e-10), (name, lower, "unit")
        # a 2-D b (one column, and three)
        B2 = np.stack([b, -2 * b, b + 1], axis=1)
        ours = nonzero.spsolve_triangular(T, B2, lower=lower)
        assert ours.shape == (n, 3)
        assert close(ours, spla.spsolve_triangular(T, B2, lower=lower), 1e-10)
        assert nonzero.spsolve_triangular(T, b.reshape(n, 1), lower=lower).shape == (n, 1)


def test_spsolve_triangular_semantics(rng):
    T = sp.csr_matrix(np.array([[2.0, 0, 0], [1, 4, 0], [0, 3, 5]]))
    b = np.array([2.0, 5, 8])
    x = nonzero.spsolve_triangular(T, b)
    assert close(x, spla.spsolve_triangular(T, b), 1e-15) and x.dtype == np.float64
    # float32 operands solve in float64, as SciPy's result type
    assert nonzero.spsolve_triangular(T.astype(np.float32), b.astype(np.float32)).dtype == np.float64
    # entries of the other triangle are not read
    assert close(nonzero.spsolve_triangular(sp.csr_matrix(T.toarray() + np.triu(np.ones((3, 3)), 1)), b),
                 x, 1e-15)
    c = b.copy()
    y = nonzero.spsolve_triangular(T, c, overwrite_b=True)
    assert close(y, x, 1e-15)
    Z = sp.csr_matrix(np.array([[2.0, 0, 0], [1, 0, 0], [0, 3, 5]]))
    with pytest.raises(np.linalg.LinAlgError, match="A is singular"):
        spla.spsolve_triangular(Z, b)
    with pytest.raises(np.linalg.LinAlgError, match="A is singular"):
        nonzero.spsolve_triangular(Z, b)
    missing = sp.csr_matrix(([2.0, 1.0, 5.0], ([0, 1, 2], [0, 0, 2])), shape=(3, 3))
    with pytest.raises(np.linalg.LinAlgError, match="A is singular"):
        nonzero.spsolve_triangular(missing, b)
    # unit_diagonal: the diagonal is never read (row 2 stores none). Against the dense solve:
    # SciPy 1.10 drops the last entry of each row as if it were the diagonal and gets this one
    # wrong ([2, 5, -7])
    U = np.tril(Z.toarray(), -1) + np.eye(3)
    assert close(nonzero.spsolve_triangular(Z, b, unit_diagonal=True), np.linalg.solve(U, b), 1e-15)
    with pytest.raises(ValueError):
        nonzero.spsolve_triangular(T, np.ones(4))
    with pytest.raises(ValueError):
        nonzero.spsolve_triangular(sp.csr_matrix(np.ones((2, 3))), np.ones(2))


# ---- smoothed-aggregation AMG ------------------------------------------------------------------

def laplace3d(m):
    """The 7-point Laplacian on an m^3 grid (Dirichlet), from Kronecker products."""
    T = sp.diags([np.full(m, 2.0), np.full(m - 1, -1.0), np.full(m - 1, -1.0)], [0, -1, 1])
    I = sp.identity(m)
    return (sp.kron(sp.kron(T, I), I) + sp.kron(sp.kron(I, T), I) +
            sp.kron(sp.kron(I, I), T)).tocsr()


def two_unknowns_per_node(m):
    """kron(3-D Laplacian, an SPD 2x2 block): 2 interleaved unknowns per node, and its
    near-nullspace: one constant vector per unknown."""
    A = sp.kron(laplace3d(m), np.array([[2.0, 1.0], [1.0, 3.0]]), format="csr")
    B = np.zeros((A.shape[0], 2))
    B[0::2, 0] = 1.0
    B[1::2, 1] = 1.0
    return A, B


def test_amg_cg_poisson3d(rng):
    A = laplace3d(20)  # n = 8000
    b = rand_vec(rng, A.shape[0])
    M = nonzero.amg(A)
    assert isinstance(M, nonzero.Preconditioner) and M.kind == "amg" and M.shape == A.shape
    res = {}
    x, info = nonzero.cg(A, b, M=M, rtol=1e-8, result=res)
    assert info == 0, res
    assert np.linalg.norm(b - A @ x) <= 1e-8 * np.linalg.norm(b)  # the true residual, by SciPy
    assert res["iterations"] <= 15, res["iterations"]
    jac = {}
    x, info = nonzero.cg(A, b, M="jacobi", rtol=1e-8, result=jac)
    assert info == 0
    assert res["iterations"] < jac["iterations"] / 3, (res["iterations"], jac["iterations"])
    # by name: nz_solve's AMG with the default options, the same preconditioner
    byname = {}
    x, info = nonzero.cg(A, b, M="amg", rtol=1e-8, result=byname)
    assert info == 0 and byname["iterations"] == res["iterations"]
    # a nonzero.csr_matrix gives the same object as the SciPy matrix it wraps
    assert np.array_equal(nonzero.amg(nonzero.csr_matrix(A))(b), M(b))


def test_amg_symmetric(rng):
    A = laplace3d(12)
    n = A.shape[0]
    for options in ({}, {"smoother": "l1_jacobi"}, {"smoother": "chebyshev", "degree": 3}):
        M = nonzero.amg(A, **options)
        for _ in range(3):
            u, v = rand_vec(rng, n), rand_vec(rng, n)
            vMu, uMv = v @ M(u), u @ M(v)
            assert abs(vMu - uMv) <= 1e-10 * abs(vMu), (options, vMu, uMv)
        # and positive definite on these vectors
        assert u @ M(u) > 0


def test_amg_update(rng):
    A = laplace3d(12)
    r = rand_vec(rng, A.shape[0])
    M = nonzero.amg(A)
    z = M(r)
    assert M.hierarchy()["update_seconds"] == 0.0
    assert M.update(2 * A) is M
    # every value of the hierarchy scales by 2 exactly (the Jacobi-scaled spectra are the same),
    # the cycle by 1/2: bitwise
    assert np.array_equal(M(r), z / 2)
    assert M.hierarchy()["update_seconds"] > 0.0
    M.update(A)
    assert np.array_equal(M(r), z)
    # another pattern: refused, and the object refuses to apply until an update succeeds
    other = (A + sp.eye(A.shape[0], k=7)).tocsr()
    with pytest.raises(nonzero.InvalidArgumentError, match="pattern"):
        M.update(other)
    with pytest.raises(nonzero.InvalidArgumentError):
        M(r)
    M.update(A)
    assert np.array_equal(M(r), z)
    # shape and dtype are checked before the C call
    with pytest.raises(nonzero.DimensionMismatchError):
        M.update(laplace3d(5))
    with pytest.raises(ValueError):
        M.update(A.astype(np.float32))
    # update rebuilds the other kinds (any pattern of the same shape)
    for make in (nonzero.jacobi, nonzero.chebyshev, nonzero.ilu0, nonzero.block_jacobi):
        P = make(A)
        zp = P(r)
        P.update(4 * A)
        assert close(P(r), zp / 4, 1e-14), make.__name__
    J = nonzero.jacobi(A)
    J.update(other + sp.eye(A.shape[0]))
    assert close(J(r), r / 7.0, 1e-15)


def test_amg_block_near_nullspace(rng):
    A, B = two_unknowns_per_node(12)  # 1728 nodes, n = 3456
    n = A.shape[0]
    b = rand_vec(rng, n)
    M = nonzero.amg(A, near_nullspace=B, block_size=2)
    h = M.hierarchy()
    assert h["levels"] >= 2 and h["block_size"][0] == 2 and h["block_size"][1] == 2
    res = {}
    x, info = nonzero.cg(A, b, M=M, rtol=1e-8, result=res)
    assert info == 0, res
    assert np.linalg.norm(b - A @ x) <= 1e-8 * np.linalg.norm(b)
    jac = {}
    nonzero.cg(A, b, M="jacobi", rtol=1e-8, result=jac)
    assert res["iterations"] <= 15 and res["iterations"] < jac["iterations"] / 3, \
        (res["iterations"], jac["iterations"])
    # the near-nullspace is copied at set-up (a C-ordered, non-float64 array is accepted)
    M2 = nonzero.amg(A, near_nullspace=np.ascontiguousarray(B, dtype=np.float32), block_size=2)
    assert np.array_equal(M2(b), M(b))
    # a 1-D near-nullspace is one column: the constant vector is the default
    ones = nonzero.amg(A, near_nullspace=np.ones(n))
    assert np.array_equal(ones(b), nonzero.amg(A)(b))
    # the W-cycle works too
    x, info = nonzero.cg(A, b, M=nonzero.amg(A, near_nullspace=B, block_size=2, cycle="W"),
                         rtol=1e-8)
    assert info == 0


def test_amg_hierarchy(rng):
    A = laplace3d(20)
    h = nonzero.amg(A).hierarchy()
    L = h["levels"]
    assert L >= 2
    for key in ("rows", "nnz", "block_size", "lambda_max", "mis_rounds", "unaggregated"):
        assert len(h[key]) == L, key
    assert h["rows"][0] == A.shape[0] and h["nnz"][0] == A.nnz
    assert all(h["rows"][l + 1] < h["rows"][l] for l in range(L - 1))
    assert h["rows"][-1] <= 256 and h["coarse_direct"]
    assert h["operator_complexity"] >= 1.0 and h["grid_complexity"] >= 1.0
    assert abs(h["operator_complexity"] - sum(h["nnz"]) / A.nnz) <= 1e-12
    assert abs(h["grid_complexity"] - sum(h["rows"]) / A.shape[0]) <= 1e-12
    # rho(D^-1 A) of the Laplacian: below 2
    assert 1.0 < h["lambda_max"][0] < 2.0
    assert h["smoother"] == "chebyshev" and h["coarse_shift"] == 0.0
    for phase in ("strength", "aggregate", "tentative", "smooth", "rap", "coarse", "transfer",
                  "setup"):
        assert h[phase + "_seconds"] >= 0.0, phase
    assert h["setup_seconds"] > 0.0 and h["update_seconds"] == 0.0
    # options reach the hierarchy
    h2 = nonzero.amg(A, max_levels=2, max_coarse=1024).hierarchy()
    assert h2["levels"] == 2
    assert nonzero.amg(A, smoother="l1_jacobi").hierarchy()["smoother"] == "l1_jacobi"
    # a non-symmetric A: 'auto' takes l1-Jacobi
    C = convdiff(16, 5.0)
    assert nonzero.amg(C).hierarchy()["smoother"] == "l1_jacobi"
    with pytest.raises(ValueError, match="AMG"):
        nonzero.jacobi(A).hierarchy()


def test_amg_bad_arguments():
    A = laplace3d(6)
    n = A.shape[0]
    for kwargs, exc, match in [
            ({"smoother": "gauss_seidel"}, ValueError, "unknown smoother"),
            ({"smoother": 1}, TypeError, "smoother"),
            ({"cycle": "F"}, ValueError, "unknown cycle"),
            ({"threshold": 1.5}, ValueError, "threshold"),
            ({"threshold": -0.1}, ValueError, "threshold"),
            ({"threshold": "0.1"}, TypeError, "threshold"),
            ({"omega": 2.0}, ValueError, "omega"),
            ({"max_levels": 25}, ValueError, "max_levels"),
            ({"max_coarse": 5000}, ValueError, "max_coarse"),
            ({"degree": 0}, ValueError, "degree"),
            ({"degree": 2.5}, TypeError, "degree"),
            ({"cheb_ratio": 1.0}, ValueError, "cheb_ratio"),
            ({"block_size": 5}, ValueError, "block_size"),
            ({"near_nullspace": np.ones((n - 1, 2))}, ValueError, "near_nullspace"),
            ({"near_nullspace": np.ones((n, 2, 1))}, ValueError, "near_nullspace"),
            ({"near_nullspace": np.ones((n, 17))}, ValueError, "near_nullspace"),
            ({"near_nullspace": np.full((n, 1), np.nan)}, ValueError, "near_nullspace"),
            ({"near_nullspace": np.ones(n) * 1j}, TypeError, "near_nullspace")]:
        with pytest.raises(exc, match=match):
            nonzero.amg(A, **kwargs)
    with pytest.raises(nonzero.DimensionMismatchError):
        nonzero.amg(sp.random(4, 5, density=0.5, format="csr"))
    with pytest.raises(nonzero.BreakdownError):
        nonzero.amg(sp.diags([1.0, 0.0, 2.0], format="csr"))
    with pytest.raises(ValueError, match="'amg'"):
        nonzero.cg(A, np.ones(n), M="amgx")  # the valid names are listed


def test_amg_scipy_linear_operator(rng):
    A = laplace3d(16)
    b = rand_vec(rng, A.shape[0])
    M = nonzero.amg(A)
    assert isinstance(M, spla.LinearOperator)
    for op in (M, M.aslinearoperator()):
        count = [0]

        def cb(xk):
            count[0] += 1
        x, info = spla.cg(A, b, M=op, tol=1e-8, atol=0.0, maxiter=100, callback=cb)
        assert info == 0
        assert np.linalg.norm(b - A @ x) <= 1e-7 * np.linalg.norm(b)
        assert count[0] <= 15, count[0]
    # and in nonzero's other solvers, by object
    x, info = nonzero.minres(A, b, M=M, rtol=1e-8)
    assert info == 0
    x, info = nonzero.gmres(A, b, M=M, rtol=1e-8, restart=30)
    assert info == 0
    C = convdiff(24, 1.0)
    x, info = nonzero.bicgstab(C, rand_vec(rng, C.shape[0]), M=nonzero.amg(C), rtol=1e-8)
    assert info == 0
