// A single choice randomized by a design in the embed (server/survey/questions/choice.py,
// DesignedChoice): one draw of the design's integer weights (designs.js), as on the survey page.
// Every design randomizes, even one that is not ε-LDP.

import { cumulativeOf, sampleDesign } from "../../designs.js";
import { registerEmbedType } from "../embed.js";

registerEmbedType("design", {
  input: "radio",
  fitsUntyped: (q) => Array.isArray(q.weights),
  randomized: () => true,
  draw: (q, value) => String(sampleDesign(value, cumulativeOf(q.weights))),
  direct: (q, value) => String(value),
  valid: (q, text) => /^[0-9]{1,2}$/.test(text) && Number(text) < q.k,
  json: (q, text) => Number(text),
});
