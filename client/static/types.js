// The question cards drawn by a type's own browser module (survey.js calls in): the registry and
// the rules every type shares.
//
// Each type's module under types/ (the Python type module names it: QuestionType.script) calls
// registerType with the `data-type` its cards carry (QuestionType.page_data) and its behaviour:
//
//   read(fieldset)                 the answer, never stored: {answered, value} or {error}
//   touched(fieldset)              whether the progress line counts the card as answered
//   wire(fieldset, onChange)       listen to the card's inputs; call onChange(fieldset) on a change
//   context(fieldset, slug)        what a report depends on beside the answer (a list's arm), or null
//   validMemo(fieldset, text, ctx) whether a memoized report is one this card could have made
//   randomize(fieldset, value, ctx)  the randomized report (rr.js)
//   direct(fieldset, value, ctx)   the report of a question asked directly
//   shown(fieldset, text)          what the thank-you page says was sent
//   prepare(fieldset, slug)        optional: before the card is shown (a list draws its arm)
//   forget(fieldset, slug)         optional: a different person takes the device
//
// As for single-choice questions: the visible inputs have no name; at submit the answer is read,
// randomized unless the question is asked directly (threshold 2^32), and only the REPORT goes into
// the hidden field.  A randomized report is memoized in localStorage per (survey, question), never
// the answer.  No type is named here: a card's module is found by its `data-type`.

const TWO_32 = 4294967296;
const registry = new Map();

export function registerType(name, behaviour) {
  registry.set(name, behaviour);
}

function behaviourOf(fieldset) {
  const behaviour = registry.get(fieldset.dataset.type);
  if (!behaviour) throw new Error(`question ${fieldset.dataset.qid} has no card behaviour`);
  return behaviour;
}

export function int(fieldset, name) {
  return Number(fieldset.dataset[name]);
}

export { message } from "./keys.js"; // the type modules import it from here with the rest

// A card whose answer is one of its radios (`selector`), each drawn anew for a new person by `draw`
// (a value independent of the answer, kept under `key(slug, qid)`: the list experiment's arm, a
// two-group design's group): read, touched, wire (one radio checked per question) and forget.
export function drawnRadioCard(selector, key, draw) {
  const radios = (fieldset) => Array.from(fieldset.querySelectorAll(selector));
  return {
    read(fieldset) {
      const checked = radios(fieldset).find((radio) => radio.checked);
      return checked ? { answered: true, value: Number(checked.value) } : { answered: false };
    },
    touched: (fieldset) => radios(fieldset).some((radio) => radio.checked),
    prepare: draw,
    wire(fieldset, onChange) {
      const all = radios(fieldset);
      all.forEach((radio) => radio.addEventListener("change", () => {
        if (radio.checked) all.forEach((other) => { if (other !== radio) other.checked = false; });
        onChange(fieldset);
      }));
    },
    // A different person: forget the previous person's draw and answer, and draw anew.
    forget(fieldset, slug) {
      window.localStorage.removeItem(key(slug, fieldset.dataset.qid));
      radios(fieldset).forEach((radio) => { radio.checked = false; });
      draw(fieldset, slug);
    },
  };
}

function cards(form) {
  return Array.from(form.querySelectorAll("fieldset.typed"));
}

export function readAnswer(fieldset) {
  return behaviourOf(fieldset).read(fieldset);
}

// Whether the progress line counts the card as answered (each type's rule: types/*.js).
export function isAnswered(fieldset) {
  return Boolean(behaviourOf(fieldset).touched(fieldset));
}

// The report of an answer: memoized when randomized (a retry or reload re-sends it), else as given.
// Returns {text: the hidden field's value, shown: what the thank-you page says was sent}.
export function reportFor(fieldset, slug, key, answer) {
  const behaviour = behaviourOf(fieldset);
  const storage = window.localStorage;
  const ctx = behaviour.context(fieldset, slug);
  const randomized = int(fieldset, "threshold") !== TWO_32;
  let text = randomized ? storage.getItem(key) : null;
  if (text === null || !behaviour.validMemo(fieldset, text, ctx)) {
    text = randomized ? behaviour.randomize(fieldset, answer, ctx) : behaviour.direct(fieldset, answer, ctx);
    if (randomized) storage.setItem(key, text);
  }
  return { text, shown: behaviour.shown(fieldset, text) };
}

export function initTyped(form, slug, onChange) {
  for (const fieldset of cards(form)) {
    const behaviour = behaviourOf(fieldset);
    if (behaviour.prepare) behaviour.prepare(fieldset, slug);
    behaviour.wire(fieldset, onChange);
  }
}

// A different person: each card forgets what it keeps of the previous person (survey.js forgets
// their memoized reports).
export function newPerson(form, slug) {
  for (const fieldset of cards(form)) {
    const behaviour = behaviourOf(fieldset);
    if (behaviour.forget) behaviour.forget(fieldset, slug);
  }
}
