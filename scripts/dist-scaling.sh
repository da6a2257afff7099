#!/bin/sh
# dist-scaling.sh: weak and strong scaling tables of the distributed SpMV and CG (nz bench --dist)
# on 1, 2, 4, ... P ranks of one mpiexec. Usage: scripts/dist-scaling.sh [P] [nz bench options]
#   e.g. scripts/dist-scaling.sh 4 --n 48 --weak 32          (CPU ranks)
#        scripts/dist-scaling.sh 4 --backend cuda --n 160 --weak 100   (ranks sharing the GPUs)
# NZ selects the tool (default build-cpu/nz, else build-cuda/nz); MPIEXEC_FLAGS adds flags.
P=${1:-4}
[ $# -gt 0 ] && shift
NZ=${NZ:-}
if [ -z "$NZ" ]; then
    for candidate in build-cpu/nz build-cuda/nz build/nz; do
        [ -x "$candidate" ] && NZ=$candidate && break
    done
fi
[ -x "$NZ" ] || { echo "dist-scaling.sh: no nz tool (set NZ=path)" >&2; exit 2; }
FLAGS=${MPIEXEC_FLAGS:-}
if mpiexec --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
    FLAGS="$FLAGS --oversubscribe"
    [ "$(id -u)" = 0 ] && FLAGS="$FLAGS --allow-run-as-root"
fi
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null), $(nproc) cores, mpiexec -n $P"
exec mpiexec -n "$P" $FLAGS "$NZ" bench --dist "$@"
