// Check all that apply in the embed (server/survey/questions/multi.py): a tick box per option, each
// tick flipped on its own (rr.js, randomizeTicks); nothing ticked is an answer (none apply).  With a
// randomized-response design on each tick (the design document's tick_weights), one draw of the
// design per tick (designs.js, sampleTicks), as on the survey page: every design randomizes, even
// one that is not ε-LDP.

import { cumulativeOf, sampleTicks } from "../../designs.js";
import { randomizeTicks } from "../../rr.js";
import { registerEmbedType } from "../embed.js";

const TWO_32 = 4294967296;
const designed = (q) => Array.isArray(q.tick_weights);

registerEmbedType("multi", {
  input: "checkbox",
  randomized: (q) => designed(q) || (q.protected && q.threshold !== TWO_32),
  draw: (q, value) => (designed(q) ? sampleTicks(value, cumulativeOf(q.tick_weights))
    : randomizeTicks(value, q.threshold)).join(""),
  direct: (q, value) => value.join(""),
  valid: (q, text) => new RegExp(`^[01]{${q.k}}$`).test(text),
  json: (q, text) => Array.from(text, Number),
});
