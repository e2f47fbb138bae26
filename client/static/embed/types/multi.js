// Check all that apply in the embed (server/survey/questions/multi.py): a tick box per option, each
// tick flipped on its own (rr.js, randomizeTicks); nothing ticked is an answer (none apply).

import { randomizeTicks } from "../../rr.js";
import { registerEmbedType } from "../embed.js";

const TWO_32 = 4294967296;

registerEmbedType("multi", {
  input: "checkbox",
  randomized: (q) => q.protected && q.threshold !== TWO_32,
  draw: (q, value) => randomizeTicks(value, q.threshold).join(""),
  direct: (q, value) => value.join(""),
  valid: (q, text) => new RegExp(`^[01]{${q.k}}$`).test(text),
  json: (q, text) => Array.from(text, Number),
});
