"""The respondents' pages in English, Spanish and French: every message translated, the compiled
catalogs current, the privacy sentences right in each language for every k and ε."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po
from babel.support import Translations

from deniable.server.survey.explain import explain, explain_total

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = ROOT / "server" / "translations"
LANGUAGES = ("es", "fr")


def load_po(lang):
    with open(CATALOGS / lang / "LC_MESSAGES" / "messages.po", "rb") as fh:
        return read_po(fh)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_message_is_translated_and_the_compiled_catalog_is_current(lang):
    po = load_po(lang)
    untranslated = [m.id for m in po if m.id and not m.string]
    assert not untranslated and not any(m.fuzzy for m in po if m.id)
    with open(CATALOGS / lang / "LC_MESSAGES" / "messages.mo", "rb") as fh:
        mo = read_mo(fh)
    assert {m.id: m.string for m in mo if m.id} == {m.id: m.string for m in po if m.id}, \
        "run: bash scripts/translations.sh compile"
    for message in po:  # the same placeholders, so formatting never fails
        if message.id:
            assert sorted(re.findall(r"%\(\w+\)s|\{\w+\}", message.id)) == \
                sorted(re.findall(r"%\(\w+\)s|\{\w+\}", message.string)), message.id


def test_the_catalog_template_holds_every_message_of_the_pages(tmp_path):
    """A new or changed message in a template or in explain.py must be extracted and translated."""
    out = tmp_path / "messages.pot"
    subprocess.run([sys.executable, "-m", "babel.messages.frontend", "extract", "-F", "babel.cfg", "-k", "_l",
                    "--no-location", "--omit-header", "-o", str(out), "."], cwd=ROOT, check=True,
                   capture_output=True)
    with open(out, "rb") as fh:
        current = {m.id for m in read_po(fh) if m.id}
    for lang in LANGUAGES:
        assert current == {m.id for m in load_po(lang) if m.id}, f"run: bash scripts/translations.sh ({lang})"


def translations(lang):
    return Translations.load(str(CATALOGS), [lang])


ENGLISH_WORDS = re.compile(r"\b(your|answer|sure|device|sends|someone|guess|more than|at most)\b")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("k", [2, 3, 4, 10, 64])
@pytest.mark.parametrize("epsilon", [0.01, 0.5, math.log(3), 2.0, 3.0, 6.9, 20.0])
def test_the_privacy_sentences_in_each_language(lang, k, epsilon):
    gettext = translations(lang).gettext
    info = explain(epsilon, k, gettext=gettext, locale=lang)
    english = explain(epsilon, k)
    for key in ("coin", "posterior"):
        assert info[key] != english[key]
        assert not ENGLISH_WORDS.search(info[key]), info[key]
        assert "%(" not in info[key] and "100 %" not in info[key] and "100,0 %" not in info[key]
    number = re.search(r"(\d+(?:,\d)?)\u00a0%", info["coin"])
    if number:  # the same number as in English, with the language's decimal comma
        assert number.group(1).replace(",", ".") + "%" in english["coin"]
    total = explain_total(epsilon * 2, 2, gettext=gettext, locale=lang)["posterior"]
    assert not ENGLISH_WORDS.search(total) and total != explain_total(epsilon * 2, 2)["posterior"]
