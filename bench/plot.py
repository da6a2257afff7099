#!/usr/bin/env python3
"""plot.py: draw the CSV of `nz bench` as grouped bars per matrix and kernel, one panel per precision.

usage: python3 bench/plot.py BENCH.csv OUT.png [--metric gbs|speedup] [--all]

  --metric gbs      effective GB/s on the minimal CSR byte count (default), with the copy
                    bandwidth measured in the same run as a dashed line
  --metric speedup  speedup over the better cuSPARSE algorithm (GPU CSV only), 1.0 as a line
  --all             also the matrices read from files (default: the generated suite only)

Only verified rows (status ok) are drawn; L2/LLC-resident matrices are marked with '*'.
"""
import argparse
import csv
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path, include_files):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] != "ok":
                continue
            if r["source"] != "generated" and not include_files:
                continue
            rows.append(r)
    return rows


def ordered(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("png")
    ap.add_argument("--metric", choices=["gbs", "speedup"], default="gbs")
    ap.add_argument("--all", action="store_true")
    args = ap.parse_args()

    rows = load(args.csv, args.all)
    if not rows:
        print("plot.py: no verified rows to draw in " + args.csv, file=sys.stderr)
        return 1
    precisions = [p for p in ("single", "double") if any(r["precision"] == p for r in rows)]
    fig, axes = plt.subplots(len(precisions), 1, figsize=(14, 4.5 * len(precisions)), squeeze=False)
    backend = rows[0]["backend"]

    for ax, precision in zip([row[0] for row in axes], precisions):
        sel = [r for r in rows if r["precision"] == precision]
        if args.metric == "speedup":
            # cuSPARSE rows are the baseline (speedup 0 in the CSV): draw Nonzero's kernels only.
            sel = [r for r in sel if not r["kernel"].startswith("cusparse/")]
        matrices = ordered(r["matrix"] for r in sel)
        kernels = ordered(r["kernel"] for r in sel)
        value = {}
        resident = {}
        for r in sel:
            v = float(r["gbs_min"]) if args.metric == "gbs" else float(r["speedup_vs_cusparse"])
            value[(r["matrix"], r["kernel"])] = v
            resident[r["matrix"]] = r["resident"] == "1"
        width = 0.8 / max(len(kernels), 1)
        cmap = plt.get_cmap("tab20")
        for k, kernel in enumerate(kernels):
            xs, ys = [], []
            for m, matrix in enumerate(matrices):
                if (matrix, kernel) in value:
                    xs.append(m - 0.4 + (k + 0.5) * width)
                    ys.append(value[(matrix, kernel)])
            ax.bar(xs, ys, width, label=kernel, color=cmap(k % 20),
                   hatch="//" if kernel.startswith("cusparse/") else None,
                   edgecolor="black" if kernel.startswith("cusparse/") else None, linewidth=0.3)
        if args.metric == "gbs":
            copy = max(float(r["copy_gbs"]) for r in sel)
            ax.axhline(copy, color="black", linestyle="--", linewidth=1)
            ax.text(len(matrices) - 0.5, copy, " copy %.0f GB/s" % copy, va="bottom", ha="right")
            ax.set_ylabel("effective GB/s (minimal CSR bytes)")
        else:
            ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
            ax.set_ylabel("speedup vs best cuSPARSE")
        ax.set_xticks(range(len(matrices)))
        ax.set_xticklabels([m + ("*" if resident.get(m) else "") for m in matrices],
                           rotation=30 if len(matrices) > 8 else 0, ha="right" if len(matrices) > 8 else "center")
        ax.set_xlim(-0.6, len(matrices) - 0.4)
        ax.set_title("SpMV, %s precision (%s)" % (precision, backend))
        ax.legend(fontsize=7, ncol=min(len(kernels), 6), loc="upper left")
        ax.grid(axis="y", alpha=0.3)

    fig.text(0.01, 0.005, "* fits in cache (L2 / LLC): bandwidth not meaningful", fontsize=8)
    fig.tight_layout()
    save_replacing(fig, args.png)
    return 0


def save_replacing(fig, path):
    """Write the chart to a temporary file next to `path` and rename it over `path` only when it
    is complete (the same rule as the C writers, src/util/safe_output.c): a failed write never
    destroys an existing chart. "-" and special files (devices, FIFOs) are written in place."""
    if path == "-" or (os.path.exists(path) and not os.path.isfile(path)):
        fig.savefig(sys.stdout.buffer if path == "-" else path, dpi=120, format="png")
        return
    target = os.path.realpath(path)
    directory = os.path.dirname(target) or "."
    fd, temp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".tmp-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, dpi=120, format="png")
            f.flush()
            os.fsync(f.fileno())
        mode = os.stat(target).st_mode & 0o7777 if os.path.exists(target) else 0o666 & ~current_umask()
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


if __name__ == "__main__":
    sys.exit(main())
