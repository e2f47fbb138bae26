// The thank-you page: show exactly what was sent, and remember that this device has answered.
//
// What was sent comes from this tab's sessionStorage (survey.js put it there at submit); the
// server keeps no copy in the session and the page carries none.  The "sent" mark in
// localStorage (keys.js) makes the survey page ask "I am a different person" before anyone answers again
// on this device (survey.js).

import { lastSentKey, sentKey } from "./keys.js";

function readSent(slug) {
  try {
    const data = JSON.parse(window.sessionStorage.getItem(lastSentKey(slug)) || "{}");
    return data && typeof data === "object" ? data : {};
  } catch (error) {
    return {};
  }
}

function init() {
  const table = document.getElementById("sent-table");
  if (!table) return;
  const slug = table.dataset.slug;
  window.localStorage.setItem(sentKey(slug), "1");
  const sent = readSent(slug);
  let shown = 0;
  for (const row of table.querySelectorAll("tr[data-qid]")) {
    const labels = JSON.parse(row.dataset.options);
    const value = sent[row.dataset.qid];
    // a choice sends an option index; the other types what survey.js wrote for this page (types.js)
    const text = row.dataset.typed === "true"
      ? (typeof value === "string" ? value : null)
      : (Number.isInteger(value) && value >= 0 && value < labels.length ? labels[value] : null);
    if (text !== null) {
      row.querySelector("td.sent-label").textContent = text;
      row.hidden = false;
      shown += 1;
    }
  }
  table.hidden = shown === 0;
  document.getElementById("sent-elsewhere").hidden = shown > 0;
}

init();
