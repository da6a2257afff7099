#!/usr/bin/env python3
"""mm_gen.py: write a random coordinate real general Matrix Market file for speed tests.

Usage: mm_gen.py PATH NNZ [ROWS]   (rows = cols = NNZ / 10 by default; rows sorted, values
printed with 17 significant digits, as nz_mm_write does). Deterministic (seed 1)."""
import random
import sys

path, nnz = sys.argv[1], int(sys.argv[2])
rows = int(sys.argv[3]) if len(sys.argv) > 3 else max(1, nnz // 10)
rng = random.Random(1)
per_row = nnz // rows
extra = nnz - per_row * rows
with open(path, "w") as f:
    f.write("%%MatrixMarket matrix coordinate real general\n")
    f.write(f"{rows} {rows} {nnz}\n")
    lines = []
    for i in range(1, rows + 1):
        count = per_row + (1 if i <= extra else 0)
        cols = sorted(rng.sample(range(1, rows + 1), count)) if count < rows else range(1, rows + 1)
        for j in cols:
            lines.append(f"{i} {j} {rng.uniform(-1, 1):.17g}\n")
        if len(lines) > 100000:
            f.write("".join(lines))
            lines = []
    f.write("".join(lines))
