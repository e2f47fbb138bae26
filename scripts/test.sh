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

# Two workers (pytest-xdist): the suite takes about 20 minutes instead of 40 on two cores. The load tests
# (marked `alone`: a flood, thousands of silent connections, each with a probe that must be answered) then run
# by themselves, so that the rest of the suite's load on the two cores is not counted against the server.
# Both runs always run; the command fails if either does. With arguments, one run of pytest with them.
if [ "$#" -gt 0 ]; then
    exec .venv/bin/python -m pytest -n 2 "$@"
fi
status=0
.venv/bin/python -m pytest -n 2 -m "not alone" || status=$?
.venv/bin/python -m pytest -m alone || status=$?
exit "$status"
