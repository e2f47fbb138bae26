#!/usr/bin/env bash
# The package as its users install it (CI runs this after scripts/test.sh, from .ci/run; docs/developing.md).
# Builds the wheel from a clean copy of the checkout (its tracked and new files, nothing ignored: no stale
# build/) the way `pip install .` in scripts/serve.sh builds it (an isolated build environment with the
# pyproject's setuptools), installs it NOT editable, with its real dependencies from the package index, into
# a fresh venv, and runs scripts/smoke_installed.py with that venv's Python from outside the checkout:
# `deniable serve --demo`, every page, the planner of every type and design, a submission, the exports; then
# scripts/accept_installed.py: 400 single diverse submissions counted by every surface, deniable check and
# --repair of a database written by 22e6eeb.
# The tests install the project editable, so a file missing from the wheel passes them; this does not.
# About 80 s on two busy cores, half of it the install. Extra arguments go to the smoke
# script (e.g. --verbose).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
root=$PWD
# The fresh venv is about 600 MB: in memory (/dev/shm) when TMPDIR is not set and there is room, since deleting
# it from a disk mounted with `discard` took 50 s here.
tmp=${TMPDIR:-/tmp}
if [ -z "${TMPDIR:-}" ] && [ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 {print $4}')" -gt 2000000 ]; then
    tmp=/dev/shm
fi
work=$(mktemp -d "$tmp/deniable-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
step() { printf '[test_wheel %3ds] %s\n' "$SECONDS" "$*"; }

step "copying the checkout's files to $work/src"
mkdir "$work/src"
git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$work/src"

step "making a fresh venv"
python3 -m venv "$work/venv" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$work/venv"; }
pip=("$work/venv/bin/python" -m pip --disable-pip-version-check)

step "building the wheel (pip wheel, isolated build environment)"
"${pip[@]}" wheel --quiet --no-deps --wheel-dir "$work/dist" "$work/src"
wheel=$(ls "$work"/dist/deniable-*.whl)

step "installing $(basename "$wheel") with its dependencies"
"${pip[@]}" install --quiet --no-compile "$wheel"  # no .pyc written ahead: 25 s less, imports compile what they use

step "smoke test of the installed package"
cd "$work"  # outside the checkout: nothing can be imported from the source tree
env -u PYTHONPATH "$work/venv/bin/python" "$root/scripts/smoke_installed.py" --workdir "$work/smoke" "$@"
step "nothing lost through the installed package (400 single diverse submissions, check, repair)"
env -u PYTHONPATH "$work/venv/bin/python" "$root/scripts/accept_installed.py" --workdir "$work/accept"
step "done"
