"""What ``deniable audit`` samples: one setting per mechanism, its true inputs, and both samplers.

A :class:`Setting` is one mechanism of one question type (single choice, numeric grid,
discrete Laplace, check all that apply, list experiment) with the true inputs to run it on and
the events to count (:mod:`deniable.estimators.audit` says why those are the tight ones).  The
browser side calls the samplers that ``/static/types.js`` and ``survey.js`` call — the exports of
``/static/rr.js`` — in headless chromium, ``BATCH`` runs per ``page.evaluate``, and returns the
counts of the reports; the Python side calls their twins in :mod:`deniable.client` with the OS
CSPRNG.  Both return an r × s table of cell counts (r true inputs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

TYPES = ("choice", "grid", "laplace", "multi", "list")
BATCH = 200_000  # draws per page.evaluate call

# Each snippet runs `n` reports of one true input and returns the counts of the reports.
JS = {
    "choice": """async ([value, k, threshold, n]) => {
  const rr = await import('/static/rr.js');
  const counts = new Array(k).fill(0);
  for (let i = 0; i < n; i++) counts[rr.randomize(value, k, threshold)] += 1;
  return counts;
}""",
    "grid": """async ([value, m, grid, threshold, n]) => {
  const rr = await import('/static/rr.js');
  const counts = new Array(grid + 1).fill(0);
  for (let i = 0; i < n; i++) counts[rr.randomizeGrid(value, m, grid, threshold)] += 1;
  return counts;
}""",
    "laplace": """async ([value, m, threshold, tail, n]) => {
  const rr = await import('/static/rr.js');
  const counts = new Array(m + 2 * tail + 1).fill(0);
  for (let i = 0; i < n; i++) counts[rr.randomizeLaplace(value, m, threshold, tail) + tail] += 1;
  return counts;
}""",
    "multi": """async ([mask, k, threshold, n]) => {
  const rr = await import('/static/rr.js');
  const ticks = Array.from({length: k}, (_, j) => (mask >> j) & 1);
  const counts = new Array(k + 1).fill(0);
  for (let i = 0; i < n; i++) counts[rr.randomizeTicks(ticks, threshold).reduce((a, b) => a + b, 0)] += 1;
  return counts;
}""",
    "list": """async ([holds, items, threshold, n]) => {
  const rr = await import('/static/rr.js');
  const counts = new Array(2 * (items + 2)).fill(0);
  for (let i = 0; i < n; i++) {
    const arm = rr.assignArm();
    const count = holds ? items + arm : 0;
    counts[arm * (items + 2) + rr.randomizeCount(count, items, arm, threshold)] += 1;
  }
  return counts;
}""",
}


@dataclass
class Setting:
    """One mechanism to audit: ``kind`` (one of :data:`TYPES`) and its realized parameters."""

    kind: str
    mech: object  # Mechanism, GridMechanism, LaplaceMechanism, MultiMechanism or ListMechanism
    questions: list[str] = field(default_factory=list)

    @property
    def protected(self) -> bool:
        return self.kind != "list" or self.mech.protected

    @property
    def declared_epsilon(self) -> float | None:
        return self.mech.declared_epsilon if self.protected else None

    @property
    def realized_epsilon(self) -> float | None:
        return self.mech.epsilon if self.protected else None

    @property
    def label(self) -> str:
        m = self.mech
        return {"choice": lambda: f"k={m.k}", "grid": lambda: f"m={m.m} G={m.grid}",
                "laplace": lambda: f"m={m.m}", "multi": lambda: f"K={m.k}",
                "list": lambda: f"J={m.items}" + ("" if m.protected else " plain")}[self.kind]()

    @property
    def inputs(self) -> list[int]:
        """The true inputs: options, answer indices, subsets as bit masks, or holds nothing/everything."""
        m = self.mech
        if self.kind == "choice":
            return list(range(m.k))
        if self.kind == "grid":
            return sorted({0, m.m // 2, m.m})  # the ends (tight) and the middle (rounded at random)
        if self.kind == "laplace":
            return [0, m.m]
        if self.kind == "multi":
            return [0, (1 << m.k) - 1]  # the empty set and the full set
        return [0, 1]

    def js_args(self, value: int) -> list:
        m = self.mech
        return {"choice": lambda: [value, m.k, m.threshold], "grid": lambda: [value, m.m, m.grid, m.threshold],
                "laplace": lambda: [value, m.m, m.threshold, m.tail], "multi": lambda: [value, m.k, m.threshold],
                "list": lambda: [value, m.items, m.threshold]}[self.kind]()

    def cells(self, counts):
        """The r × s table of event counts from the raw report counts of each input."""
        from deniable.estimators import audit

        if self.kind == "grid":
            return audit.end_cells(counts)
        if self.kind == "laplace":
            return audit.tail_cells(counts, self.mech.low, self.mech.m)
        return counts

    def key(self) -> tuple:
        return (TYPES.index(self.kind), self.label, self.declared_epsilon or 0.0)


def browser_counts(page, setting: Setting, samples: int, advance):
    """Report counts of each true input from the browser samplers (before binning)."""
    import numpy as np

    rows = []
    for value in setting.inputs:
        total, done = None, 0
        while done < samples:
            batch = min(BATCH, samples - done)
            got = np.array(page.evaluate(JS[setting.kind], [*setting.js_args(value), batch]), dtype=np.int64)
            total = got if total is None else total + got
            done += batch
            advance(batch)
        rows.append(total)
    return np.array(rows)


def python_counts(setting: Setting, samples: int, advance, rng=None):
    """Report counts of each true input from the Python twins (OS CSPRNG unless ``rng``)."""
    import numpy as np

    from deniable.client import randomize
    from deniable.client.listexp import assign_arms, randomize_counts
    from deniable.client.multi import randomize_multi
    from deniable.client.numeric import randomize_grid, randomize_laplace
    from deniable.estimators.audit import list_cells, tick_cells

    m = setting.mech
    rows = []
    for value in setting.inputs:
        full = np.full(samples, value)
        if setting.kind == "choice":
            row = np.bincount(randomize(full, m.k, m.declared_epsilon, rng), minlength=m.k)
        elif setting.kind == "grid":
            row = np.bincount(randomize_grid(full, m, rng), minlength=m.grid + 1)
        elif setting.kind == "laplace":
            row = np.bincount(randomize_laplace(full, m, rng) - m.low, minlength=m.high - m.low + 1)
        elif setting.kind == "multi":
            row = tick_cells(randomize_multi(full, m, rng), m.k)
        else:
            arms = assign_arms(samples, rng)
            row = list_cells(arms, randomize_counts(value * (m.items + arms), m, rng), m.items)
        rows.append(row)
        advance(samples)
    return np.array(rows)


def default_settings(types, ks, epsilons) -> list[Setting]:
    """The grid audited without ``--db``: per ε, single choice with each k, a numeric question on
    0..10 (grid G = 1 and G = 10, discrete Laplace), K = 3 options, and J = 3 control items (and
    the plain list experiment once, to show it is not ε-LDP)."""
    from deniable.client.listexp import list_mechanism
    from deniable.client.mechanism import mechanism
    from deniable.client.multi import multi_mechanism
    from deniable.client.numeric import grid_mechanism, laplace

    out = []
    for kind in types:
        for eps in epsilons:
            if kind == "choice":
                out += [Setting("choice", mechanism(k, eps)) for k in ks]
            elif kind == "grid":
                out += [Setting("grid", grid_mechanism(10, g, eps)) for g in (1, 10)]
            elif kind == "laplace":
                out.append(Setting("laplace", laplace(10, eps)))
            elif kind == "multi":
                out.append(Setting("multi", multi_mechanism(3, eps)))
            else:
                out.append(Setting("list", list_mechanism(3, eps)))
        if kind == "list":
            out.append(Setting("list", list_mechanism(3, None)))
    return out


def stored_settings(surveys, types) -> list[Setting]:
    """The distinct mechanisms of the stored surveys' questions: every protected one, and every
    plain list experiment (audited to show that it is not ε-LDP), with the ``slug/qid`` asked under
    each."""
    found: dict[tuple, Setting] = {}
    for stored in surveys:
        for q in stored.survey.questions:
            kind = "choice" if q.qtype.categorical else ("laplace" if q.method == "laplace" else "grid") \
                if q.type == "numeric" else q.type
            if kind not in types or not (q.protected or q.type == "list"):
                continue
            setting = found.setdefault((kind, q.mechanism), Setting(kind, q.mechanism))
            setting.questions.append(f"{stored.survey.slug}/{q.id}")
    return sorted(found.values(), key=Setting.key)
