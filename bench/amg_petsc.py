"""amg_petsc.py: Nonzero's AMG-PCG against PETSc's GAMG-PCG on the 3-D 7-point Laplacian, in one
process on the CPU: iterations to a relative residual of 1e-8 (PETSc: unpreconditioned norm;
Nonzero: the true residual), the true residual of both checked with SciPy.

Run with Debian's Python and PETSc (python3-petsc4py-real):
  PETSC_DIR=/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real PYTHONPATH=python \
  NONZERO_LIBRARY=build/libnonzero.so.0 /usr/bin/python3 bench/amg_petsc.py
"""
import numpy as np, scipy.sparse as sp, sys
import nonzero
from petsc4py import PETSc
def lap3d(m):
    T = sp.diags([-np.ones(m-1), 2*np.ones(m), -np.ones(m-1)], [-1, 0, 1])
    I = sp.identity(m)
    return (sp.kron(sp.kron(T, I), I) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(I, I), T)).tocsr()
for m in (16, 32, 48):
    A = lap3d(m); n = A.shape[0]; b = A @ np.ones(n)
    # PETSc CG + GAMG, rtol 1e-8 on the preconditioned? use unpreconditioned norm
    P = PETSc.Mat().createAIJ(size=A.shape, csr=(A.indptr, A.indices, A.data))
    ksp = PETSc.KSP().create(); ksp.setOperators(P); ksp.setType('cg')
    ksp.getPC().setType('gamg'); ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)
    ksp.setTolerances(rtol=1e-8); ksp.setFromOptions()
    xb = P.createVecRight(); bb = P.createVecLeft(); bb.setArray(b); ksp.solve(bb, xb)
    rp = np.linalg.norm(b - A @ xb.getArray()) / np.linalg.norm(b)
    M = nonzero.amg(A)
    res = {}
    x, info = nonzero.cg(A, b, M=M, rtol=1e-8, result=res)
    r = np.linalg.norm(b - A @ np.asarray(x)) / np.linalg.norm(b)
    print(f"laplace3d {m}^3: PETSc 3.18 GAMG-CG {ksp.getIterationNumber()} it (true rel res {rp:.1e}); "
          f"Nonzero AMG-CG info {info}, {res.get('iterations')} it, true rel res {r:.1e}")
