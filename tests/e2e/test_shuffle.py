"""Randomized option order in chromium (a question's ``"shuffle": true``; client/static/shuffle.js):
every page load shows each marked question's options in a new order drawn with
``crypto.getRandomValues``, always a permutation, "None of these" and "I prefer not to answer" last;
each input keeps its place in the definition, so the report decodes to the option chosen; nothing
about the order is sent or stored; without JavaScript the definition's order shows.  The unbiased
draw itself is checked on injected uint32 draws (Fisher–Yates with rejection sampling)."""

from __future__ import annotations

import math
from collections import Counter
from itertools import permutations
from urllib.parse import parse_qs

import pytest
from scipy import stats
from support.browser import record_requests, stored_reports

from deniable.server.store.db import connect
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition

pytestmark = pytest.mark.browser

LOADS = 40
PICK = ["Alpha", "Bravo", "Charlie", "Delta", "Echo"]
PROT = ["North", "East", "South", "West"]
TICKS = ["Red", "Green", "Blue", "Amber"]
SURVEY = parse_definition({"slug": "shuffled", "title": "Shuffled", "questions": [
    {"id": "pick", "text": "Pick one", "options": PICK, "shuffle": True},
    # ε = 20: the true option is kept with probability 1 − 7·10⁻⁹, so the report decodes to the answer
    {"id": "prot", "text": "Which way?", "options": PROT, "epsilon": 20.0, "shuffle": True},
    {"id": "ticks", "text": "Which colours?", "type": "multi", "options": TICKS, "shuffle": True, "required": False},
    {"id": "fixed", "text": "Fixed order", "options": ["One", "Two", "Three"]}]})

# For every question: its options as shown, each with its input's value and marker (data-option, data-tick,
# or none for a direct choice), then whatever else the first .options box holds.
SHOWN = """() => Array.from(document.querySelectorAll("fieldset.question"), (fieldset) => {
  const box = fieldset.querySelector(".options");
  return [fieldset.dataset.qid, Array.from(box.children, (div) => {
    const input = div.querySelector("input");
    return {label: div.querySelector("label").textContent.trim(), value: input.value,
            option: input.dataset.option ?? input.dataset.tick ?? null, cls: div.className};
  })];
})"""


@pytest.fixture
def shuffled_survey(app):
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, SURVEY, status="open")
    finally:
        db.conn.close()


def test_each_load_shows_a_new_permutation_and_every_input_keeps_its_definition_index(page, live_server,
                                                                                      shuffled_survey):
    first = {"pick": Counter(), "prot": Counter(), "ticks": Counter()}
    orders = set()
    for _ in range(LOADS):
        page.goto(f"{live_server}/s/shuffled")
        page.wait_for_selector("#submit-answers:not([disabled])")
        shown = dict(page.evaluate(SHOWN))
        for qid, labels in (("pick", PICK), ("prot", PROT), ("ticks", TICKS)):
            options = [o for o in shown[qid] if o["cls"] == "option"]
            assert sorted(o["label"] for o in options) == sorted(labels)  # a permutation
            for o in options:  # the input is still the option's place in the definition
                assert o["value"] == str(labels.index(o["label"])) or o["option"] == str(labels.index(o["label"]))
            first[qid][options[0]["label"]] += 1
        orders.add(tuple(o["label"] for o in shown["pick"]))
        # "None of these" and "I prefer not to answer" are not options: they stay last
        assert [o["cls"] for o in shown["ticks"]][-2:] == ["option none", "option skip"]
        assert [o["label"] for o in shown["fixed"]] == ["One", "Two", "Three"]
        # nothing about the order is kept on the device
        assert page.evaluate("() => [localStorage.length, sessionStorage.length]") == [0, 0]
    # the first option shown varies (all 40 alike has probability 4 · 4^-40 at most)
    assert all(len(counts) > 1 for counts in first.values()), first
    assert len(orders) > 20  # 40 draws among 120 orders: fewer than 21 distinct has probability < 10^-6


def test_the_reports_decode_to_the_options_chosen_and_no_order_is_sent(page, live_server, shuffled_survey,
                                                                       db_path):
    requests = record_requests(page)
    page.goto(f"{live_server}/s/shuffled")
    page.wait_for_selector("#submit-answers:not([disabled])")
    page.get_by_label("Charlie", exact=True).check()
    page.get_by_label("South", exact=True).check()
    page.get_by_label("Green", exact=True).check()
    page.get_by_label("Amber", exact=True).check()
    page.get_by_label("Two", exact=True).check()
    with page.expect_navigation(url="**/s/shuffled/thanks"):
        page.click("#submit-answers")
    body = [parse_qs(r.post_data, keep_blank_values=True) for r in requests if r.method == "POST"][0]
    assert set(body) == {"csrf_token", "pick", "prot", "ticks", "fixed"}  # no order field
    assert body["pick"] == ["2"] and body["prot"] == ["2"] and body["ticks"] == ["0101"] and body["fixed"] == ["1"]
    assert stored_reports(db_path) == [{"pick": 2, "prot": 2, "ticks": [0, 1, 0, 1], "fixed": 1}]


def test_without_javascript_the_definition_order_shows(browser, live_server, shuffled_survey):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{live_server}/s/shuffled")
        labels = page.locator("#q-pick .options .option label").all_inner_texts()
        assert labels == PICK
    finally:
        context.close()


def test_the_draw_is_fisher_yates_with_rejection_sampling(page, live_server, shuffled_survey):
    """On injected draws: a draw at or above 2^32 − (2^32 mod n) is refused, so 0..n − 1 are equally likely;
    a shuffle of four items with every sequence of draws below the limits gives each of the 24 orders
    once; with crypto.getRandomValues the 24 orders of four items are uniform (chi-square, α = 10^-4)."""
    page.goto(f"{live_server}/s/shuffled")
    result = page.evaluate("""async () => {
      const s = await import('/static/shuffle.js');
      const limit3 = 4294967296 - (4294967296 % 3);
      const seq = (values) => { let i = 0; return () => values[i++]; };
      const rejected = s.uniformBelow(3, seq([limit3, 4294967295, limit3 - 1]));
      const orders = [];
      for (let a = 0; a < 4; a++) for (let b = 0; b < 3; b++) for (let c = 0; c < 2; c++)
        orders.push(s.shuffled(["a", "b", "c", "d"], seq([a, b, c])).join(""));
      const counts = {};
      for (let i = 0; i < 24000; i++) {
        const key = s.shuffled(["a", "b", "c", "d"]).join("");
        counts[key] = (counts[key] || 0) + 1;
      }
      return {rejected, orders, counts};
    }""")
    assert result["rejected"] == (4294967296 - 4294967296 % 3 - 1) % 3
    assert sorted(result["orders"]) == sorted("".join(p) for p in permutations("abcd"))
    counts = [result["counts"].get("".join(p), 0) for p in permutations("abcd")]
    assert sum(counts) == 24000 and stats.chisquare(counts).pvalue > 1e-4
    assert math.factorial(4) == len(counts)
