// A single choice randomized by a design in the embed (server/survey/questions/choice.py,
// DesignedChoice): one draw of the design's integer weights (designs.js), as on the survey page.
// Every design the device draws randomizes, even one that is not ε-LDP.
//
// The respondent-side crosswise model ("design": {"name": "crosswise", "side": "respondent", …}) is
// randomized by the respondent, not the device, as on the survey page (types/design.js,
// cards/crosswise.html): the card shows the question, the private fact and two choices, "same" (both
// yes or both no) and "different", in the words the design document gives (its `crosswise`:
// server/survey/recipes.py, crosswise_words); the report is the choice as is (0 same, 1 different),
// with no draw.  No input holds the answer to either question, so not even the device sees it.

import { cumulativeOf, sampleDesign } from "../../designs.js";
import { oneOf, registerEmbedType } from "../embed.js";

const respondentSide = (q) => Boolean(q.design) && q.design.side === "respondent";

registerEmbedType("design", {
  input: "radio",
  fitsUntyped: (q) => Array.isArray(q.weights) && !respondentSide(q),
  randomized: () => true,
  draw: (q, value) => String(sampleDesign(value, cumulativeOf(q.weights))),
  direct: (q, value) => String(value),
  valid: (q, text) => /^[0-9]{1,2}$/.test(text) && Number(text) < q.k,
  json: (q, text) => Number(text),
});

// The card's words, from the design document (refused when it has none: a document made before the embed
// mounted this design, which must not fall back to a Yes/No question randomized on the device).
function wordsOf(q) {
  const words = q.crosswise;
  if (!words || typeof words.fact !== "string" || !Array.isArray(words.choices) || words.choices.length !== 2) {
    throw new Error(`question ${q.id}: the design document gives no words for the crosswise card (same, `
      + "different): take it again from GET /api/v1/surveys/SLUG or deniable embed design");
  }
  return words;
}

registerEmbedType("crosswise", {
  fitsUntyped: respondentSide,
  view(q, { id, element }) {
    const words = wordsOf(q);
    const node = element("div", { class: "deniable-crosswise" });
    const fact = element("p", { class: "deniable-crosswise-fact", id: `${id}-fact` });
    fact.append(element("strong", {}, words.fact_label), ` ${words.fact}`);
    const instruction = element("p", { class: "deniable-crosswise-instruction", id: `${id}-instruction` },
      words.instruction);
    const group = element("div", { role: "radiogroup", "aria-labelledby": `${id}-instruction`,
                                   "aria-describedby": `${id}-fact` });
    const radios = words.choices.map((label, j) => {
      const radio = element("input", { type: "radio", id: `${id}-${j}`, "data-option": String(j) }); // no name
      const row = element("div", { class: "deniable-option" });
      row.append(radio, element("label", { for: `${id}-${j}` }, label));
      group.append(row);
      return radio;
    });
    oneOf(radios);
    node.append(fact, instruction, group);
    const read = () => {
      const checked = radios.findIndex((radio) => radio.checked);
      return checked < 0 ? { answered: false } : { answered: true, value: checked };
    };
    return { node, read };
  },
  note: (q) => wordsOf(q).note,
  randomized: () => false, // the respondent randomized: the device sends the choice as is
  draw: () => { throw new Error("the respondent-side crosswise model is never drawn by the device"); },
  direct: (q, value) => String(value),
  valid: (q, text) => text === "0" || text === "1",
  json: (q, text) => Number(text),
});
