// A single choice in the embed (server/survey/questions/choice.py): one option, k-ary randomized
// response (rr.js) when protected, the option as given when asked directly (threshold 2^32).

import { randomize } from "../../rr.js";
import { registerEmbedType } from "../embed.js";

const TWO_32 = 4294967296;

registerEmbedType("choice", {
  input: "radio",
  // the design document gives a plain choice no type; a designed one carries its weights (design.js)
  fitsUntyped: (q) => Array.isArray(q.options) && Number.isInteger(q.k) && !Array.isArray(q.weights),
  randomized: (q) => q.protected && q.threshold !== TWO_32,
  draw: (q, value) => String(randomize(value, q.k, q.threshold)),
  direct: (q, value) => String(value),
  valid: (q, text) => /^[0-9]{1,2}$/.test(text) && Number(text) < q.k,
  json: (q, text) => Number(text),
});
