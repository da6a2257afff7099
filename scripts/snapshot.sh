#!/bin/sh
# snapshot.sh: export a revision into a git-ignored folder so a GPU run can use a clean tree while
# the working tree is being edited: run `cd .carry/snap && NZ_CARRY_MATRICES=$PWD/../matrices
# scripts/gpu-check.sh ...` on the device.
# Usage: scripts/snapshot.sh [REV | --worktree] [DIR]
#   REV         the revision to export (default HEAD)
#   --worktree  HEAD plus the working tree's uncommitted changes to tracked files (git stash
#               create), for an A/B run of a change before it is committed
#   DIR         where, below the repository (default .carry/snap; e.g. .carry/base for the "before"
#               side of an A/B run); DIR/REVISION names what was exported
set -eu
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
dest=${2:-.carry/snap}
case "$dest" in /*|*..*) echo "snapshot.sh: DIR must be a path below the repository" >&2; exit 2;; esac
label=""
if [ "$rev" = "--worktree" ]; then
  stash=$(git stash create)
  label="$(git rev-parse --short HEAD)+worktree"
  rev=${stash:-HEAD}
fi
commit=$(git rev-parse --verify --quiet "$rev^{commit}") || { echo "snapshot.sh: no revision $rev" >&2; exit 2; }
rm -rf "$dest"
mkdir -p "$dest"
git archive "$commit" | tar -x -C "$dest"
echo "${label:-$(git rev-parse --short "$commit")}" > "$dest/REVISION"
echo "snapshot of $(cat "$dest/REVISION") in $dest"
