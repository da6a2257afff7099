# test_help.sh: nz --help / --version, --help of every subcommand, unknown commands.
NZ=$1
DATA=$2
. "$(dirname "$0")/cli_common.sh"
cli_setup

expect_ok "nz --help" "$NZ" --help && grep -q '^usage: nz' "$OUT" || fail "nz --help: no usage line"
for cmd in info gen convert spmv bench solve; do
    grep -q "^  $cmd " "$OUT" || fail "nz --help does not list $cmd"
done
# Every subcommand nz --help lists (the ones above and any added later).
commands=$(sed -n '/^commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p' "$OUT")
[ "$(echo $commands | wc -w)" -ge 5 ] || fail "nz --help: cannot read the command list"
expect_ok "nz --version" "$NZ" --version && grep -Eq '^nz [0-9]+\.[0-9]+\.[0-9]+' "$OUT" ||
    fail "nz --version: no version number"

for cmd in $commands; do
    for flag in --help -h; do
        if expect_ok "nz $cmd $flag" "$NZ" $cmd $flag; then
            [ -s "$OUT" ] || fail "nz $cmd $flag printed nothing"
        fi
    done
done
# Usage texts name what the issue asks for.
run "$NZ" spmv --help
for opt in --x --y --alpha --beta --precision --format --alg --backend --sell-chunk --sell-sigma \
    --bsr-block --max-padding -o --check --repeat --list --verbose; do
    grep -q -- "$opt" "$OUT" || fail "nz spmv --help does not mention $opt"
done
run "$NZ" gen --help
for kind in laplace2d laplace3d fe3d rmat random rail mixed banded convdiff2d convdiff3d \
    elasticity3d; do
    grep -q "$kind" "$OUT" || fail "nz gen --help does not mention $kind"
done

expect_error 2 "frobnicate" "unknown command" "$NZ" frobnicate
expect_error 2 "--frobnicate" "unknown top-level option" "$NZ" --frobnicate
expect_error 2 "" "no command" "$NZ"
expect_error 2 "" "empty command" "$NZ" ""
expect_error 2 "" "command with a newline" "$NZ" "bad
name"

cli_finish
