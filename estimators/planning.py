"""Sample-size planning: the exact interval's worst-case expected half-width as a function of n.

For n respondents and the default ("exact") interval, the expected half-width at a true π is

    w(π; n) = ½ Σ_x b(x; n, λ) (ci_high(x) − ci_low(x)),  λ = q + (p − q)π,

summed exactly over the counts within ``nλ ± (7σ + 7)``; the probability outside that window,
computed exactly, is added in full (a width is at most 1), so the value used is an upper bound
exceeding the exact sum by less than 1e-11.  The planner's number is ``h(n) = max_π w(π; n)``.

Where is the worst π?  Up to ``FULL_GRID_N`` respondents on a grid of 201 π, then refined by
golden-section search around the best grid point.  Above, a large-sample model of the
interval (``λ̂ ± z σ(λ)/√n`` truncated to [q, p], expected width in closed form; see
:func:`model_half_width`) puts the worst λ near ½, or mid-range when [q, p] excludes ½; the
exact w is evaluated on 41 π within four standard deviations of it and refined the same way.

Computing h(n) once
-------------------
Each h(n) fills one Feldman–Cousins belt, over the counts of the grid's windows, in one batch
(its own belt: what other callers cached cannot change it), computes the widths of those counts
once, and sums them for each π of the grid and of the refinement.  Each ``(h(n), worst π)``, and
each plan, is kept in memory and on disk under the user's cache directory
(``$XDG_CACHE_HOME/deniable``, else ``~/.cache/deniable``), one small file per entry, keyed by n
(or the margin), p, q, the confidence level, numpy's version, scipy's ``version.py`` and the
source of the code that computes it (this module, :mod:`.exact` and :mod:`.binomial`): computed on
this machine, never shipped, and read back only by the same code that wrote it (a plan read back
needs no scipy at all).  Without a usable cache directory nothing is written and every number is
computed.

Several at once
---------------
Below n ≈ 10,000 a belt's cost is mostly Python and numpy overhead (each round of the search
is a few dozen numpy calls on a few hundred counts), not incomplete-beta evaluations.  So
:func:`plans` runs several searches side by side (``deniable plan``: every ε and the baseline;
the builder's panel: a question's ε and its baseline, after :func:`worst_cases` at the target
n): each search is a generator that asks for ``h(n)``; those it asks for that are neither in
memory nor on disk are computed together, their belts filled in one batch
(:func:`.exact.fill_belts`) and their golden-section searches stepped together (one or two of them
two steps ahead: :func:`_golden_max_many`), every point's densities in one call of the binomial
kernel.  Every number is the one computed alone, bit for bit (``tests/unit/test_plan_batch.py``
compares bytes).  For a yes/no question w(π) = w(1 − π), so a worst π off ½ has a twin as bad, and
the last bits of the sums decide which one the search ends on: the one at or below ½ is reported.

While the model's correction oscillates with a shrinking swing (1799, 1824, 1815, 1823, 1816, …),
every n it asks for next lies between the last two; below n = 10,000, where a belt costs mostly
the overhead of its batch's rounds, those n are computed in the batch of the last one
(:func:`_ahead`): the same numbers, in four batches instead of ten.

References
----------
.. [1] G. J. Feldman, R. D. Cousins, "Unified approach to the classical statistical analysis
   of small signals", Phys. Rev. D 57 (1998) 3873 (the interval planned for).
.. [2] L. D. Brown, T. T. Cai, A. DasGupta, "Interval estimation for a binomial proportion",
   Statistical Science 16 (2001) 101–133 (expected width as the measure of precision; the
   oscillation of discrete intervals in n).
.. [3] J. Kiefer, "Sequential minimax search for a maximum", Proc. AMS 4 (1953) 502–506
   (golden-section search).
"""

from __future__ import annotations

import functools
import math
import numbers
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from deniable.client.mechanism import resolve
from deniable.errors import FieldError

from .binomial import binom_pmf, pmf_kernel, z
from .plan_cache import cache_dir, cache_file, is_unit, read_entry, write_entry  # noqa: F401  (cache_dir: public)
from .result import Result
from .validate import check_confidence

MAX_N = 10**9
FULL_GRID_N = 300  # up to this n the worst π is searched on a grid over all of [0, 1]
PLAN_WINDOW_SD = 7.0  # expected widths are summed over nλ ± (7σ + 7) counts
_MODEL_GRID = 401


@dataclass(frozen=True)
class WorstCase(Result):
    """The exact interval's worst-case expected half-width at n respondents, and where it is."""

    n: int
    half_width: float  # max over π of the expected half-width (an upper bound, < 1e-11 above)
    worst_pi: float  # the true proportion where that maximum is
    confidence: float


@dataclass(frozen=True)
class Plan(Result):
    """How many respondents a question needs for a margin, and what that n delivers."""

    n: int  # respondents needed
    margin: float  # the target half-width
    half_width: float  # the worst-case expected half-width at n (at most the margin)
    worst_pi: float  # where that worst case is
    half_width_one_fewer: float  # the same at n − 1 (above the margin)
    k: int
    epsilon: float  # realized ε (inf when asked directly)
    p: float
    q: float
    confidence: float


def model_half_width(n: float, p: float, q: float, z_: float) -> tuple[float, float]:
    """Large-sample model: worst case over λ ∈ [q, p] of E[half-width] of ``λ̂ ± z·σ(λ)`` truncated
    to [q, p], in π units, and the λ where it is.

    With ``λ̂ ~ N(λ, σ²)``, ``E[min(λ̂ + h, p)] − E[max(λ̂ − h, q)]`` has a closed form through
    ``E[(c − Y)⁺] = (c − μ)Φ((c − μ)/σ) + σ φ((c − μ)/σ)``.  Only a starting point: the planner's
    numbers are the exact sums.
    """
    return _model_half_width(n, p, q, z_)


@functools.lru_cache(maxsize=8192)
def _model_half_width(n: float, p: float, q: float, z_: float) -> tuple[float, float]:
    from scipy.special import ndtr  # imported when first needed: a cached plan needs no scipy

    lam = np.linspace(q, p, _MODEL_GRID)
    sigma = np.sqrt(np.maximum(lam * (1 - lam), 1e-300) / n)
    half = z_ * sigma

    def positive_part(mean):  # E[(Y)⁺] for Y ~ N(mean, sigma²)
        t = np.clip(mean / sigma, -40.0, 40.0)
        return mean * ndtr(t) + sigma * np.exp(-0.5 * t * t) / math.sqrt(2 * math.pi)

    upper = p - positive_part(p - (lam + half))  # E[min(λ̂ + h, p)]
    lower = q + positive_part((lam - half) - q)  # E[max(λ̂ − h, q)]
    width = (upper - lower) / (p - q)
    i = int(np.argmax(width))
    return float(width[i] / 2), float(lam[i])


def _window(n: int, lam: np.ndarray, sd: float) -> tuple[np.ndarray, np.ndarray]:
    """The counts ``[lo, hi]`` within ``nλ ± (sd·σ + sd)``, clipped to 0..n (as :func:`.evaluation.window`)."""
    spread = sd * np.sqrt(n * lam * (1 - lam)) + sd
    lo = np.clip(np.floor(n * lam - spread), 0, n).astype(np.int64)
    hi = np.clip(np.ceil(n * lam + spread), 0, n).astype(np.int64)
    return lo, hi


BLOCK = 64  # densities by the ratio of neighbours run at most this far from a kernel call


def _window_densities(n: np.ndarray, lam: np.ndarray, first: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``b(x; n_i, λ_i)`` for the counts ``first_i … first_i + sizes_i − 1`` of each window i, the
    windows one after another in one array.

    Each window is cut into blocks of ``BLOCK`` counts.  A block's density at the window's mode
    (or at the block's count nearest it) comes from the binomial kernel (:func:`.binomial.pmf_kernel`,
    Boost's), the others from the ratio of neighbours ``b(x + 1)/b(x) = (n − x)/(x + 1) · λ/(1 − λ)``
    by a running product (Johnson, Kemp & Kotz, *Univariate Discrete Distributions*, 3rd ed.,
    sec. 3.2): three floating operations a count instead of a kernel call, each product adding
    one rounding.  Against 60-digit decimal arithmetic they are as accurate as the kernel itself:
    at most 7e-14 (relative) against the kernel's 1.5e-13 at n = 17,831, 2.4e-13 against 3.5e-13
    at 250,000 (``tests/unit/test_plan_batch.py``).  The blocks depend on a window's own first
    count and size, so a batch of windows gives every window the numbers it has alone.  A block whose λ is 0 or 1 (asked directly, at π = 0 or 1), or whose
    products leave the floating-point range, takes the kernel's numbers throughout.
    """
    blocks = -(-sizes // BLOCK)
    offset = np.arange(int(blocks.sum())) - np.repeat(np.cumsum(blocks) - blocks, blocks)
    size = np.minimum(BLOCK, np.repeat(sizes, blocks) - offset * BLOCK)
    return _block_densities(np.repeat(n, blocks), np.repeat(lam, blocks), np.repeat(first, blocks) + offset * BLOCK,
                            size)


def _block_densities(n: np.ndarray, lam: np.ndarray, first: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """:func:`_window_densities` of windows of at most ``BLOCK`` counts: one kernel call each."""
    kernel = pmf_kernel()
    starts = np.cumsum(sizes) - sizes
    counts = (np.arange(int(sizes.sum())) + np.repeat(first - starts, sizes)).astype(float)
    if kernel is None:  # pragma: no cover - every scipy this project supports has it
        return binom_pmf(counts.astype(np.int64), np.repeat(n, sizes).astype(np.int64), np.repeat(lam, sizes))
    column = np.arange(int(sizes.max()))
    inside = column[None, :] < sizes[:, None]
    x = first[:, None] + column[None, :]  # the counts, row by row (beyond a block's end: unused)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        ratio = np.where(inside, (n[:, None] - x) / (x + 1.0) * (lam / (1.0 - lam))[:, None], 1.0)  # b(x + 1)/b(x)
        running = np.ones(ratio.shape)
        np.cumprod(ratio[:, :-1], axis=1, out=running[:, 1:])  # b(first + j)/b(first)
        mode = np.clip(np.floor((n + 1) * lam), first, first + sizes - 1)
        anchor = kernel(mode, n.astype(float), lam)
        dense = anchor[:, None] * (running / running[np.arange(sizes.size), (mode - first).astype(np.int64)][:, None])
    odd = ~((lam > 0.0) & (lam < 1.0)) | ~np.isfinite(np.where(inside, dense, 0.0)).all(axis=1)
    out = dense[inside]
    if odd.any():  # the kernel's own numbers
        full = np.repeat(odd, sizes)
        out[full] = kernel(counts[full], np.repeat(n, sizes)[full].astype(float), np.repeat(lam, sizes)[full])
    return np.clip(out, 0, 1)


class _Sums:
    """The expected half-widths at one n: its own belt, and the widths of a range of counts kept."""

    def __init__(self, n: int, p: float, q: float, confidence: float):
        from .exact import Belt

        self.n, self.p, self.q = n, p, q
        self.belt = Belt(n, q, p, confidence)
        self.first, self.width = 0, np.zeros(0)  # the widths of counts first, first + 1, …

    def window(self, pi: np.ndarray) -> np.ndarray:
        """The counts whose widths :meth:`half_widths` at ``pi`` sums (to fill the belt beforehand)."""
        lo, hi = _window(self.n, self.q + (self.p - self.q) * pi, PLAN_WINDOW_SD)
        return np.arange(int(lo.min()), int(hi.max()) + 1)

    def _widths(self, first: int, last: int) -> None:
        """Make sure the widths of the counts ``first..last`` are kept (the belt fills what it lacks)."""
        if first < self.first or last >= self.first + self.width.size:  # else: a range already summed
            p, q = self.p, self.q
            low, high = self.belt.interval(np.arange(first, last + 1))
            self.first, self.width = first, (np.clip(high, q, p) - np.clip(low, q, p)) / (p - q)

    def half_widths(self, pi: np.ndarray) -> np.ndarray:
        """Exact expected half-widths of the exact interval at each π (upper bounds, see the notes):
        :func:`_half_width_many` at each π of this n, in one batch, the widths of all their windows'
        counts kept first (the belt filled once, as for any range of counts)."""
        pi = np.asarray(pi, dtype=float)
        lo, hi = _window(self.n, self.q + (self.p - self.q) * pi, PLAN_WINDOW_SD)
        self._widths(int(lo.min()), int(hi.max()))
        return np.array(_half_width_many([(self, float(x)) for x in pi]))

    def half_width(self, pi: float) -> float:
        """:meth:`half_widths` at one π: :func:`_half_width_many` for this n alone."""
        return _half_width_many([(self, pi)])[0]


def _half_width_many(items) -> list[float]:
    """The expected half-width at one π for each ``(sums, π)`` (one n or several, one π or several
    each): the belts' missing ends in one batch (:func:`.exact.fill_belts`), both tails of every
    window in one incomplete-beta call and every window's densities in one :func:`_window_densities`
    (each window's numbers its own, so each value is the one computed alone)."""
    from .exact import fill_belts, survival

    jobs, fills = [], {}
    for sums, pi in items:
        n, p, q = sums.n, sums.p, sums.q
        lam = q + (p - q) * pi
        spread = PLAN_WINDOW_SD * math.sqrt(n * lam * (1 - lam)) + PLAN_WINDOW_SD
        a = min(max(math.floor(n * lam - spread), 0), n)
        last = min(max(math.ceil(n * lam + spread), 0), n)
        if a < sums.first or last >= sums.first + sums.width.size:
            fills.setdefault(sums.belt.confidence, []).append((sums.belt, np.arange(a, last + 1)))
        jobs.append((sums, lam, a, last))
    for requests in fills.values():
        fill_belts(requests)
    spans = {}  # each n's counts to keep widths of: the union of its windows, however many π it has here
    for sums, _, a, last in jobs:
        _, first, end = spans.get(id(sums), (sums, a, last))
        spans[id(sums)] = (sums, min(first, a), max(end, last))
    for sums, first, end in spans.values():
        sums._widths(first, end)
    ns = np.array([sums.n for sums, *_ in jobs])
    lams = np.array([lam for _, lam, _, _ in jobs])
    firsts = np.array([a for _, _, a, _ in jobs])
    sizes = np.array([last + 1 - a for _, _, a, last in jobs])
    ends = np.array([[a - 1.0, float(last)] for _, _, a, last in jobs]).ravel()
    tails = survival(ends, np.repeat(ns, 2), np.repeat(lams, 2)).reshape(-1, 2)
    pmf = _window_densities(ns, lams, firsts, sizes)
    starts = (np.cumsum(sizes) - sizes).tolist()
    return [float(pmf[s:s + size] @ sums.width[a - sums.first:last + 1 - sums.first] + ((1.0 - tail[0]) + tail[1])) / 2
            for (sums, _, a, last), s, size, tail in zip(jobs, starts, sizes.tolist(), tails)]


GOLDEN_AHEAD = 2  # with one or two searches, a golden-section batch holds the points the next 3 steps may ask for
_RATIO = (math.sqrt(5) - 1) / 2


def _golden_resume(state, known: dict):
    """Golden-section search for a maximum (Kiefer 1953) resumed at ``state = (a, b, c, d, f(c), f(d), steps
    left)`` (None: a value not known yet) with the values known (``{x: f(x)}``): ``((x, f(x)), None)`` at the
    better of the last two points once every value it needs is known, else ``(None, state)`` where one lacks."""
    a, b, c, d, fc, fd, left = state
    fc, fd = known.get(c) if fc is None else fc, known.get(d) if fd is None else fd
    while fc is not None and fd is not None and left:
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - _RATIO * (b - a)
            fc = known.get(c)
        else:
            a, c, fc = c, d, fd
            d = a + _RATIO * (b - a)
            fd = known.get(d)
        left -= 1
    if fc is None or fd is None:
        return None, (a, b, c, d, fc, fd, left)
    return ((c, fc) if fc >= fd else (d, fd)), None


def _golden_ahead(state, depth: int, out: dict) -> None:
    """Into ``out``: the points a search stopped at ``state`` lacks (c, then d), and those the next
    ``depth`` steps would ask for, each outcome of a comparison not yet known followed."""
    a, b, c, d, fc, fd, left = state
    out.update((x, None) for x, fx in ((c, fc), (d, fd)) if fx is None and x not in out)
    for keep_left in ((fc >= fd,) if fc is not None and fd is not None else (True, False))[:depth and left and 2]:
        if keep_left:  # _golden_resume's assignments, so the same floating-point points
            _golden_ahead((a, d, d - _RATIO * (d - a), c, None, fc, left - 1), depth - 1, out)
        else:
            _golden_ahead((c, b, d, c + _RATIO * (b - c), fd, None, left - 1), depth - 1, out)


def _kept(sums, pi: float) -> bool:
    """Whether the window of π lies within the counts whose widths ``sums`` keeps (as :func:`_half_width_many` decides)."""
    n, lam = sums.n, sums.q + (sums.p - sums.q) * pi
    spread = PLAN_WINDOW_SD * math.sqrt(n * lam * (1 - lam)) + PLAN_WINDOW_SD
    a, last = min(max(math.floor(n * lam - spread), 0), n), min(max(math.ceil(n * lam + spread), 0), n)
    return sums.first <= a and last < sums.first + sums.width.size


def _golden_max_many(jobs, ahead: int = GOLDEN_AHEAD) -> list[tuple[float, float]]:
    """The golden-section maximum of :meth:`_Sums.half_width` on [a, b] for each ``(sums, a, b)``, side by
    side: each batch (:func:`_half_width_many`) holds each search's next point and, ``ahead`` steps deep,
    those each outcome of its comparisons would ask for, so that a batch advances a search ``ahead + 1``
    steps.  Each value is the one computed alone (a window's numbers are its own) and the steps are the
    same, so is the maximum.  A point whose window reaches a count whose width is not kept is evaluated
    only when next, alone, so that the belt is filled with the same counts, in the same batches, as then."""
    known, out, live = [{} for _ in jobs], [None] * len(jobs), list(range(len(jobs)))
    states = [(a, b, b - _RATIO * (b - a), a + _RATIO * (b - a), None, None, 24) for _, a, b in jobs]
    while live:
        items, still, depth = [], [], ahead if len(live) <= 2 else 0  # more searches share a batch's cost
        for i in live:
            out[i], states[i] = _golden_resume(states[i], known[i])
            if out[i] is not None:
                continue
            _, _, c, d, fc, fd, _ = states[i]
            points = [c if fc is None else d]  # the next point, and the points looked ahead at if they fill nothing
            if (depth or fc is None and fd is None) and _kept(jobs[i][0], points[0]):
                wanted = dict.fromkeys(points)
                _golden_ahead(states[i], depth, wanted)
                points += [x for x in list(wanted)[1:] if x not in known[i] and _kept(jobs[i][0], x)]
            items += [(jobs[i][0], x) for x in points]
            still.append((i, points))
        values = iter(_half_width_many(items) if items else ())
        for i, points in still:
            known[i].update(zip(points, values))
        live = [i for i, _ in still]
    return out


class _Memo:
    """A function's results kept in memory, the least recently used dropped beyond ``maxsize``
    (as :func:`functools.lru_cache`, with ``cache_clear``), which can also be looked into
    (:meth:`get`) and filled (:meth:`put`) by the batches that compute several at once."""

    def __init__(self, function, maxsize: int):
        functools.update_wrapper(self, function)
        self.function, self.maxsize = function, maxsize
        self.data: OrderedDict = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple):
        with self.lock:
            if key in self.data:
                self.data.move_to_end(key)
                return self.data[key]
        return None

    def put(self, key: tuple, value) -> None:
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.maxsize:
                self.data.popitem(last=False)

    def __call__(self, *key):
        found = self.get(key)
        if found is None:
            found = self.function(*key)
            self.put(key, found)
        return found

    def cache_clear(self) -> None:
        with self.lock:
            self.data.clear()


def _worst_case_file(n: int, p: float, q: float, confidence: float) -> Path | None:
    return cache_file("worst-case", (p, q, confidence), str(int(n)))


def _read_worst_case(path: Path | None) -> tuple[float, float] | None:
    found = read_entry(path)
    if found is not None and len(found) == 2 and all(is_unit(v) for v in found):
        return found[0], found[1]
    return None


def _worst_case_uncached(n: int, p: float, q: float, confidence: float) -> tuple[float, float]:
    """``(h(n), worst π)`` for the exact interval (see the module notes), from the disk cache if there."""
    path = _worst_case_file(n, p, q, confidence)
    found = _read_worst_case(path)
    if found is not None:
        return found
    value, pi = _compute_worst_case(n, p, q, confidence)
    write_entry(path, [value, pi])
    return value, pi


_worst_case = _Memo(_worst_case_uncached, 4096)


def _worst_cases(keys) -> dict:
    """``(h(n), worst π)`` for each ``(n, p, q, confidence)`` key: from memory, else from the disk
    cache, else computed — all those missing in one batch (:func:`_compute_worst_cases`)."""
    out, todo = {}, []
    for key in dict.fromkeys(keys):
        found = _worst_case.get(key)
        if found is None:
            found = _read_worst_case(_worst_case_file(*key))
        if found is None:
            todo.append(key)
        else:
            out[key] = found
            _worst_case.put(key, found)
    for key, value in zip(todo, _compute_worst_cases(todo)):
        write_entry(_worst_case_file(*key), list(value))
        _worst_case.put(key, value)
        out[key] = value
    return out


def _compute_worst_case(n: int, p: float, q: float, confidence: float) -> tuple[float, float]:
    return _compute_worst_cases([(n, p, q, confidence)])[0]


def _grid(n: int, p: float, q: float, confidence: float) -> np.ndarray:
    """The π where h(n)'s maximum is looked for first (module notes)."""
    if n <= FULL_GRID_N:
        return np.linspace(0.0, 1.0, 201)
    _, lam0 = model_half_width(n, p, q, z(confidence))
    reach = 4 * math.sqrt(n * lam0 * (1 - lam0)) / (n * (p - q))  # four sd, in π units
    centre = (lam0 - q) / (p - q)
    return np.linspace(max(0.0, centre - reach), min(1.0, centre + reach), 41)


def _compute_worst_cases(keys) -> list[tuple[float, float]]:
    """``(h(n), worst π)`` for several ``(n, p, q, confidence)`` at once.

    The belts of all of them are filled over their grids' windows in one batch
    (:func:`.exact.fill_belts`: each end the one its own belt alone gives, bit for bit), then
    each is summed and refined on its own, exactly as alone.
    """
    if not keys:
        return []
    from .exact import fill_belts

    jobs = [(_Sums(n, p, q, confidence), _grid(n, p, q, confidence)) for n, p, q, confidence in keys]
    for level in dict.fromkeys(key[3] for key in keys):
        fill_belts([(sums.belt, sums.window(grid)) for (sums, grid), key in zip(jobs, keys) if key[3] == level])
    best, brackets = [], []
    for sums, grid in jobs:
        values = sums.half_widths(grid)
        i = int(np.argmax(values))
        step = grid[1] - grid[0]
        best.append((float(grid[i]), values[i]))
        brackets.append((sums, max(0.0, grid[i] - step), min(1.0, grid[i] + step)))
    out = []
    for (pi, value), (at, top), key in zip(_golden_max_many(brackets), best, keys):
        if value < top:
            pi, value = at, float(top)
        out.append((float(value), _below_mirror(float(pi), key[1], key[2])))
    return out


def _below_mirror(pi: float, p: float, q: float) -> float:
    """The worst π, as its mirror ``1 − π`` when that is below ½ and the channel is its own mirror.

    When ``1 − p = q`` (a yes/no question, or one asked directly) the belt is symmetric and
    ``w(π) = w(1 − π)``: a worst case off ½ has a twin as bad, up to rounding, and which of the two
    the search ends on depends on the last bits of the sums.  Reporting the one at or below ½
    makes the answer the same whichever it is."""
    if 1.0 - p == q and 1.0 - q == p and pi > 0.5:
        return 1.0 - pi
    return pi


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise FieldError(f"n must be a positive integer, got {n!r}", "n")
    if n > MAX_N:
        raise FieldError(f"n must be at most {MAX_N:,}, got {n!r}", "n")
    return int(n)


def worst_case(epsilon, k, n, *, confidence=0.95) -> WorstCase:
    """Return the exact interval's worst-case (over π) expected half-width at n, and its π.

    Parameters
    ----------
    epsilon : float or None
        Declared ε; None means asked directly (``p = 1, q = 0``), the no-privacy baseline.
    k : int
        Number of options.
    n : int
        Number of respondents (1 to 10⁹).
    confidence : float, default 0.95

    Returns
    -------
    WorstCase
        ``half_width`` is ``max_π ½ Σ_x b(x; n, λ)(ci_high(x) − ci_low(x))``, summed exactly
        (module notes), and ``worst_pi`` the π where the maximum is.

    Examples
    --------
    >>> w = worst_case(1.0, 2, 1000)
    >>> round(w.half_width, 4), round(w.worst_pi, 2)
    (0.0672, 0.5)
    """
    mech = resolve(k, epsilon)
    n = _check_n(n)
    confidence = check_confidence(confidence)
    value, pi = _worst_case(n, mech.p, mech.q, confidence)
    return WorstCase(n=n, half_width=value, worst_pi=pi, confidence=confidence)


def worst_cases(requests, *, confidence=0.95) -> list[WorstCase]:
    """:func:`worst_case` for several ``(epsilon, k, n)`` at once: the same numbers, the belts
    not yet known computed in one batch (:func:`.exact.fill_belts`)."""
    confidence = check_confidence(confidence)
    keys = []
    for epsilon, k, n in requests:
        mech = resolve(k, epsilon)
        keys.append((_check_n(n), mech.p, mech.q, confidence))
    values = _worst_cases(keys)
    return [WorstCase(n=key[0], half_width=values[key][0], worst_pi=values[key][1], confidence=confidence)
            for key in keys]


def margin_of_error(epsilon, k, n, *, confidence=0.95) -> float:
    """Return the worst-case (over π) expected half-width of an option's exact interval at n.

    Parameters
    ----------
    epsilon : float or None
        Declared ε; None means asked directly (``p = 1, q = 0``), the no-privacy baseline.
    k : int
        Number of options.
    n : int
        Number of respondents.
    confidence : float, default 0.95

    Notes
    -----
    ``worst_case(epsilon, k, n, confidence).half_width``: the expected half-width of the
    Feldman–Cousins interval summed exactly over the binomial distribution of the count (every
    count within ``nλ ± (7σ + 7)``, the probability outside added in full), maximized over π
    (module notes of :mod:`deniable.estimators.planning`).  Cached per (n, p, q, confidence).

    Examples
    --------
    >>> round(margin_of_error(None, 2, 1000), 3)
    0.031
    """
    return worst_case(epsilon, k, n, confidence=confidence).half_width


def _model_sample_size(margin: float, p: float, q: float, z_: float) -> int:
    """The n where the large-sample model's half-width reaches the margin (a starting point)."""
    low, high = 1, 2
    while model_half_width(high, p, q, z_)[0] > margin and high < MAX_N:
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        if model_half_width(mid, p, q, z_)[0] > margin:
            low = mid
        else:
            high = mid
    return high


def _search(p: float, q: float, margin: float, confidence: float):
    """The search for n (see :func:`plan`), as a generator: it yields ``(n, also)`` for each n whose
    ``(h(n), worst π)`` it needs, is sent them, and returns ``(n, h(n), worst π, h(n − 1))``.  Several
    searches advance together (:func:`_run_searches`), their belts computed in one batch per step.

    ``also`` names the n the search is about to ask for next, computed in the same batch (see
    :func:`_ahead`); it changes which batch a number is computed in, never the number, nor the path.
    """
    z_ = z(confidence)
    # the model, corrected by the exact/model ratio at the last n, puts n within a few respondents
    n = _model_sample_size(margin, p, q, z_)
    trail = []  # the n asked for so far
    for _ in range(8):
        trail.append(n)
        ratio = (yield n, _ahead(trail))[0] / model_half_width(n, p, q, z_)[0]
        guess = _model_sample_size(margin / ratio, p, q, z_)
        if abs(guess - n) <= 1:
            n = guess
            break
        n = guess
    # a bracket: h(below) > margin ≥ h(above), then bisection to adjacent n
    above, below = n, n - 1
    step = max(1, n // 1000)
    while (yield above, ())[0] > margin:
        below, above = above, min(MAX_N, above + step)
        step *= 2
    step = max(1, n // 1000)
    while below >= 1 and (yield below, ())[0] <= margin:
        above, below = below, max(0, below - step)
        step *= 2
    while above - below > 1:
        mid = (above + below) // 2
        if (yield mid, ())[0] <= margin:
            above = mid
        else:
            below = mid
    value, pi = yield above, ()
    return above, value, pi, ((yield above - 1, ())[0] if above > 1 else math.inf)


AHEAD_N = 10_000  # below this n a belt's cost is mostly per-batch overhead: see _ahead
AHEAD_SPAN = 12


def _ahead(trail: list[int]) -> range:
    """The n the model's correction is bound to ask for next, given the n it asked for so far.

    When the correction oscillates with a shrinking swing, each guess between the last two (1799,
    1824, 1815, 1823, 1816, 1822, … for a yes/no question at ε = 1 and a margin of 0.05), every n
    it asks for next lies between the last two: once two swings in a row have shrunk, those n are
    computed in the batch of the last one.  Only below ``AHEAD_N`` and within ``AHEAD_SPAN``
    respondents, where a belt costs mostly the Python and numpy overhead of each round of its
    batch, so that an n computed and then not asked for costs little; above, the incomplete-beta
    evaluations dominate, and nothing is computed ahead.
    """
    if len(trail) < 4:
        return range(0)
    a, b, c, d = trail[-4:]
    if not (min(a, b) < c < max(a, b) and min(b, c) < d < max(b, c)):
        return range(0)
    if max(c, d) > AHEAD_N or abs(c - d) > AHEAD_SPAN:
        return range(0)
    return range(min(c, d) + 1, max(c, d))


def _run_searches(searches, also=()) -> list:
    """Run several ``(generator, p, q, confidence)`` searches together: each is answered at once
    from memory or disk while it can be, and the n they then all wait for, with the n they said
    they would ask for next, are computed in one batch (:func:`_worst_cases`); the worst-case keys
    ``also`` join the first batch.  Returns each search's result."""
    results = [None] * len(searches)
    waiting, ahead = {}, list(also)  # search → the key it waits for; keys computed ahead
    answer = {i: None for i in range(len(searches))}  # what to send next (None: start)
    while answer:
        for i, sent in answer.items():
            generator, p, q, confidence = searches[i]
            try:
                n, also = generator.send(sent)
                while True:  # answer from memory or disk without waiting for the others
                    key = (n, p, q, confidence)
                    known = _worst_case.get(key) or _read_worst_case(_worst_case_file(*key))
                    if known is None:
                        waiting[i] = key
                        ahead.extend((m, p, q, confidence) for m in also)
                        break
                    _worst_case.put(key, known)
                    n, also = generator.send(known)
            except StopIteration as stop:
                results[i] = stop.value
        if not waiting:
            break
        values = _worst_cases(list(waiting.values()) + ahead)
        answer = {i: values[key] for i, key in waiting.items()}
        waiting, ahead = {}, []
    return results


def _plan_uncached(k: int, p: float, q: float, margin: float, confidence: float) -> tuple[int, float, float, float]:
    return _run_searches([(_search(p, q, margin, confidence), p, q, confidence)])[0]


_plan = _Memo(_plan_uncached, 1024)

DECIDED = 0.01  # a decided plan's n is meant to be at most this far (relative) above the smallest n that delivers
DECIDED_AIM = 0.0  # the decided search aims at the margin itself: the trend of h, rescaled by the exact h
DECIDED_TIGHT = 0.004  # and narrows a bracket (an n that fails below one that delivers) to this (relative)


def _decide(p: float, q: float, margin: float, confidence: float):
    """The decided search (see :func:`plans`), as a generator like :func:`_search`: it returns
    ``(n, h(n), worst π, nan)`` with ``h(n) ≤ margin`` computed exactly; h(n − 1) is not computed.

    The large-sample model puts n within a few per cent; the exact h at that n rescales the model
    (the exact/model ratio), and the next n asked for is where the rescaled model reaches the
    margin (the trend of the sawtooth, aimed ``DECIDED_AIM`` below it).  An n that does not deliver
    raises the ratio (the largest seen) and the search climbs above it; an n that fails below one
    that delivers brackets the margin, and h is interpolated linearly between the two until the
    crossing it predicts is within ``DECIDED_TIGHT`` (0.4 %) of the n that delivers.  Typically two
    or three exact h(n) per plan instead of the ten to twenty of :func:`_search`, which ends on the
    edge of a tooth (``h(n) ≤ margin < h(n − 1)``) by bisection.  The n decided here is on the same
    tooth or a nearby one: on the golden grid at most 0.86 % above the frozen n (where the exhaustive
    search found an earlier tooth), the rule being 1 % (``DECIDED``, ``tests/unit/test_plan_golden.py``).
    """
    z_ = z(confidence)
    n = _model_sample_size(margin, p, q, z_)
    value, pi = yield n, ()
    ratio = value / model_half_width(n, p, q, z_)[0]
    best = (n, value, pi) if value <= margin else None  # the smallest n seen to deliver
    failed = (0, math.inf) if best else (n, value)  # the largest n seen not to, and its h
    for _ in range(64):
        aimed = _model_sample_size(margin / (ratio * (1 + DECIDED_AIM)), p, q, z_)
        if best is None:  # climb: above every n that failed
            guess = max(failed[0] + 1, aimed)
        elif failed[0] == 0:  # only n that deliver so far: one more try below, if the model says so
            if aimed >= best[0]:
                break
            guess = aimed
        else:  # a bracket: close it to DECIDED_TIGHT by interpolating h linearly between its ends
            if best[0] - failed[0] <= max(1.0, DECIDED_TIGHT * best[0]):
                break
            (f, hf), (b, hb) = failed, best[:2]
            guess = max(f + 1, f + math.ceil((hf - margin * (1 - DECIDED_AIM)) / (hf - hb) * (b - f)))
            if guess >= b - max(1.0, DECIDED_TIGHT * b):  # the line crosses the margin close to b: b it is
                break
        value, pi = yield guess, ()
        if value <= margin:
            best = (guess, value, pi) if best is None or guess < best[0] else best
        else:
            failed = max(failed, (guess, value))
        ratio = max(ratio, value / model_half_width(guess, p, q, z_)[0]) if value > margin else \
            value / model_half_width(guess, p, q, z_)[0]
    if best is None:  # pragma: no cover - the guesses climb until one delivers
        raise RuntimeError("the decided search did not converge")
    return best[0], best[1], best[2], math.nan


def _decided_uncached(k: int, p: float, q: float, margin: float, confidence: float) -> tuple[int, float, float, float]:
    return _run_searches([(_decide(p, q, margin, confidence), p, q, confidence)])[0]


_decided = _Memo(_decided_uncached, 1024)


def plan(epsilon, k, margin, *, confidence=0.95) -> Plan:
    """Return how many respondents the exact interval needs for ``margin``, and what n delivers.

    Parameters
    ----------
    epsilon : float or None
        Declared ε; None means asked directly.
    k : int
        Number of options.
    margin : float
        Target worst-case expected half-width on the proportion scale, in (0, 0.5).
    confidence : float, default 0.95

    Returns
    -------
    Plan
        ``n`` with ``h(n) ≤ margin < h(n − 1)``, where ``h(n)`` is
        :func:`margin_of_error` — both sides computed exactly — and the worst-case π at n.

    Raises
    ------
    deniable.errors.FieldError
        For a margin outside (0, 0.5), or one that needs more than 10⁹ respondents.

    Notes
    -----
    ``h(n)`` is not monotone: the discreteness of the counts makes it a sawtooth in n, falling
    smoothly and jumping up at some n, by about 0.4 % of h near n = 2,000, 0.25 % near 20,000
    and 0.09 % near 200,000 (the jumps then go down: h is monotone there).  The search follows
    the trend — the large-sample model, rescaled by the exact/model ratio at the current n, then
    a bracket and bisection — so the n returned always delivers (``h(n) ≤ margin``, checked
    exactly) and n − 1 does not; at small n an earlier tooth of the sawtooth may also dip
    below the margin, a few respondents (under 1.5 %) earlier.  Cached per
    (p, q, margin, confidence), in memory and on disk (module notes).

    Examples
    --------
    >>> r = plan(1.0, 2, 0.05)
    >>> r.n, r.half_width <= 0.05 < r.half_width_one_fewer, round(r.worst_pi, 2)
    (1819, True, 0.5)
    """
    return plans([(epsilon, k, margin)], confidence=confidence)[0]


def _read_plan(path: Path | None, margin: float, decided: bool = False) -> tuple | None:
    found = read_entry(path)
    if (found is not None and len(found) == 4 and isinstance(found[0], int) and 1 <= found[0] <= MAX_N
            and is_unit(found[1]) and is_unit(found[2]) and isinstance(found[3], float)
            and (found[1] <= margin and math.isnan(found[3]) if decided else found[1] <= margin < found[3])):
        return tuple(found)
    return None


def plans(requests, *, confidence=0.95, also=(), decided=False) -> list[Plan]:
    """:func:`plan` for several ``(epsilon, k, margin)`` at once: the same numbers.

    The searches run side by side, and at each step the belts they all wait for are computed in
    one batch (:func:`.exact.fill_belts`), which shares the Python and numpy overhead that
    dominates a belt below n ≈ 10,000: ``deniable plan`` asks for every ε and the baseline
    together, the builder's panel for a question's ε and its baseline.  ``also`` takes
    :func:`worst_cases`' ``(epsilon, k, n)`` requests, computed in the searches' first batch (the
    panel's margins at the target n), then answered from memory by :func:`worst_case`.

    Examples
    --------
    >>> [r.n for r in plans([(None, 2, 0.05), (1.0, 2, 0.05)])]
    [392, 1819]

    ``decided=True`` plans by :func:`_decide` instead: n is one whose ``h(n) ≤ margin``, checked
    exactly as always, found with about two exact h(n) per plan rather than ten to twenty, and may
    lie on a tooth of the sawtooth near the exhaustive search's (within ``DECIDED``, 1 %, of the
    smallest n that delivers, on the golden grid); ``half_width_one_fewer`` is then nan (n − 1 is
    not computed).  What ``deniable plan`` and the builder's panel use
    (:func:`deniable.server.survey.planning.plans`); the exhaustive search stays this function's
    default, :func:`plan`'s and the golden file's (``scripts/freeze_plan.py``).
    """
    confidence = check_confidence(confidence)
    memo, search = (_decided, _decide) if decided else (_plan, _search)
    asked, todo = [], {}
    for epsilon, k, margin in requests:
        mech = resolve(k, epsilon)
        if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not 0 < float(margin) < 0.5:
            raise FieldError(f"margin must be a number in (0, 0.5), got {margin!r}", "margin")
        margin = float(margin)
        path = cache_file("plan-decided" if decided else "plan", (mech.p, mech.q, confidence), margin.hex())
        key = (mech.k, mech.p, mech.q, margin, confidence)
        found = memo.get(key) or _read_plan(path, margin, decided)
        if found is None:
            if model_half_width(MAX_N, mech.p, mech.q, z(confidence))[0] > margin:
                raise FieldError(f"margin {margin} needs more than {MAX_N:,} respondents at this epsilon", "margin")
            todo[key] = None
        asked.append((mech, margin, path, key, found))
    keys = list(todo)
    extra = [(_check_n(n), m.p, m.q, confidence) for m, n in ((resolve(k, e), n) for e, k, n in also)]
    done = _run_searches([(search(p, q, margin, level), p, q, level) for _, p, q, margin, level in keys], extra)
    for key, result in zip(keys, done):
        memo.put(key, result)
    out = []
    for mech, margin, path, key, found in asked:
        if found is None:
            found = memo(*key)
            write_entry(path, list(found))
        n, value, pi, before = found
        out.append(Plan(n=n, margin=margin, half_width=value, worst_pi=pi, half_width_one_fewer=before, k=mech.k,
                        epsilon=mech.epsilon, p=mech.p, q=mech.q, confidence=confidence))
    return out


def plan_channel(p: float, q: float, margin: float, *, confidence: float = 0.95, k: int = 2,
                 epsilon: float = math.inf, decided: bool = False) -> Plan:
    """:func:`plan` for a count that is Binomial(n, λ) with ``λ = q + (p − q)π`` for any ``0 ≤ q < p ≤ 1``
    — a randomized-response design's report (:func:`deniable.estimators.designs.plan_design`), whose
    ``p + q`` need not be 1.  The same searches (``decided`` as :func:`plans`') and the same cache, keyed by
    ``(p, q, confidence)`` and the margin exactly as :func:`plan`'s; ``k`` and ``epsilon`` are only carried
    to the result."""
    p, q = float(p), float(q)
    if not 0 <= q < p <= 1:
        raise FieldError(f"a report's probabilities must satisfy 0 <= q < p <= 1, got p = {p}, q = {q}")
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not 0 < float(margin) < 0.5:
        raise FieldError(f"margin must be a number in (0, 0.5), got {margin!r}", "margin")
    confidence = check_confidence(confidence)
    margin = float(margin)
    path = cache_file("plan-decided" if decided else "plan", (p, q, confidence), margin.hex())
    found = _read_plan(path, margin, decided)
    if found is not None:
        n, value, pi, before = found
    else:
        if model_half_width(MAX_N, p, q, z(confidence))[0] > margin:
            raise FieldError(f"margin {margin} needs more than {MAX_N:,} respondents with this design", "margin")
        n, value, pi, before = (_decided if decided else _plan)(k, p, q, margin, confidence)
        write_entry(path, [n, value, pi, before])
    return Plan(n=n, margin=margin, half_width=value, worst_pi=pi, half_width_one_fewer=before, k=k,
                epsilon=epsilon, p=p, q=q, confidence=confidence)


def worst_case_channel(p: float, q: float, n: int, *, confidence: float = 0.95) -> WorstCase:
    """:func:`worst_case` for a report with probability ``q + (p − q)π`` (:func:`plan_channel`)."""
    n = _check_n(n)
    confidence = check_confidence(confidence)
    value, pi = _worst_case(n, float(p), float(q), confidence)
    return WorstCase(n=n, half_width=value, worst_pi=pi, confidence=confidence)


def sample_size(epsilon, k, margin, *, confidence=0.95) -> int:
    """Return the respondents the exact interval needs for a worst-case expected half-width ≤ ``margin``.

    ``plan(epsilon, k, margin, confidence).n`` (see :func:`plan` for the worst-case π, the
    half-widths at n and n − 1, and how n is found).

    Examples
    --------
    >>> sample_size(None, 2, 0.05)
    392
    """
    return plan(epsilon, k, margin, confidence=confidence).n
