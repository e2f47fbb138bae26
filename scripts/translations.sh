#!/usr/bin/env bash
# The respondents' pages in other languages (server/web/i18n.py): extract the messages from the
# templates and server/survey/explain.py, merge them into each language's catalog, and compile.
#   bash scripts/translations.sh            # extract + update + compile
#   bash scripts/translations.sh compile    # compile only (after editing a .po file)
# The compiled .mo files are committed (they ship in the wheel); tests/unit/test_translations.py
# fails when one is older than its .po or a message has no translation.
set -euo pipefail
cd "$(dirname "$0")/.."
PYBABEL=.venv/bin/pybabel
DIR=server/translations
if [ "${1:-}" != "compile" ]; then
    "$PYBABEL" extract -F babel.cfg -k _l --no-location --omit-header --sort-output -o "$DIR/messages.pot" .
    for lang in es fr; do
        if [ -f "$DIR/$lang/LC_MESSAGES/messages.po" ]; then
            "$PYBABEL" update -i "$DIR/messages.pot" -d "$DIR" -l "$lang" --no-fuzzy-matching --width 100
        else
            "$PYBABEL" init -i "$DIR/messages.pot" -d "$DIR" -l "$lang"
        fi
    done
fi
"$PYBABEL" compile -d "$DIR" --statistics
