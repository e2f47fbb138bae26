// The embeddable randomizer: a protected question of a deniable survey, mounted inside another survey
// tool's page (SurveyJS, or any page: docs/embedding.md).  client/embed.py builds it, with rr.js,
// designs.js and keys.js, into one dependency-free file (an ES module and a classic script exposing
// the global DeniableEmbed): the same samplers as the survey page, run against the same test vectors.
//
// What holds, and what does not (the built file's header says the same):
// - ε-local differential privacy against anyone who sees the REPORTS: the host platform, its
//   exports, the researcher.  The inputs holding the true answer are this file's own: they have no
//   `name`, nothing writes them to the host's data, nothing logs them.  The host receives only
//   {report, design, epsilon} (the design's fingerprint and the realized ε).
// - Randomized once: a report is kept in this browser's localStorage under the survey page's own
//   key (keys.js: deniable:report:SLUG:QID, the REPORT, never the answer), so a back button, a
//   reload or a resumed session re-sends it instead of drawing again (a redraw would spend ε again).
// - NOT privacy at rest on the respondent's device (the stored report is readable there), and NOT
//   the metadata the host records (addresses, times, answer order, timings, other questions'
//   answers), which deniable cannot scrub.

import { hasSecureRandom } from "../rr.js";
import { reportKey } from "../keys.js";

// Each question type's embed module (embed/types/*.js, like the survey page's types/*.js) registers
// how its question is answered, randomized and reported:
//   input               "radio" (one option) or "checkbox" (a tick per option): drawn here from q.options
//   view(q, where)      instead of `input`: the type draws its own inputs (a number box, a list's items
//                       and counts, a two-group design's instruction).  `where` is {id, slug, storage,
//                       element, language} (language: the one mounted, the document's own when none was
//                       asked for); returns {node, read},
//                       read() giving {answered: false}, {answered: true, value} or {error: "…"}
//   fitsUntyped(q)      optional: whether it mounts a question the design document gives no `type`
//   note(q, language)   optional: the protection note, instead of the one noteOf writes
//   randomized(q)       whether its report is randomized (else sent as given: asked directly)
//   context(q, where)   optional: what a report depends on beside the answer (a list's arm)
//   draw(q, value, ctx) the randomized report, as the survey page's hidden field writes it (memoized)
//   direct(q, value, ctx) the report of a question asked directly, in the same form
//   valid(q, text, ctx) whether a memoized report is one this question could have made
//   json(q, text)       the report as the JSON API takes it (what the host receives)
const registry = new Map();

export function registerEmbedType(name, behaviour) {
  registry.set(name, behaviour);
}

function behaviourOf(q) {
  if (q.not_available) throw new Error(`question ${q.id}: ${q.not_available}`);
  const behaviour = q.type === undefined
    ? Array.from(registry.values()).find((b) => b.fitsUntyped && b.fitsUntyped(q))
    : registry.get(q.type);
  if (!behaviour) throw new Error(`question ${q.id}: a ${q.type} question cannot be embedded yet`);
  return behaviour;
}

function checkDesign(design) {
  if (!design || typeof design.slug !== "string" || !Array.isArray(design.questions)) {
    throw new Error("deniable: give the survey's design document (GET /api/v1/surveys/SLUG)");
  }
  return design;
}

function findQuestion(design, qid) {
  checkDesign(design);
  const q = design.questions.find((item) => item.id === qid);
  if (!q) throw new Error(`deniable: survey ${design.slug} has no question ${qid}`);
  return q;
}

function element(tag, attributes = {}, text = null) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== null) node.textContent = text;
  return node;
}

// The languages a design document can be shown in: its own (English when it names none) and those it
// has translations into (server/survey/translations.py), its own first.
export function languagesOf(design) {
  const own = typeof design.language === "string" && design.language ? design.language : "en";
  const translations = design.translations && typeof design.translations === "object" ? design.translations : {};
  return [own, ...Object.keys(translations).filter((language) => language !== own)];
}

// Check `language` against the document: null/undefined or one of languagesOf(design); anything else is an
// Error naming it and the languages the document has (never a silent fallback to the original words).
function checkLanguage(design, language) {
  if (language === null || language === undefined) return null;
  const known = languagesOf(design);
  if (!known.includes(language)) {
    throw new Error(`deniable: survey ${design.slug} has no language ${JSON.stringify(String(language))}: `
      + `its languages are ${known.join(", ")}`);
  }
  return language === known[0] ? null : language;
}

// Question `q` as a respondent reads it in `language` (as the survey page does: translations.translated):
// each text the translation gives (the text, the option labels, a list's items and sensitive item) in
// place of the original's, the original's where the translation leaves one out; a respondent-side
// crosswise card's words from its own `translations` (fact, instructions, choices, note).  Only words
// change: every option keeps its index, so a report means the same whatever the language.
function localized(design, q, language) {
  const words = wordsIn(design, language);
  if (words) q = { ...q, words }; // the embed's own sentences in the mounted language (wordsIn)
  if (language === null) return q;
  const own = ((design.translations[language] || {}).questions || {})[q.id] || {};
  const out = { ...q };
  for (const [key, value] of Object.entries(own)) {
    if (key in q && key !== "crosswise") out[key] = value; // a crosswise fact lives in the card's words
  }
  if (q.crosswise && q.crosswise.translations && q.crosswise.translations[language]) {
    out.crosswise = { ...q.crosswise, ...q.crosswise.translations[language] };
  }
  return out;
}

// The embed's own sentences (a list's question, a number's label and refusal, "please answer", the note)
// in `language` (null: the document's own), as the survey page words them: the design document's
// `embed_words` (server/survey/recipes.py, embed_words) and the question's `notes`.  null when the
// document has none (one made before it carried them): the embed's built-in English then.
function wordsIn(design, language) {
  const all = design.embed_words;
  if (!all || typeof all !== "object") return null;
  const words = all[language === null ? languagesOf(design)[0] : language];
  return words && typeof words === "object" ? words : null;
}

// A sentence of q.words with its {name} or %(name)s placeholders filled in; null when the document does
// not give it (the caller's English then).
export function said(q, key, values = {}) {
  const text = q.words && typeof q.words[key] === "string" ? q.words[key] : null;
  if (text === null) return null;
  return text.replace(/\{(\w+)\}|%\((\w+)\)s/g, (all, brace, percent) => {
    const name = brace || percent;
    return name in values ? String(values[name]) : all;
  });
}

// The protection note shown with the question: in the mounted language the survey page's own note
// (the question's `notes`, made from the same realized ε, in plain words: "Protected. Your true answer is
// sent only 73% of the time, …"; no ε is shown to a respondent), else a built-in English one; a crosswise
// card's note is in the card's language; a host may replace it with options.note.
function noteOf(q, rules, language) {
  if (rules.note) return rules.note(q, language); // a type with its own sentence (crosswise, two-group designs)
  const own = q.notes && q.notes[language] ? q.notes[language] : {};
  if (!rules.randomized(q)) return typeof own.direct === "string" ? own.direct : "Asked directly: your answer is sent as given.";
  if (typeof own.protected === "string") return own.protected;
  // a document made before it carried the page's notes (or a type with no short sentence): plain words, never ε
  return "Protected: your browser randomizes your answer before this survey records it; " +
    "only the randomized answer leaves this question.";
}

// Mount question `question` of `design` into `host` (an element).  Returns a handle:
//   answered()   whether the respondent has answered
//   filled()     whether the respondent has answered or typed what commit() will refuse (its message)
//   commit()     the report: drawn once, or the one drawn before (memoized), handed to onReport and
//                returned as {report, design, epsilon}; null when an optional question is unanswered;
//                throws when a required one is (the card says so)
//   unmount()    remove the inputs
//   language     optional: one of the document's languages (its own, or one it has a translation into);
//                the question's words in it, the original's where the translation leaves one out
export function mount(host, { design, question, language = null, onReport = () => {}, note = null,
                              storage = globalThis.localStorage }) {
  const found = findQuestion(design, question);
  const chosen = checkLanguage(design, language);
  const q = localized(design, found, chosen);
  const rules = behaviourOf(q);
  const fieldset = element("fieldset", { class: "deniable-question", "data-deniable-qid": q.id });
  fieldset.append(element("legend", {}, q.text));
  const id = `deniable-${design.slug}-${q.id}`;
  const noteId = `${id}-note`;
  const shownIn = chosen === null ? languagesOf(design)[0] : chosen;
  fieldset.append(element("p", { class: "deniable-note", id: noteId }, note || noteOf(q, rules, shownIn)));
  const where = { id, slug: design.slug, storage, element, language: shownIn };
  const view = rules.view ? rules.view(q, where) : optionsView(q, rules.input, id);
  view.node.setAttribute("aria-describedby", noteId);
  const problem = element("p", { class: "deniable-error", role: "alert", hidden: "" });
  fieldset.append(view.node, problem);
  fit(fieldset);
  host.replaceChildren(fieldset);
  const key = reportKey(design.slug, q.id);
  const ctx = rules.context ? rules.context(q, where) : null; // drawn on mounting (a list's arm)
  const say = (text) => {
    problem.textContent = text;
    problem.hidden = false;
  };
  const answered = () => view.read().answered === true;
  const filled = () => { const read = view.read(); return read.answered === true || Boolean(read.error); };

  function commit() {
    const randomized = rules.randomized(q);
    let text = randomized ? storage.getItem(key) : null;
    if (text === null || !rules.valid(q, text, ctx)) {
      const read = view.read();
      if (read.error) {
        say(read.error);
        throw new Error(`deniable: question ${q.id}: ${read.error}`);
      }
      if (!read.answered) {
        if (q.required) {
          say(said(q, "required") || "Please answer this question.");
          throw new Error(`deniable: question ${q.id} is required`);
        }
        return null;
      }
      if (randomized && !hasSecureRandom()) throw new Error("crypto.getRandomValues is not available: refusing to randomize");
      text = randomized ? rules.draw(q, read.value, ctx) : rules.direct(q, read.value, ctx);
      if (randomized) storage.setItem(key, text);
    }
    problem.hidden = true;
    const result = { report: rules.json(q, text), design: design.design_fingerprint || null,
                     epsilon: q.realized_epsilon === undefined ? null : q.realized_epsilon };
    onReport(result);
    return result;
  }

  return { answered, filled, commit, unmount: () => host.replaceChildren(), question: q };
}

// The inputs of a question answered by its options: a radio button per option ("radio") or a tick
// box per option ("checkbox", where nothing ticked is an answer: none apply).  No input has a name.
function optionsView(q, input, id) {
  const ticks = input === "checkbox";
  const node = element("div", { role: ticks ? "group" : "radiogroup" });
  const inputs = q.options.map((label, j) => {
    const option = element("input", { type: input, id: `${id}-${j}`, "data-option": String(j) }); // no name: never sent
    const row = element("div", { class: "deniable-option" });
    row.append(option, element("label", { for: `${id}-${j}` }, label));
    node.append(row);
    return option;
  });
  if (!ticks) oneOf(inputs); // unnamed radios form no group by themselves
  const read = () => {
    if (ticks) return { answered: true, value: inputs.map((box) => (box.checked ? 1 : 0)) };
    const checked = inputs.findIndex((box) => box.checked);
    return checked < 0 ? { answered: false } : { answered: true, value: checked };
  };
  return { node, read };
}

// Fit the host's width, whatever it is (320 px to a desktop): a <fieldset> keeps the browser's
// `min-width: min-content`, so one long label or word would widen the question past the host's card
// (SurveyJS clips it mid-sentence).  Set through the CSSOM, which a host's Content-Security-Policy
// allows (no style attribute, no stylesheet): the root may shrink, every text wraps, even inside a
// long word, and a text box is no wider than the question.
const FIT = {
  fieldset: { minWidth: "0", maxWidth: "100%", boxSizing: "border-box", margin: "0", overflowWrap: "anywhere" },
  legend: { maxWidth: "100%", whiteSpace: "normal", overflowWrap: "anywhere", boxSizing: "border-box" },
  "div, p, ul, li, label, strong": { minWidth: "0", maxWidth: "100%", whiteSpace: "normal", overflowWrap: "anywhere" },
  "input[type=text]": { maxWidth: "100%", minWidth: "0", boxSizing: "border-box" },
};

function fit(root) {
  for (const [selector, style] of Object.entries(FIT)) {
    const nodes = selector === "fieldset" ? [root] : Array.from(root.querySelectorAll(selector));
    for (const node of nodes) Object.assign(node.style, style);
  }
}

// Unnamed radio buttons, made to behave as one group: checking one unchecks the others.
export function oneOf(inputs) {
  inputs.forEach((input) => input.addEventListener("change", () => {
    if (input.checked) inputs.forEach((other) => { if (other !== input) other.checked = false; });
  }));
}

// SurveyJS's required check (isRequired: true) reads question.isEmpty(), which looks at its value; the
// value is the report, set only when the page is left (a report drawn on the first click would ignore
// a corrected answer, and one redrawn on each change would spend ε again).  So the question is not
// empty while the embed's inputs hold an answer (or what commit() will refuse, with its own message):
// SurveyJS lets the page go, and commitPage then sets the value to the report.  Nothing of the answer
// reaches SurveyJS: only whether there is one, which the report says anyway.
function answeredForSurveyJS(question, handles) {
  if (Object.prototype.hasOwnProperty.call(question, "isEmpty")) return;
  const own = Object.getPrototypeOf(question).isEmpty;
  question.isEmpty = function isEmpty() {
    const handle = handles.get(this);
    return own.call(this) && !(handle && handle.filled());
  };
}

// SurveyJS: a question type "deniable" (survey-core and survey-js-ui, 2.x), registered with the
// Survey global the host loaded:  DeniableEmbed.registerSurveyJS(Survey, {design, language}) (language
// optional: as mount's).  In the survey's
// JSON, {"type": "deniable", "name": "QID"} mounts question QID of the design.  Its value — what
// survey.data holds — is only {report, design, epsilon}, set when the respondent leaves the page or
// completes; a required question that is unanswered keeps them on the page.  SurveyJS's own
// `isRequired: true` works too: the question tells SurveyJS's required check it is answered (its
// isEmpty) as soon as the embed's inputs are, without giving SurveyJS any value before the report.
export function registerSurveyJS(Survey, { design, language = null }) {
  if (language !== null && language !== undefined) checkLanguage(checkDesign(design), language); // fails here, not on mounting
  const handles = new WeakMap();
  const wired = new WeakSet();
  const commitPage = (survey, page, options) => {
    for (const question of (page ? page.questions : [])) {
      const handle = handles.get(question);
      if (!handle) continue;
      try {
        const result = handle.commit();
        if (result !== null) question.value = result;
      } catch (error) {
        options.allow = false;
      }
    }
  };
  const wire = (survey) => {
    if (!survey || wired.has(survey)) return;
    wired.add(survey);
    survey.onCurrentPageChanging.add((sender, options) => {
      if (options.isNextPage || options.isGoingForward) commitPage(sender, options.oldCurrentPage, options);
    });
    survey.onCompleting.add((sender, options) => commitPage(sender, sender.currentPage, options));
  };
  Survey.Serializer.addClass("deniable", [], null, "empty");
  Survey.CustomWidgetCollection.Instance.add({
    name: "deniable",
    title: "Protected question (deniable)",
    isFit: (question) => question.getType() === "deniable",
    htmlTemplate: "<div class=\"deniable-host\"></div>",
    afterRender(question, el) {
      wire(question.survey);
      const host = el.classList && el.classList.contains("deniable-host") ? el : el.querySelector(".deniable-host") || el;
      const handle = mount(host, { design, question: question.name, language });
      handles.set(question, handle);
      answeredForSurveyJS(question, handles);
      const clear = () => { // an error SurveyJS showed goes once the question is answered (as it is typed)
        if (handle.filled() && Array.isArray(question.errors) && question.errors.length) question.errors = [];
      };
      host.addEventListener("input", clear);
      host.addEventListener("change", clear);
    },
    willUnmount(question) {
      handles.delete(question);
    },
  });
}
