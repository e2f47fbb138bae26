// A list experiment in the embed (server/survey/questions/listexp.py), as on the survey page
// (types/list.js): the arm is a fair coin from crypto.getRandomValues (rr.js, assignArm) drawn when
// the question is mounted, before the items show, and kept under the survey page's own key
// (keys.js: deniable:arm:SLUG:QID), so a reload shows the same list; the sensitive item and the
// extra count show only in the treatment arm (1).  The respondent says how many items apply;
// protected, the count is randomized (rr.js, randomizeCount), a plain list experiment sends it as
// given.  The report is what the JSON API takes: {"arm": 0|1, "count": c} (kept as "arm:count").

import { assignArm, hasSecureRandom, randomizeCount } from "../../rr.js";
import { armKey } from "../../keys.js";
import { oneOf, registerEmbedType, said } from "../embed.js";

const TWO_32 = 4294967296;

// The memoized arm, or a fair coin drawn now.
function armOf(q, { slug, storage }) {
  const key = armKey(slug, q.id);
  let arm = storage.getItem(key);
  if (arm !== "0" && arm !== "1") {
    if (!hasSecureRandom()) throw new Error("crypto.getRandomValues is not available: refusing to randomize");
    arm = String(assignArm());
    storage.setItem(key, arm);
  }
  return Number(arm);
}

registerEmbedType("list", {
  view(q, where) {
    const { id, element } = where;
    const arm = armOf(q, where);
    const node = element("div", { class: "deniable-list" });
    const list = element("ul", { class: "deniable-items" });
    for (const item of (arm === 1 ? [...q.items, q.sensitive] : q.items)) list.append(element("li", {}, item));
    // named by the question's prompt, as on the survey page (cards/list.html): in the mounted language
    const counts = element("div", { role: "radiogroup", "aria-labelledby": `${id}-hint` });
    const radios = [];
    for (let count = 0; count <= q.items.length + arm; count += 1) {
      const radio = element("input", { type: "radio", id: `${id}-count-${count}`, "data-count": String(count) }); // no name
      const row = element("div", { class: "deniable-option" });
      row.append(radio, element("label", { for: `${id}-count-${count}` }, String(count)));
      counts.append(row);
      radios.push(radio);
    }
    oneOf(radios);
    node.append(element("p", { id: `${id}-hint` },
      said(q, "list_prompt") || "How many of these apply to you? Do not say which ones."), list, counts);
    const read = () => {
      const checked = radios.findIndex((radio) => radio.checked);
      return checked < 0 ? { answered: false } : { answered: true, value: checked };
    };
    return { node, read };
  },
  context: armOf,
  randomized: (q) => q.protected && q.threshold !== TWO_32,
  draw: (q, value, arm) => `${arm}:${randomizeCount(value, q.items.length, arm, q.threshold)}`,
  direct: (q, value, arm) => `${arm}:${value}`,
  valid(q, text, arm) {
    const match = /^([01]):([0-9]{1,3})$/.exec(text);
    return Boolean(match) && Number(match[1]) === arm && Number(match[2]) <= q.items.length + 1;
  },
  json(q, text) {
    const [arm, count] = text.split(":").map(Number);
    return { arm, count };
  },
});
