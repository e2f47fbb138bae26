// Options in a random order for each respondent (a question's "shuffle": true; the survey page's
// fieldset carries data-shuffle).  Only the displayed order changes: every input keeps its value,
// the option's place in the survey definition, so the report means what it always meant; the order
// is neither sent nor stored (a reload draws a new one).  Without JavaScript the definition's order
// shows.  "None of these" and "I prefer not to answer" are not options: they stay last.
//
// The order is an unbiased Fisher–Yates shuffle (Durstenfeld 1964; Knuth, TAOCP vol. 2, Algorithm
// 3.4.2 P): for i = n − 1 … 1 swap item i with item j, j uniform on 0..i.  Each j is a uniform
// 32-bit integer from crypto.getRandomValues, accepted below 2^32 − (2^32 mod (i + 1)) and taken
// mod (i + 1) (rejection sampling: no modulo bias), so each of the n! orders has probability 1/n!.

import { cryptoUint32 } from "./rr.js";

const TWO_32 = 4294967296;

// A uniform integer in 0..n − 1 from uniform uint32 draws (`nextUint32` injectable for tests).
export function uniformBelow(n, nextUint32 = cryptoUint32) {
  if (!Number.isInteger(n) || n < 1 || n > TWO_32) throw new RangeError(`n must be an integer in 1..2^32, got ${n}`);
  const limit = TWO_32 - (TWO_32 % n);
  let u = nextUint32();
  while (u >= limit) u = nextUint32();
  return u % n;
}

// A new array: the items in a uniformly random order.
export function shuffled(items, nextUint32 = cryptoUint32) {
  const out = Array.from(items);
  for (let i = out.length - 1; i > 0; i--) {
    const j = uniformBelow(i + 1, nextUint32);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

// Reorder the options of every question marked data-shuffle in `root`, in place.
export function shuffleOptions(root) {
  for (const fieldset of root.querySelectorAll("fieldset[data-shuffle]")) {
    const box = fieldset.querySelector(".options");
    if (!box) continue;
    const options = Array.from(box.children)
      .filter((el) => el.classList.contains("option") && !el.classList.contains("none") && !el.classList.contains("skip"));
    if (options.length < 2) continue;
    const after = options[options.length - 1].nextSibling; // "None of these" and the like stay after them
    for (const option of shuffled(options)) box.insertBefore(option, after);
  }
}
