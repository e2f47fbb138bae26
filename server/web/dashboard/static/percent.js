// Shares as the dashboard writes them, the same strings as the server's: `pct` as
// server/survey/questions/base.py `pct`, `points` and `bound` as server/web/dashboard/formatting.py
// (`bound` is explain.percent in English).  The builder (builder.js) imports them;
// tests/e2e/test_percent_js.py checks each against its Python twin on the same numbers.  Nothing
// here runs on import.

// y to one decimal as Python's format(y, ",.1f") writes it: the one-decimal number nearest to the
// double (toFixed), an exact tie (y = n + 0.25 or n + 0.75, the only ties a double can hold) to the
// even last digit where toFixed would round it up, the sign kept (-0.0 too), thousands separated
// by commas.  For |y| < 1e21 (toFixed's range).
function oneDecimal(y) {
  const sign = y < 0 || Object.is(y, -0) ? "-" : "";
  const size = Math.abs(y);
  let text = size.toFixed(1);
  if (Number.isInteger(size * 4) && (size * 4) % 2 === 1) {
    const below = Math.floor(size * 10); // size * 10 is exactly below + 0.5
    text = ((below % 2 === 0 ? below : below + 1) / 10).toFixed(1);
  }
  const [whole, decimals] = text.split(".");
  return `${sign}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}.${decimals}`;
}

function finite(x) {
  return typeof x === "number" && Number.isFinite(x);
}

// A share as a percent with one decimal: 0.2914 → "29.1%"; "—" for null, NaN or infinity.
export function pct(x) {
  return finite(x) ? `${oneDecimal(100 * x)}%` : "—";
}

// A standard error or margin in percentage points, one decimal: 0.01986 → "2.0".
export function points(x) {
  return finite(x) ? oneDecimal(100 * x) : "—";
}

// A probability that bounds what an observer learns: rounded up to 0.1 point, a whole number
// without its ".0", never "100%" or "0%" (0.88031 → "88.1%", 0.75 → "75%").  As explain._up:
// 1000 x first rounded to 6 decimals (so 0.881 stays 88.1%), then up.
export function bound(x) {
  if (x > 0.999) return "more than 99.9%";
  if (x < 0.001) return "less than 0.1%";
  const tenths = Math.ceil(Number((x * 1000).toFixed(6)));
  return `${(tenths / 10).toFixed(1).replace(/\.0$/, "")}%`;
}
