"""One error family (issue 37): every public exception class of the project derives from
:class:`deniable.errors.DeniableError`, and the estimators — the public API — refuse their input
with :class:`~deniable.errors.FieldError` naming the argument, never a bare ValueError.

The walk imports every module of the four packages (``deniable``, ``deniable.client``,
``deniable.estimators``, ``deniable.server``) and reads the exception classes each defines, so a
class is found whatever its name or base; only the ones below stay outside, each for its reason.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

from deniable.errors import DeniableError, FieldError

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("deniable", "deniable.client", "deniable.estimators", "deniable.server")
# Public exception classes that are not refusals of input, with the reason they stay outside the family.
OUTSIDE = {
    "deniable.server.web.ratelimit.RateLimited": "a werkzeug HTTPException (429), answered by Flask's own mechanism",
    "deniable.server.web.ratelimit_storage.LocalFallback": "an internal signal of the rate limiter's storage",
}
# DeniableErrors that are not ValueErrors, with the reason (every other one is, for callers that catch that).
NOT_VALUE_ERRORS = {
    "deniable.errors.DeniableError": "the root: its subclasses choose",
    "deniable.client.submit.SubmitError": "a transport failure, a RuntimeError as it always was (no bad input)",
}


def exception_classes():
    """``(qualified name, class)`` of every exception class defined in a module of the project."""
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        names = [package_name, *(m.name for m in pkgutil.walk_packages(package.__path__, f"{package_name}."))]
        for name in names:
            module = importlib.import_module(name)
            for attr, value in vars(module).items():
                if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == name \
                        and value.__name__ == attr:
                    yield f"{name}.{attr}", value


def test_every_public_exception_class_derives_from_deniable_error():
    found = dict(exception_classes())
    assert len(found) >= 30 and "deniable.estimators.weights.SamplingDesignError" in found
    public = {name: cls for name, cls in found.items() if not name.rsplit(".", 1)[1].startswith("_")}
    outside = sorted(name for name, cls in public.items() if not issubclass(cls, DeniableError))
    assert outside == sorted(OUTSIDE)
    not_value_errors = sorted(name for name, cls in public.items()
                              if issubclass(cls, DeniableError) and not issubclass(cls, ValueError))
    assert not_value_errors == sorted(NOT_VALUE_ERRORS)


def bare_value_errors(folder: Path, root: Path = ROOT):
    """``path:line`` of every ``raise ValueError`` / ``raise ValueError(…)`` in the folder's modules."""
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id == "ValueError":
                    yield f"{path.relative_to(root)}:{node.lineno}"


def test_the_estimators_raise_no_bare_value_error():
    assert list(bare_value_errors(ROOT / "estimators")) == []


def test_the_scan_finds_a_bare_value_error(tmp_path):
    (tmp_path / "m.py").write_text("def f(x):\n    if x:\n        raise ValueError(\n            'no')\n"
                                   "    if x > 1:\n        raise ValueError\n    raise FieldError('no', 'x')\n")
    assert list(bare_value_errors(tmp_path, tmp_path)) == ["m.py:3", "m.py:6"]


def _estimate(**kwargs):
    from deniable.estimators import estimate

    return estimate(**{"counts": [700, 300], "epsilon": 1.0, **kwargs})


def _plan(margin):
    from deniable.estimators import plan

    return plan(1.0, 2, margin)


def _monitor(tuned_for):
    from deniable.estimators import monitor

    return monitor([700, 300], 1.0, tuned_for=tuned_for)


def _design_counts(counts):
    from deniable.client.designs import warner
    from deniable.estimators import estimate_design

    return estimate_design(counts, warner(0.75))


@pytest.mark.parametrize("call, field, message", [
    (lambda: _estimate(confidence=2), "confidence", "confidence must be a number in (0, 1), got 2"),
    (lambda: _estimate(counts=[700, -1]), "counts", "counts must contain non-negative integers, got a negative count"),
    (lambda: _estimate(counts=[[1, 2], [3]]), "counts", "counts must be a 1-d array of non-negative integers"),
    (lambda: _estimate(method="bayes"), "method",
     "method must be one of exact, likelihood, wilson, clopper-pearson, wald; got 'bayes'"),
    (lambda: _estimate(simultaneous="yes"), "simultaneous", "simultaneous must be True or False, got 'yes'"),
    (lambda: _plan(0.7), "margin", "margin must be a number in (0, 0.5), got 0.7"),
    (lambda: _monitor(0), "tuned_for", "tuned_for must be a whole number of respondents >= 1, got 0"),
    (lambda: _design_counts([1, 2, 3]), "counts",
     "counts must be 2 non-negative integers (one per report), got [1, 2, 3]"),
])
def test_an_estimator_refuses_with_a_field_error_naming_the_argument(call, field, message):
    with pytest.raises(FieldError) as caught:
        call()
    assert str(caught.value) == message and caught.value.field == field
    assert isinstance(caught.value, ValueError)  # callers that catch ValueError keep working


def test_one_design_error_and_the_sampling_designs_own():
    from deniable.client import designs
    from deniable.client.mechanism import MechanismError
    from deniable.estimators import weights

    assert issubclass(designs.DesignError, MechanismError)  # a randomized-response design's
    assert issubclass(weights.SamplingDesignError, FieldError) and weights.SamplingDesignError is not designs.DesignError
    # the old name, kept for code outside the repository (public module); not exported by __all__
    assert weights.DesignError is weights.SamplingDesignError and "DesignError" not in weights.__all__
    with pytest.raises(weights.DesignError) as caught:
        weights.survey_design([1.0, -1.0])
    assert caught.value.field == "weights"


def test_a_submit_error_is_a_deniable_error_and_still_a_runtime_error():
    from deniable.client.submit import SubmitError

    error = SubmitError("HTTP 400: cheating: an answer is required", 400, "cheating")
    assert isinstance(error, DeniableError) and isinstance(error, RuntimeError) and not isinstance(error, ValueError)
    assert (str(error), error.status, error.field) == ("HTTP 400: cheating: an answer is required", 400, "cheating")


def test_the_monitoring_series_leaves_a_refused_day_blank_and_lets_a_bug_through(monkeypatch):
    """The server catches an estimator's refusal (a DeniableError), not every ValueError: one of its
    own would be a bug, and is not shown as a day that "cannot be estimated yet"."""
    import numpy as np

    from deniable.server.survey import questions
    from deniable.server.survey.definition import parse_question

    qtype = questions.get("list")
    q = parse_question({"id": "q", **qtype.examples()[0][0]})
    stats = qtype.stats(q, np.array([], dtype=np.int64), np.array([], dtype=np.int64))

    def refuse(*args, **kwargs):
        raise FieldError("each arm needs 5 non-negative report counts (counts 0..4)")

    monkeypatch.setattr(qtype, "estimate", refuse)
    path = qtype.monitor_series(q, ["2024-05-01"], [stats], confidence=0.95, tuned_for=100)
    assert path["series"] == [] and path["n"] == [0]

    def bug(*args, **kwargs):
        raise ValueError("not an estimator's refusal")

    monkeypatch.setattr(qtype, "estimate", bug)
    with pytest.raises(ValueError, match="not an estimator's refusal"):
        qtype.monitor_series(q, ["2024-05-01"], [stats], confidence=0.95, tuned_for=100)


def test_one_invitation_error():
    """A colleague's invitation link and a respondent's invitation token are refused by one family."""
    from deniable.server.store.accounts import InviteError
    from deniable.server.store.invitations import InvitationError

    assert issubclass(InviteError, InvitationError)
    assert InviteError().field == InvitationError("x").field == "invitation"
    assert str(InviteError()).startswith("invitation: this link is not valid")
