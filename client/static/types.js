// Numeric, check-all-that-apply and list-experiment questions on the survey page (survey.js calls in).
//
// As for single-choice questions: the visible inputs have no name; at submit the answer is read,
// randomized (rr.js) unless the question is asked directly or is a plain list experiment, and only
// the REPORT goes into the hidden field.  A randomized report is memoized in localStorage per
// (survey, question), never the answer.  A list experiment's arm is drawn with a fair coin from
// crypto.getRandomValues when the page opens (before the items are shown), memoized too, and sent
// with the report.  Numbers are parsed with integer (BigInt) arithmetic only: the page gives the
// minimum and step as whole numbers of 10^-scale units.

import { assignArm, randomizeCount, randomizeGrid, randomizeLaplace, randomizeTicks } from "./rr.js";

const TWO_32 = 4294967296;

export function armKey(slug, qid) {
  return `deniable:arm:${slug}:${qid}`;
}

function int(fieldset, name) {
  return Number(fieldset.dataset[name]);
}

// ---------------------------------------------------------------- numbers as exact decimals

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
  let fraction = scale ? text.slice(text.length - scale).replace(/0+$/, "") : "";
  whole = whole || "0";
  return (negative ? "-" : "") + whole + (fraction ? `.${fraction}` : "");
}

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

// What a numeric report stands for, in the question's units (for the thank-you page).
function reportedValue(fieldset, report) {
  const spacing = fieldset.dataset.mechanism === "laplace" ? 1 : int(fieldset, "m") / int(fieldset, "grid");
  const value = BigInt(fieldset.dataset.minUnits) + BigInt(report * spacing) * BigInt(fieldset.dataset.stepUnits);
  return decimal(value, int(fieldset, "scale"));
}

// A message in the page's language: the survey form's data-msg-* attribute (templates/survey.html),
// with {name} placeholders filled in.
function message(fieldset, name, values = {}) {
  const text = fieldset.closest("form").dataset[name] || "";
  return text.replace(/\{(\w+)\}/g, (whole, key) => (key in values ? String(values[key]) : whole));
}

// ---------------------------------------------------------------- reading answers (never stored)

function numericAnswer(fieldset) {
  const input = fieldset.querySelector("input[data-value]");
  if (input.value.trim() === "") {
    return input.validity && input.validity.badInput ? { error: message(fieldset, "msgNumber") } : { answered: false };
  }
  const index = answerIndex(fieldset, input.value);
  if (index === null) {
    const values = { min: input.min, max: input.max, step: input.step };
    return { error: message(fieldset, input.step !== "1" ? "msgNumberRangeStep" : "msgNumberRange", values) };
  }
  return { answered: true, value: index };
}

function multiAnswer(fieldset) {
  const skip = fieldset.querySelector("input[data-skip]");
  if (skip && skip.checked) return { answered: false };
  const ticks = Array.from(fieldset.querySelectorAll("input[data-tick]"), (box) => (box.checked ? 1 : 0));
  return { answered: true, value: ticks };
}

function listAnswer(fieldset) {
  const checked = Array.from(fieldset.querySelectorAll("input[data-count]")).find((radio) => radio.checked);
  return checked ? { answered: true, value: Number(checked.value) } : { answered: false };
}

export function readAnswer(fieldset) {
  const type = fieldset.dataset.type;
  if (type === "numeric") return numericAnswer(fieldset);
  if (type === "multi") return multiAnswer(fieldset);
  return listAnswer(fieldset);
}

// ---------------------------------------------------------------- reports

function validMemo(fieldset, text, arm) {
  const type = fieldset.dataset.type;
  if (type === "numeric") {
    if (!/^-?[0-9]{1,9}$/.test(text)) return false;
    const report = Number(text);
    if (fieldset.dataset.mechanism === "laplace") {
      const tail = int(fieldset, "tail");
      return report >= -tail && report <= int(fieldset, "m") + tail;
    }
    return report >= 0 && report <= int(fieldset, "grid");
  }
  if (type === "multi") return new RegExp(`^[01]{${int(fieldset, "k")}}$`).test(text);
  const match = /^([01]):([0-9]{1,3})$/.exec(text);
  return Boolean(match) && Number(match[1]) === arm && Number(match[2]) <= int(fieldset, "items") + 1;
}

function randomizeAnswer(fieldset, value, arm) {
  const type = fieldset.dataset.type;
  const threshold = int(fieldset, "threshold");
  if (type === "numeric") {
    const m = int(fieldset, "m");
    if (fieldset.dataset.mechanism === "laplace") {
      return String(randomizeLaplace(value, m, threshold, int(fieldset, "tail")));
    }
    return String(randomizeGrid(value, m, int(fieldset, "grid"), threshold));
  }
  if (type === "multi") return randomizeTicks(value, threshold).join("");
  return `${arm}:${randomizeCount(value, int(fieldset, "items"), arm, threshold)}`;
}

function shown(fieldset, text) {
  const type = fieldset.dataset.type;
  if (type === "numeric") return reportedValue(fieldset, Number(text));
  if (type === "multi") {
    const labels = Array.from(text, (bit, j) => (bit === "1"
      ? fieldset.querySelector(`label[for="${fieldset.dataset.qid}-option-${j}"]`).textContent : null))
      .filter((label) => label !== null);
    return labels.length ? labels.join(", ") : message(fieldset, "msgNoneTicked");
  }
  const [arm, count] = text.split(":").map(Number);
  return message(fieldset, "msgCountShown", { count, shown: int(fieldset, "items") + arm });
}

// The report of an answer: memoized when randomized (a retry or reload re-sends it), else as given.
// Returns {text: the hidden field's value, shown: what the thank-you page says was sent}.
export function reportFor(fieldset, slug, key, answer) {
  const storage = window.localStorage;
  const arm = fieldset.dataset.type === "list" ? Number(storage.getItem(armKey(slug, fieldset.dataset.qid))) : 0;
  const randomized = int(fieldset, "threshold") !== TWO_32;
  let text = randomized ? storage.getItem(key) : null;
  if (text === null || !validMemo(fieldset, text, arm)) {
    text = randomized ? randomizeAnswer(fieldset, answer, arm) : directReport(fieldset, answer, arm);
    if (randomized) storage.setItem(key, text);
  }
  return { text, shown: shown(fieldset, text) };
}

function directReport(fieldset, value, arm) {
  const type = fieldset.dataset.type;
  if (type === "numeric") return String(value); // asked directly: the grid is every answer
  if (type === "multi") return value.join("");
  return `${arm}:${value}`;
}

// ---------------------------------------------------------------- the page

function applyArm(fieldset, arm) {
  fieldset.querySelector("li[data-sensitive]").hidden = arm !== 1;
  const extra = fieldset.querySelector("[data-treatment-only]");
  extra.hidden = arm !== 1;
  if (arm !== 1) extra.querySelector("input").checked = false;
}

// Each list experiment's arm: the memoized one, or a fair coin drawn now (before the items show).
export function assignArms(form, slug) {
  for (const fieldset of form.querySelectorAll("fieldset.typed[data-type=list]")) {
    const key = armKey(slug, fieldset.dataset.qid);
    let arm = window.localStorage.getItem(key);
    if (arm !== "0" && arm !== "1") {
      arm = String(assignArm());
      window.localStorage.setItem(key, arm);
    }
    applyArm(fieldset, Number(arm));
  }
}

export function initTyped(form, slug, onChange) {
  assignArms(form, slug);
  for (const fieldset of form.querySelectorAll("fieldset.typed")) {
    if (fieldset.dataset.type === "list") {
      const radios = Array.from(fieldset.querySelectorAll("input[data-count]"));
      radios.forEach((radio) => radio.addEventListener("change", () => {
        if (radio.checked) radios.forEach((other) => { if (other !== radio) other.checked = false; });
        onChange(fieldset);
      }));
    } else if (fieldset.dataset.type === "multi") {
      const skip = fieldset.querySelector("input[data-skip]");
      const boxes = Array.from(fieldset.querySelectorAll("input[data-tick]"));
      boxes.forEach((box) => box.addEventListener("change", () => {
        if (box.checked && skip) skip.checked = false;
        onChange(fieldset);
      }));
      if (skip) {
        skip.addEventListener("change", () => {
          if (skip.checked) boxes.forEach((box) => { box.checked = false; });
          onChange(fieldset);
        });
      }
    } else {
      fieldset.querySelector("input[data-value]").addEventListener("input", () => onChange(fieldset));
    }
  }
}

// A different person: forget the previous person's arms (survey.js forgets their memoized reports)
// and draw new ones.
export function newPerson(form, slug) {
  for (const fieldset of form.querySelectorAll("fieldset.typed[data-type=list]")) {
    window.localStorage.removeItem(armKey(slug, fieldset.dataset.qid));
    fieldset.querySelectorAll("input[data-count]").forEach((radio) => { radio.checked = false; });
  }
  assignArms(form, slug);
}
