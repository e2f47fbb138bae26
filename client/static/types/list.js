// A list experiment's card (server/survey/questions/listexp.py): how many of the items apply.
//
// The arm is drawn with a fair coin from crypto.getRandomValues when the page opens (before the
// items are shown), memoized per (survey, question) and sent with the report: "arm:count".  The
// sensitive item and the extra count show only in the treatment arm (1).  Protected: the count is
// randomized (rr.js); a plain list experiment sends it as given.

import { assignArm, randomizeCount } from "../rr.js";
import { armKey } from "../keys.js";
import { drawnRadioCard, int, message, registerType } from "../types.js";

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
  ...drawnRadioCard("input[data-count]", armKey, drawArm),
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
