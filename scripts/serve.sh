#!/usr/bin/env bash
# The main job on a fresh Debian machine (README, "Quick start"): creates .venv if absent,
# installs deniable into it and serves the demo survey and dashboard on deniable.db.
# Extra arguments go to `deniable serve` (e.g. --port 8080 --workers 4).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

install_project .
exec .venv/bin/deniable serve --demo "$@"
