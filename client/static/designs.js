// Randomized-response designs in the browser: the exact twin of client/designs.py (`sample`).
//
// A design is given as its cumulative integer weights: for each true answer t, cumulative[t][r] is
// the sum of the weights W[0..r][t] (each column of W sums to 2^32), so cumulative[t] ends at 2^32.
// One uniform 32-bit draw u; the report is the first r with u < cumulative[t][r], which has
// probability exactly W[r][t] / 2^32.  No floating point: the realized design is the integer one
// the server states (its ε, its matrix).  Randomness comes only from crypto.getRandomValues (rr.js:
// no fallback, fail closed).

import { cryptoUint32 } from "./rr.js";

const TWO_32 = 4294967296;

function checkInteger(name, x, low, high) {
  if (!Number.isInteger(x) || x < low || x > high) {
    throw new RangeError(`${name} must be an integer in ${low}..${high}, got ${x}`);
  }
}

// The cumulative weights of one answer's column, checked: non-decreasing integers ending at 2^32.
function checkColumn(column) {
  if (!Array.isArray(column) || column.length < 2 || column.length > 64) {
    throw new RangeError("a design's column must list 2..64 cumulative weights");
  }
  let previous = 0;
  for (const c of column) {
    checkInteger("a cumulative weight", c, previous, TWO_32);
    previous = c;
  }
  if (previous !== TWO_32) throw new RangeError("a design's cumulative weights must end at 2^32");
}

// The cumulative columns of integer weights W[r][t] (reports x answers), as client/designs.py states them.
export function cumulativeOf(weights) {
  const answers = weights[0].length;
  const out = [];
  for (let t = 0; t < answers; t++) {
    let total = 0;
    out.push(weights.map((row) => (total += row[t])));
  }
  return out;
}

// The report of true answer `value` under a design given by its cumulative columns.  `nextUint32`
// is injectable for test vectors only.
export function sampleDesign(value, cumulative, nextUint32 = cryptoUint32) {
  checkInteger("value", value, 0, cumulative.length - 1);
  const column = cumulative[value];
  checkColumn(column);
  const u = nextUint32();
  checkInteger("a uint32 draw", u, 0, TWO_32 - 1);
  let r = 0;
  while (u >= column[r]) r += 1;
  return r;
}

// A check-all question with a binary design on each tick (server/survey/questions/multi.py,
// DesignedMulti; the twin of client/designs.py `sample_ticks`): option j's true answer is 0 when
// ticked and 1 when not, its report one draw of the design (in the options' order), and report 0 is
// sent as a tick.  `cumulative` holds the design's two columns (answers "ticked", "not ticked").
export function sampleTicks(ticks, cumulative, nextUint32 = cryptoUint32) {
  if (!Array.isArray(ticks) || ticks.length < 1 || ticks.length > 64) {
    throw new RangeError("ticks must be an array of 0/1, one per option");
  }
  if (!Array.isArray(cumulative) || cumulative.length !== 2 || cumulative.some((c) => !Array.isArray(c) || c.length !== 2)) {
    throw new RangeError("a tick's design must have two answers and two reports");
  }
  return ticks.map((bit) => {
    checkInteger("a tick", bit, 0, 1);
    return sampleDesign(1 - bit, cumulative, nextUint32) === 0 ? 1 : 0;
  });
}
