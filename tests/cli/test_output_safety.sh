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

# ---- issue 36: any two outputs, or an output and an input, on one file are refused ------------
# (before anything is written: the check compares the resolved paths of files that do not exist
# yet, and device + inode of existing ones, through symbolic and hard links)
N="$TMP/n"
mkdir "$N"
expect_error 2 "m\.mtx" "gen --b and -o on one new file" "$NZ" gen fe3d --n 4 --b "$N/m.mtx" -o "$N/m.mtx"
[ -e "$N/m.mtx" ] && fail "gen --b m.mtx -o m.mtx wrote m.mtx"
expect_error 2 "m\.nzb" "gen --u and -o on one new .nzb" "$NZ" gen fe3d --n 4 --u "$N/m.nzb" -o "$N/m.nzb"
[ -e "$N/m.nzb" ] && fail "gen --u m.nzb -o m.nzb wrote m.nzb"
expect_error 2 "v\.mtx" "gen --b and --u on one file" "$NZ" gen fe3d --n 4 --b "$N/v.mtx" --u "$N/v.mtx" -o "$N/A.mtx"
[ -e "$N/A.mtx" ] && fail "gen with --b = --u wrote the matrix"
expect_error 2 "m\.mtx" "gen --rhs and -o on one new file" "$NZ" gen elasticity3d --n 2 --rhs "$N/m.mtx" -o "$N/m.mtx"
[ -e "$N/m.mtx" ] && fail "gen --rhs m.mtx -o m.mtx wrote m.mtx"
expect_error 2 "v\.mtx" "gen --rhs and --modes on one file" "$NZ" gen elasticity3d --n 2 --rhs "$N/v.mtx" --modes "$N/v.mtx" -o "$N/A.mtx"
[ -e "$N/A.mtx" ] && fail "gen with --rhs = --modes wrote the matrix"
mkdir "$N/sub"
expect_error 2 "" "gen --b and -o spelt differently" "$NZ" gen fe3d --n 4 --b "$N/sub/../m.mtx" -o "$N/m.mtx"
[ -e "$N/m.mtx" ] && fail "gen --b sub/../m.mtx -o m.mtx wrote m.mtx"
ln -s m.mtx "$N/to-m.mtx"  # dangling: m.mtx does not exist yet
expect_error 2 "" "gen --b through a dangling link onto -o" "$NZ" gen fe3d --n 4 --b "$N/to-m.mtx" -o "$N/m.mtx"
[ -e "$N/m.mtx" ] && fail "gen --b (dangling link to m.mtx) -o m.mtx wrote m.mtx"
cp "$A" "$D/s.mtx"
expect_error 2 "s\.mtx" "spmv --write-x and -o on one existing file" "$NZ" spmv "$A" --write-x "$D/s.mtx" -o "$D/s.mtx"
same_bytes "$D/s.mtx" "$A" "spmv --write-x s.mtx -o s.mtx"
expect_error 2 "" "spmv --write-x and -o on one new file" "$NZ" spmv "$A" --write-x "$N/s.mtx" -o "$N/s.mtx"
[ -e "$N/s.mtx" ] && fail "spmv --write-x s.mtx -o s.mtx wrote s.mtx"
ln "$D/S.mtx" "$D/hard.mtx"
expect_error 2 "is the input" "convert -o a hard link of the input" "$NZ" convert "$D/S.mtx" -o "$D/hard.mtx"
expect_error 2 "is the input" "cg -o a new path that is --b" "$NZ" cg "$A" --b "$N/b-missing.mtx" -o "$N/./b-missing.mtx"
same_bytes "$D/S.mtx" "$A" "hard link"
# character devices are not files that two outputs could share: both may be /dev/null
expect_ok "spmv -o and --write-x both /dev/null" "$NZ" spmv "$A" --write-x /dev/null -o /dev/null

# ---- nz bench --csv / --png: the same guard and no matrix extension ----------------------------
cp "$A" "$D/a.mtx"
cp "$DATA/west0067.mtx" "$D/b.mtx"
# `--csv *.mtx` expands to `--csv a.mtx b.mtx`: a.mtx must not become CSV
expect_error 2 "a\.mtx" "bench --csv a.mtx b.mtx (a glob)" "$NZ" bench --backend cpu --quick --no-real --runs 1 --csv "$D/a.mtx" "$D/b.mtx"
same_bytes "$D/a.mtx" "$A" "bench --csv a.mtx"
expect_error 2 "b\.mtx" "bench --csv X.mtx X.mtx" "$NZ" bench --backend cpu --quick --no-real --runs 1 --csv "$D/b.mtx" "$D/b.mtx"
same_bytes "$D/b.mtx" "$DATA/west0067.mtx" "bench --csv b.mtx b.mtx"
for ext in mtx mtx.gz nzb MTX; do
    expect_error 2 "r\.$ext" "bench --csv r.$ext" "$NZ" bench --backend cpu --quick --no-real --runs 1 --csv "$N/r.$ext"
    expect_error 2 "r\.$ext" "bench --png r.$ext" "$NZ" bench --backend cpu --quick --no-real --runs 1 --png "$N/r.$ext"
done
ln -s a.mtx "$D/a-link.csv"
expect_error 2 "is the input" "bench --csv through a link to an input" "$NZ" bench --backend cpu --quick --no-real --runs 1 --csv "$D/a-link.csv" "$D/a.mtx"
same_bytes "$D/a.mtx" "$A" "bench --csv a link to a.mtx"
expect_error 2 "r\.csv" "bench --png onto the --csv" "$NZ" bench --backend cpu --quick --no-real --runs 1 --csv "$N/r.csv" --png "$N/r.csv"
expect_error 2 "r\.txt" "bench --png onto the table next to the --csv" "$NZ" bench --backend cpu --quick --no-real --runs 1 --csv "$N/r.csv" --png "$N/r.txt"
ls "$N" | grep -q '^r\.' && fail "a refused bench wrote $(ls "$N" | grep '^r\.')"

# ---- -o onto a dangling symlink writes the link's target and keeps the link ----------------------
ln -s dangling-target.mtx "$D/dangling.mtx"
expect_ok "convert -o a dangling symlink" "$NZ" convert "$DATA/west0067.mtx" -o "$D/dangling.mtx"
[ -L "$D/dangling.mtx" ] || fail "convert replaced the dangling symlink with a file"
grep -q '^67 67 ' "$D/dangling-target.mtx" 2>/dev/null || fail "the dangling symlink's target was not written"
ln -s chain-1.mtx "$D/chain-0.mtx"
ln -s chain-2.mtx "$D/chain-1.mtx"
expect_ok "spmv -o a chain of dangling symlinks" "$NZ" spmv "$A" -o "$D/chain-0.mtx"
[ -L "$D/chain-0.mtx" ] && [ -L "$D/chain-1.mtx" ] || fail "spmv replaced a link of the chain"
grep -q '^48 1' "$D/chain-2.mtx" 2>/dev/null || fail "the end of the chain was not written"
ln -s no-such-dir/x.mtx "$D/nodir.mtx"
expect_error 1 "nodir\.mtx|no-such-dir" "convert -o a link into a missing directory" "$NZ" convert "$A" -o "$D/nodir.mtx"
[ -L "$D/nodir.mtx" ] || fail "a failed write replaced the dangling symlink"
no_temp_left "dangling links"

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
