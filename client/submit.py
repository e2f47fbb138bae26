"""Answer a survey from Python: randomize protected answers locally, then POST the reports.

Only the randomized reports leave this process (docs/design.md, invariant 1); they are drawn from
the operating system's CSPRNG by :func:`deniable.client.randomize`.  To retry after a network error,
re-send the *same* reports with :func:`post_reports` rather than calling :func:`submit` again:
fresh draws for the same answer would, averaged, reveal it (invariant 3).

>>> submit("http://127.0.0.1:8000", "demo", {"drug_use": 1, "cheating": 0})   # doctest: +SKIP
'k3bq0Vw2mXJ9R1tA'
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from .mechanism import MechanismError, check_option
from .designs import Design
from .randomizer import randomize, randomize_design

TIMEOUT = 10.0


class SubmitError(RuntimeError):
    """The server refused the request or could not be reached; the message says why."""

    def __init__(self, message: str, status: int | None = None, field: str | None = None):
        super().__init__(message)
        self.status = status
        self.field = field


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


def fetch_mechanisms(base_url: str, slug: str, *, timeout: float = TIMEOUT) -> dict[str, tuple[int, float | None]]:
    """Return ``{qid: (k, epsilon)}`` from the survey's published design (ε None = asked directly; a
    question with a randomized-response design: ``(k, Design)``, sampled from its integer weights)."""
    url = f"{base_url.rstrip('/')}/api/v1/surveys/{slug}"
    design = _request(urllib.request.Request(url, headers={"Accept": "application/json"}), timeout)
    return {q["id"]: (q["k"], published_design(q) if "weights" in q else q.get("epsilon")) for q in design["questions"]}


def published_design(q: dict) -> Design:
    """A question's randomized-response design as the API publishes it: the integer weights it samples."""
    weights = tuple(tuple(int(w) for w in row) for row in q["weights"])
    return Design(name=q["design"]["name"], params=(), weights=weights, reports=tuple(q["options"]))


def make_reports(answers: dict[str, int], mechanisms: dict[str, tuple[int, float | None]]) -> dict[str, int]:
    """Randomize each protected answer once (OS CSPRNG); direct answers are passed through."""
    reports = {}
    for qid, value in answers.items():
        if qid not in mechanisms:
            raise ValueError(f"{qid}: not a question of this survey")
        k, epsilon = mechanisms[qid]
        try:
            value = check_option(value, k)
        except MechanismError as exc:
            raise ValueError(f"{qid}: answer {exc}") from None
        if isinstance(epsilon, Design):  # a design (ε-LDP or not) always randomizes, with its own weights
            reports[qid] = int(randomize_design([value], epsilon)[0])
            continue
        reports[qid] = value if epsilon is None else int(randomize([value], k, epsilon)[0])
    return reports


def post_reports(base_url: str, slug: str, reports: dict[str, int], *, timeout: float = TIMEOUT) -> str:
    """POST already-randomized ``reports`` to the JSON API; return the stored response's (random) id."""
    url = f"{base_url.rstrip('/')}/api/v1/surveys/{slug}/responses"
    body = json.dumps({"reports": reports}).encode()
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json", "Accept": "application/json"})
    return str(_request(req, timeout)["id"])


def submit(base_url: str, slug: str, answers: dict[str, int],
           mechanisms: dict[str, tuple[int, float | None]] | None = None, *, timeout: float = TIMEOUT) -> str:
    """Randomize ``answers`` ``{qid: option index}`` and submit them; return the response id.

    ``mechanisms`` ``{qid: (k, epsilon)}`` must be the survey's own; by default it is fetched
    from ``/api/v1/surveys/<slug>``.
    """
    if mechanisms is None:
        mechanisms = fetch_mechanisms(base_url, slug, timeout=timeout)
    return post_reports(base_url, slug, make_reports(answers, mechanisms), timeout=timeout)
