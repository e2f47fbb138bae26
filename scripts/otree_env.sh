#!/usr/bin/env bash
# oTree's own virtual environment, .venv-otree/, for tests/e2e/test_embed_otree.py (docs/embedding.md, "oTree").
# oTree 6.0.15 pins WTForms 2.3.3, itsdangerous 1.1.0 and MarkupSafe 1.1.1, which clash with Flask 3, so it
# cannot live in .venv. Idempotent: when .venv-otree already has this oTree, it returns at once.
# Run by scripts/test.sh; run it by hand to drive examples/otree/ (.venv-otree/bin/otree devserver).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh  # apt_install

OTREE_VERSION=6.0.15
REQUESTS_VERSION=2.34.2  # `otree test` (its bots) needs requests, which otree does not install

if [ -x .venv-otree/bin/python ] \
    && .venv-otree/bin/python -c "import otree, requests, sys; sys.exit(otree.__version__ != '$OTREE_VERSION')" 2>/dev/null; then
    exit 0
fi
if [ ! -x .venv-otree/bin/python ]; then
    python3 -m venv .venv-otree 2>/dev/null || { rm -rf .venv-otree; apt_install python3-venv; python3 -m venv .venv-otree; }
fi
.venv-otree/bin/python -m pip install --quiet --disable-pip-version-check "otree==$OTREE_VERSION" "requests==$REQUESTS_VERSION"
