// The survey page: randomize each protected answer once, in the browser, then submit.
//
// The visible radio buttons of a protected question have no name, so the browser never sends
// them; at submit the checked option is randomized (rr.js) and only the REPORT goes into the
// question's hidden field.  The report is memoized in localStorage per (survey, question), so a
// retry or reload re-sends it instead of drawing again (averaging fresh draws would reveal the
// true answer).  The true answer is never stored.
//
// A question drawn by its type's own card (fieldset.typed: every type but the plain radio
// buttons) is read and randomized by that type's browser module through types.js (same rules:
// unnamed inputs, the report memoized, never the answer).  Every card says "Question N of M" and
// counts in the progress line once answered (each card's rule: types.js, isAnswered).
//
// Shared devices: once a submission went through (the thank-you page, thanks.js, marks it),
// opening the survey again says so and offers "I am a different person", which forgets the
// previous person's memoized reports; only then are new ones drawn.  What was sent is kept for
// the thank-you page in sessionStorage (this tab only), never in a cookie.
//
// Messages come from the form's data-msg-* attributes, in the page's language.  A survey that
// asks for consent has an unnamed checkbox (nothing about it is sent) that must be ticked
// before sending.  A long survey shows how many questions are answered.  In the dashboard's
// preview (data-preview) nothing is randomized, stored or sent.
//
// A question marked data-shuffle shows its options in a new random order (shuffle.js), drawn before
// anything is wired, so the arrow keys follow the order shown; nothing about it is sent or stored.
//
// Display logic and pages: logic.js.  A question not asked (its condition false) has its fieldset
// disabled: no report is drawn for it and nothing of it is sent.

import { hasSecureRandom, randomize } from "./rr.js";
import { PROBE_KEY, lastSentKey, message as pageMessage, reportKey, sentKey } from "./keys.js";
import { shuffleOptions } from "./shuffle.js";
import { initTyped, isAnswered, newPerson, readAnswer, reportFor } from "./types.js";
import { initLogic, isAsked, revealPage } from "./logic.js";

const form = document.getElementById("survey-form");
const status = document.getElementById("js-status");

function message(name, values = {}) {
  return form ? pageMessage(form, name, values) : "";
}

function questionIds() {
  return Array.from(form.querySelectorAll("fieldset.question"), (fieldset) => fieldset.dataset.qid);
}

function forgetPreviousPerson(slug) {
  for (const qid of questionIds()) window.localStorage.removeItem(reportKey(slug, qid));
  window.localStorage.removeItem(sentKey(slug));
  window.sessionStorage.removeItem(lastSentKey(slug));
}

function storageWorks() {
  try {
    window.localStorage.setItem(PROBE_KEY, "1");
    window.localStorage.removeItem(PROBE_KEY);
    return true;
  } catch (error) {
    return false;
  }
}

function showStatus(message) {
  status.textContent = message;
  status.hidden = false;
}

function setError(fieldset, message) {
  const box = fieldset.querySelector(".field-error");
  box.textContent = message;
  box.hidden = !message;
  fieldset.classList.toggle("has-error", Boolean(message));
}

function protectedRadios(fieldset) {
  return Array.from(fieldset.querySelectorAll("input[type=radio][data-option]"));
}

// Unnamed radios do not form a group by themselves: keep one checked per question and
// let the arrow keys move between options, as in a native radio group.
function wireRadioGroup(fieldset) {
  const radios = protectedRadios(fieldset);
  radios.forEach((radio, index) => {
    radio.addEventListener("change", () => {
      if (radio.checked) {
        radios.forEach((other) => { if (other !== radio) other.checked = false; });
        setError(fieldset, "");
      }
    });
    radio.addEventListener("keydown", (event) => {
      const step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      const next = radios[(index + step + radios.length) % radios.length];
      next.focus();
      next.checked = true;
      next.dispatchEvent(new Event("change"));
    });
  });
}

function readMemo(key, k) {
  const text = window.localStorage.getItem(key);
  if (text === null || !/^[0-9]+$/.test(text)) return null;
  const report = Number(text);
  return report < k ? report : null;
}

function prepareSubmission(slug) {
  let firstMissing = null;
  const reports = [];
  const sent = {};
  const typed = [];
  for (const fieldset of form.querySelectorAll("fieldset.question")) {
    if (!isAsked(fieldset)) continue; // display logic: not asked, nothing drawn or sent (logic.js)
    const required = fieldset.dataset.required === "true";
    if (fieldset.classList.contains("typed")) { // a card with its type's own module: types.js
      const answer = readAnswer(fieldset);
      const problem = answer.error || (!answer.answered && required ? message("msgRequired") : "");
      setError(fieldset, problem);
      if (problem) firstMissing = firstMissing || fieldset;
      typed.push({ fieldset, answer });
      continue;
    }
    let answered;
    if (fieldset.classList.contains("protected")) {
      answered = protectedRadios(fieldset).find((radio) => radio.checked);
    } else {
      answered = fieldset.querySelector("input[type=radio]:checked");
    }
    if (!answered && required) {
      setError(fieldset, message("msgRequired"));
      firstMissing = firstMissing || fieldset;
    } else {
      setError(fieldset, "");
    }
    if (fieldset.classList.contains("protected")) {
      reports.push({ fieldset, answered });
    } else if (answered) {
      sent[fieldset.dataset.qid] = Number(answered.value);
    }
  }
  const consent = document.getElementById("consent-agree");
  if (consent && !consent.checked) {
    const box = document.getElementById("consent-error");
    box.textContent = message("msgConsent");
    box.hidden = false;
    if (!firstMissing) consent.focus();
  }
  if (firstMissing) {
    revealPage(firstMissing);
    const first = firstMissing.querySelector("input:not([type=hidden]):not([hidden])");
    if (first) first.focus();
    return false;
  }
  if (consent && !consent.checked) return false;
  if (form.dataset.preview === "true") {
    showStatus(message("msgPreview"));
    return false;
  }
  for (const { fieldset, answer } of typed) {
    const hidden = fieldset.querySelector("input[type=hidden][data-report]");
    if (!answer.answered) {
      hidden.value = "";
      continue;
    }
    const report = reportFor(fieldset, slug, reportKey(slug, fieldset.dataset.qid), answer.value);
    hidden.value = report.text;
    sent[fieldset.dataset.qid] = report.shown;
  }
  for (const { fieldset, answered } of reports) {
    const hidden = fieldset.querySelector("input[type=hidden][data-report]");
    if (!answered) {
      hidden.value = "";
      continue;
    }
    const k = Number(fieldset.dataset.k);
    const threshold = Number(fieldset.dataset.threshold);
    const key = reportKey(slug, fieldset.dataset.qid);
    let report = readMemo(key, k);
    if (report === null) {
      report = randomize(Number(answered.value), k, threshold);
      window.localStorage.setItem(key, String(report));
    }
    hidden.value = String(report);
    sent[fieldset.dataset.qid] = report;
  }
  window.sessionStorage.setItem(lastSentKey(slug), JSON.stringify(sent));
  return true;
}

// Someone already sent answers from this device: say so, and answer only after "I am a different
// person" (the same person has nothing more to do; sending again would count them twice).
function guardSharedDevice(slug) {
  const notice = document.getElementById("already-sent");
  if (!notice || window.localStorage.getItem(sentKey(slug)) !== "1") return;
  notice.hidden = false;
  form.hidden = true;
  document.getElementById("different-person").addEventListener("click", () => {
    forgetPreviousPerson(slug);
    newPerson(form, slug);
    notice.hidden = true;
    form.hidden = false;
    form.dispatchEvent(new Event("change")); // the progress line counts again from nothing
    window.dispatchEvent(new Event("resize")); // the progress bar may be needed now
    const first = form.querySelector("input[type=radio]");
    if (first) first.focus();
  });
}

// The invitation token now sits in the form's hidden field: take it out of the address bar so it
// is not copied along with the survey address, shown in screenshots or kept in this history entry.
function hideInvitationFromAddress() {
  const url = new URL(window.location.href);
  if (!url.searchParams.has("t") || !form.querySelector("input[name=invitation]")) return;
  url.searchParams.delete("t");
  window.history.replaceState(window.history.state, "", url.pathname + url.search + url.hash);
}

// A survey longer than one screen says how many questions are answered (a sticky bar).
function trackProgress() {
  const box = document.getElementById("answer-progress");
  if (!box) return;
  const bar = document.getElementById("answer-progress-bar");
  const text = document.getElementById("answer-progress-text");
  const fieldsets = Array.from(form.querySelectorAll("fieldset.question"));
  const answeredHere = (f) => (f.classList.contains("typed") ? isAnswered(f) : Boolean(f.querySelector("input[type=radio]:checked")));
  const update = () => {
    const asked = fieldsets.filter(isAsked);
    const answered = asked.filter(answeredHere).length;
    bar.value = answered;
    bar.max = asked.length;
    text.textContent = message("msgProgress", { answered, total: asked.length });
  };
  const place = () => {
    box.hidden = form.hidden || form.getBoundingClientRect().height <= window.innerHeight;
  };
  form.addEventListener("change", update);
  form.addEventListener("input", update); // a number counts as it is typed
  window.addEventListener("resize", place);
  update();
  place();
}

function init() {
  if (!form) return;
  hideInvitationFromAddress();
  const button = form.querySelector("button[type=submit]");
  if (!hasSecureRandom()) {
    showStatus(message("msgNoCrypto"));
    return;
  }
  if (!storageWorks()) {
    showStatus(message("msgNoStorage"));
    return;
  }
  const slug = form.dataset.slug;
  shuffleOptions(form);
  if (form.dataset.preview !== "true") guardSharedDevice(slug);
  form.querySelectorAll("fieldset.protected:not(.typed)").forEach(wireRadioGroup);
  try {
    initTyped(form, slug, (fieldset) => setError(fieldset, ""));
  } catch (error) { // a card whose type's module did not load: nothing can be sent
    showStatus(`${message("msgFailed")} (${error.message})`);
    return;
  }
  initLogic(form);
  form.querySelectorAll("fieldset.direct input[type=radio]").forEach((radio) => {
    radio.addEventListener("change", () => setError(radio.closest("fieldset"), ""));
  });
  const consent = document.getElementById("consent-agree");
  if (consent) {
    consent.addEventListener("change", () => {
      if (consent.checked) document.getElementById("consent-error").hidden = true;
    });
  }
  trackProgress();
  let sending = false;
  form.addEventListener("submit", (event) => {
    if (sending) {
      event.preventDefault();
      return;
    }
    let ok = false;
    try {
      ok = prepareSubmission(slug);
    } catch (error) {
      showStatus(`${message("msgFailed")} (${error.message})`);
    }
    if (!ok) {
      event.preventDefault();
      return;
    }
    sending = true;
    button.disabled = true;
  });
  // Coming back through the history cache: allow sending again (the memo keeps the reports).
  window.addEventListener("pageshow", () => {
    sending = false;
    button.disabled = false;
  });
  button.disabled = false;
}

init();
