#!/usr/bin/env bash
# The one test command for a fresh Debian machine (README, "Quick start"); CI runs it via .ci/run.
# Creates .venv if absent, installs the project with its test extras, installs Debian's chromium
# for the browser tests and R with its survey, jsonlite and haven packages (the weighted estimates are checked against
# R's survey, tests/unit/test_weights.py) when they are missing, then runs pytest (extra arguments
# are passed on).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

install_project -e '.[test]'
if [ ! -x /usr/bin/chromium ]; then
    apt_install chromium
fi
if ! Rscript -e 'library(survey)' >/dev/null 2>&1; then
    apt_install r-cran-survey
fi
if ! Rscript -e 'library(jsonlite)' >/dev/null 2>&1; then
    apt_install r-cran-jsonlite  # the README's R snippet, run by tests/cli/test_r_interop.py
fi
if ! Rscript -e 'library(haven)' >/dev/null 2>&1; then
    apt_install r-cran-haven  # exports read back in R, tests/cli/test_display_logic_offline.py
fi
scripts/otree_env.sh  # oTree in a venv of its own, for tests/e2e/test_embed_otree.py

# Two workers (pytest-xdist): the suite takes about 8 minutes instead of 40 on two cores.
exec .venv/bin/python -m pytest -n 2 "$@"
