"""The methods report as HTML: the same file for ``deniable report`` and ``GET /dashboard/SLUG/report``.

The numbers are the results page's own (:func:`.results.question_results` on the stored counts, at the
page's default method and confidence unless asked otherwise), the words and accounting
:mod:`deniable.server.survey.report`'s.  It is rendered by a Jinja environment of its own, with the
dashboard's number filters (:mod:`.formatting`) and nothing from a request, so the command line (no
app) and the dashboard write the same bytes.  The file is self-contained: its one stylesheet is
inline, its charts are inline SVG, and its own Content-Security-Policy (a ``<meta>``, and the
route's header) allows nothing else: no request leaves the page.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

import jinja2
from markupsafe import Markup

from deniable.server.store.surveys import StoredSurvey, survey_stats, today
from deniable.server.survey.report import report_context

from ..paths import TEMPLATES
from . import formatting
from .results import question_results, respondents_from_counts

STYLESHEET = "report.css"
TEMPLATE = "report.html"


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True)
    for function in formatting.FILTERS:  # the dashboard's own number filters
        env.filters[function.__name__] = function
    return env


def content_security_policy(style: str) -> str:
    """The report's policy: nothing but its own inline stylesheet (by hash) and inline images (the file's
    ``<meta>``; the route's header adds ``frame-ancestors``, which a ``<meta>`` cannot carry)."""
    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode()
    return f"default-src 'none'; style-src 'sha256-{digest}'; img-src data:; base-uri 'none'; form-action 'none'"


def _version() -> str:
    try:
        return version("deniable")
    except PackageNotFoundError:  # a checkout run without installing
        return "(development)"


def render_report(db, stored: StoredSurvey, *, method: str = "exact", confidence: float = 0.95) -> tuple[str, str]:
    """``(html, policy)``: the methods report of ``stored`` from the database ``db``, and the
    Content-Security-Policy header to serve it with."""
    stats = survey_stats(db, stored)
    n = respondents_from_counts(db, stored, stats)
    items = question_results(stored.survey, stats, method=method, confidence=confidence, simultaneous=False)
    context = report_context(stored, stored.survey, items=items, n=n, made_on=today(), method=method,
                             confidence=confidence, version=_version())
    env = _environment()
    style = env.loader.get_source(env, STYLESHEET)[0]
    policy = content_security_policy(style)
    html = env.get_template(TEMPLATE).render(style=Markup(style), policy=policy, **context)
    return html, f"{policy}; frame-ancestors 'none'"
