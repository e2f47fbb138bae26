// Display and skip logic, and pages, on the survey page (server/survey/logic.py says the rules).
//
// A question with data-show-if is asked only when the earlier question it names (asked directly:
// only a direct answer may decide, or the question's appearing would reveal a protected answer) has
// one of the options in data-show-in (a check-all question: any of them ticked).  A question that is
// not asked is hidden and its fieldset disabled, so none of its inputs is sent; survey.js draws no
// report for it (isAsked).  A question whose condition's question is not asked is not asked either.
//
// Pages (data-page, from the definition's page_break): one page shows at a time, with Back, Next and
// "Page 2 of 4" counting the pages that hold a question asked; Send shows on the last.  It is one
// form, sent once at the end, so nothing about the pages (which one, for how long) reaches the
// server.  Without JavaScript every question shows on one page, each condition said in words.

import { message } from "./keys.js";
import { readAnswer } from "./types.js";

let current = 1; // the page shown
let form = null;

const fieldsets = () => Array.from(form.querySelectorAll("fieldset.question"));

export function isAsked(fieldset) {
  return !fieldset.disabled;
}

// The option places a direct answer holds: a single choice's checked radio, or a check-all question's
// ticks (read by its type's module).
function chosen(source) {
  if (source.classList.contains("typed")) {
    const answer = readAnswer(source);
    if (!answer.answered || !Array.isArray(answer.value)) return new Set();
    return new Set(answer.value.flatMap((tick, j) => (tick ? [j] : [])));
  }
  const radio = source.querySelector("input[type=radio]:checked");
  return new Set(radio ? [Number(radio.value)] : []);
}

function applyConditions() {
  for (const fieldset of fieldsets()) {
    const qid = fieldset.dataset.showIf;
    if (qid === undefined) continue;
    const source = document.getElementById(`q-${qid}`);
    const answers = source && isAsked(source) ? chosen(source) : new Set();
    const asked = fieldset.dataset.showIn.split(" ").some((option) => answers.has(Number(option)));
    fieldset.disabled = !asked;
  }
}

function pagesAsked() {
  return [...new Set(fieldsets().filter(isAsked).map((f) => Number(f.dataset.page)))].sort((a, b) => a - b);
}

function render() {
  applyConditions();
  const pages = pagesAsked();
  if (!pages.includes(current)) current = pages.find((p) => p > current) || pages[pages.length - 1] || 1;
  const paged = document.getElementById("page-nav") !== null;
  let number = 0; // question numbers count only the questions asked ("10." then "11.", never "12.")
  for (const fieldset of fieldsets()) {
    fieldset.hidden = !isAsked(fieldset) || (paged && Number(fieldset.dataset.page) !== current);
    const shown = fieldset.querySelector(".question-number");
    if (isAsked(fieldset)) number += 1;
    if (shown && isAsked(fieldset)) shown.textContent = `${number}.`;
  }
  if (!paged) return;
  const at = pages.indexOf(current);
  const last = at === pages.length - 1;
  const box = document.getElementById("page-progress");
  box.hidden = false;
  document.getElementById("page-nav").hidden = false;
  const bar = document.getElementById("page-progress-bar");
  bar.max = pages.length;
  bar.value = at + 1;
  document.getElementById("page-progress-text").textContent =
    box.dataset.msgPage.replace("{page}", String(at + 1)).replace("{pages}", String(pages.length));
  document.getElementById("page-back").hidden = at === 0;
  document.getElementById("page-next").hidden = last;
  form.querySelector(".submit-row").hidden = !last;
  const consent = document.getElementById("consent"); // agreed to before the questions: on the first page
  if (consent) consent.hidden = at !== 0;
}

// A required question asked on this page and not answered: say so on it (as survey.js does at Send).
function pageIsComplete() {
  let first = null;
  for (const fieldset of fieldsets()) {
    if (fieldset.hidden || fieldset.dataset.required !== "true") continue;
    let problem = "";
    if (fieldset.classList.contains("typed")) {
      const answer = readAnswer(fieldset);
      problem = answer.error || (answer.answered ? "" : message(form, "msgRequired"));
    } else if (!fieldset.querySelector("input[type=radio]:checked")) {
      problem = message(form, "msgRequired");
    }
    const box = fieldset.querySelector(".field-error");
    box.textContent = problem;
    box.hidden = !problem;
    fieldset.classList.toggle("has-error", Boolean(problem));
    if (problem && !first) first = fieldset;
  }
  const consent = document.getElementById("consent-agree");
  const agreed = !consent || consent.closest("#consent").hidden || consent.checked;
  if (!agreed) {
    const box = document.getElementById("consent-error");
    box.textContent = message(form, "msgConsent");
    box.hidden = false;
  }
  if (first) {
    const input = first.querySelector("input:not([type=hidden]):not([hidden])");
    if (input) input.focus();
  } else if (!agreed) {
    consent.focus();
  }
  return first === null && agreed;
}

function next() {
  if (!pageIsComplete()) return;
  const pages = pagesAsked();
  go(pages[pages.indexOf(current) + 1] || current);
}

function go(page) {
  current = page;
  render();
  window.scrollTo(0, form.offsetTop);
  document.getElementById("page-progress-text").focus();
  window.dispatchEvent(new Event("resize")); // survey.js's answered-count bar: the form's height changed
}

// Show the page that holds ``fieldset`` (Send found a question to answer there).
export function revealPage(fieldset) {
  if (document.getElementById("page-nav") === null || !fieldset.dataset.page) return;
  current = Number(fieldset.dataset.page);
  render();
}

export function initLogic(surveyForm) {
  form = surveyForm;
  form.addEventListener("change", render);
  form.addEventListener("input", render);
  const nav = document.getElementById("page-nav");
  if (nav) {
    document.getElementById("page-next").addEventListener("click", next);
    // Enter in a text box submits the form: before the last page it means Next (registered before
    // survey.js's own submit listener, which it keeps from running)
    form.addEventListener("submit", (event) => {
      const pages = pagesAsked();
      if (pages.indexOf(current) === pages.length - 1) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      next();
    });
    document.getElementById("page-back").addEventListener("click", () => {
      const pages = pagesAsked();
      go(pages[Math.max(pages.indexOf(current) - 1, 0)]);
    });
  }
  render();
}
