// Names derived from words, as the server makes them (server/web/dashboard/naming.py): a survey's
// address from its title, a question's id from its text.  The builder (builder.js) fills the
// fields with them as the researcher types; tests/e2e/test_naming_js.py checks that both give the
// same names.  Nothing here runs on import.

// As naming.py: decomposed (NFKD), every character outside ASCII dropped (accents, and letters such
// as ß or ø, which join their neighbours: "Straße" → "strae"), lower case, runs of letters and digits.
export function words(text) {
  return text.normalize("NFKD").replace(/[^\x00-\x7f]/g, "").toLowerCase().match(/[a-z0-9]+/g) || [];
}

export function slugify(title) {
  return words(title).join("-").slice(0, 63).replace(/^-+|-+$/g, "") || "survey";
}

// ``stop``: words that say little in an id; ``keepFirst``: question words kept at the start (the
// server sends both lists on the form, from naming.py).
export function questionId(text, taken, stop, keepFirst) {
  const all = words(text);
  let chosen = all.filter((w, i) => !stop.has(w) || (i === 0 && keepFirst.has(w))).slice(0, 4);
  if (!chosen.length) chosen = all.slice(0, 4);
  let base = chosen.join("_").slice(0, 40).replace(/^_+|_+$/g, "") || "question";
  if (/^[0-9]/.test(base)) base = `q_${base}`;
  let candidate = base;
  for (let n = 2; taken.has(candidate); n += 1) candidate = `${base}_${n}`;
  return candidate;
}
