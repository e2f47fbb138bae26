// k-ary randomized response in the browser: the exact twin of client/randomizer.py.
//
// 1. draw a uniform 32-bit integer u; keep the true option iff u < threshold;
// 2. otherwise, with m = k - 1 other options: if m == 1 report the other option (no draw);
//    else draw u until u < 2^32 - (2^32 mod m) (rejection sampling: no modulo bias),
//    r = u mod m, and report r + (r >= value).
//
// The page passes k and threshold = floor(p * 2^32) as integers: no exp() here, so the
// realized keep probability is exactly threshold / 2^32, as the estimators assume.
// Randomness comes only from crypto.getRandomValues; there is no fallback (fail closed).

const TWO_32 = 4294967296;

export function cryptoUint32() {
  const c = globalThis.crypto;
  if (!c || typeof c.getRandomValues !== "function") {
    throw new Error("crypto.getRandomValues is not available: refusing to randomize");
  }
  return c.getRandomValues(new Uint32Array(1))[0];
}

export function hasSecureRandom() {
  const c = globalThis.crypto;
  return Boolean(c && typeof c.getRandomValues === "function");
}

function checkInteger(name, x, low, high) {
  if (!Number.isInteger(x) || x < low || x > high) {
    throw new RangeError(`${name} must be an integer in ${low}..${high}, got ${x}`);
  }
}

function draw(nextUint32) {
  const u = nextUint32();
  checkInteger("a uint32 draw", u, 0, TWO_32 - 1);
  return u;
}

// Randomize one option index. `nextUint32` is injectable for test vectors only.
export function randomize(value, k, threshold, nextUint32 = cryptoUint32) {
  checkInteger("k", k, 2, 1 << 20);
  checkInteger("value", value, 0, k - 1);
  checkInteger("threshold", threshold, 1, TWO_32);
  if (draw(nextUint32) < threshold) {
    return value;
  }
  const m = k - 1;
  if (m === 1) {
    return 1 - value;
  }
  const limit = TWO_32 - (TWO_32 % m);
  let u = draw(nextUint32);
  while (u >= limit) {
    u = draw(nextUint32);
  }
  const r = u % m;
  return r >= value ? r + 1 : r;
}

const HALF = 2147483648; // 2^31

// ---------------------------------------------------------------- numeric questions
// Answers are indices 0..m (steps from the minimum); see client/numeric.py for the proofs.

// The discrete Laplace mechanism: report clamp(value + Z, -tail, m + tail) with
// P(Z = z) proportional to t^|z|, t = threshold / 2^32.  Sign first (- iff u >= 2^31), then the
// magnitude counts draws below threshold before the first one that is not, stopping at
// m + tail + 1 (every larger magnitude clamps to the same report); "-0" is redrawn, so zero is
// counted once.
export function randomizeLaplace(value, m, threshold, tail, nextUint32 = cryptoUint32) {
  checkInteger("m", m, 1, 1000);
  checkInteger("value", value, 0, m);
  checkInteger("threshold", threshold, 1, TWO_32 - 1);
  checkInteger("tail", tail, 1, 1 << 30);
  const cap = m + tail + 1;
  for (;;) {
    const negative = draw(nextUint32) >= HALF;
    let magnitude = 0;
    while (magnitude < cap && draw(nextUint32) < threshold) magnitude += 1;
    if (negative && magnitude === 0) continue;
    const y = negative ? value - magnitude : value + magnitude;
    return Math.min(Math.max(y, -tail), m + tail);
  }
}

// Unbiased stochastic rounding of an answer index to the grid index j of the grid points j * d
// (d = m / grid): round up with probability r / d, r = value mod d, from a uniform integer
// below d (rejection sampling: no modulo bias).  No draw when value is on the grid.
export function roundToGrid(value, m, grid, nextUint32 = cryptoUint32) {
  checkInteger("m", m, 1, 1000);
  checkInteger("grid", grid, 1, m);
  if (m % grid !== 0) throw new RangeError(`grid must divide m, got ${grid} and ${m}`);
  checkInteger("value", value, 0, m);
  const d = m / grid;
  const j = Math.floor(value / d);
  const r = value % d;
  if (r === 0) return j;
  const limit = TWO_32 - (TWO_32 % d);
  let u = draw(nextUint32);
  while (u >= limit) u = draw(nextUint32);
  return (u % d) < r ? j + 1 : j;
}

// Grid randomized response: stochastic rounding, then k-ary randomized response with k = grid + 1.
export function randomizeGrid(value, m, grid, threshold, nextUint32 = cryptoUint32) {
  const j = roundToGrid(value, m, grid, nextUint32);
  if (threshold === TWO_32) return j; // asked directly: no randomization
  return randomize(j, grid + 1, threshold, nextUint32);
}

// ---------------------------------------------------------------- check all that apply

// Symmetric unary encoding: each option's tick (0 or 1), in order, is kept iff u < threshold,
// else flipped; one draw per option.  threshold is that of binary randomized response at eps/K.
export function randomizeTicks(ticks, threshold, nextUint32 = cryptoUint32) {
  if (!Array.isArray(ticks) || ticks.length < 1 || ticks.length > 64) {
    throw new RangeError("ticks must be an array of 0/1, one per option");
  }
  checkInteger("threshold", threshold, 1, TWO_32);
  return ticks.map((bit) => {
    checkInteger("a tick", bit, 0, 1);
    return draw(nextUint32) < threshold ? bit : 1 - bit;
  });
}

// ---------------------------------------------------------------- list experiment

// The fair coin that assigns the arm: 1 (treatment, J + 1 items) iff u < 2^31, else 0 (control).
export function assignArm(nextUint32 = cryptoUint32) {
  return draw(nextUint32) < HALF ? 1 : 0;
}

// The reported count: as given for a plain list experiment (threshold 2^32), else k-ary randomized
// response over 0..items + 1 in both arms.
export function randomizeCount(count, items, arm, threshold, nextUint32 = cryptoUint32) {
  checkInteger("items", items, 1, 64);
  checkInteger("arm", arm, 0, 1);
  checkInteger("count", count, 0, items + arm);
  if (threshold === TWO_32) return count;
  return randomize(count, items + 2, threshold, nextUint32);
}
