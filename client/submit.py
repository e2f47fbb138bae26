"""Answer a survey from Python: randomize protected answers locally, then POST the reports.

Only the randomized reports leave this process (docs/design.md, invariant 1); they are drawn from
the operating system's CSPRNG by the same Python twins of the browser's samplers that ``deniable
audit`` checks: :func:`deniable.client.randomize` (single choice),
:func:`~deniable.client.randomizer.randomize_design` (a randomized-response design),
:func:`~deniable.client.numeric.randomize_grid` and :func:`~deniable.client.numeric.randomize_laplace`
(numeric), :func:`~deniable.client.multi.randomize_multi` and
:func:`~deniable.client.designs.randomize_ticks` (check all that apply),
:func:`~deniable.client.listexp.assign_arms` and :func:`~deniable.client.listexp.randomize_counts`
(list experiment).  Each mechanism is rebuilt from the survey's published design and checked
against the integer threshold the server publishes, so a report is never drawn under another
mechanism than the browser's.  To retry after a network error, re-send the *same* reports with
:func:`post_reports` rather than calling :func:`submit` again: fresh draws for the same answer
would, averaged, reveal it (invariant 3).

The answers, by question type:

- single choice: the option index (``0`` for the first option); for the respondent-side crosswise
  model, the respondent's own choice, ``0`` for "same" and ``1`` for "different" (sent as is);
- numeric: the number itself (``42`` or ``2.5``), one of ``min, min + step, …, max``;
- check all that apply: one tick per option, in order (``[1, 0, 1]``);
- list experiment: ``{"items": c, "sensitive": 0 or 1}`` — how many control items apply and whether
  the sensitive item does; the client draws the arm (a fair coin) and counts the sensitive item only
  in the treatment arm — or, when the caller showed the list itself, ``{"arm": a, "count": c}`` with the
  arm from :func:`~deniable.client.listexp.assign_arms` and the count of the items shown.

Display logic: a question with a ``show_if`` (published by the API) is asked only of respondents whose
direct answer to an earlier question is one of some options (a check-all question: any of them ticked).
As the server refuses an answer to a question the respondent was not asked, :func:`submit` refuses it
first, naming the question, before anything is drawn or sent (:func:`asked`, the server's rule in
``deniable.server.survey.logic``); a question not asked need not be answered, even when required.

>>> submit("http://127.0.0.1:8000", "demo", {"drug_use": 1, "cheating": 0})   # doctest: +SKIP
'k3bq0Vw2mXJ9R1tA'
"""

from __future__ import annotations

import json
import numbers
import urllib.error
import urllib.request
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from deniable.errors import DeniableError

from .designs import Design, TickDesignMechanism
from .listexp import ListMechanism, assign_arms, list_mechanism, randomize_counts
from .mechanism import MechanismError, check_option, mechanism
from .multi import MultiMechanism, check_ticks, direct_multi, from_mask, multi_mechanism, randomize_multi, to_mask
from .numeric import GridMechanism, LaplaceMechanism, direct_grid, grid_mechanism, laplace, randomize_grid, \
    randomize_laplace
from .randomizer import randomize, randomize_design

TIMEOUT = 10.0


class SubmitError(DeniableError, RuntimeError):
    """The server refused the request or could not be reached; the message says why.

    A :class:`~deniable.errors.DeniableError` like every error of the project, and a RuntimeError as
    it has always been (not a ValueError: a network failure is no bad input), so callers that catch
    RuntimeError keep working.  ``status``: the HTTP status (None when unreachable); ``field``: the
    field the server named, if any."""

    def __init__(self, message: str, status: int | None = None, field: str | None = None):
        super().__init__(message)
        self.status = status
        self.field = field


@dataclass(frozen=True)
class Numeric:
    """A numeric question as published: answers ``minimum, minimum + step, …`` (``steps`` + 1 of them) and
    the mechanism its answer index is randomized by (grid randomized response, discrete Laplace, or the
    grid with G = m asked directly)."""

    minimum: Decimal
    step: Decimal
    steps: int
    mech: GridMechanism | LaplaceMechanism

    def index(self, value) -> int:
        """The answer index ``(value − minimum)/step`` of a number, or ValueError saying what is allowed."""
        top = self.minimum + self.steps * self.step
        allowed = f"a number from {self.minimum} to {top} in steps of {self.step}"
        if isinstance(value, bool) or not isinstance(value, (numbers.Real, Decimal)):
            raise ValueError(f"answer must be {allowed}, got {value!r}"[:160])
        try:
            offset = (Decimal(repr(value)) if isinstance(value, float) else Decimal(value)) - self.minimum
        except (InvalidOperation, ValueError):
            raise ValueError(f"answer must be {allowed}, got {value!r}"[:160]) from None
        if not offset.is_finite():
            raise ValueError(f"answer must be {allowed}, got {value!r}"[:160])
        index = offset / self.step
        if index != index.to_integral_value() or not 0 <= index <= self.steps:
            raise ValueError(f"answer must be {allowed}, got {value!r}"[:160])
        return int(index)

    def report(self, value) -> int:
        i = self.index(value)
        if isinstance(self.mech, LaplaceMechanism):
            return int(randomize_laplace([i], self.mech)[0])  # steps from min, in −L..m + L
        return int(randomize_grid([i], self.mech)[0])  # a grid index (the answer index when asked directly)


@dataclass(frozen=True)
class CheckAll:
    """A check-all-that-apply question: K ticks, each randomized by binary randomized response at ε/K, by a
    design, or sent as given."""

    k: int
    mech: MultiMechanism | TickDesignMechanism

    def report(self, value) -> list[int]:
        try:
            mask = to_mask(check_ticks(value, self.k))
        except MechanismError as exc:
            raise ValueError(f"answer {exc}") from None
        if isinstance(self.mech, TickDesignMechanism):
            from .designs import randomize_ticks

            reported = int(randomize_ticks([mask], self.mech.design, self.k)[0])
        elif self.mech.protected:
            reported = int(randomize_multi([mask], self.mech)[0])
        else:
            reported = mask
        return from_mask(reported, self.k)


@dataclass(frozen=True)
class ListExperiment:
    """A list experiment with J control items: the arm is a fair coin, the count randomized over 0..J + 1
    (sent as given when plain)."""

    mech: ListMechanism

    def report(self, value) -> dict:
        items = self.mech.items
        if not isinstance(value, dict) or set(value) not in ({"items", "sensitive"}, {"arm", "count"}):
            raise ValueError('answer must be {"items": how many control items apply, "sensitive": 0 or 1} '
                             '(or {"arm": 0 or 1, "count": how many of the items shown apply})')
        if "arm" in value:
            arm, count = value["arm"], value["count"]
            if isinstance(arm, bool) or arm not in (0, 1):
                raise ValueError(f"answer's arm must be 0 (control) or 1 (treatment), got {arm!r}"[:100])
            top = items + arm
        else:
            arm, top = int(assign_arms(1)[0]), items
            count, sensitive = value["items"], value["sensitive"]
            if isinstance(sensitive, bool) or sensitive not in (0, 1):
                raise ValueError(f"answer's sensitive must be 0 or 1, got {sensitive!r}"[:100])
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or not 0 <= count <= top:
            raise ValueError(f"answer's count must be a whole number from 0 to {top}, got {count!r}"[:100])
        if "arm" not in value:
            count += arm * sensitive  # the sensitive item is on the list in the treatment arm only
        return {"arm": arm, "count": int(randomize_counts([int(count)], self.mech)[0])}


def _request(req: urllib.request.Request, timeout: float) -> dict:
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            body = json.loads(exc.read())
        except ValueError:
            body = {}
        raise SubmitError(f"HTTP {exc.code}: {body.get('error', exc.reason)}", exc.code, body.get("field")) from None
    except (urllib.error.URLError, OSError) as exc:
        raise SubmitError(f"cannot reach the server: {getattr(exc, 'reason', exc)}") from None


def _same_threshold(q: dict, realized) -> None:
    """Refuse a mechanism whose integer threshold is not the one the server publishes."""
    if "threshold" in q and q["threshold"] != realized:
        raise SubmitError(f"{q.get('id')}: the server's threshold {q['threshold']} is not this client's {realized}: "
                          "update deniable")


def published_mechanism(q: dict):
    """``(k, mechanism)`` of one question of the published design (``/api/v1/surveys/<slug>``): for a single
    choice ``(k, ε)`` (ε None: asked directly) or ``(k, Design)``; for the other types ``(k, Numeric |
    CheckAll | ListExperiment)``."""
    kind = q.get("type")
    if kind == "numeric":
        minimum, step = Decimal(repr(q["min"])), Decimal(repr(q["step"]))
        steps = int(q["steps"])
        if q["mechanism"] == "direct":
            mech = direct_grid(steps)
        elif q["mechanism"] == "laplace":
            mech = laplace(steps, q["epsilon"])
        else:
            mech = grid_mechanism(steps, q["grid"], q["epsilon"])
        if q["mechanism"] != "direct":
            _same_threshold(q, mech.threshold)
        return steps + 1, Numeric(minimum, step, steps, mech)
    if kind == "multi":
        k = int(q["k"])
        if "tick_weights" in q:
            weights = tuple(tuple(int(w) for w in row) for row in q["tick_weights"])
            tick = Design(name=q["design"]["name"], params=(), weights=weights, reports=("ticked", "not ticked"))
            return k, CheckAll(k, TickDesignMechanism(k, tick))
        mech = multi_mechanism(k, q["epsilon"]) if q.get("epsilon") is not None else direct_multi(k)
        if mech.protected:
            _same_threshold(q, mech.threshold)
        return k, CheckAll(k, mech)
    if kind == "list":
        mech = list_mechanism(len(q["items"]), q.get("epsilon"))
        if mech.protected:
            _same_threshold(q, mech.threshold)
        return mech.k, ListExperiment(mech)
    if "options" not in q or "k" not in q:
        raise SubmitError(f"{q.get('id')}: this client cannot answer a {kind} question: update deniable")
    if "weights" in q:
        return q["k"], published_design(q)
    epsilon = q.get("epsilon")
    if epsilon is not None:
        _same_threshold(q, mechanism(q["k"], epsilon).threshold)
    return q["k"], epsilon


def fetch_design(base_url: str, slug: str, *, timeout: float = TIMEOUT) -> dict:
    """The survey's published design document (``GET /api/v1/surveys/<slug>``)."""
    url = f"{base_url.rstrip('/')}/api/v1/surveys/{slug}"
    return _request(urllib.request.Request(url, headers={"Accept": "application/json"}), timeout)


def fetch_mechanisms(base_url: str, slug: str, *, timeout: float = TIMEOUT) -> dict[str, tuple]:
    """Return ``{qid: (k, mechanism)}`` from the survey's published design (:func:`published_mechanism`:
    for a single choice ``(k, epsilon)``, ε None = asked directly, or ``(k, Design)`` for a design,
    sampled from its integer weights)."""
    design = fetch_design(base_url, slug, timeout=timeout)
    return {q["id"]: published_mechanism(q) for q in design["questions"]}


@dataclass(frozen=True)
class Condition:
    """A question's published ``show_if``: asked only when the direct answer to ``question`` is one of
    ``options`` (labels; ``indices`` their places among that question's options)."""

    question: str
    options: tuple[str, ...]
    indices: frozenset[int]

    def words(self) -> str:
        """Who is asked, in the server's words (``logic.asked_of``)."""
        labels = " or ".join(f"“{label}”" for label in self.options)
        return f"asked of respondents who answered {self.question} = {labels}"


def published_conditions(design: dict) -> dict[str, Condition]:
    """``{qid: Condition}`` of the questions of a published design that have a ``show_if``, in the survey's
    order (a condition names an earlier question)."""
    options = {q["id"]: q.get("options", []) for q in design["questions"]}
    out = {}
    for q in design["questions"]:
        if "show_if" in q:
            source, labels = q["show_if"]["question"], tuple(q["show_if"]["in"])
            out[q["id"]] = Condition(source, labels, frozenset(options[source].index(label) for label in labels))
    return out


def asked(answers: dict, mechanisms: dict[str, tuple], conditions: dict[str, Condition]) -> dict[str, bool]:
    """Whether each question with a condition is asked, given the caller's ``answers``: the server's rule
    (``deniable.server.survey.logic.is_shown``) — hidden when the question it depends on was not answered
    or was itself hidden; a condition's question is asked directly, so its answer is what is sent.  A bad
    answer to that question is a ValueError naming it (as :func:`make_reports` would say)."""
    out: dict[str, bool] = {}
    for qid, condition in conditions.items():
        source = condition.question
        if not out.get(source, True) or answers.get(source) is None:
            out[qid] = False
            continue
        k, mech = mechanisms[source]
        try:
            if isinstance(mech, CheckAll):  # any of the options ticked
                ticks = check_ticks(answers[source], mech.k)
                out[qid] = any(ticks[j] for j in condition.indices)
            else:
                out[qid] = check_option(answers[source], k) in condition.indices
        except MechanismError as exc:
            raise ValueError(f"{source}: answer {exc}") from None
    return out


def check_asked(answers: dict, mechanisms: dict[str, tuple], conditions: dict[str, Condition]) -> None:
    """Refuse, as the server would, an answer to a question this respondent is not asked (ValueError naming it)."""
    for qid, shown in asked(answers, mechanisms, conditions).items():
        if not shown and qid in answers:
            raise ValueError(f"{qid}: this question is not asked of this respondent "
                             f"({conditions[qid].words()}): send no answer for it")


def published_design(q: dict) -> Design:
    """A question's randomized-response design as the API publishes it: the integer weights it samples
    (the respondent-side crosswise model: its range of ε, and no sampling by the device)."""
    weights = tuple(tuple(int(w) for w in row) for row in q["weights"])
    spec = q.get("design", {})
    if spec.get("side") == "respondent":
        return Design(name=spec["name"], params=(("side", "respondent"),), weights=weights,
                      reports=("same", "different"), epsilon_range=tuple(q["epsilon_range"]))
    return Design(name=spec["name"], params=(), weights=weights, reports=tuple(q["options"]))


def make_reports(answers: dict, mechanisms: dict[str, tuple], conditions: dict[str, Condition] | None = None) -> dict:
    """Randomize each protected answer once (OS CSPRNG); direct answers are passed through.  With the survey's
    ``conditions`` (:func:`published_conditions`), an answer to a question not asked is refused first
    (:func:`check_asked`), before anything is drawn."""
    if conditions:
        unknown = next((qid for qid in answers if qid not in mechanisms), None)
        if unknown is not None:
            raise ValueError(f"{unknown}: not a question of this survey")
        check_asked(answers, mechanisms, conditions)
    reports = {}
    for qid, value in answers.items():
        if qid not in mechanisms:
            raise ValueError(f"{qid}: not a question of this survey")
        k, epsilon = mechanisms[qid]
        if isinstance(epsilon, (Numeric, CheckAll, ListExperiment)):
            try:
                reports[qid] = epsilon.report(value)
            except (ValueError, MechanismError) as exc:
                raise ValueError(f"{qid}: {exc}") from None
            continue
        try:
            value = check_option(value, k)
        except MechanismError as exc:
            raise ValueError(f"{qid}: answer {exc}") from None
        if isinstance(epsilon, Design) and epsilon.respondent_side:
            reports[qid] = value  # "same" (0) or "different" (1): the respondent randomized, not the device
            continue
        if isinstance(epsilon, Design):  # a design (ε-LDP or not) always randomizes, with its own weights
            reports[qid] = int(randomize_design([value], epsilon)[0])
            continue
        reports[qid] = value if epsilon is None else int(randomize([value], k, epsilon)[0])
    return reports


def post_reports(base_url: str, slug: str, reports: dict, *, timeout: float = TIMEOUT) -> str:
    """POST already-randomized ``reports`` to the JSON API; return the stored response's (random) id."""
    url = f"{base_url.rstrip('/')}/api/v1/surveys/{slug}/responses"
    body = json.dumps({"reports": reports}).encode()
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json", "Accept": "application/json"})
    return str(_request(req, timeout)["id"])


def submit(base_url: str, slug: str, answers: dict, mechanisms: dict[str, tuple] | None = None, *,
           conditions: dict[str, Condition] | None = None, timeout: float = TIMEOUT) -> str:
    """Randomize ``answers`` ``{qid: answer}`` (the module says each type's answer) and submit them;
    return the response id.

    ``mechanisms`` ``{qid: (k, mechanism)}`` must be the survey's own; by default it is fetched
    from ``/api/v1/surveys/<slug>`` (:func:`fetch_mechanisms`), with the questions' display logic
    (:func:`published_conditions`): an answer to a question this respondent is not asked is a ValueError
    naming it, and nothing is sent.  Given ``mechanisms``, pass ``conditions`` for the same check.
    """
    if mechanisms is None:
        design = fetch_design(base_url, slug, timeout=timeout)
        mechanisms = {q["id"]: published_mechanism(q) for q in design["questions"]}
        conditions = published_conditions(design)
    return post_reports(base_url, slug, make_reports(answers, mechanisms, conditions), timeout=timeout)
