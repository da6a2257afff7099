"""_precond.py: preconditioner objects (nz_precond_create / apply) as SciPy-compatible linear operators, and spsolve_triangular through nz_spsv plans (host or device)."""
import ctypes

import numpy as np

from . import _lib
from ._arrays import _PlanHandle, _cupy, _is_cupy, _ptr
from ._errors import DimensionMismatchError, InvalidArgumentError
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
    (nz_precond_create). Made by nonzero.jacobi, l1_jacobi, block_jacobi, chebyshev, ilu0 and
    ic0. It is

    - a preconditioner nonzero.cg / bicgstab / gmres / minres take as M= (the C object goes
      down to nz_solve: no Python call per iteration);
    - a linear operator: shape, dtype, matvec / matmat / M @ r apply M^-1 (a
      scipy.sparse.linalg.LinearOperator subclass when SciPy is importable, so SciPy's gmres,
      bicgstab, cg, ... take it as M); aslinearoperator() returns a SciPy LinearOperator (CuPy's
      for a matrix on the GPU).

    A matrix on the GPU (a CuPy sparse matrix, or nonzero.csr_matrix(..., device=True)) makes a
    device object: it applies to CuPy arrays (NumPy arrays are copied to the device and the
    result back) on the stream of the context it was made in. info() returns the C report
    (setup seconds, the ILU0 / IC0 shift, Chebyshev's eigenvalue interval, ...)."""

    def __init__(self, A, kind, **options):
        A = _matrix_of(A)
        if A.shape[0] != A.shape[1]:
            raise DimensionMismatchError("nonzero: a preconditioner needs a square matrix, not "
                                         "%dx%d" % A.shape)
        opts = _lib.PrecondOptions()
        for key, value in options.items():
            setattr(opts, key, value)
        ctx = A._ctx_now()
        h = A._handle_in(ctx)
        # a Chebyshev object borrows A: the handle (and A's arrays) live as long as the object
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
for _f in (jacobi, l1_jacobi, block_jacobi, chebyshev, ilu0, ic0):
    if _f.__doc__:  # None under python -OO
        _f.__doc__ = _f.__doc__.replace("%(returns)s", _RETURNS)
del _f
