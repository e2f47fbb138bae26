// The survey builder: names made from words, the question buttons' focus, and a live planning
// panel beside each question.
//
// - The address (slug) follows the title, and a question's id follows its text, until the
//   researcher edits the field (naming.js, the same names as the server's for fields left blank).
// - After a question was moved, copied, deleted or added (a round trip that keeps every edit),
//   the focus returns to the same button or to the new question (data-focus).
// - The planning numbers come from /dashboard/plan.json: the planner is exact (it sums the
//   Feldman–Cousins intervals over the binomial distribution), so the numbers are exactly those of
//   `deniable plan`.  A request is sent 350 ms after the last keystroke; older answers are dropped.
//   A question whose type has its own panel gets it rendered by the server (the same Jinja
//   macro as the page), so the two never disagree; nothing here names a question type: what a
//   type needs before its numbers can be computed comes from its radio's label (data-plan-needs).
// - Which fields a question shows follows its type (CSS :has() on the checked type, no script), and
//   a protected single choice's randomization: ε for k-ary randomized response, else the chosen
//   design's parameters, whose realized ε and numbers the panel shows (designOf, from plan.json).
// - Every length limit, and repeated options, are said under the field as one types.
// - Display logic: a question's condition picker lists the earlier questions asked directly whose type
//   can decide (refreshConditions); a question with a condition is planned on the share of the target
//   expected to reach it (its "reach" field, not saved), and its panel says so.

import { questionId as idFrom, slugify } from "./naming.js";
import { bound, points } from "./percent.js";

const form = document.getElementById("design-form");

function questionId(text, taken) {
  return idFrom(text, taken, new Set(form.dataset.stopWords.split(" ")), new Set(form.dataset.keepFirst.split(" ")));
}

// A field follows its source until the researcher types in it (or it had a value already).
function follow(source, target, derive) {
  if (!source || !target) return;
  let own = target.value.trim() !== "";
  target.addEventListener("input", () => { own = target.value.trim() !== ""; });
  source.addEventListener("input", () => {
    if (!own && source.value.trim()) target.value = derive(source.value);
  });
}

function cards() {
  return Array.from(form.querySelectorAll("article.question-card"));
}

function takenIds(except) {
  return new Set(cards().map((card) => card.querySelector("input[id$='-qid']"))
    .filter((input) => input && input !== except).map((input) => input.value.trim()).filter(Boolean));
}

// ---------------------------------------------------------------- limits, checked as one types
//
// The definition's limits (forms.LIMITS, stated in each field's hint) reach here as data-
// attributes: data-max-length on a field, data-max-line on a one-per-line list, whose
// data-distinct-lines names its lines ("option").  The server checks the same on Save.

function problems(field) {
  const out = [];
  const max = Number(field.dataset.maxLength);
  const length = field.value.trim().length;
  if (max && length > max) out.push(`${thousands(length)} characters: at most ${thousands(max)}`);
  const maxLine = Number(field.dataset.maxLine);
  const what = field.dataset.distinctLines;
  if (maxLine && what) {
    const seen = new Map();
    field.value.split("\n").map((line) => line.trim()).filter(Boolean).forEach((line, i) => {
      if (line.length > maxLine) out.push(`${what} ${i + 1} has ${thousands(line.length)} characters: at most ${maxLine}`);
      if (seen.has(line)) out.push(`${what} ${i + 1} repeats ${what} ${seen.get(line)} (“${line.slice(0, 40)}”): each line must differ from the others`);
      else seen.set(line, i + 1);
    });
  }
  return out;
}

function checkLimits(field) {
  const id = `${field.id}-live`;
  let box = document.getElementById(id);
  if (!box) {
    box = el("ul", { class: "errors live-check", id, "aria-live": "polite" });
    field.after(box);
    const described = (field.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
    field.setAttribute("aria-describedby", [...described, id].join(" "));
  }
  const found = problems(field);
  box.replaceChildren(...found.map((text) => el("li", {}, text)));
  box.hidden = found.length === 0;
  field.closest(".field").classList.toggle("has-live-error", found.length > 0);
  if (found.length) field.setAttribute("aria-invalid", "true");
  else if (!document.getElementById(`${field.id}-errors`)) field.removeAttribute("aria-invalid");
}

function wireLimits() {
  for (const field of form.querySelectorAll("[data-max-length], [data-max-line]")) {
    field.addEventListener("input", () => checkLimits(field)); // a saved page's errors are the server's
  }
}

// ---------------------------------------------------------------- the planning panels

function thousands(n) {
  return Number(n).toLocaleString("en-US");
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

// A type whose privacy is its design's own (data-own-epsilon on its radio's label: a two-group design)
// has no "Asked": never direct.
function ownEpsilon(card) {
  const radio = card.querySelector("input.q-kind:checked");
  return Boolean(radio && radio.closest("label").dataset.ownEpsilon);
}

function isDirect(card) {
  const checked = card.querySelector("input[type=radio][id$='-protection-1']");
  return Boolean(checked && checked.checked) && !ownEpsilon(card);
}

function renderPlan(panel, plan, target, margin) {
  const body = panel.querySelector(".plan-body");
  body.replaceChildren();
  const about = (exact) => (exact ? "" : "about ");
  if (plan.protected) {
    body.append(el("p", { class: "plan-keep" }, "Keeps the true answer ", el("strong", {}, bound(plan.p)),
      " of the time ", el("span", { class: "plan-detail" },
        `(k = ${plan.k}, realized ε = ${plan.epsilon.toFixed(4)}, p = ${plan.p.toFixed(4)}, q = ${plan.q.toFixed(4)})`)));
    if (plan.warning) body.append(el("p", { class: "plan-warning" }, el("strong", {}, "Warning:"), ` ${plan.warning}`));
    // what the survey page shows: the short sentence, the rest behind "What does this mean?" (_panels.html)
    body.append(el("p", { class: "explain" }, `Respondents read: “${plan.short}”`),
      el("details", { class: "explain-more" }, el("summary", {}, "and behind “What does this mean?”"),
        el("p", {}, `“${plan.coin} ${plan.posterior} ${plan.odds}”`)));
  } else {
    body.append(el("p", { class: "plan-keep" }, "Asked directly: ", el("strong", {}, "not protected"),
      ", the answer is sent as given."));
  }
  const moe = el("dd", {}, `${about(plan.moe_exact)}± ${points(plan.moe)} points `);
  const needed = el("dd", {}, el("span", { class: "needed" }, `${about(plan.needed_exact)}${thousands(plan.needed)}`), " ");
  if (plan.protected) {
    moe.append(el("span", { class: "baseline" }, `(± ${points(plan.baseline_moe)} without privacy)`));
    needed.append(el("span", { class: "baseline" },
      `(${about(plan.baseline_needed_exact)}${thousands(plan.baseline_needed)} without privacy)`));
  }
  body.append(el("dl", { class: "plan-numbers" },
    el("div", {}, el("dt", {}, `Margin of error at ${thousands(target)} respondents`), moe),
    el("div", {}, el("dt", {}, `Respondents needed for ± ${points(margin)} points`), needed)));
  if (!(plan.needed_exact && plan.moe_exact)) {
    body.append(el("p", { class: "hint" }, "“About”: a large-sample estimate; ", el("code", {}, "deniable plan"),
      " gives the exact number."));
  }
  // the words of dashboard/plan/_uninformative.html, above its threshold (data-uninformative)
  if (plan.moe > Number(form.dataset.uninformative)) {
    body.append(el("p", { class: "plan-warning plan-uninformative" }, el("strong", {}, "Uninformative:"),
      ` at ${thousands(target)} respondents this share is known only to within ± ${points(plan.moe)} points, so its `
      + `estimate can say little. About ${thousands(plan.needed)} respondents give ± ${points(margin)} points.`));
  }
  if (plan.region) {
    const figure = el("figure", { class: "region" });
    figure.innerHTML = plan.region; // our own server's SVG (no script: CSP), made from numbers only
    figure.append(el("figcaption", {}, "Type I/II error pairs a test of one answer can reach at this ε (hatched); dashed: ε = 0."));
    body.append(el("details", { class: "region-details" }, el("summary", {}, "What an observer can tell apart"), figure));
  }
  panel.dataset.epsilon = plan.protected ? String(plan.epsilon) : "";
  panel.dataset.needed = String(plan.needed);
  panel.dataset.baselineNeeded = String(plan.baseline_needed);
  panel.dataset.moe = String(plan.moe);
  panel.dataset.baselineMoe = String(plan.baseline_moe);
}

function renderEmpty(panel, why) {
  panel.querySelector(".plan-body").replaceChildren(el("p", { class: "plan-empty" }, why));
  panel.dataset.epsilon = "";
  delete panel.dataset.needed;
  const card = panel.closest("article.question-card");
  if (card) updateLine(card);
}

function updateTotal() {
  const total = cards().map((card) => Number(card.querySelector(".plan-panel").dataset.epsilon || 0))
    .reduce((a, b) => a + b, 0);
  document.getElementById("total-epsilon-value").textContent = total.toFixed(3);
  // above this total the respondents read "almost certain" (builder.total_warning says so, in the same words)
  const warning = document.getElementById("total-epsilon-warning");
  if (warning) {
    warning.hidden = !(total > Number(warning.dataset.almostCertain));
    document.getElementById("total-epsilon-warning-text").textContent =
      warning.hidden ? "" : warning.dataset.template.replace("{epsilon}", total.toFixed(3));
  }
  document.getElementById("total-epsilon-text").textContent =
    "The ε shown here follow your edits; save to keep them.";
}

function renderTyped(panel, plan) {
  panel.querySelector(".plan-body").innerHTML = plan.html; // our own server's HTML (Jinja-escaped, no script: CSP)
  panel.dataset.epsilon = plan.protected ? String(plan.epsilon) : "";
  panel.dataset.needed = String(plan.needed !== undefined ? plan.needed : plan.option.needed);
}

function planInputs() {
  return {
    target: Number(document.getElementById("target_n").value) || 1000,
    margin: Number(document.getElementById("margin").value.replace(",", ".")) || 0.05,
  };
}

async function fetchPlan(card, panel, params, render) {
  const mine = ++generation;
  card.dataset.generation = String(mine);
  panel.classList.add("is-loading");
  panel.setAttribute("aria-busy", "true");
  try {
    const response = await fetch(`${form.dataset.planUrl}?${params}`, { headers: { Accept: "application/json" } });
    const plan = await response.json();
    if (card.dataset.generation !== String(mine)) return; // a newer request is under way
    if (!response.ok) renderEmpty(panel, plan.error || "These numbers cannot be computed.");
    else render(plan);
  } catch (error) {
    renderEmpty(panel, "The planning numbers could not be loaded; they will be shown after saving.");
  } finally {
    if (card.dataset.generation === String(mine)) {
      updateLine(card);
      panel.classList.remove("is-loading");
      panel.removeAttribute("aria-busy");
      panel.dataset.ready = String(mine);
      updateTotal();
    }
  }
}

const pending = new Map();

function schedule(card) {
  clearTimeout(pending.get(card));
  pending.set(card, setTimeout(() => refresh(card), 350));
}

let generation = 0;

function kindRadio(card) {
  return card.querySelector("input.q-kind:checked");
}

function kindOf(card) {
  const checked = kindRadio(card);
  return checked ? checked.value : form.dataset.defaultKind;
}

function fieldValue(card, suffix) {
  const input = card.querySelector(`[id$='-${suffix}']`);
  return input ? input.value.trim().replace(",", ".") : "";
}

function lineCount(card, suffix) {
  const area = card.querySelector(`textarea[id$='-${suffix}']`);
  return area ? area.value.split("\n").map((line) => line.trim()).filter(Boolean).length : 0;
}

// The parameters of /dashboard/plan.json from every field of the card; the server reads those of the
// question's type (its QuestionType.plan_query) and ignores the rest.
function planParams(card, kind) {
  const params = new URLSearchParams({ type: kind });
  for (const [name, suffix] of [["k", "options"], ["items", "items"]]) {
    const count = lineCount(card, suffix);
    if (count) params.set(name, String(count));
  }
  for (const [name, suffix] of [["min", "minimum"], ["max", "maximum"], ["step", "step"], ["grid", "grid"]]) {
    if (fieldValue(card, suffix) !== "") params.set(name, fieldValue(card, suffix));
  }
  const mechanism = card.querySelector("input.q-mechanism:checked");
  if (mechanism) params.set("mechanism", mechanism.value);
  // a field that names its parameter (data-plan-param: a two-group design's model, p1…p4, group_share)
  for (const input of card.querySelectorAll("[data-plan-param]")) {
    const value = input.value.trim().replace(",", ".");
    if (value !== "") params.set(input.dataset.planParam, value);
  }
  return params;
}

// The design a protected single choice is randomized by, as the definition's "design" object
// ({name: "forced", p: 0.6, forced: [0.25, 0.15]}), or null (k-ary randomized response at ε, asked
// directly, or a type without the choice).  The chosen radio's label names the design's parameters
// (data-design-params), each read from the card's field with that data-design-param (a list: one value a
// line).  Numbers are only read here (a comma is a decimal point); /dashboard/plan.json checks them and
// computes ε and the numbers with the server's code.
function designOf(card) {
  const chosen = card.querySelector("input.q-randomization:checked");
  // the design's fields belong to the chosen type (types.css shows them for .only-<type>; a closed card shows none)
  if (!chosen || isDirect(card) || !chosen.closest(".design-fields").classList.contains(`only-${kindOf(card)}`)) return null;
  const names = (chosen.closest("label").dataset.designParams || "").split(" ").filter(Boolean);
  if (!names.length) return null;
  const number = (text) => {
    const clean = text.trim().replace(",", ".");
    return clean !== "" && Number.isFinite(Number(clean)) ? Number(clean) : clean;
  };
  // a named variant of a design (the respondent-side crosswise model) starts from its fixed keys
  const design = { name: chosen.value, ...JSON.parse(chosen.closest("label").dataset.designSpec || "{}") };
  for (const name of names) {
    const input = card.querySelector(`[data-design-param="${name}"]`);
    const text = input ? input.value : "";
    if (input && input.dataset.designText) { design[name] = text.trim(); continue; } // words, not a number
    if (input && input.dataset.designMatrix) { design[name] = matrixRows(text).map((row) => row.map(number)); continue; }
    design[name] = input && input.dataset.designList
      ? text.split("\n").map((line) => line.trim()).filter(Boolean).map(number) : number(text);
  }
  return design;
}

// A custom matrix as typed (choice.py's cells, the same rule): one line per report, its numbers separated by
// spaces or semicolons (a comma after a number too), or by commas alone on a line without a space.
function matrixRows(text) {
  return text.split("\n").map((line) => line.trim()).filter(Boolean).map((line) => (/[\s;]/.test(line)
    ? line.split(/[\s;]+/).map((cell) => cell.replace(/,+$/, "")).filter(Boolean)
    : line.split(",").filter((cell) => cell.trim())));
}

// What the chosen type needs before its numbers can be computed (data-plan-needs on its radio, from
// the type module, on its radio's label: "k:2:64" = a parameter and its range), or null when nothing is missing.
function missing(card, params) {
  const radio = kindRadio(card);
  const label = radio && radio.closest("label");
  if (!label) return null;
  for (const need of (label.dataset.planNeeds || "").split(" ").filter(Boolean)) {
    const [name, low, high] = need.split(":");
    const value = params.get(name);
    const outside = low !== undefined && !(Number(value) >= Number(low) && Number(value) <= Number(high));
    if (value === null || value === "" || outside) return label.dataset.planMissing;
  }
  return null;
}

// ---------------------------------------------------------------- display logic
//
// The picker lists the earlier questions asked directly whose type can decide (data-condition-kinds,
// from the types); a chosen one that no longer qualifies stays listed, so that Save says why.
function refreshConditions() {
  const all = cards();
  all.forEach((card, i) => {
    const select = card.querySelector("select.q-show-if");
    if (!select) return;
    const deciding = new Set(select.dataset.conditionKinds.split(" "));
    const current = select.value;
    const choices = all.slice(0, i).filter((c) => isDirect(c) && deciding.has(kindOf(c)))
      .map((c) => [c.querySelector("input[id$='-qid']").value.trim(), c.querySelector("textarea[id$='-text']").value.trim()])
      .filter(([id]) => id);
    if (current && !choices.some(([id]) => id === current)) choices.push([current, ""]);
    const options = choices.map(([id, text]) => {
      const option = el("option", { value: id }, text ? `${id}: ${text.length > 40 ? `${text.slice(0, 37)}...` : text}` : id);
      option.selected = id === current;
      return option;
    });
    select.replaceChildren(select.options[0], ...options);
  });
}

// The share of the target expected to reach a question (1 without a condition, or when the field is not
// a percent above 0 and at most 100).
function reachOf(card) {
  const select = card.querySelector("select.q-show-if");
  if (!select || !select.value) return 1;
  const share = Number(fieldValue(card, "reach")) / 100;
  return share > 0 && share <= 1 ? share : 1;
}

function noteReach(panel, target, reach) {
  if (reach === 1) return;
  const needed = Number(panel.dataset.needed);
  panel.querySelector(".plan-body").append(el("p", { class: "plan-reach" },
    `Planned on the ${thousands(Math.max(1, Math.round(target * reach)))} respondents expected to reach this question `
    + `(${Math.round(reach * 1000) / 10} % of ${thousands(target)}): its estimates are of them only.`
    + (needed > 0 ? ` Respondents needed in all: about ${thousands(Math.ceil(needed / reach))}.` : "")));
}

async function refresh(card) {
  const panel = card.querySelector(".plan-panel");
  const kind = kindOf(card);
  const params = planParams(card, kind);
  const epsilonText = fieldValue(card, "epsilon");
  const direct = isDirect(card);
  const why = missing(card, params);
  if (why) {
    renderEmpty(panel, why);
    updateTotal();
    return;
  }
  const design = designOf(card);
  const own = ownEpsilon(card); // no ε to enter
  if (!own && !direct && !design && !(Number(epsilonText) > 0 && Number(epsilonText) <= 20)) {
    renderEmpty(panel, "Enter ε, a number above 0 and at most 20 such as 1, to see how private and how precise this question will be.");
    updateTotal();
    return;
  }
  const { target: all, margin } = planInputs();
  const reach = reachOf(card);
  const target = Math.max(1, Math.round(all * reach)); // the respondents expected to reach it
  params.set("target", String(target));
  params.set("margin", String(margin));
  params.set("chart", `live-region-${card.dataset.index}`);
  if (design) params.set("design", JSON.stringify(design)); // its ε is its own
  else if (!direct && !own) params.set("epsilon", epsilonText);
  // a type with its own panel sends it rendered (html); the others' numbers are drawn here
  await fetchPlan(card, panel, params,
    (plan) => {
      if (plan.html !== undefined) renderTyped(panel, plan);
      else renderPlan(panel, plan, target, margin);
      noteReach(panel, all, reach);
    });
}

// A design the newly chosen type does not offer (its label hidden by types.css: no .only-<type>) gives way to
// randomized response at ε, so that no hidden choice is saved.
function keepOfferedDesign(card) {
  const kind = kindOf(card);
  const chosen = card.querySelector("input.q-randomization:checked");
  const rr = card.querySelector('input.q-randomization[value="rr"]');
  if (!chosen || !rr || !card.querySelector(`.design-fields.only-${kind}`)) return;
  if (!chosen.closest("label").classList.contains(`only-${kind}`)) rr.checked = true;
}

function wireCard(card) {
  const text = card.querySelector("textarea[id$='-text']");
  const qid = card.querySelector("input[id$='-qid']");
  follow(text, qid, (value) => questionId(value, takenIds(qid)));
  card.addEventListener("input", (event) => {
    if (event.target !== text && event.target !== qid && event.target.type !== "radio") schedule(card);
    updateLine(card);
  });
  card.addEventListener("change", () => updateLine(card));
  for (const radio of card.querySelectorAll("input[type=radio]")) {
    radio.addEventListener("change", () => {
      card.classList.toggle("is-direct", isDirect(card));
      if (radio.classList.contains("q-kind")) keepOfferedDesign(card);
      schedule(card);
    });
  }
}

// ---------------------------------------------------------------- the one-line cards
//
// Each question is a <details> whose summary is its line (edit.html): the number, the id and text, the type, the
// protection and the respondents its panel says the margin needs.  The line follows the fields as one types;
// a link to a field (the error summary's), the page's focus or the address's #fragment opens its card first,
// so that nothing linked to is ever hidden.

function openAround(target) {
  for (let node = target && target.parentElement; node; node = node.parentElement) {
    if (node.tagName === "DETAILS" && !node.open) node.open = true;
  }
}

function byHash(hash) {
  if (!hash || hash.length < 2) return null;
  try { return document.getElementById(decodeURIComponent(hash.slice(1))); } catch (error) { return null; }
}

function wireToggles() {
  const toggles = document.getElementById("cards-toggle");
  if (!toggles) return;
  const all = (open) => () => form.querySelectorAll("details.question-details").forEach((d) => { d.open = open; });
  document.getElementById("open-all-questions").addEventListener("click", all(true));
  document.getElementById("close-all-questions").addEventListener("click", all(false));
  toggles.hidden = false;
}

function wireOpening() {
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='#']");
    if (link) openAround(byHash(link.getAttribute("href")));
  }, true); // before the browser follows the link, so that it can scroll to the field and focus it
  window.addEventListener("hashchange", () => openAround(byHash(window.location.hash)));
  openAround(byHash(window.location.hash));
}

// A question action (move, copy, delete, add) is a round trip: the cards open before it open again after it,
// known by their ids (a moved question keeps its id), kept for that one load in sessionStorage.
const OPEN_KEY = "deniable-builder-open";

function cardId(card) {
  const qid = card.querySelector("input[id$='-qid']");
  return qid ? qid.value.trim() : "";
}

function rememberOpen(event) {
  const button = event.submitter;
  if (!button || !(button.name === "action" || button.name === "add_question")) return;
  const open = cards().filter((card) => card.querySelector("details.question-details[open]")).map(cardId).filter(Boolean);
  try { sessionStorage.setItem(OPEN_KEY, JSON.stringify(open)); } catch (error) { /* storage off: cards as served */ }
}

function reopen() {
  let open = [];
  try {
    open = JSON.parse(sessionStorage.getItem(OPEN_KEY) || "[]");
    sessionStorage.removeItem(OPEN_KEY);
  } catch (error) { return; }
  if (!form.dataset.focus || !Array.isArray(open)) return; // only right after a question action
  for (const card of cards()) {
    const details = card.querySelector("details.question-details");
    if (details && open.includes(cardId(card))) details.open = true;
  }
}

function lineText(card) {
  const qid = card.querySelector("input[id$='-qid']").value.trim();
  const text = card.querySelector("textarea[id$='-text']").value.trim().split(/\s+/).join(" ");
  const short = text.length > 90 ? `${text.slice(0, 87)}...` : text;
  const span = card.querySelector(".line-text");
  const parts = [];
  if (qid) parts.push(el("strong", { class: "line-id" }, qid), text ? ": " : "");
  parts.push(short || (qid ? "" : "(no text yet)"));
  span.replaceChildren(...parts);
}

function updateLine(card) {
  if (!card.querySelector(".question-line")) return;
  lineText(card);
  const kind = kindRadio(card);
  if (kind) card.querySelector(".line-type").textContent = kind.closest("label").textContent.trim();
  const panel = card.querySelector(".plan-panel");
  const epsilon = panel.dataset.epsilon ? `, ε = ${Number(Number(panel.dataset.epsilon).toPrecision(3))}` : "";
  const chosen = card.querySelector("input.q-randomization:checked");
  const design = chosen && chosen.value !== "rr" && designOf(card) ? chosen.closest("label").textContent.trim().split(" (")[0] : "";
  let protection;
  if (isDirect(card)) protection = "asked directly";
  else if (ownEpsilon(card)) {
    const model = card.querySelector("[data-plan-param='model']");
    protection = `${model ? model.value : ""} design${epsilon}`.trim();
  } else if (design) protection = `${design}${epsilon}`;
  else protection = fieldValue(card, "epsilon") ? `ε = ${card.querySelector("[id$='-epsilon']").value.trim()}` : "ε not set";
  card.querySelector(".line-protection").textContent = protection;
  const plan = card.querySelector(".line-plan");
  const needed = Number(panel.dataset.needed);
  plan.textContent = needed > 0
    ? `n = ${thousands(needed)} for ± ${points(planInputs().margin)} points` : "";
}

function init() {
  if (!form) return;
  follow(document.getElementById("title"), document.getElementById("slug"), slugify);
  cards().forEach(wireCard);
  reopen();
  form.addEventListener("submit", rememberOpen);
  wireOpening();
  wireToggles();
  wireLimits();
  refreshConditions();
  form.addEventListener("input", refreshConditions);
  form.addEventListener("change", refreshConditions);
  cards().filter((card) => reachOf(card) !== 1).forEach(schedule); // the page's panels planned on the whole target
  for (const id of ["target_n", "margin"]) {
    const input = document.getElementById(id);
    if (input) input.addEventListener("input", () => cards().forEach(schedule));
  }
  // aria-disabled buttons (first "Up", last "Down") do nothing
  form.addEventListener("click", (event) => {
    const button = event.target.closest("button[aria-disabled='true']");
    if (button) event.preventDefault();
  });
  const focus = form.dataset.focus && document.getElementById(form.dataset.focus);
  if (focus && !document.getElementById("error-summary")) {
    openAround(focus);
    focus.focus();
    focus.scrollIntoView({ block: "center" });
  }
  form.dataset.ready = "true";
}

init();
