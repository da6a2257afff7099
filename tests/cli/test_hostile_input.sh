# test_hostile_input.sh: bounded memory and clear messages on hostile input (issue 17, sections
# 3 to 5): line cap, memory budget, NUL bytes, long values, truncated gzip, CG's messages,
# --threads clamping.
NZ=$1
DATA=$2
. "$(dirname "$0")/cli_common.sh"
cli_setup

MM='%%MatrixMarket matrix coordinate real general'

# ---- 3. memory bounded by the input ----------------------------------------------------------
if [ -r /dev/zero ]; then
    expect_error 1 "/dev/zero:1: line longer than" "info /dev/zero" "$NZ" info /dev/zero
fi
printf '%s\n1000000000 1000000000 2\n1 1 1.0\n2 2 2.0\n' "$MM" >"$TMP/huge.mtx"
[ "$(wc -c <"$TMP/huge.mtx")" -eq 86 ] || fail "huge.mtx is not the issue's 86 bytes"
start=$(date +%s)
expect_error 1 "huge\.mtx:2: .*would need 7\.5 GiB.*--memory-budget" "86-byte header, 1G budget" \
    "$NZ" info "$TMP/huge.mtx" --memory-budget 1G
expect_error 1 "memory budget" "convert, budget before the input" \
    "$NZ" convert --memory-budget 512M "$TMP/huge.mtx" -o "$TMP/o.mtx"
expect_error 1 "memory budget" "spmv" "$NZ" spmv "$TMP/huge.mtx" --memory-budget 1G
expect_error 1 "memory budget" "cg" "$NZ" cg "$TMP/huge.mtx" --memory-budget 1G
expect_error 1 "memory budget" "spgemm" "$NZ" spgemm "$TMP/huge.mtx" --memory-budget 1G
expect_error 1 "memory budget" "gen over budget" "$NZ" gen laplace3d --n 100 -o "$TMP/g.mtx" --memory-budget 1M
[ $(($(date +%s) - start)) -le 10 ] || fail "refusals took more than 10 s"
expect_ok "gen within budget" "$NZ" gen laplace3d --n 10 -o "$TMP/g.mtx" --memory-budget 1M
expect_error 2 "memory-budget" "bad budget" "$NZ" info "$TMP/g.mtx" --memory-budget 12X
expect_error 2 "memory-budget" "missing budget" "$NZ" info "$TMP/g.mtx" --memory-budget
# a 2 GB line of spaces compressed to a few MB: refused at the line cap
if command -v gzip >/dev/null 2>&1; then
    { printf '%s\n1 1 1\n' "$MM"; head -c 20000000 /dev/zero | tr '\0' ' '; printf '1 1 1\n'; } |
        gzip -1 >"$TMP/spaces.mtx.gz"
    expect_error 1 "spaces\.mtx\.gz:3: line longer than" "gz: one huge line" "$NZ" info "$TMP/spaces.mtx.gz"
fi

# ---- 5. messages --------------------------------------------------------------------------------
if command -v gzip >/dev/null 2>&1; then
    { printf '%s\n%s\n' "$MM" '100 100 60'; i=1; while [ $i -le 60 ]; do echo "$i $i 1.5"; i=$((i + 1)); done; } |
        gzip -9 >"$TMP/full.mtx.gz"
    size=$(wc -c <"$TMP/full.mtx.gz")
    head -c $((size - 20)) "$TMP/full.mtx.gz" >"$TMP/trunc.mtx.gz"
    # the text ends in the last lines, not on line 1
    expect_error 1 "trunc\.mtx\.gz:(5[0-9]|6[0-3]): gzip data is truncated" "truncated gzip names its last line" \
        "$NZ" info "$TMP/trunc.mtx.gz"
fi
printf '%s\n2 2 1\n1 1 1.0\000junk\n' "$MM" >"$TMP/nul.mtx"
expect_error 1 "nul\.mtx:3: NUL byte" "NUL in an entry" "$NZ" info "$TMP/nul.mtx"
printf '%s\000\n2 2 1\n1 1 1.0\n' "$MM" >"$TMP/nul2.mtx"
expect_error 1 "nul2\.mtx:1: NUL byte" "NUL in the banner" "$NZ" info "$TMP/nul2.mtx"
zeros=$(printf '%0600d' 0)
printf '%s\n1 1 1\n1 1 1%s.5e-600\n' "$MM" "$zeros" >"$TMP/digits.mtx"
expect_ok "a 610-character value" "$NZ" convert "$TMP/digits.mtx" -o "$TMP/digits-out.mtx"
grep -q "^1 1 1$" "$TMP/digits-out.mtx" || fail "the long value was not read as 1"
printf '%%%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4.0\n3 3 2.0\n2 1 1.0\n' >"$TMP/nodiag.mtx"
expect_error any "diagonal entry \(2, 2\)" "cg --precond jacobi is 1-based" "$NZ" cg "$TMP/nodiag.mtx" --precond jacobi
printf '%%%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4.0\n2 2 nan\n3 3 2.0\n' >"$TMP/nan.mtx"
expect_error 1 "nan\.mtx: A holds nan at \(2, 2\)" "cg names NaN in A" "$NZ" cg "$TMP/nan.mtx"

# ---- 4. --threads beyond the online CPUs is clamped with one warning line -----------------------
A="$DATA/bcsstk01.mtx"
run "$NZ" spmv "$A" --threads 4096
[ "$RC" -eq 0 ] || fail "spmv --threads 4096: exit $RC"
grep -q "warning: --threads 4096 is more than the .* online CPUs" "$ERR" || fail "no clamp warning"
[ "$(wc -l <"$ERR")" -eq 1 ] || fail "spmv --threads 4096: not one stderr line"
run "$NZ" cg "$A" --threads 100000
[ "$RC" -eq 0 ] || fail "cg --threads 100000: exit $RC"

cli_finish
