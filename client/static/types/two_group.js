// A two-group non-compliance design's card (server/survey/questions/two_group.py; the Python twin of the
// sampler: client/two_group.py): CDM, CDMsym, SLD, UQTunknown.
//
// When the page opens the device draws the respondent's group (group 1 iff a uint32 from
// crypto.getRandomValues is below data-group-threshold; memoized per (survey, question) like a list
// experiment's arm: the group is not sensitive and is sent) and then one instruction from the group's
// cumulative integer weights (data-column-G: the first instruction whose cumulative weight exceeds a
// second uint32).  The instruction is shown in words; the respondent clicks Yes or No as it says.  Only
// "GROUP:ANSWER" is sent (answer 0 Yes, 1 No).  The instruction is held in this module's memory only: never
// in the browser's storage, never in the report, and its words are removed from the page once the
// answer is sent (data-threshold is 2^32: types.js sends the respondent's answer as given, `direct`).

import { comply, drawGroup, drawInstruction } from "./two_group_draw.js";
import { armKey } from "../keys.js";
import { drawnRadioCard, int, registerType } from "../types.js";

export { comply, drawGroup, drawInstruction }; // the draws, for the tests and the audit

const drawn = new WeakMap(); // fieldset -> the instruction's index: memory only

const shownBox = (fieldset) => fieldset.querySelector("[data-instruction-shown]");
const names = (fieldset) => Array.from(fieldset.querySelectorAll("template[data-instruction]"), (t) => t.dataset.instruction);

function cumulativeOf(fieldset, group) {
  const text = fieldset.getAttribute(`data-column-${group}`);
  if (!/^[0-9]+( [0-9]+)+$/.test(text || "")) throw new RangeError(`question ${fieldset.dataset.qid}: no column ${group}`);
  return text.split(" ").map(Number);
}

function groupOf(fieldset, slug) {
  const key = armKey(slug, fieldset.dataset.qid);
  let group = window.localStorage.getItem(key);
  if (group !== "1" && group !== "2") {
    group = String(drawGroup(int(fieldset, "groupThreshold")));
    window.localStorage.setItem(key, group);
  }
  return Number(group);
}

function show(fieldset, index) {
  const box = shownBox(fieldset);
  const template = fieldset.querySelectorAll("template[data-instruction]")[index];
  box.replaceChildren(template.content.cloneNode(true));
  box.hidden = false;
}

// Draw the group (memoized) and the instruction (memory only), and show the instruction.
function prepare(fieldset, slug) {
  const group = groupOf(fieldset, slug);
  const index = drawInstruction(cumulativeOf(fieldset, group));
  if (index >= names(fieldset).length) throw new RangeError(`question ${fieldset.dataset.qid}: no instruction ${index}`);
  drawn.set(fieldset, index);
  show(fieldset, index);
}

// Once the answer is sent: nothing about the instruction stays on the page or in memory.
function dropInstruction(fieldset) {
  drawn.delete(fieldset);
  const box = shownBox(fieldset);
  box.replaceChildren();
  box.hidden = true;
}

const label = (fieldset, answer) => fieldset.querySelector(`label[for="${fieldset.dataset.qid}-answer-${answer}"]`).textContent;

registerType("two_group", {
  ...drawnRadioCard("input[data-answer]", armKey, prepare),
  context: (fieldset, slug) => groupOf(fieldset, slug),
  validMemo: (fieldset, text, group) => /^[12]:[01]$/.test(text) && Number(text[0]) === group,
  randomize(fieldset, value, group) { // never called: data-threshold is 2^32 (the respondent follows the instruction)
    dropInstruction(fieldset);
    return `${group}:${value}`;
  },
  direct(fieldset, value, group) {
    if (value !== 0 && value !== 1) throw new RangeError("the answer must be 0 (Yes) or 1 (No)");
    dropInstruction(fieldset);
    return `${group}:${value}`;
  },
  shown: (fieldset, text) => label(fieldset, Number(text.split(":")[1])),
});
