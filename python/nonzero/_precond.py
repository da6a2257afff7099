"""_precond.py: preconditioner objects (nz_precond_create / apply) as SciPy-compatible linear operators, and spsolve_triangular through nz_spsv plans (host or device)."""
import ctypes
import math
import operator

import numpy as np

from . import _lib
from ._arrays import _PlanHandle, _cupy, _is_cupy, _ptr
from ._errors import DimensionMismatchError, InvalidArgumentError, WrongLocationError
from ._matrix import _Transposed, csr_matrix

L = _lib.lib

try:  # a SciPy LinearOperator when SciPy is importable, so SciPy's solvers take it as M
    from scipy.sparse.linalg import LinearOperator as _Base
except ImportError:  # NumPy only: the same methods, without SciPy's base class
    _Base = object


def _matrix_of(A):
    """A nonzero.csr_matrix of A (borrowing SciPy / CuPy arrays where it can)."""
    if isinstance(A, _Transposed):
        return A.materialize()
    return A if isinstance(A, csr_matrix) else csr_matrix(A, copy=None)


class Preconditioner(_Base):
    """z = M^-1 r for a preconditioner built once in C from the square matrix A
    (nz_precond_create). Made by nonzero.jacobi, l1_jacobi, block_jacobi, chebyshev, ilu0,
    ic0 and amg. It is

    - a preconditioner nonzero.cg / bicgstab / gmres / minres take as M= (the C object goes
      down to nz_solve: no Python call per iteration);
    - a linear operator: shape, dtype, matvec / matmat / M @ r apply M^-1 (a
      scipy.sparse.linalg.LinearOperator subclass when SciPy is importable, so SciPy's gmres,
      bicgstab, cg, ... take it as M); aslinearoperator() returns a SciPy LinearOperator (CuPy's
      for a matrix on the GPU).

    A matrix on the GPU (a CuPy sparse matrix, or nonzero.csr_matrix(..., device=True)) makes a
    device object: it applies to CuPy arrays (NumPy arrays are copied to the device and the
    result back) on the stream of the context it was made in. info() returns the C report
    (setup seconds, the ILU0 / IC0 shift, Chebyshev's eigenvalue interval, ...), hierarchy()
    an AMG object's levels; update(A) rebuilds the object from new values of A."""

    def __init__(self, A, kind, amg=None, **options):
        A = _matrix_of(A)
        if A.shape[0] != A.shape[1]:
            raise DimensionMismatchError("nonzero: a preconditioner needs a square matrix, not "
                                         "%dx%d" % A.shape)
        opts = _lib.PrecondOptions()
        for key, value in options.items():
            setattr(opts, key, value)
        if amg is not None:  # an AmgOptions; its near_nullspace is read during the create only
            opts.amg = ctypes.pointer(amg)
        ctx = A._ctx_now()
        h = A._handle_in(ctx)
        # Chebyshev and AMG objects borrow A: the handle (and A's arrays) live as long as the
        # object
        self._h = _PlanHandle(ctx, L.nz_precond_destroy, (h, A))
        ctx.check(L.nz_precond_create(ctx.handle, ctypes.byref(self._h.ptr), h.ptr, kind,
                                      ctypes.byref(opts)), "nz_precond_create")
        self._ctx = ctx
        self.on_device = A.on_device
        self.kind = L.nz_precond_name(kind).decode().replace("-", "_")
        if _Base is object:
            self.shape = A.shape
            self.dtype = np.dtype(A.dtype)
        else:
            super().__init__(np.dtype(A.dtype), A.shape)

    def info(self):
        """What the set-up did (nz_precond_info).

        Returns
        -------
        dict
            The kind, the set-up time, memory, and the kind's own report (the shift an
            ILU(0)/IC(0) needed, Chebyshev's eigenvalue bounds, ...).

        Examples
        --------
        >>> import nonzero
        >>> nonzero.jacobi(nonzero.laplace2d(4)).info()["kind"]
        'jacobi'
        """
        info = _lib.PrecondInfo()
        self._ctx.check(L.nz_precond_info(self._h.ptr, ctypes.byref(info)), "nz_precond_info")
        out = {k: getattr(info, k) for k, _ in info._fields_}
        out["kind"] = L.nz_precond_name(info.kind).decode().replace("-", "_")
        return out

    def hierarchy(self):
        """The multigrid hierarchy of an AMG preconditioner (nz_amg_info); level 0 is A.

        Returns
        -------
        dict
            'levels' (levels including A's and the coarsest); per level, lists of that length:
            'rows', 'nnz', 'block_size' (unknowns per node; coarse levels: the near-nullspace's
            k), 'lambda_max' (the power-iteration estimate of rho(D^-1 A_l)), 'mis_rounds',
            'unaggregated' (nodes without a strong neighbour); 'operator_complexity' (sum of
            the levels' nnz / nnz(A)), 'grid_complexity' (sum of the levels' rows / rows(A)),
            'smoother' ('chebyshev' or 'l1_jacobi': the one the cycle uses, 'auto' resolved),
            'coarse_direct' (True: the coarsest level is solved by its dense LU inverse; False:
            by smoothing steps), 'coarse_shift' (the diagonal shift the coarsest LU needed, 0:
            none), and the set-up seconds per phase, summed over the levels:
            'strength_seconds', 'aggregate_seconds', 'tentative_seconds', 'smooth_seconds',
            'rap_seconds', 'coarse_seconds', 'transfer_seconds', 'setup_seconds', and
            'update_seconds' (the last update(), 0 when none).

        Raises
        ------
        InvalidArgumentError
            The preconditioner is not an AMG one.

        Examples
        --------
        >>> import nonzero
        >>> h = nonzero.amg(nonzero.laplace2d(64)).hierarchy()
        >>> h["levels"] >= 2, h["rows"][0], h["rows"][1] < h["rows"][0]
        (True, 4096, True)
        """
        if self.kind != "amg":
            raise InvalidArgumentError("nonzero: hierarchy() needs an AMG preconditioner "
                                       "(nonzero.amg), not %s" % self.kind)
        info = _lib.AmgInfo()
        self._ctx.check(L.nz_amg_info(self._h.ptr, ctypes.byref(info)), "nz_amg_info")
        levels = info.levels
        out = {"levels": levels}
        for key in ("rows", "nnz", "block_size", "lambda_max", "mis_rounds", "unaggregated"):
            out[key] = list(getattr(info, key))[:levels]
        for key in ("operator_complexity", "grid_complexity", "coarse_shift",
                    "strength_seconds", "aggregate_seconds", "tentative_seconds",
                    "smooth_seconds", "rap_seconds", "coarse_seconds", "transfer_seconds",
                    "setup_seconds", "update_seconds"):
            out[key] = getattr(info, key)
        out["smoother"] = _AMG_SMOOTHER_NAMES.get(info.smoother, str(info.smoother))
        out["coarse_direct"] = bool(info.coarse_direct)
        return out

    def update(self, A):
        """Set the preconditioner up again from new values of its matrix (nz_precond_update).

        A must have the shape, dtype, location (CPU / GPU) and pattern (row offsets and column
        indices) of the matrix the preconditioner was made from. An AMG object keeps its
        aggregation, tentative prolongators and symbolic products and recomputes the values
        only (much cheaper than nonzero.amg again); the other kinds are built again from A
        with their original options. Like the matrix it was made from, A is borrowed by
        Chebyshev and AMG objects: it must not change while the object uses it.

        Parameters
        ----------
        A : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
            The new values, in the pattern of the original matrix.

        Returns
        -------
        Preconditioner
            self, updated.

        Raises
        ------
        DimensionMismatchError
            A of another shape.
        InvalidArgumentError
            A of another dtype or location; for AMG, another pattern. After an error of the
            update itself the object refuses to apply until an update succeeds.
        BreakdownError
            The new values break the set-up (a zero diagonal, a singular block, ...).

        Examples
        --------
        >>> import numpy as np, nonzero
        >>> A = nonzero.laplace2d(16)
        >>> M = nonzero.amg(A)
        >>> r = np.ones(256)
        >>> z = M(r)
        >>> bool(np.array_equal(M.update(2 * A)(r), z / 2))
        True
        """
        A = _matrix_of(A)
        if A.shape != self.shape:
            raise DimensionMismatchError("nonzero: update: A is %dx%d, the preconditioner %dx%d"
                                         % (A.shape + self.shape))
        if np.dtype(A.dtype) != np.dtype(self.dtype):
            raise InvalidArgumentError("nonzero: update: A is %s, the preconditioner %s (use "
                                       "A.astype)" % (np.dtype(A.dtype).name,
                                                      np.dtype(self.dtype).name))
        if A.on_device != self.on_device:
            raise WrongLocationError("nonzero: update: A is on the %s, the preconditioner on "
                                     "the %s" % ("GPU" if A.on_device else "CPU",
                                                 "GPU" if self.on_device else "CPU"))
        ctx = self._ctx
        h = A._handle_in(ctx)
        st = L.nz_precond_update(self._h.ptr, h.ptr)
        if st < 0:
            # the object may point at the new matrix until an update succeeds: keep both
            self._h.keep = (self._h.keep, (h, A))
            ctx.check(st, "nz_precond_update")
        self._h.keep = (h, A)  # the object now refers to A only
        return self

    def _apply(self, r):
        """M^-1 r for one vector r (any shape with n entries), of the caller's array kind."""
        n = self.shape[0]
        cupy_in = _is_cupy(r)
        if self.on_device:
            cupy = _cupy()
            rv = cupy.ascontiguousarray(cupy.asarray(r).reshape(n), dtype=self.dtype)
            z = cupy.empty_like(rv)
        else:
            rv = np.ascontiguousarray((r.get() if cupy_in else np.asarray(r)).reshape(n),
                                      dtype=self.dtype)
            z = np.empty_like(rv)
        if n > 0:
            self._ctx.check(L.nz_precond_apply(self._h.ptr, _ptr(rv), _ptr(z)), "nz_precond_apply")
        if self.on_device and not cupy_in:
            return z.get()
        if cupy_in and not self.on_device:
            return _cupy().asarray(z)
        return z

    def matvec(self, x):
        """M^-1 x.

        Parameters
        ----------
        x : array_like, shape (n,) or (n, 1)
            NumPy on the host, CuPy on the device.

        Returns
        -------
        ndarray
            M^-1 x, of x's shape.

        Raises
        ------
        DimensionMismatchError
            x of another length.
        """
        shape = getattr(x, "shape", np.shape(x))
        if shape not in ((self.shape[0],), (self.shape[0], 1)):
            raise DimensionMismatchError("nonzero: x has shape %s, the preconditioner is %dx%d"
                                         % ((shape,) + self.shape))
        return self._apply(x).reshape(shape)

    def _matvec(self, x):  # SciPy's LinearOperator hook
        return self._apply(x).reshape(np.shape(x))

    def matmat(self, X):
        """M^-1 X, column by column.

        Parameters
        ----------
        X : ndarray, shape (n, k)

        Returns
        -------
        ndarray, shape (n, k)
        """
        if X.ndim != 2 or X.shape[0] != self.shape[0]:
            raise DimensionMismatchError("nonzero: X has shape %s, the preconditioner is %dx%d"
                                         % ((X.shape,) + self.shape))
        xp = _cupy() if _is_cupy(X) else np
        return xp.stack([self._apply(X[:, j]) for j in range(X.shape[1])], axis=1) \
            if X.shape[1] else xp.zeros(X.shape, self.dtype)

    def _matmat(self, X):
        return self.matmat(X)

    def __matmul__(self, x):
        if getattr(x, "ndim", np.ndim(x)) == 2 and x.shape[1] != 1:
            return self.matmat(x)
        return self.matvec(x)

    def __call__(self, x):
        """M^-1 x (matvec).

        Examples
        --------
        >>> import numpy as np, nonzero
        >>> M = nonzero.jacobi(nonzero.laplace2d(2))
        >>> M(np.ones(4)).tolist()
        [0.25, 0.25, 0.25, 0.25]
        """
        return self.matvec(x)

    def _adjoint(self):
        raise NotImplementedError("nonzero: a preconditioner applies M^-1 only (no adjoint)")

    def aslinearoperator(self):
        """A SciPy LinearOperator (CuPy's for a device object) whose matvec applies M^-1.

        Returns
        -------
        scipy.sparse.linalg.LinearOperator or cupyx.scipy.sparse.linalg.LinearOperator
            Usable as M= of SciPy's (CuPy's) solvers.
        """
        if self.on_device:
            from cupyx.scipy.sparse.linalg import LinearOperator
        else:
            from scipy.sparse.linalg import LinearOperator
        return LinearOperator(self.shape, matvec=self._apply, matmat=self.matmat,
                              dtype=self.dtype)

    def __repr__(self):
        return "<nonzero.Preconditioner %s %dx%d %s on the %s>" % (
            self.kind, self.shape[0], self.shape[1], np.dtype(self.dtype).name,
            "GPU" if self.on_device else "CPU")

    def __reduce__(self):
        raise TypeError("nonzero: a preconditioner object cannot be pickled (build it again)")


def jacobi(A):
    """Jacobi: z = D^-1 r, D = diag(A) (a missing, zero or non-finite diagonal entry raises
    BreakdownError naming it).

    Parameters
    ----------
    A : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
        The square matrix (on the device: the preconditioner is built and applied there).

    %(returns)s

    Raises
    ------
    BreakdownError
        A missing, zero or non-finite diagonal entry.

    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A = nonzero.laplace2d(4)
    >>> M = nonzero.jacobi(A)
    >>> (M @ np.full(16, 4.0)).tolist() == [1.0] * 16
    True
    """
    return Preconditioner(A, _lib.PRECOND_JACOBI)


def l1_jacobi(A):
    """l1-Jacobi: z_i = r_i / sum_j |a_ij| (positive definite for any A without zero rows).

    Parameters
    ----------
    A : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
        The square matrix (on the device: the preconditioner is built and applied there).

    %(returns)s

    Raises
    ------
    BreakdownError
        A row of zeros.

    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A = nonzero.laplace2d(16)
    >>> x, info = nonzero.cg(A, np.ones(256), M=nonzero.l1_jacobi(A), rtol=1e-8)
    >>> info
    0
    """
    return Preconditioner(A, _lib.PRECOND_L1_JACOBI)


def block_jacobi(A, block_size=4):
    """Block-Jacobi: z = B^-1 r, B the diagonal blocks of A of block_size rows (1..32; the last
    block holds the rows left over), each inverted in double at setup; the apply is one SpMV
    with the block inverses. A singular block raises BreakdownError naming its rows.

    Parameters
    ----------
    A : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
        The square matrix (on the device: the preconditioner is built and applied there).
    block_size : int, optional
        Rows of a block, 1 to 32 (default 4).

    %(returns)s

    Raises
    ------
    BreakdownError
        A singular block (the message names its rows).

    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A = nonzero.convdiff2d(16)
    >>> x, info = nonzero.bicgstab(A, np.ones(256), M=nonzero.block_jacobi(A, 8), rtol=1e-8)
    >>> info
    0
    """
    return Preconditioner(A, _lib.PRECOND_BLOCK_JACOBI, block_size=_positive(block_size,
                                                                            "block_size"))


def chebyshev(A, degree=3, lambda_min=None, lambda_max=None):
    """Chebyshev polynomial preconditioner for symmetric positive definite (or near) A:
    `degree` steps of the Chebyshev iteration for D^-1 A z = D^-1 r from z = 0 on
    [lambda_min, lambda_max]; by default lambda_max is estimated at setup (20 power steps,
    times 1.1) and lambda_min = lambda_max / 30. info() reports the interval used. A must not
    change while the object lives (it is borrowed, not copied).

    Parameters
    ----------
    A : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
        The square matrix (on the device: the preconditioner is built and applied there).
    degree : int, optional
        Chebyshev steps (default 3).
    lambda_min, lambda_max : float, optional
        The interval (default: estimated, see above).

    %(returns)s

    Raises
    ------
    BreakdownError
        A diagonal entry that is missing, zero or not finite.

    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A = nonzero.laplace2d(16)
    >>> x, info = nonzero.cg(A, np.ones(256), M=nonzero.chebyshev(A), rtol=1e-8)
    >>> info
    0
    """
    options = {"degree": _positive(degree, "degree")}
    if lambda_min is not None:
        options["lambda_min"] = float(lambda_min)
    if lambda_max is not None:
        options["lambda_max"] = float(lambda_max)
    return Preconditioner(A, _lib.PRECOND_CHEBYSHEV, **options)


def _sweeps(sweeps):
    """nz_precond_options_t.sweeps from ilu0 / ic0's sweeps= (None: exact solves)."""
    if sweeps is None:
        return {}
    sweeps = _positive(sweeps, "sweeps")
    if sweeps > 255:
        raise InvalidArgumentError("nonzero: sweeps must be at most 255, not %d" % sweeps)
    return {"sweeps": sweeps}


def ilu0(A, sweeps=None):
    """ILU(0): z = U^-1 L^-1 r with L\\U the incomplete LU of A in A's pattern (a bad pivot
    shifts the diagonal: info()['shift']). sweeps=k (1..255) replaces each exact triangular
    solve by k Jacobi sweeps (nz_spsv's NZ_SPSV_JACOBI): an approximation of the same
    preconditioner, fully parallel and much cheaper on a GPU; the outer method may need a few
    more iterations.

    Parameters
    ----------
    A : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
        The square matrix (on the device: the preconditioner is built and applied there).
    sweeps : int, optional
        None (exact triangular solves) or 1..255 Jacobi sweeps.

    %(returns)s

    Raises
    ------
    BreakdownError
        A zero pivot that no diagonal shift repairs.

    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A = nonzero.convdiff2d(32, peclet=2.0)
    >>> b = np.ones(A.shape[0])
    >>> x, info = nonzero.bicgstab(A, b, M=nonzero.ilu0(A), rtol=1e-10)
    >>> info
    0
    >>> x, info = nonzero.bicgstab(A, b, M=nonzero.ilu0(A, sweeps=3), rtol=1e-10)
    >>> info
    0
    """
    return Preconditioner(A, _lib.PRECOND_ILU0, **_sweeps(sweeps))


def ic0(A, sweeps=None):
    """IC(0): z = L^-T L^-1 r with L the incomplete Cholesky factor of A's lower triangle (A
    assumed symmetric). sweeps=k: Jacobi-sweep triangular solves, as for ilu0.

    Parameters
    ----------
    A : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
        The square matrix (on the device: the preconditioner is built and applied there).
    sweeps : int, optional
        None (exact triangular solves) or 1..255 Jacobi sweeps.

    %(returns)s

    Raises
    ------
    BreakdownError
        A non-positive pivot that no diagonal shift repairs.

    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A = nonzero.laplace2d(32)
    >>> x, info = nonzero.cg(A, np.ones(1024), M=nonzero.ic0(A), rtol=1e-10)
    >>> info
    0
    """
    return Preconditioner(A, _lib.PRECOND_IC0, **_sweeps(sweeps))


_AMG_SMOOTHERS = {"auto": _lib.AMG_SMOOTHER_AUTO, "chebyshev": _lib.AMG_SMOOTHER_CHEBYSHEV,
                  "l1_jacobi": _lib.AMG_SMOOTHER_L1_JACOBI,
                  "l1-jacobi": _lib.AMG_SMOOTHER_L1_JACOBI}
_AMG_SMOOTHER_NAMES = {_lib.AMG_SMOOTHER_AUTO: "auto", _lib.AMG_SMOOTHER_CHEBYSHEV: "chebyshev",
                       _lib.AMG_SMOOTHER_L1_JACOBI: "l1_jacobi"}
_AMG_CYCLES = {"V": _lib.AMG_CYCLE_V, "W": _lib.AMG_CYCLE_W}
_AMG_MAX_COARSE = 1024     # the coarsest level is inverted densely
_AMG_MAX_DEGREE = 16
_AMG_MAX_BLOCK = 64
_AMG_MAX_NULLSPACE = 16


def amg(A, near_nullspace=None, threshold=0.0, omega=None, max_levels=None, max_coarse=None,
        smoother="auto", degree=None, cheb_ratio=None, cycle="V", block_size=1):
    """Smoothed-aggregation algebraic multigrid: one V- (or W-) cycle from z = 0 per apply.

    The hierarchy is built once on the host (a GPU matrix is copied down once and every
    level uploaded; the cycles then run on the GPU): strength of connection, aggregation by a
    distance-2 maximal independent set, a tentative prolongator fitted to the near-nullspace,
    smoothed by one damped Jacobi step, and Galerkin coarse operators P^T A P, until at most
    max_coarse rows remain; the coarsest level is solved by a dense LU inverse. With either
    smoother and a V-cycle the preconditioner is symmetric positive definite for a symmetric
    positive definite A, so cg and minres can use it. hierarchy() reports the levels;
    update(A) recomputes the values for a matrix of the same pattern. A is borrowed, not
    copied: it must not change while the object lives.

    Parameters
    ----------
    A : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
        The square matrix, with a non-zero diagonal (on the device: the cycle runs there).
    near_nullspace : array_like, shape (n, k) or (n,), optional
        The vectors the coarse levels must represent (k at most 16): e.g. one constant vector
        per unknown of a node, or the rigid-body modes of elasticity. Default: the constant
        vector (k = 1). Read at set-up only.
    threshold : float, optional
        Strength of connection in [0, 1): node j is strongly connected to i when
        |a_ij| >= threshold sqrt(|a_ii a_jj|) (default 0: every off-diagonal non-zero is
        strong; 0.02 to 0.1 for anisotropic problems).
    omega : float, optional
        Prolongator smoothing weight in (0, 2), scaled by 1 / rho(D^-1 A) (default 4/3).
    max_levels : int, optional
        At most this many levels, 1 to 24 (default 10).
    max_coarse : int, optional
        Stop coarsening at or below this many rows, 1 to 1024 (default 256).
    smoother : {'auto', 'chebyshev', 'l1_jacobi'}, optional
        A Chebyshev polynomial in D^-1 A, or sweeps of l1-Jacobi (x += D_l1^-1 (b - A x),
        D_l1 the l1 row norms). 'auto' (default): Chebyshev for a symmetric A, l1-Jacobi
        otherwise (a Chebyshev polynomial on a real interval can amplify the complex spectrum
        of a strongly non-symmetric D^-1 A, e.g. convection); hierarchy()['smoother'] tells
        which.
    degree : int, optional
        Chebyshev: the polynomial degree; l1-Jacobi: sweeps; 1 to 16 (default 2).
    cheb_ratio : float, optional
        Chebyshev: the smoother damps [lambda_max / cheb_ratio, lambda_max] of D^-1 A; above 1
        (default 10).
    cycle : {'V', 'W'}, optional
        The cycle (default 'V').
    block_size : int, optional
        Unknowns per node, interleaved (1 to 64; it must divide the rows of A): aggregation
        runs on nodes, e.g. 3 for 3-D elasticity (default 1).

    %(returns)s

    Raises
    ------
    ValueError
        An unknown smoother or cycle name, an option out of range, a near_nullspace of the
        wrong shape or with non-finite entries, a block_size that does not divide the rows
        (InvalidArgumentError or DimensionMismatchError, both ValueError).
    TypeError
        An option of the wrong type (a smoother that is not a string, a float block_size, a
        complex near_nullspace, ...).
    BreakdownError
        A diagonal entry that is zero or not finite.

    Examples
    --------
    >>> import numpy as np, nonzero
    >>> A = nonzero.laplace3d(16)
    >>> res = {}
    >>> x, info = nonzero.cg(A, np.ones(4096), M=nonzero.amg(A), rtol=1e-8, result=res)
    >>> info, res["iterations"] <= 15
    (0, True)
    """
    A = _matrix_of(A)
    n = A.shape[0]
    if A.shape[0] != A.shape[1]:
        raise DimensionMismatchError("nonzero: a preconditioner needs a square matrix, not "
                                     "%dx%d" % A.shape)
    opts = _lib.AmgOptions()
    opts.threshold = _real_in(threshold, "threshold", lambda t: 0.0 <= t < 1.0, "in [0, 1)")
    if omega is not None:
        opts.omega = _real_in(omega, "omega", lambda w: 0.0 < w < 2.0, "in (0, 2)")
    if max_levels is not None:
        opts.max_levels = _int_in(max_levels, "max_levels", 1, _lib.AMG_MAX_LEVELS)
    if max_coarse is not None:
        opts.max_coarse = _int_in(max_coarse, "max_coarse", 1, _AMG_MAX_COARSE)
    opts.smoother = _name_in(smoother, "smoother", _AMG_SMOOTHERS, str.lower,
                             "'auto', 'chebyshev', 'l1_jacobi'")
    if degree is not None:
        opts.smoother_degree = _int_in(degree, "degree", 1, _AMG_MAX_DEGREE)
    if cheb_ratio is not None:
        opts.cheb_ratio = _real_in(cheb_ratio, "cheb_ratio", lambda c: c > 1.0, "above 1")
    opts.cycle = _name_in(cycle, "cycle", _AMG_CYCLES, str.upper, "'V', 'W'")
    opts.block_size = _int_in(block_size, "block_size", 1, _AMG_MAX_BLOCK)
    if n % opts.block_size != 0:
        raise DimensionMismatchError("nonzero.amg: block_size %d does not divide the %d rows "
                                     "of A" % (opts.block_size, n))
    B = None
    if near_nullspace is not None:
        B = _near_nullspace(near_nullspace, n)
        opts.nullspace_dim = B.shape[1]
        opts.near_nullspace = B.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    M = Preconditioner(A, _lib.PRECOND_AMG, amg=opts)
    del B  # read during nz_precond_create only: alive until here
    return M


def _near_nullspace(B, n):
    """near_nullspace= as an (n, k) Fortran-ordered float64 array (a new one or B itself)."""
    if _is_cupy(B):
        B = B.get()
    B = np.asarray(B)
    if B.dtype.kind not in "biuf":
        raise TypeError("nonzero.amg: near_nullspace must be a real array, not %s" % B.dtype)
    if B.ndim == 1:
        B = B.reshape(-1, 1)
    if B.ndim != 2 or B.shape[0] != n:
        raise InvalidArgumentError("nonzero.amg: near_nullspace must have shape (%d, k) or "
                                   "(%d,) for the %d rows of A, not %s"
                                   % (n, n, n, np.shape(B)))
    if not 1 <= B.shape[1] <= _AMG_MAX_NULLSPACE:
        raise InvalidArgumentError("nonzero.amg: near_nullspace must have 1 to %d columns, not "
                                   "%d" % (_AMG_MAX_NULLSPACE, B.shape[1]))
    B = np.asfortranarray(B, dtype=np.float64)
    if not np.all(np.isfinite(B)):
        raise InvalidArgumentError("nonzero.amg: near_nullspace has entries that are not "
                                   "finite")
    return B


def _int_in(value, name, lo, hi):
    """An integer option in lo..hi: TypeError for a non-integer, ValueError out of range."""
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError("nonzero.amg: %s must be an integer, not %r" % (name, value)) from None
    if not lo <= value <= hi:
        raise InvalidArgumentError("nonzero.amg: %s must be in %d .. %d, not %d"
                                   % (name, lo, hi, value))
    return value


def _real_in(value, name, ok, what):
    """A finite real option that passes ok: TypeError for a non-number, ValueError else."""
    if isinstance(value, (str, bytes)) or isinstance(value, complex):
        raise TypeError("nonzero.amg: %s must be a real number, not %r" % (name, value))
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise TypeError("nonzero.amg: %s must be a real number, not %r" % (name, value)) from None
    if not (math.isfinite(x) and ok(x)):
        raise InvalidArgumentError("nonzero.amg: %s must be %s, not %r" % (name, what, value))
    return x


def _name_in(value, name, table, fold, valid):
    """The enum value of a name option: TypeError for a non-string, ValueError if unknown."""
    if not isinstance(value, str):
        raise TypeError("nonzero.amg: %s must be a string (%s), not %r" % (name, valid, value))
    key = fold(value)
    if key not in table:
        raise InvalidArgumentError("nonzero.amg: unknown %s %r (valid: %s)"
                                   % (name, value, valid))
    return table[key]


def _positive(value, name):
    try:
        value = int(value)
    except (TypeError, ValueError):
        raise TypeError("nonzero: %s must be an integer, not %r" % (name, value)) from None
    if value < 1:
        raise InvalidArgumentError("nonzero: %s must be >= 1, not %d" % (name, value))
    return value


def spsolve_triangular(A, b, lower=True, overwrite_A=False, overwrite_b=False,
                       unit_diagonal=False):
    """Solve A x = b for a triangular sparse A, as scipy.sparse.linalg.spsolve_triangular:
    lower=True uses the lower triangle of A (entries of the other triangle are ignored);
    unit_diagonal=True takes the diagonal as ones without reading it. b: shape (n,) or (n, k);
    x has b's shape and dtype np.result_type(A.dtype, b.dtype, np.float64). A missing or zero
    diagonal entry raises numpy.linalg.LinAlgError('A is singular: ...'), as SciPy does. Runs
    in C through one nz_spsv plan (the level analysis once, then a solve per column of b):
    on the CPU for a host A and a NumPy b; on the GPU (the plan on the device, CuPy b and x)
    when A is on the device (a CuPy sparse matrix, csr_matrix(..., device=True)) or b is a
    CuPy array (a host A is then copied to the device, as nonzero.cg does); x is a CuPy array
    for a CuPy b, NumPy for a NumPy b. overwrite_b=True may reuse b for x (a contiguous 1-D
    float64 b of the solve's kind).

    Parameters
    ----------
    A : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
        Square; only the triangle asked for is read.
    b : ndarray or cupy.ndarray
        Shape (n,) or (n, k).
    lower : bool, optional
        The lower (default) or upper triangle.
    overwrite_A : bool, optional
        Accepted for SciPy's signature; A is never modified.
    overwrite_b : bool, optional
        x may reuse b.
    unit_diagonal : bool, optional
        Take the diagonal as ones.

    Returns
    -------
    x : ndarray or cupy.ndarray
        b's shape, float64.

    Raises
    ------
    numpy.linalg.LinAlgError
        A missing or zero diagonal entry ('A is singular: ...').
    ValueError
        A not square, or b's first dimension not A's.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, nonzero
    >>> T = sp.tril(nonzero.laplace2d(8).toscipy(), format="csr")
    >>> b = np.ones(64)
    >>> x = nonzero.spsolve_triangular(T, b)
    >>> bool(np.allclose(T @ x, b))
    True
    """
    cupy_b = _is_cupy(b)
    A = _matrix_of(A)
    device = A.on_device or cupy_b
    if device:
        xp = _cupy()
        if not A.on_device:
            A = A.to_device()
    else:
        xp = np
    bh = xp.asarray(b)
    n = A.shape[0]
    if A.shape[0] != A.shape[1]:
        raise ValueError("A must be a square matrix but its shape is %s." % (A.shape,))
    if bh.ndim not in (1, 2) or bh.shape[0] != n:
        raise ValueError("The size of the dimensions of A must be equal to the size of the "
                         "first dimension of b but the shape of A is %s and the shape of b is "
                         "%s." % (A.shape, bh.shape))
    dt = np.result_type(A.dtype, bh.dtype, np.float64)
    if dt != np.float64:
        raise TypeError("nonzero.spsolve_triangular: real operands only, not %s" % dt)
    if A.dtype != np.float64:
        A = A.astype(np.float64)
    if overwrite_b and cupy_b == device and bh is b and b.dtype == np.float64 \
            and b.flags.c_contiguous and b.ndim == 1:
        x = b
    else:
        x = xp.array(bh, dtype=np.float64, order="F", copy=True)
    if n > 0 and x.size > 0:
        ctx = A._ctx_now()
        h = A._handle_in(ctx)
        plan = _PlanHandle(ctx, L.nz_spsv_plan_destroy, (h, A))  # T must outlive the plan
        _spsv_check(ctx, L.nz_spsv_plan_create(
            ctx.handle, ctypes.byref(plan.ptr), h.ptr, _lib.OP_N,
            _lib.LOWER if lower else _lib.UPPER, _lib.UNIT if unit_diagonal else _lib.NON_UNIT,
            0), "nz_spsv_plan_create")
        for col in [x] if x.ndim == 1 else [x[:, j] for j in range(x.shape[1])]:
            # in place (x == y is allowed); on the GPU queued on the context's stream, which
            # is CuPy's current one (A._ctx_now), so x orders with the caller's work
            _spsv_check(ctx, L.nz_spsv_execute(plan.ptr, 1.0, _ptr(col), _ptr(col)),
                        "nz_spsv_execute")
        del plan
    if x.ndim == 2:
        x = xp.ascontiguousarray(x)
    if device and not cupy_b:
        return x.get()
    return x


def _spsv_check(ctx, st, what):
    """A missing or zero diagonal is SciPy's LinAlgError('A is singular: ...'); other errors
    the NonzeroError of the status."""
    if st < 0:
        msg = ctx.last_error()
        if -39 <= st <= -20 and "diagonal" in msg:
            raise np.linalg.LinAlgError("A is singular: %s" % msg)
        ctx.check(st, what)


def _native(M):
    """The C object of a Preconditioner (nonzero's solvers pass it down), else None."""
    return M if isinstance(M, Preconditioner) else None


_RETURNS = """Returns
    -------
    Preconditioner
        Pass it as M= to nonzero.cg / bicgstab / gmres / minres (applied in C), or apply it as
        z = M @ r."""
for _f in (jacobi, l1_jacobi, block_jacobi, chebyshev, ilu0, ic0, amg):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ = _f.__doc__.replace("%(returns)s", _RETURNS)
del _f
