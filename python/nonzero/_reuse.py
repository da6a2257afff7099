"""_reuse.py: products whose operands keep their patterns (SpGEMM plans, the Galerkin product),
the sparse sum C = alpha A + beta B, and their plans."""
import ctypes

from . import _lib
from ._arrays import _Handle, _PlanHandle
from ._errors import DimensionMismatchError, InvalidArgumentError
from ._ops import _host_handle, _operand

L = _lib.lib


def _pair(A, B, what):
    """Both operands as csr_matrix, on one side (host or device), of one dtype; their context
    (the first operand's) and their handles in it."""
    A, B = _operand(A), _operand(B)
    if A.dtype != B.dtype:
        raise InvalidArgumentError("nonzero: %s operands have dtypes %s and %s"
                                   % (what, A.dtype, B.dtype))
    if A.on_device != B.on_device:
        B = B.to_device() if A.on_device else B.to_host()
    if A.on_device:
        ctx = A._ctx_now()
        return A, B, ctx, A._handle_in(ctx), B._handle_in(ctx)
    ctx = A._h.ctx
    return A, B, ctx, _host_handle(A, ctx), _host_handle(B, ctx)


def _options(threads):
    o = _lib.SpgemmOptions()
    o.alg = _lib.SPGEMM_AUTO
    o.threads = int(threads)
    return o


def _result(C):
    """What a caller gets for the library's C: SciPy CSR over its host arrays (no copy) or a
    CuPy CSR view of its device arrays."""
    return C.tocupy() if C.on_device else C._toscipy_shared()


class _Reuse:
    """What the three plans share: the native plan, C, and the result handed out."""

    def _create_product(self, create, destroy, name, A, B, threads):
        """A SpGEMM or Galerkin plan (create / destroy: the native pair) of operands A, B
        already checked; keeps them as the plan's own and the product count."""
        kind = getattr(A, "_scipy_array", None)
        A, B, ctx, ha, hb = _pair(A, B, name)
        self._A, self._B = A, B
        p = _PlanHandle(ctx, destroy, ())
        c = _Handle(ctx, (ha, hb))
        info = _lib.SpgemmInfo()
        ctx.check(create(ctx.handle, ctypes.byref(p.ptr), ctypes.byref(c.ptr), ha.ptr, hb.ptr,
                         ctypes.byref(_options(threads)), ctypes.byref(info)), name)
        self.products = int(info.products)
        self._finish(ctx, p, c, kind)

    def _finish(self, ctx, plan_handle, c_handle, kind_scipy_array):
        from ._matrix import csr_matrix
        self._ctx = ctx
        self._plan = plan_handle
        c_handle.keep = ()
        self._C = csr_matrix(c_handle)
        if kind_scipy_array:
            self._C._scipy_array = True
        self._out = _result(self._C)

    @property
    def shape(self):
        """C's shape."""
        return self._C.shape

    def _handles(self, X, Y, X0, Y0, what):
        """Handles in the plan's context of the operands of a call (the plan's own where
        None); the library checks their location, dtype, shape and pattern."""
        X = _operand(X0 if X is None else X)
        Y = _operand(Y0 if Y is None else Y)
        for M in (X, Y):
            if M.dtype != self._C.dtype:
                raise InvalidArgumentError("nonzero: %s operand of dtype %s, the plan's is %s"
                                           % (what, M.dtype, self._C.dtype))
        if self._C.on_device:
            return X, Y, X._handle_in(self._ctx), Y._handle_in(self._ctx)
        return X, Y, _host_handle(X, self._ctx), _host_handle(Y, self._ctx)


class SpgemmPlan(_Reuse):
    """C = A @ B, computed once, and recomputed for operands with A's and B's patterns and new
    values (Galerkin products in every multigrid re-setup, Jacobians in Newton loops).

    Parameters
    ----------
    A, B : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
        The operands, of one dtype, both on the host or both on the device.
    threads : int, optional
        CPU threads of a host plan (0: the context's).

    Notes
    -----
    Calling the plan, ``P()`` or ``P(A2, B2)``, writes the new values into C's pattern without
    allocating and returns C: the same SciPy (host) or CuPy (device) matrix every time, whose
    values change in place (copy it to keep an old result). Values are summed in A's row order,
    a rounded product then a rounded addition, on the CPU and the GPU alike: a plan is bitwise
    reproducible, and a host plan's C is bitwise ``nonzero.spgemm(A, B, alg='cpu')``. Operands
    whose products fall outside C's pattern raise InvalidArgumentError.

    Examples
    --------
    >>> import nonzero
    >>> A = nonzero.laplace2d(6).toscipy()
    >>> P = nonzero.spgemm_plan(A, A)
    >>> C = P()
    >>> A2 = A.copy(); A2.data *= 2.0
    >>> C2 = P(A2, A2)
    >>> C2 is C, float(abs(C2 - 4.0 * (A @ A)).max())
    (True, 0.0)
    """

    def __init__(self, A, B, *, threads=0):
        if A.shape[1] != B.shape[0]:
            raise DimensionMismatchError("nonzero: spgemm_plan shapes %s and %s do not agree"
                                         % (A.shape, B.shape))
        self._create_product(L.nz_spgemm_plan_create, L.nz_spgemm_plan_destroy,
                             "nz_spgemm_plan_create", A, B, threads)

    def __call__(self, A=None, B=None):
        """C = A @ B into C's pattern, allocating nothing.

        Parameters
        ----------
        A, B : sparse matrices, optional
            Operands with the plan's patterns and new values (None: the plan's own).

        %(call_result)s
        """
        _, _, ha, hb = self._handles(A, B, self._A, self._B, "spgemm_plan")
        ctx = self._ctx
        ctx.check(L.nz_spgemm_plan_execute(self._plan.ptr, ha.ptr, hb.ptr, self._C._h.ptr),
                  "nz_spgemm_plan_execute")
        return self._out


class SpgeamPlan(_Reuse):
    """C = alpha A + beta B, computed once and recomputed for operands with A's and B's
    patterns (``P()``, ``P(A2, B2)``, ``P(A2, B2, alpha=, beta=)``); see :func:`spgeam`."""

    def __init__(self, A, B, alpha=1.0, beta=1.0):
        kind = getattr(A, "_scipy_array", None)
        A, B, ctx, ha, hb = _pair(A, B, "spgeam_plan")
        _same_shape(A, B)
        self._A, self._B, self.alpha, self.beta = A, B, float(alpha), float(beta)
        p = _PlanHandle(ctx, L.nz_spgeam_plan_destroy, ())
        c = _Handle(ctx, (ha, hb))
        ctx.check(L.nz_spgeam_plan_create(ctx.handle, ctypes.byref(p.ptr), ctypes.byref(c.ptr),
                                          self.alpha, ha.ptr, self.beta, hb.ptr),
                  "nz_spgeam_plan_create")
        self._finish(ctx, p, c, kind)

    def __call__(self, A=None, B=None, *, alpha=None, beta=None):
        """C = alpha A + beta B into C's pattern, allocating nothing.

        Parameters
        ----------
        A, B : sparse matrices, optional
            Operands with the plan's patterns and new values (None: the plan's own).
        alpha, beta : float, optional
            New scalars (None: the plan's).

        %(call_result)s
        """
        _, _, ha, hb = self._handles(A, B, self._A, self._B, "spgeam_plan")
        a = self.alpha if alpha is None else float(alpha)
        b = self.beta if beta is None else float(beta)
        self._ctx.check(L.nz_spgeam_plan_execute(self._plan.ptr, a, ha.ptr, b, hb.ptr,
                                                 self._C._h.ptr), "nz_spgeam_plan_execute")
        return self._out


class RapPlan(_Reuse):
    """The Galerkin product C = P.T @ A @ P, computed once (P.T built by a transpose that keeps
    where each value came from, then two SpGEMM plans) and recomputed for A and P with new
    values: ``R()`` or ``R(A2, P2)``; see :func:`rap`."""

    def __init__(self, A, P, *, threads=0):
        if A.shape[0] != A.shape[1] or P.shape[0] != A.shape[0]:
            raise DimensionMismatchError("nonzero: rap needs a square A and P with A's rows, not "
                                         "%s and %s" % (A.shape, P.shape))
        self._create_product(L.nz_rap_plan_create, L.nz_rap_plan_destroy, "nz_rap_plan_create",
                             A, P, threads)

    def __call__(self, A=None, P=None):
        """C = P.T @ A @ P into C's pattern, allocating nothing.

        Parameters
        ----------
        A, P : sparse matrices, optional
            A and P with the plan's patterns and new values (None: the plan's own).

        %(call_result)s
        """
        _, _, ha, hp = self._handles(A, P, self._A, self._B, "rap_plan")
        self._ctx.check(L.nz_rap_plan_execute(self._plan.ptr, ha.ptr, hp.ptr, self._C._h.ptr),
                        "nz_rap_plan_execute")
        return self._out


def _same_shape(A, B):
    if A.shape != B.shape:
        raise DimensionMismatchError("nonzero: spgeam shapes %s and %s differ" % (A.shape, B.shape))


def spgemm_plan(A, B, *, threads=0):
    """A :class:`SpgemmPlan` for C = A @ B: ``P()`` and ``P(A2, B2)`` recompute C's values."""
    return SpgemmPlan(A, B, threads=threads)


def spgeam(A, B, alpha=1.0, beta=1.0):
    """C = alpha A + beta B, sparse plus sparse.

    Parameters
    ----------
    A, B : csr_matrix, scipy.sparse or cupyx.scipy.sparse matrix
        Operands of one shape and dtype, both on the host or both on the device.
    alpha, beta : float, optional
        The scalars (default 1), rounded to the dtype. alpha == 0 never reads A's values and
        beta == 0 never B's.

    Returns
    -------
    C : scipy.sparse CSR or cupyx.scipy.sparse.csr_matrix
        C's pattern is the union of A's and B's: entries that cancel stay as explicit zeros
        (SciPy's ``A + B`` drops them). Sorted columns; bitwise the same on the CPU and GPU.

    Examples
    --------
    >>> import nonzero
    >>> A = nonzero.laplace2d(4).toscipy()
    >>> C = nonzero.spgeam(A, A, 2.0, -1.0)
    >>> C.nnz == A.nnz, float(abs(C - A).max())
    (True, 0.0)
    """
    kind = getattr(A, "_scipy_array", None)
    A, B, ctx, ha, hb = _pair(A, B, "spgeam")
    _same_shape(A, B)
    from ._matrix import csr_matrix
    c = _Handle(ctx, (ha, hb))
    ctx.check(L.nz_spgeam(ctx.handle, ctypes.byref(c.ptr), float(alpha), ha.ptr, float(beta),
                          hb.ptr), "nz_spgeam")
    c.keep = ()
    C = csr_matrix(c)
    if kind:
        C._scipy_array = True
    return _result(C)


def spgeam_plan(A, B, alpha=1.0, beta=1.0):
    """A :class:`SpgeamPlan` for C = alpha A + beta B."""
    return SpgeamPlan(A, B, alpha, beta)


def rap(A, P, *, threads=0):
    """The Galerkin product C = P.T @ A @ P (A square, P with A's rows).

    Returns
    -------
    C : scipy.sparse CSR or cupyx.scipy.sparse.csr_matrix
        Computed as (P.T) @ (A @ P), bitwise the CPU's order on the GPU too.

    Examples
    --------
    >>> import nonzero, scipy.sparse as sp
    >>> A = nonzero.laplace2d(8).toscipy()
    >>> P = sp.kron(sp.eye(32), [[1.0], [1.0]], format="csr")  # pairs of unknowns
    >>> C = nonzero.rap(A, P)
    >>> C.shape, float(abs(C - P.T @ A @ P).max()) < 1e-12
    ((32, 32), True)
    """
    R = RapPlan(A, P, threads=threads)
    return R._out


def rap_plan(A, P, *, threads=0):
    """A :class:`RapPlan` for C = P.T @ A @ P: ``R()`` and ``R(A2, P2)`` recompute C's values."""
    return RapPlan(A, P, threads=threads)


__all__ = ["SpgemmPlan", "SpgeamPlan", "RapPlan", "spgemm_plan", "spgeam", "spgeam_plan", "rap",
           "rap_plan"]


# The result and errors of every plan's call, written once (as the preconditioners' Returns).
_CALL_RESULT = """Returns
        -------
        scipy.sparse CSR or cupyx.scipy.sparse.csr_matrix
            C, the same object every call, its values changed in place.

        Raises
        ------
        InvalidArgumentError
            An operand whose pattern, shape or dtype differs from the plan's (a product or an
            entry outside C's pattern)."""
for _c in (SpgemmPlan, SpgeamPlan, RapPlan):
    if _c.__call__.__doc__:  # None under python -OO
        _c.__call__.__doc__ = _c.__call__.__doc__.replace("%(call_result)s", _CALL_RESULT)
del _c
