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
