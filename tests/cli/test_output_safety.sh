# test_output_safety.sh: a failed write never destroys data (issue 17, section 1). Outputs go to a
# temporary file renamed over the target only when complete; special files are written in place
# and never removed; an output that is one of the inputs is refused up front.
NZ=$1
DATA=$2
. "$(dirname "$0")/cli_common.sh"
cli_setup

A="$DATA/bcsstk01.mtx"
D="$TMP/d"
mkdir "$D"
cp "$A" "$D/S.mtx"
cp "$A" "$D/keep.mtx"

# no temporary file may be left in $D
no_temp_left() {
    if ls -A "$D" | grep -q 'tmp-'; then
        fail "$1: temporary file left behind: $(ls -A "$D" | grep 'tmp-' | tr '\n' ' ')"
    fi
}
# the file $1 is byte for byte $2
same_bytes() {
    if ! cmp -s "$1" "$2"; then fail "$3: $1 was changed"; fi
}

# ---- the output is an input: refused before anything is read or written ----------------------
expect_error 2 "S\.mtx is the input" "convert -o its own input" "$NZ" convert "$D/S.mtx" -o "$D/S.mtx"
same_bytes "$D/S.mtx" "$A" "convert -o input"
expect_error 2 "is the input" "spmv -o the matrix" "$NZ" spmv "$D/S.mtx" -o "$D/S.mtx"
same_bytes "$D/S.mtx" "$A" "spmv -o input"
ln -s S.mtx "$D/link.mtx"
expect_error 2 "is the input" "spmv -o the matrix through a symlink" "$NZ" spmv "$D/link.mtx" -o "$D/S.mtx"
expect_error 2 "is the input" "spmv --write-x onto the matrix" "$NZ" spmv "$D/S.mtx" --write-x "$D/link.mtx"
expect_error 2 "is the input" "cg -o the matrix" "$NZ" cg "$D/S.mtx" -o "$D/link.mtx"
expect_error 2 "is the input" "spgemm -o B" "$NZ" spgemm "$A" "$D/S.mtx" -o "$D/S.mtx"
same_bytes "$D/S.mtx" "$A" "refusals"
[ -L "$D/link.mtx" ] || fail "the symlink was replaced"

# ---- replacing keeps permissions and writes through a symlink ---------------------------------
cp "$A" "$D/perm.mtx"
chmod 640 "$D/perm.mtx"
expect_ok "convert over an existing file" "$NZ" convert "$DATA/west0067.mtx" -o "$D/perm.mtx"
mode=$(stat -c %a "$D/perm.mtx")
[ "$mode" = 640 ] || fail "permissions not kept: $mode instead of 640"
cp "$A" "$D/real.mtx"
ln -s real.mtx "$D/tolink.mtx"
expect_ok "convert to a symlink" "$NZ" convert "$DATA/west0067.mtx" -o "$D/tolink.mtx"
[ -L "$D/tolink.mtx" ] || fail "convert replaced the symlink itself"
grep -q '^67 67 ' "$D/real.mtx" || fail "the file behind the symlink was not written"
no_temp_left "replacements"

# ---- a write that fails half-way (RLIMIT_FSIZE: EFBIG) leaves the old target intact ----------
"$NZ" gen laplace3d --n 12 -o "$TMP/big.mtx" >/dev/null || fail "gen big.mtx"
for ext in mtx mtx.gz nzb; do
    cp "$A" "$D/out.$ext"
    run sh -c "trap '' XFSZ; ulimit -f 8; exec \"\$0\" convert \"\$1\" -o \"\$2\"" "$NZ" \
        "$TMP/big.mtx" "$D/out.$ext"
    [ "$RC" -ne 0 ] && [ "$RC" -lt 126 ] || fail "convert -o out.$ext past the file size limit: exit $RC"
    [ "$(wc -l <"$ERR")" -eq 1 ] || fail "convert -o out.$ext past the limit: not one stderr line"
    same_bytes "$D/out.$ext" "$A" "failed write of out.$ext"
    [ "$ext" = mtx ] || continue # y of 1728 rows compresses below the limit
    run sh -c "trap '' XFSZ; ulimit -f 8; exec \"\$0\" spmv \"\$1\" -o \"\$2\"" "$NZ" \
        "$TMP/big.mtx" "$D/out.$ext"
    [ "$RC" -ne 0 ] || fail "spmv -o out.$ext past the file size limit: exit 0"
    same_bytes "$D/out.$ext" "$A" "failed spmv write of out.$ext"
done
no_temp_left "failed writes"

# ---- special files are written in place, never removed (a /dev/full of our own) ---------------
if mknod "$D/full.mtx" c 1 7 2>/dev/null; then
    expect_error 1 "full\.mtx" "convert -o a full device" "$NZ" convert "$A" -o "$D/full.mtx"
    [ -c "$D/full.mtx" ] || fail "convert removed the character device"
    expect_error 1 "full\.mtx" "spmv -o a full device" "$NZ" spmv "$A" -o "$D/full.mtx"
    [ -c "$D/full.mtx" ] || fail "spmv removed the character device"
    mknod "$D/full.nzb" c 1 7
    expect_error 1 "full\.nzb" "convert -o a full device (.nzb)" "$NZ" convert "$A" -o "$D/full.nzb"
    [ -c "$D/full.nzb" ] || fail "the .nzb writer removed the character device"
    mknod "$D/null.mtx" c 1 3
    expect_ok "convert -o a null device" "$NZ" convert "$A" -o "$D/null.mtx"
    [ -c "$D/null.mtx" ] || fail "writing to a null device replaced it"
    no_temp_left "special files"
else
    echo "test_output_safety: mknod not permitted; character-device checks skipped"
fi
if command -v mkfifo >/dev/null 2>&1 && mkfifo "$D/fifo.mtx"; then
    cat "$D/fifo.mtx" >"$TMP/fifo.out" &
    expect_ok "spmv -o a FIFO" "$NZ" spmv "$A" -o "$D/fifo.mtx"
    wait
    [ -p "$D/fifo.mtx" ] || fail "the FIFO was replaced"
    grep -q '^48 1' "$TMP/fifo.out" || fail "nothing came through the FIFO"
fi

cli_finish
