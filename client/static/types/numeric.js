// A numeric question's card (server/survey/questions/numeric.py): a number typed in a box.
//
// Numbers are parsed with integer (BigInt) arithmetic only: the page gives the minimum and step as
// whole numbers of 10^-scale units.  Protected: grid randomized response or the discrete Laplace
// mechanism (data-mechanism), both in rr.js.

import { randomizeGrid, randomizeLaplace } from "../rr.js";
import { int, message, registerType } from "../types.js";

function units(text, scale) {
  const match = /^(-?)([0-9]{1,15})(?:\.([0-9]{1,12}))?$/.exec(text.trim());
  if (!match) return null;
  const fraction = match[3] || "";
  if (fraction.length > scale && /[1-9]/.test(fraction.slice(scale))) return null;
  const digits = match[2] + fraction.slice(0, scale).padEnd(scale, "0");
  const value = BigInt(digits);
  return match[1] === "-" ? -value : value;
}

function decimal(value, scale) {
  const negative = value < 0n;
  const text = (negative ? -value : value).toString().padStart(scale + 1, "0");
  let whole = scale ? text.slice(0, text.length - scale) : text;
  const fraction = scale ? text.slice(text.length - scale).replace(/0+$/, "") : "";
  whole = whole || "0";
  return (negative ? "-" : "") + whole + (fraction ? `.${fraction}` : "");
}

const laplace = (fieldset) => fieldset.dataset.mechanism === "laplace";

// The answer index (0..m) of a typed number, or null when it is not one of the question's answers.
export function answerIndex(fieldset, text) {
  const scale = int(fieldset, "scale");
  const value = units(text, scale);
  if (value === null) return null;
  const offset = value - BigInt(fieldset.dataset.minUnits);
  const step = BigInt(fieldset.dataset.stepUnits);
  if (offset < 0n || offset % step !== 0n) return null;
  const index = offset / step;
  return index > BigInt(int(fieldset, "m")) ? null : Number(index);
}

const input = (fieldset) => fieldset.querySelector("input[data-value]");

// The message that names the question's real rule, range and step (data-rule: numeric.number_rule
// in Python decides it): "a whole number from 0 to 30", "a multiple of 0.5 from 0 to 30", or "a
// number from 0.25 to 10.25 in steps of 0.5".
const RULE_MESSAGES = { whole: "msgNumberWhole", multiple: "msgNumberMultiple", steps: "msgNumberRangeStep" };

function ruleMessage(fieldset, box) {
  const name = RULE_MESSAGES[fieldset.dataset.rule] || "msgNumberRangeStep";
  return message(fieldset, name, { min: box.min, max: box.max, step: box.step });
}

registerType("numeric", {
  read(fieldset) {
    const box = input(fieldset);
    if (box.value.trim() === "") {
      return box.validity && box.validity.badInput ? { error: ruleMessage(fieldset, box) } : { answered: false };
    }
    const index = answerIndex(fieldset, box.value);
    if (index === null) return { error: ruleMessage(fieldset, box) };
    return { answered: true, value: index };
  },
  // Counted once a number is typed (a number out of range is said at submit).
  touched: (fieldset) => input(fieldset).value.trim() !== "",
  wire(fieldset, onChange) {
    input(fieldset).addEventListener("input", () => onChange(fieldset));
  },
  context: () => null,
  validMemo(fieldset, text) {
    if (!/^-?[0-9]{1,9}$/.test(text)) return false;
    const report = Number(text);
    if (laplace(fieldset)) {
      const tail = int(fieldset, "tail");
      return report >= -tail && report <= int(fieldset, "m") + tail;
    }
    return report >= 0 && report <= int(fieldset, "grid");
  },
  randomize(fieldset, value) {
    const m = int(fieldset, "m");
    const threshold = int(fieldset, "threshold");
    if (laplace(fieldset)) return String(randomizeLaplace(value, m, threshold, int(fieldset, "tail")));
    return String(randomizeGrid(value, m, int(fieldset, "grid"), threshold));
  },
  direct: (fieldset, value) => String(value), // asked directly: the grid is every answer
  // What a report stands for, in the question's units.
  shown(fieldset, text) {
    const spacing = laplace(fieldset) ? 1 : int(fieldset, "m") / int(fieldset, "grid");
    const value = BigInt(fieldset.dataset.minUnits) + BigInt(Number(text) * spacing) * BigInt(fieldset.dataset.stepUnits);
    return decimal(value, int(fieldset, "scale"));
  },
});
