"""The builder's names as it types (server/web/dashboard/static/naming.js) are the server's
(server/web/dashboard/naming.py), run in chromium on the same inputs."""

from __future__ import annotations

import json

import pytest

from deniable.server.web.dashboard.naming import KEEP_FIRST, STOP, question_id, slugify

pytestmark = pytest.mark.browser

TEXTS = ["Campus health: 2025 edition!", "How often have you cheated on an exam?", "¿Consumiste drogas?",
         "   ", "2024 survey", "Ünïcödé Çafé — naïve résumé", "The of and", "Straße øre Ærø", "a" * 80,
         "What is your age?", "How many drinks in the last 7 days?", "---", "Which of these have you used?"]


def test_the_builder_names_things_as_the_server_does(page, live_server):
    page.goto(f"{live_server}/auth/login")
    taken = ["how_often_cheated_exam", "consumiste_drogas"]
    got = page.evaluate(
        """async ([texts, taken, stop, keep]) => {
             const naming = await import('/dashboard/static/naming.js');
             return texts.map((t) => [naming.slugify(t),
                                      naming.questionId(t, new Set(taken), new Set(stop), new Set(keep))]);
           }""", [TEXTS, taken, sorted(STOP), sorted(KEEP_FIRST)])
    expected = [[slugify(t), question_id(t, set(taken))] for t in TEXTS]
    assert got == expected, json.dumps([(t, g, e) for t, g, e in zip(TEXTS, got, expected) if g != e])
