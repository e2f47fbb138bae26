// A two-group non-compliance design in the embed (server/survey/questions/two_group.py: CDM, CDMsym, SLD,
// UQTunknown), as on the survey page (types/two_group.js, cards/two_group.html; the Python twin of the
// sampler: client/two_group.py).
//
// When the question is mounted the device draws the respondent's group (group 1 iff a uint32 from
// crypto.getRandomValues is below the document's group_threshold), kept under the survey page's own key
// (keys.js: deniable:arm:SLUG:QID, like a list experiment's arm: the group is not sensitive and is sent),
// then one instruction from the group's integer weights (the first whose cumulative weight exceeds a
// second uint32).  The instruction is shown in words — the survey page's card's words, in the mounted
// language (the design document's card_words: server/survey/recipes.py, card_words) — and the respondent
// clicks Yes or No as it says.  The instruction is held in this view's memory only: never in storage, never
// in the report.  The report is the group and the answer clicked, "GROUP:ANSWER" as the survey page's hidden
// field writes it (answer 0 Yes, 1 No), kept under deniable:report:SLUG:QID so a reload re-sends it; the
// host receives {"group": 1|2, "answer": 0|1}, what the JSON API takes.

import { drawGroup, drawInstruction } from "../../types/two_group_draw.js";
import { armKey } from "../../keys.js";
import { oneOf, registerEmbedType } from "../embed.js";

// The group's cumulative weights, from the document's integer weights (each group's sum to 2^32).
function cumulativeWeights(q, group) {
  const weights = Array.isArray(q.weights) ? q.weights[group - 1] : null;
  if (!Array.isArray(weights) || weights.length !== q.instructions.length
      || !weights.every((w) => Number.isInteger(w) && w >= 0)) {
    throw new RangeError(`question ${q.id}: the design document gives no weights for group ${group}`);
  }
  let sum = 0;
  return weights.map((w) => { sum += w; return sum; });
}

// The memoized group, or one drawn now.
function groupOf(q, { slug, storage }) {
  const key = armKey(slug, q.id);
  let group = storage.getItem(key);
  if (group !== "1" && group !== "2") {
    group = String(drawGroup(q.group_threshold));
    storage.setItem(key, group);
  }
  return Number(group);
}

// The card's words in `language` (refused when the document has none: one made before the embed mounted
// this type, which must not fall back to words of the embed's own).
function wordsOf(q, language) {
  const all = q.card_words;
  const words = all && typeof all === "object" ? all[language] : null;
  const complete = words && words.instructions && Array.isArray(words.answers) && words.answers.length === 2
    && Array.isArray(q.instructions) && q.instructions.every((name) => typeof words.instructions[name] === "string");
  if (!complete) {
    throw new Error(`question ${q.id}: the design document gives no words for the two-group card in ${language} `
      + "(its instructions, Yes and No): take it again from GET /api/v1/surveys/SLUG or deniable embed design");
  }
  return words;
}

registerEmbedType("two_group", {
  view(q, where) {
    const { id, element, language } = where;
    const words = wordsOf(q, language);
    const group = groupOf(q, where);
    const index = drawInstruction(cumulativeWeights(q, group)); // memory only: this closure's
    const name = q.instructions[index];
    const node = element("div", { class: "deniable-two-group" });
    const instruction = element("p", { class: "deniable-two-group-instruction", id: `${id}-instruction` },
      words.instructions[name]);
    if (name === "unrelated") {
      instruction.append(" ", element("strong", {}, typeof words.unrelated === "string" ? words.unrelated : q.unrelated));
    }
    const answers = element("div", { role: "radiogroup", "aria-labelledby": `${id}-instruction` });
    const radios = words.answers.map((label, j) => {
      const radio = element("input", { type: "radio", id: `${id}-answer-${j}`, "data-answer": String(j) }); // no name
      const row = element("div", { class: "deniable-option" });
      row.append(radio, element("label", { for: `${id}-answer-${j}` }, label));
      answers.append(row);
      return radio;
    });
    oneOf(radios);
    node.append(instruction, answers);
    const read = () => {
      const checked = radios.findIndex((radio) => radio.checked);
      return checked < 0 ? { answered: false } : { answered: true, value: checked };
    };
    return { node, read };
  },
  // the survey page's note beside the question (the document's notes): CDMsym's "Protected." and its bound,
  // the other models' "Not protected by ε." and why; never ε itself
  note(q, language) {
    const own = q.notes && q.notes[language] ? q.notes[language] : {};
    const text = q.protected ? own.protected : own.plain;
    if (typeof text === "string") return text;
    return q.protected
      ? "Protected: your device tells you at random how to answer; only your group and your answer are sent."
      : "Not protected by ε: your device tells you at random how to answer; only your group and your answer are sent.";
  },
  context: groupOf,
  randomized: () => true, // the device drew the instruction: the report is kept, a reload re-sends it
  draw: (q, value, group) => `${group}:${value}`,
  direct: (q, value, group) => `${group}:${value}`,
  valid: (q, text, group) => /^[12]:[01]$/.test(text) && Number(text[0]) === group,
  json(q, text) {
    const [group, answer] = text.split(":").map(Number);
    return { group, answer };
  },
});
