"""What ``deniable audit`` samples: one setting per mechanism, its true inputs, and both samplers.

A :class:`Setting` is one mechanism (``mech``) of one kind (``kind``: the name of an
:class:`~deniable.server.survey.questions.base.AuditSampler`) with the true inputs to run it on
and the events to count (:mod:`deniable.estimators.audit` says why those are the tight ones).
Every question type gives the samplers of its mechanisms
(:meth:`~deniable.server.survey.questions.base.QuestionType.audit_samplers`): this module names
none of them, so a newly registered type is audited through its own.  The browser side calls the
samplers that the survey page calls — the exports of ``/static/rr.js`` — in headless chromium,
``BATCH`` runs per ``page.evaluate``, and returns the counts of the reports; the Python side calls
their twins in :mod:`deniable.client` with the OS CSPRNG.  Both return an r × s table of cell
counts (r true inputs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

BATCH = 200_000  # draws per page.evaluate call


def samplers() -> dict:
    """Every registered type's samplers by kind, in registration order (loads the type modules)."""
    from deniable.server.survey import questions

    return {sampler.name: sampler for qtype in questions.all_types() for sampler in qtype.audit_samplers()}


def kinds() -> tuple[str, ...]:
    """The kinds ``--type`` takes."""
    return tuple(samplers())


@dataclass
class Setting:
    """One mechanism to audit: ``kind`` (a sampler's name, one of :func:`kinds`) and its realized parameters."""

    kind: str
    mech: object  # the mechanism the sampler runs (Mechanism, GridMechanism, LaplaceMechanism, …)
    questions: list[str] = field(default_factory=list)

    @property
    def sampler(self):
        return samplers()[self.kind]

    @property
    def protected(self) -> bool:
        return self.sampler.protected(self.mech)

    @property
    def declared_epsilon(self) -> float | None:
        return self.mech.declared_epsilon if self.protected else None

    @property
    def realized_epsilon(self) -> float | None:
        return self.mech.epsilon if self.protected else None

    @property
    def label(self) -> str:
        return self.sampler.label(self.mech)

    @property
    def k(self) -> int | None:
        return self.sampler.k(self.mech)

    @property
    def inputs(self) -> list[int]:
        """The true inputs: options, answer indices, subsets as bit masks, or holds nothing/everything."""
        return self.sampler.inputs(self.mech)

    def js_args(self, value: int) -> list:
        return self.sampler.js_args(self.mech, value)

    def cells(self, counts):
        """The r × s table of event counts from the raw report counts of each input."""
        return self.sampler.cells(self.mech, counts)

    def key(self) -> tuple:
        return (kinds().index(self.kind), self.label, self.declared_epsilon or 0.0)


def browser_counts(page, setting: Setting, samples: int, advance):
    """Report counts of each true input from the browser samplers (before binning)."""
    import numpy as np

    rows = []
    for value in setting.inputs:
        total, done = None, 0
        while done < samples:
            batch = min(BATCH, samples - done)
            got = np.array(page.evaluate(setting.sampler.js, [*setting.js_args(value), batch]), dtype=np.int64)
            total = got if total is None else total + got
            done += batch
            advance(batch)
        rows.append(total)
    return np.array(rows)


def python_counts(setting: Setting, samples: int, advance, rng=None):
    """Report counts of each true input from the Python twins (OS CSPRNG unless ``rng``)."""
    import numpy as np

    rows = []
    for value in setting.inputs:
        rows.append(setting.sampler.python_row(setting.mech, value, samples, rng))
        advance(samples)
    return np.array(rows)


def default_settings(types, ks, epsilons) -> list[Setting]:
    """The grid audited without ``--db``: each kind's own default mechanisms per ε (single choice
    with each k, a numeric question on 0..10 with G = 1 and G = 10 and by discrete Laplace, K = 3
    options, J = 3 control items and the plain list experiment once, to show it is not ε-LDP)."""
    found = samplers()
    return [Setting(kind, mech) for kind in types for mech in found[kind].defaults(ks, epsilons)]


def stored_settings(surveys, types, not_audited: list | None = None) -> list[Setting]:
    """The distinct mechanisms of the stored surveys' questions — each question's own sampler
    (:meth:`~deniable.server.survey.questions.base.QuestionType.audit_sampler`: every protected
    question, and every plain list experiment) — with the ``slug/qid`` asked under each.  A
    protected question whose type has no sampler is appended to ``not_audited`` as
    ``(slug/qid, reason)``."""
    from deniable.server.survey.questions.base import NotAvailable

    found: dict[tuple, Setting] = {}
    for stored in surveys:
        for q in stored.survey.questions:
            try:
                sampler = q.qtype.audit_sampler(q)
            except NotAvailable as exc:
                if not_audited is not None:
                    not_audited.append((f"{stored.survey.slug}/{q.id}", str(exc)))
                continue
            if sampler is None or sampler.name not in types:
                continue
            setting = found.setdefault((sampler.name, q.mechanism), Setting(sampler.name, q.mechanism))
            setting.questions.append(f"{stored.survey.slug}/{q.id}")
    return sorted(found.values(), key=Setting.key)
