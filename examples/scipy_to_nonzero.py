"""scipy_to_nonzero.py: a SciPy script made to use Nonzero by changing one line.

The script builds a 2-D Poisson matrix with SciPy, multiplies, squares the matrix, does a little
sparse arithmetic and solves with SciPy's CG. Only the line marked "the one line" differs from
the plain SciPy version, which reads `A = A0` (python/tests/test_host.py runs both and compares):
everything after it is unchanged SciPy code. With Nonzero, `A @ x`, `A.T @ x`, `x @ A`, `A @ A`
and every matrix-vector product inside SciPy's `cg` run in Nonzero; the arithmetic (`2 * A - A`)
runs in SciPy and comes back as a Nonzero matrix. With CuPy, build A0 with cupyx.scipy.sparse and
b with cupy: the same line then runs the products on the GPU. For Nonzero's own solvers (in C,
with preconditioners) call `nonzero.cg(A, b, M="ic0")`.

Run: PYTHONPATH=P/lib/python3/dist-packages python3 examples/scipy_to_nonzero.py
(or, from a build tree: NONZERO_LIBRARY=build/libnonzero.so.0 PYTHONPATH=python ...)
"""
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import nonzero

n = 200
T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
A0 = (sp.kron(sp.eye(n), T) + sp.kron(T, sp.eye(n))).tocsr()   # 5-point Laplacian, n^2 rows
b = np.ones(A0.shape[0])

A = nonzero.asmatrix(A0)   # the one line (plain SciPy: A = A0)

y = A @ b                  # SpMV
z = A.T @ b                # transposed SpMV
w = b @ A                  # b^T A
C = A @ A                  # SpGEMM -> scipy.sparse CSR
D = 2 * A - A              # sparse arithmetic: a sparse matrix again
x, info = spla.cg(A, b, atol=1e-8 * np.linalg.norm(b))

print("rows %d, nonzeros %d, ||A b|| = %.6g, ||A^T b|| = %.6g, nnz(A^2) = %d"
      % (A.shape[0], A.nnz, np.linalg.norm(y), np.linalg.norm(z), C.nnz))
print("cg: info %d, ||b - A x|| / ||b|| = %.2e" % (info, np.linalg.norm(b - A0 @ x) / np.linalg.norm(b)))
# agreement with SciPy itself
assert np.allclose(y, A0 @ b) and np.allclose(z, A0.T @ b) and np.allclose(w, b @ A0)
assert abs(C - A0 @ A0).max() < 1e-12
assert np.allclose(D @ b, A0 @ b)
