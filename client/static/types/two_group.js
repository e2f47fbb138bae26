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

import { cryptoUint32 } from "../rr.js";
import { armKey } from "../keys.js";
import { drawnRadioCard, int, registerType } from "../types.js";

const TWO_32 = 4294967296;
const drawn = new WeakMap(); // fieldset -> the instruction's index: memory only

function checkUint32(u) {
  if (!Number.isInteger(u) || u < 0 || u >= TWO_32) throw new RangeError("a draw must be a uint32");
  return u;
}

// The group, 1 or 2: 1 iff one uint32 draw is below the group threshold.
export function drawGroup(groupThreshold, nextUint32 = cryptoUint32) {
  if (!Number.isInteger(groupThreshold) || groupThreshold < 1 || groupThreshold >= TWO_32) {
    throw new RangeError("the group threshold must be an integer from 1 to 2^32 - 1");
  }
  return checkUint32(nextUint32()) < groupThreshold ? 1 : 2;
}

// The instruction's index in the group's cumulative weights (ending at 2^32): the first that exceeds one draw.
export function drawInstruction(cumulative, nextUint32 = cryptoUint32) {
  if (!Array.isArray(cumulative) || cumulative.length < 2 || cumulative[cumulative.length - 1] !== TWO_32) {
    throw new RangeError("a group's cumulative weights must end at 2^32");
  }
  const u = checkUint32(nextUint32());
  let r = 0;
  while (u >= cumulative[r]) r += 1;
  return r;
}

// The answer (0 Yes, 1 No) of a respondent who follows `instruction`: `truth` and `unrelated` are 1 for yes.
export function comply(instruction, truth, unrelated) {
  if (instruction === "yes") return 0;
  if (instruction === "no") return 1;
  if (instruction === "unrelated") return unrelated ? 0 : 1;
  return truth ? 0 : 1; // "truthful", "sensitive"
}

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
