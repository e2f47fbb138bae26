// Where the survey page keeps things in the browser: every storage key in one module, so the survey
// page (survey.js), the question types' modules (types.js, types/*.js) and the thank-you page
// (thanks.js) agree on them without importing each other.  Nothing here runs on import.
//
// localStorage (this device):  a question's memoized REPORT (never the answer), a list
// experiment's arm, and "1" once a submission from this device went through.
// sessionStorage (this tab):   what was sent, for the thank-you page.

export function reportKey(slug, qid) {
  return `deniable:report:${slug}:${qid}`;
}

export function armKey(slug, qid) {
  return `deniable:arm:${slug}:${qid}`;
}

export function sentKey(slug) {
  return `deniable:sent:${slug}`;
}

export function lastSentKey(slug) {
  return `deniable:last:${slug}`;
}

export const PROBE_KEY = "deniable:probe"; // written and removed at once: does storage work here?

// A message in the page's language: the survey form's data-msg-* attribute (templates/survey.html),
// with {name} placeholders filled in; ``element`` is the form or anything inside it.
export function message(element, name, values = {}) {
  const text = element.closest("form").dataset[name] || "";
  return text.replace(/\{(\w+)\}/g, (whole, key) => (key in values ? String(values[key]) : whole));
}
