// A list experiment's card (server/survey/questions/listexp.py): how many of the items apply.
//
// The arm is drawn with a fair coin from crypto.getRandomValues when the page opens (before the
// items are shown), memoized per (survey, question) and sent with the report: "arm:count".  The
// sensitive item and the extra count show only in the treatment arm (1).  Protected: the count is
// randomized (rr.js); a plain list experiment sends it as given.

import { assignArm, randomizeCount } from "../rr.js";
import { armKey } from "../keys.js";
import { int, message, registerType } from "../types.js";

const radios = (fieldset) => Array.from(fieldset.querySelectorAll("input[data-count]"));

function applyArm(fieldset, arm) {
  fieldset.querySelector("li[data-sensitive]").hidden = arm !== 1;
  const extra = fieldset.querySelector("[data-treatment-only]");
  extra.hidden = arm !== 1;
  if (arm !== 1) extra.querySelector("input").checked = false;
}

// The memoized arm, or a fair coin drawn now (before the items show).
function drawArm(fieldset, slug) {
  const key = armKey(slug, fieldset.dataset.qid);
  let arm = window.localStorage.getItem(key);
  if (arm !== "0" && arm !== "1") {
    arm = String(assignArm());
    window.localStorage.setItem(key, arm);
  }
  applyArm(fieldset, Number(arm));
}

registerType("list", {
  read(fieldset) {
    const checked = radios(fieldset).find((radio) => radio.checked);
    return checked ? { answered: true, value: Number(checked.value) } : { answered: false };
  },
  touched: (fieldset) => radios(fieldset).some((radio) => radio.checked),
  prepare: drawArm,
  wire(fieldset, onChange) {
    const all = radios(fieldset);
    all.forEach((radio) => radio.addEventListener("change", () => {
      if (radio.checked) all.forEach((other) => { if (other !== radio) other.checked = false; });
      onChange(fieldset);
    }));
  },
  // A different person: forget the previous person's arm and count, and draw a new arm.
  forget(fieldset, slug) {
    window.localStorage.removeItem(armKey(slug, fieldset.dataset.qid));
    radios(fieldset).forEach((radio) => { radio.checked = false; });
    drawArm(fieldset, slug);
  },
  context: (fieldset, slug) => Number(window.localStorage.getItem(armKey(slug, fieldset.dataset.qid))),
  validMemo(fieldset, text, arm) {
    const match = /^([01]):([0-9]{1,3})$/.exec(text);
    return Boolean(match) && Number(match[1]) === arm && Number(match[2]) <= int(fieldset, "items") + 1;
  },
  randomize: (fieldset, value, arm) => `${arm}:${randomizeCount(value, int(fieldset, "items"), arm, int(fieldset, "threshold"))}`,
  direct: (fieldset, value, arm) => `${arm}:${value}`,
  shown(fieldset, text) {
    const [arm, count] = text.split(":").map(Number);
    return message(fieldset, "msgCountShown", { count, shown: int(fieldset, "items") + arm });
  },
});
