"""nonzero: sparse matrices on NVIDIA GPUs and CPUs, a ctypes binding of libnonzero.

A SciPy or CuPy user switches by one line: wrap the matrix with nonzero.asmatrix(A) (or
nonzero.csr_matrix(A)); A @ x, A.T @ x, A @ X, nonzero.cg, nonzero.spgemm then run in Nonzero
and return the caller's array kind (NumPy in, NumPy out; CuPy in, CuPy out).
"""
from . import _arrays, _lib
from ._context import Context, device_count, get_num_threads, set_num_threads, threads
from ._errors import (BreakdownError, DeviceError, DimensionMismatchError, InvalidArgumentError,
                      InvalidMatrixError, NoDeviceError, NonzeroError, NonzeroIOError,
                      NonzeroOverflowError, NotSortedError, OutOfMemoryError, ParseError,
                      UnsupportedError, WrongLocationError)
from ._matrix import Plan, asmatrix, csr_matrix
from ._reuse import (RapPlan, SpgeamPlan, SpgemmPlan, rap, rap_plan, spgeam, spgeam_plan,
                     spgemm_plan)
from ._precond import (Preconditioner, amg, block_jacobi, chebyshev, ic0, ilu0, jacobi,
                       l1_jacobi, spsolve_triangular)
from ._ops import (banded, bicgstab, cg, convdiff2d, convdiff3d, fe3d, laplace2d, laplace3d, mixed, mmread,
                   mmwrite, random, rail, rmat, spgemm, gmres, minres)

__version__ = _lib.lib.nz_version().decode()
library_path = _lib.path


def alg_names():
    """The SpMV algorithm names accepted by csr_matrix.plan(alg=...) and the solvers' alg=.

    Returns
    -------
    list of str
        'auto' first; which names run on which backend and format: docs/PLANNER.md.

    Examples
    --------
    >>> import nonzero
    >>> names = nonzero.alg_names()
    >>> names[0], "merge" in names, "split" in names
    ('auto', True, True)
    """
    return _arrays.alg_names()


def format_names():
    """The storage format names accepted by csr_matrix.plan(format=...) (and 'auto').

    Returns
    -------
    list of str
        'csr' and the formats a plan converts to once ('sell', 'ell', 'hyb', 'bsr', 'dia',
        'coo', ...).

    Examples
    --------
    >>> import nonzero
    >>> "csr" in nonzero.format_names() and "sell" in nonzero.format_names()
    True
    """
    return _arrays.format_names()


__all__ = ["csr_matrix", "asmatrix", "Plan", "spgemm", "spgemm_plan", "SpgemmPlan", "spgeam",
           "spgeam_plan", "SpgeamPlan", "rap", "rap_plan", "RapPlan", "cg", "bicgstab", "gmres", "minres", "mmread", "mmwrite", "laplace2d",
           "laplace3d", "convdiff2d", "convdiff3d", "fe3d", "random", "rmat", "rail", "mixed", "banded", "device_count",
           "alg_names", "format_names", "NonzeroError", "InvalidArgumentError", "DimensionMismatchError",
           "WrongLocationError", "InvalidMatrixError", "NotSortedError", "UnsupportedError",
           "NoDeviceError", "OutOfMemoryError", "NonzeroOverflowError", "DeviceError",
           "NonzeroIOError", "ParseError", "BreakdownError", "Context", "Preconditioner",
           "jacobi", "l1_jacobi", "block_jacobi", "chebyshev", "ilu0", "ic0", "amg",
           "spsolve_triangular", "set_num_threads", "get_num_threads", "threads"]
