// A single choice randomized by a design (server/survey/questions/choice.py, DesignedChoice): radio
// buttons, and at submit one draw of the design (designs.js) from the integer weights the page
// carries, one column per true answer (data-column-T: cumulative weights, space-separated integers).
// Every design the device draws randomizes (even one that is not ε-LDP): data-threshold is 0.  The
// respondent-side crosswise model (cards/crosswise.html) is randomized by the respondent, who chooses
// "same" or "different": data-threshold is 2^32, so types.js sends that choice as is (`direct`).

import { sampleDesign } from "../designs.js";
import { int, registerType } from "../types.js";

const radios = (fieldset) => Array.from(fieldset.querySelectorAll("input[data-option]"));
const skipBox = (fieldset) => fieldset.querySelector("input[data-skip]");

function columns(fieldset) {
  const k = int(fieldset, "k");
  return Array.from({ length: k }, (_, t) => {
    const text = fieldset.getAttribute(`data-column-${t}`);
    if (!/^[0-9]+( [0-9]+)*$/.test(text || "")) throw new RangeError(`question ${fieldset.dataset.qid}: no design column ${t}`);
    return text.split(" ").map(Number);
  });
}

const label = (fieldset, j) => fieldset.querySelector(`label[for="${fieldset.dataset.qid}-option-${j}"]`).textContent;

registerType("design", {
  read(fieldset) {
    const skip = skipBox(fieldset);
    if (skip && skip.checked) return { answered: false };
    const checked = radios(fieldset).find((radio) => radio.checked);
    return checked ? { answered: true, value: Number(checked.value) } : { answered: false };
  },
  touched: (fieldset) => radios(fieldset).some((radio) => radio.checked) || Boolean(skipBox(fieldset)?.checked),
  wire(fieldset, onChange) {
    const all = radios(fieldset);
    const skip = skipBox(fieldset);
    all.forEach((radio) => radio.addEventListener("change", () => {
      if (radio.checked) {
        all.forEach((other) => { if (other !== radio) other.checked = false; });
        if (skip) skip.checked = false;
      }
      onChange(fieldset);
    }));
    if (skip) {
      skip.addEventListener("change", () => {
        if (skip.checked) all.forEach((radio) => { radio.checked = false; });
        onChange(fieldset);
      });
    }
  },
  context: () => null,
  validMemo: (fieldset, text) => /^[0-9]{1,2}$/.test(text) && Number(text) < int(fieldset, "k"),
  randomize: (fieldset, value) => String(sampleDesign(value, columns(fieldset))),
  direct: (fieldset, value) => String(value),
  shown: (fieldset, text) => label(fieldset, Number(text)),
});
