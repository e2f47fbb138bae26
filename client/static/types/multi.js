// A check-all-that-apply question's card (server/survey/questions/multi.py): one tick box per
// option, "None of these" (ticking none is an answer) and, when optional, "I prefer not to answer".
//
// The progress line counts the card once the respondent has said something: a tick, "None of
// these", or (optional question) "I prefer not to answer"; at submit a required card with nothing
// ticked still sends "none ticked", as it always did.  Protected: each tick flipped on its own (rr.js),
// or, with a randomized-response design on each tick (data-column-0 and data-column-1: the design's
// cumulative integer weights for a tick and for no tick; data-threshold 0), one draw of the design per
// tick (designs.js).

import { sampleTicks } from "../designs.js";
import { randomizeTicks } from "../rr.js";
import { int, message, registerType } from "../types.js";

// In the definition's order (data-tick), whatever order the page shows them in (shuffle.js).
const boxes = (fieldset) => Array.from(fieldset.querySelectorAll("input[data-tick]"))
  .sort((a, b) => Number(a.dataset.tick) - Number(b.dataset.tick));
const skipBox = (fieldset) => fieldset.querySelector("input[data-skip]");
const noneBox = (fieldset) => fieldset.querySelector("input[data-none]");

// The tick design's two cumulative columns, or null for randomized response at eps/K.
function tickColumns(fieldset) {
  if (!fieldset.hasAttribute("data-column-0")) return null;
  return [0, 1].map((t) => {
    const text = fieldset.getAttribute(`data-column-${t}`);
    if (!/^[0-9]+ [0-9]+$/.test(text || "")) throw new RangeError(`question ${fieldset.dataset.qid}: no tick design column ${t}`);
    return text.split(" ").map(Number);
  });
}

function randomizeAll(fieldset, value) {
  const columns = tickColumns(fieldset);
  return (columns ? sampleTicks(value, columns) : randomizeTicks(value, int(fieldset, "threshold"))).join("");
}

registerType("multi", {
  read(fieldset) {
    const skip = skipBox(fieldset);
    if (skip && skip.checked) return { answered: false };
    return { answered: true, value: boxes(fieldset).map((box) => (box.checked ? 1 : 0)) };
  },
  touched(fieldset) {
    const said = [...boxes(fieldset), noneBox(fieldset), skipBox(fieldset)];
    return said.some((box) => box && box.checked);
  },
  wire(fieldset, onChange) {
    const skip = skipBox(fieldset);
    const none = noneBox(fieldset);
    const ticks = boxes(fieldset);
    // "None of these" and "I prefer not to answer" exclude every other box
    const only = (keep) => [...ticks, none, skip].forEach((box) => { if (box && box !== keep) box.checked = false; });
    ticks.forEach((box) => box.addEventListener("change", () => {
      if (box.checked) {
        if (skip) skip.checked = false;
        if (none) none.checked = false;
      }
      onChange(fieldset);
    }));
    for (const box of [none, skip]) {
      if (!box) continue;
      box.addEventListener("change", () => {
        if (box.checked) only(box);
        onChange(fieldset);
      });
    }
  },
  context: () => null,
  validMemo: (fieldset, text) => new RegExp(`^[01]{${int(fieldset, "k")}}$`).test(text),
  randomize: randomizeAll,
  direct: (fieldset, value) => value.join(""),
  shown(fieldset, text) {
    const labels = Array.from(text, (bit, j) => (bit === "1"
      ? fieldset.querySelector(`label[for="${fieldset.dataset.qid}-option-${j}"]`).textContent : null))
      .filter((label) => label !== null);
    return labels.length ? labels.join(", ") : message(fieldset, "msgNoneTicked");
  },
});
