// A numeric question in the embed (server/survey/questions/numeric.py): a number typed in a box, as
// on the survey page (types/numeric.js).  The typed number becomes its answer index (steps from the
// minimum, 0..m) with integer (BigInt) arithmetic, never a float; protected, the index goes through
// grid randomized response or the discrete Laplace mechanism (rr.js: randomizeGrid, randomizeLaplace,
// the survey page's own samplers).  The report is what the JSON API takes: a grid index 0..grid, or
// (Laplace) steps from the minimum in -tail..m + tail; asked directly, the answer index itself.

import { randomizeGrid, randomizeLaplace } from "../../rr.js";
import { registerEmbedType, said } from "../embed.js";

// A JSON number of the design document as plain decimal text ("12.5", "0.001", never "1e-3").
function plain(x) {
  const text = String(x);
  return /e/i.test(text) ? x.toFixed(12).replace(/\.?0+$/, "") : text;
}

const places = (text) => (text.split(".")[1] || "").length;

// Decimal text (as typed, or from plain()) as a whole number of 10^-scale units; null if it is not a
// number with at most `scale` significant decimals.
function units(text, scale) {
  const match = /^(-?)([0-9]{1,15})(?:\.([0-9]{1,12}))?$/.exec(text.trim());
  if (!match) return null;
  const fraction = match[3] || "";
  if (fraction.length > scale && /[1-9]/.test(fraction.slice(scale))) return null;
  const value = BigInt(match[2] + fraction.slice(0, scale).padEnd(scale, "0"));
  return match[1] === "-" ? -value : value;
}

// The answer index (0..m) of a typed number, or null when it is not one of the question's answers.
export function numericIndex(q, text) {
  const scale = Math.max(places(plain(q.min)), places(plain(q.step)));
  const value = units(text, scale);
  if (value === null) return null;
  const offset = value - units(plain(q.min), scale);
  const step = units(plain(q.step), scale);
  if (offset < 0n || offset % step !== 0n) return null;
  const index = offset / step;
  return index > BigInt(q.steps) ? null : Number(index);
}

// The rule a typed answer follows, in the survey page's words (numeric.number_rule and rule_words in
// Python, the page's data-rule messages): "a whole number from 0 to 30" (step 1 from a whole minimum),
// "a multiple of 0.5 from 0 to 30" (the minimum is a multiple of the step), or "a number from 0.25 to
// 10.25 in steps of 0.5".
export function ruleWords(q) {
  const [low, high, step] = [plain(q.min), plain(q.max), plain(q.step)];
  if (step === "1" && places(low) === 0) return `a whole number from ${low} to ${high}`;
  const scale = Math.max(places(low), places(step));
  return units(low, scale) % units(step, scale) === 0n ? `a multiple of ${step} from ${low} to ${high}`
    : `a number from ${low} to ${high} in steps of ${step}`;
}

// Which of the three rules ruleWords says: "whole", "multiple" or "steps".
function ruleOf(q) {
  const [low, step] = [plain(q.min), plain(q.step)];
  if (step === "1" && places(low) === 0) return "whole";
  const scale = Math.max(places(low), places(step));
  return units(low, scale) % units(step, scale) === 0n ? "multiple" : "steps";
}

// The refusal of a typed answer that is not one of the question's: the survey page's sentence in the
// mounted language (the document's rule_whole, rule_multiple, rule_steps), else "Please give " + ruleWords.
function refusal(q) {
  const values = { min: plain(q.min), max: plain(q.max), step: plain(q.step) };
  return said(q, `rule_${ruleOf(q)}`, values) || `Please give ${ruleWords(q)}.`;
}

const laplace = (q) => q.mechanism === "laplace";
const report = /^-?[0-9]{1,9}$/;

registerEmbedType("numeric", {
  view(q, { id, element }) {
    const node = element("div", { class: "deniable-numeric" });
    const values = { min: plain(q.min), max: plain(q.max), step: plain(q.step) };
    const range = plain(q.step) === "1" ? `from ${plain(q.min)} to ${plain(q.max)}`
      : `from ${plain(q.min)} to ${plain(q.max)} in steps of ${plain(q.step)}`;
    const label = said(q, plain(q.step) === "1" ? "number_label" : "number_label_steps", values)
      || `Your answer, ${range}:`;
    const box = element("input", { type: "text", inputmode: "decimal", id: `${id}-value`, autocomplete: "off" }); // no name
    node.append(element("label", { for: `${id}-value` }, label), box);
    const read = () => {
      if (box.value.trim() === "") return { answered: false };
      const index = numericIndex(q, box.value);
      return index === null ? { error: refusal(q) } : { answered: true, value: index };
    };
    return { node, read };
  },
  randomized: (q) => q.protected && (q.mechanism === "grid" || laplace(q)),
  draw: (q, value) => String(laplace(q) ? randomizeLaplace(value, q.steps, q.threshold, q.tail)
    : randomizeGrid(value, q.steps, q.grid, q.threshold)),
  direct: (q, value) => String(value),
  valid(q, text) {
    if (!report.test(text)) return false;
    const n = Number(text);
    return laplace(q) ? n >= -q.tail && n <= q.steps + q.tail : n >= 0 && n <= q.grid;
  },
  json: (q, text) => Number(text),
});
