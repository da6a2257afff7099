#!/usr/bin/env python3
"""compare-real.py: per-matrix SpMV speedups of two `nz bench` CSVs (before, after), each
Nonzero's best kernel against cuSPARSE's best in the same run, and which matrices lost ground.

usage: compare-real.py BEFORE.csv[.gz] AFTER.csv[.gz] [BEFORE2 AFTER2] [--source file|generated]
                       [--threshold 0.9]
Prints one line per (matrix, precision) present in both, then a summary: the geometric means of
the speedups, the matrices whose speedup fell below threshold x the earlier one, and those whose
own best time (a different process: cuSPARSE's time moves between runs too) grew by more than
1 / threshold. With a second pair (both builds run again, interleaved): the same for it, then
the matrices that lost ground in both pairs, and as the yardstick for those counts how many moved
as far between the two runs of the same build (BEFORE2 against BEFORE, AFTER2 against AFTER)."""
import csv
import gzip
import math
import sys


def speedups(path, source):
    """(matrix, precision) -> (nonzero best us, cusparse best us, nonzero kernel)"""
    best = {}
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        for r in csv.DictReader(f):
            if source and r["source"] != source:
                continue
            if r["status"] != "ok" or r["check"] not in ("pass", ""):
                continue
            key = (r["matrix"], r["precision"])
            us = float(r["median_us"])
            ours, theirs, name = best.get(key, (math.inf, math.inf, ""))
            if r["kernel"].startswith("cusparse"):
                theirs = min(theirs, us)
            elif us < ours:
                ours, name = us, r["kernel"]
            best[key] = (ours, theirs, name)
    return {k: v for k, v in best.items() if math.isfinite(v[0]) and math.isfinite(v[1])}


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    source = "file"
    threshold = 0.9
    for i, a in enumerate(argv):
        if a == "--source":
            source = argv[i + 1]
        if a == "--threshold":
            threshold = float(argv[i + 1])
    if len(args) not in (2, 4):
        print(__doc__)
        return 2
    if len(args) == 4:
        return compare_pairs(args, source, threshold)
    return compare(speedups(args[0], source), speedups(args[1], source), threshold)


def lost(before, after, threshold):
    """(matrix, precision) whose speedup over cuSPARSE in `after` is below threshold x before's"""
    return {k for k in set(before) & set(after)
            if after[k][1] / after[k][0] < threshold * before[k][1] / before[k][0]}


def compare_pairs(args, source, threshold):
    b1, a1, b2, a2 = (speedups(a, source) for a in args)
    statuses = [compare(b1, a1, threshold), compare(b2, a2, threshold)]  # both pairs printed
    both = sorted(lost(b1, a1, threshold) & lost(b2, a2, threshold))
    print(f"# lost ground (below {threshold:g} x the earlier speedup) in both pairs: {len(both)}"
          + "".join(f"; {k[0]} {k[1]}" for k in both))
    print(f"# the same build run twice, as far apart: before {len(lost(b1, b2, threshold))}, "
          f"after {len(lost(a1, a2, threshold))}")
    return max(statuses)


def compare(before, after, threshold):
    keys = sorted(set(before) & set(after))
    logs_b, logs_a, worse, slower, log_t = [], [], [], [], []
    print(f"{'matrix':40s} {'prec':6s} {'before':>7s} {'after':>7s}  after's best kernel")
    for k in keys:
        sb = before[k][1] / before[k][0]
        sa = after[k][1] / after[k][0]
        logs_b.append(math.log(sb))
        logs_a.append(math.log(sa))
        print(f"{k[0][:40]:40s} {k[1]:6s} {sb:7.2f} {sa:7.2f}  {after[k][2]}")
        if sa < threshold * sb:
            worse.append((k, sb, sa))
        t = after[k][0] / before[k][0]  # our own best time, after over before
        log_t.append(math.log(t))
        if t > 1.0 / threshold:
            slower.append((k, before[k][0], after[k][0]))
    if not keys:
        print("no matrix in both files")
        return 1
    gb = math.exp(sum(logs_b) / len(logs_b))
    ga = math.exp(sum(logs_a) / len(logs_a))
    print(f"# {len(keys)} (matrix, precision) pairs: geometric-mean speedup over cuSPARSE "
          f"before {gb:.3f}x, after {ga:.3f}x")
    print(f"# below {threshold:g} x the earlier speedup: {len(worse)}"
          + "".join(f"; {k[0]} {k[1]} {sb:.2f}->{sa:.2f}" for k, sb, sa in worse))
    print(f"# Nonzero's own best time, after / before: geometric mean "
          f"{math.exp(sum(log_t) / len(log_t)):.3f}; above {1.0 / threshold:.3g}x: {len(slower)}"
          + "".join(f"; {k[0]} {k[1]} {tb:.2f}->{ta:.2f} us" for k, tb, ta in slower))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
