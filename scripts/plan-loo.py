#!/usr/bin/env python3
"""plan-loo.py: leave-one-out check of the SpMV planner's fitted set-up model (issue 37).

The planner's rules are hand-set thresholds on matrix statistics; what it fits to timings is the
set-up model of src/plan/plan_model.c: the csr/tiles build and product per nonzero
(nzi_plan_tiles_fit) and the row blocks' build per row and their saving over merge-path
(nzi_plan_rowblocks_pay). For every matrix and precision of an `nz bench` CSV this script refits
those constants from the OTHER matrices' rows only (medians, as the constants were fitted) and
asks the two budget questions of the default plan (20 calls) again:
  tiles   build <= 20 x tiles product            (the scattered-tiles rule)
  blocks  0.2-style gain x product x 20 > build  (the irregular-rows rules)
It prints the decision with the shipped constants, with all rows, and with the matrix left out,
and the time of the kernel each decision leads to. A matrix whose decision flips when its own
timings are left out (all rows against left out) is one the model was fitted to; shipped
against all rows says whether the shipped constants still match the device and build of the CSV.
The tiles question matters only where the scattered-tiles rule applies: the csr/auto:reuse row
(NZ_PLAN_REUSE, no budget) shows it, "tiles rule" below (? where the CSV has no such row). Since
csr/split ranks first in the irregular rules, the blocks question orders only the candidates
after it (adaptive or merge-path second); its column is printed beside them.

Usage: scripts/plan-loo.py BENCH.csv[.gz] [...]   (stdlib only)
"""
import csv
import gzip
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

CALLS = 20.0
LAUNCH_S = 5e-6


def shipped_constants():
    text = (Path(__file__).resolve().parent.parent / "src/plan/plan_model.c").read_text()
    def get(name):
        m = re.search(r"\." + name + r"\s*=\s*([0-9.e+-]+)", text)
        if not m:
            sys.exit("plan-loo.py: %s not found in plan_model.c" % name)
        return float(m.group(1))
    return {
        "tiles_fixed": get("tiles_fixed_seconds"), "tiles_nnz": get("tiles_nnz_seconds"),
        "tiles_prod_nnz": get("tiles_product_nnz_seconds"),
        "tiles_prod_value": get("tiles_product_value_seconds"),
        "rb_row": get("rowblocks_row_seconds"), "rb_gain": get("rowblocks_gain"),
        "bytes_per_s": get("spmv_bytes_per_second"),
    }


def read_rows(paths):
    cases = defaultdict(dict)  # (matrix, precision) -> kernel -> row
    for p in paths:
        opener = gzip.open if p.endswith(".gz") else open
        with opener(p, "rt", newline="") as f:
            for r in csv.DictReader(f):
                if r.get("status") != "ok" or r.get("backend") != "gpu":
                    continue
                key = (r["matrix"], r["precision"])
                cases[key][r["kernel"]] = {
                    "us": float(r["median_us"]), "plan_ms": float(r["plan_ms"]),
                    "rows": int(r["rows"]), "cols": int(r["cols"]), "nnz": int(r["nnz"]),
                    "note": r.get("note", ""), "cusparse": r["kernel"].startswith("cusparse/")}
    return cases


def fit(cases, leave_out=None, base=None):
    """The fitted constants from every case but leave_out (matrix name), as medians."""
    build, prod = [], {"single": [], "double": []}
    rb_row, rb_gain = [], []
    for (matrix, prec), k in cases.items():
        if matrix == leave_out:
            continue
        t = k.get("csr/tiles")
        if t and t["nnz"] > 0:
            build.append(max(0.0, t["plan_ms"] * 1e-3 - base["tiles_fixed"]) / t["nnz"])
            prod[prec].append(max(0.0, t["us"] * 1e-6 - LAUNCH_S) / t["nnz"])
        a, m = k.get("csr/adaptive"), k.get("csr/merge")
        if a and m and a["rows"] > 0:
            rb_row.append(max(0.0, (a["plan_ms"] - m["plan_ms"]) * 1e-3) / a["rows"])
            rb_gain.append(max(0.0, 1.0 - a["us"] / m["us"]))
    c = dict(base)
    if build:
        c["tiles_nnz"] = statistics.median(build)
    # per-nonzero product cost = nnz_part + value_bytes x value_part, from the two precisions
    if prod["single"] and prod["double"]:
        s, d = statistics.median(prod["single"]), statistics.median(prod["double"])
        c["tiles_prod_value"] = max(0.0, (d - s) / 4.0)
        c["tiles_prod_nnz"] = max(0.0, s - 4.0 * c["tiles_prod_value"])
    if rb_row:
        c["rb_row"] = statistics.median(rb_row)
        c["rb_gain"] = statistics.median(rb_gain)
    return c


def decide(k, prec, c):
    any_row = next(iter(k.values()))
    nnz, rows, cols = any_row["nnz"], any_row["rows"], any_row["cols"]
    vs = 4.0 if prec == "single" else 8.0
    tiles_build = c["tiles_fixed"] + nnz * c["tiles_nnz"]
    tiles_prod = LAUNCH_S + nnz * (c["tiles_prod_nnz"] + vs * c["tiles_prod_value"])
    product = LAUNCH_S + (nnz * (4 + vs) + rows * (4 + vs) + cols * vs) / c["bytes_per_s"]
    return {"tiles": tiles_build <= CALLS * tiles_prod,
            "blocks": c["rb_gain"] * product * CALLS > rows * c["rb_row"]}


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    cases = read_rows(argv)
    base = shipped_constants()
    full = fit(cases, None, base)
    print("# leave-one-out of the planner's fitted set-up model over %s" % ", ".join(argv))
    print("# constants: shipped / all rows: tiles build %.3g / %.3g ns a nonzero; tiles product "
          "%.3g + %.3g x value bytes / %.3g + %.3g ps; row blocks %.3g / %.3g ns a row, gain "
          "%.2f / %.2f" % (base["tiles_nnz"] * 1e9, full["tiles_nnz"] * 1e9,
                           base["tiles_prod_nnz"] * 1e12, base["tiles_prod_value"] * 1e12,
                           full["tiles_prod_nnz"] * 1e12, full["tiles_prod_value"] * 1e12,
                           base["rb_row"] * 1e9, full["rb_row"] * 1e9, base["rb_gain"],
                           full["rb_gain"]))
    print("%-14s %-6s %-5s | %-17s | %-17s | %-30s | %s" % (
        "matrix", "prec", "tiles", "tiles ship/all/loo", "blocks ship/all/loo", "default plan (us, note)",
        "tiles / adaptive / merge / split / cuSPARSE us"))
    flips = 0
    for (matrix, prec) in sorted(cases):
        k = cases[(matrix, prec)]
        loo = fit(cases, matrix, base)
        d = [decide(k, prec, c) for c in (base, full, loo)]
        yn = lambda b: "yes" if b else "no"
        # the leave-one-out question: does the decision need the matrix's own timings?
        flip = d[2]["tiles"] != d[1]["tiles"] or d[2]["blocks"] != d[1]["blocks"]
        flips += flip
        auto = k.get("csr/auto")
        cus = min((r["us"] for r in k.values() if r["cusparse"]), default=float("nan"))
        t = lambda name: "%.1f" % k[name]["us"] if name in k else "-"
        reuse = k.get("csr/auto:reuse")
        rule = "?" if reuse is None else ("rule" if "tiles" in reuse["note"] else "-")
        print("%-14s %-6s %-5s | %-17s | %-17s | %-30s | %s / %s / %s / %s / %.1f%s" % (
            matrix, prec, rule, "/".join(yn(x["tiles"]) for x in d), "/".join(yn(x["blocks"]) for x in d),
            ("%.1f %s" % (auto["us"], auto["note"].replace("planner chose ", "")))[:30]
            if auto else "-", t("csr/tiles"), t("csr/adaptive"), t("csr/merge"), t("csr/split"), cus,
            "  <- flips without its own timings" if flip else ""))
    print("# %d of %d cases decide differently with their own timings left out" % (flips, len(cases)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
