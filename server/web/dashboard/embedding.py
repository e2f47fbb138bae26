"""The "Use in another survey tool" page: what ``deniable embed`` prints, for one survey, on its dashboard.

``GET /dashboard/<slug>/embed?platform=P`` shows the embed this deniable serves (its address and each
file's subresource-integrity hash, the ``<script>`` tag that pins it), the survey's design document
(``deniable embed design``) and the recipe for one platform — SurveyJS, oTree, Qualtrics, LimeSurvey or
REDCap — with its codebook (``deniable embed recipe P``), each in a box with a copy button, and what
the embedded randomizer guarantees and what it does not.  The texts are those of
:mod:`deniable.server.survey.recipes`, the functions the command line calls, with the embed's address
on this server.  An unknown platform is a 400 that names the field; a researcher without a role on
the survey gets a 404 (:func:`.permissions.survey_for`).  Nothing is stored.
"""

from __future__ import annotations

import json

from flask import Blueprint, render_template, request, url_for

from deniable.client.embed import NAME, current, integrity
from deniable.server.survey.platform_exports import PlatformExportError
from deniable.server.survey.readers import SOURCES
from deniable.server.survey.recipes import RECIPE_PLATFORMS, design_document, embeddable, recipe

from .permissions import survey_for

bp = Blueprint("embedding", __name__, url_prefix="/dashboard")

LABELS = {name: source.label for name, source in SOURCES.items()}  # the tools whose results deniable reads


@bp.get("/<slug>/embed")
def embed(slug: str):
    stored, role = survey_for(slug)
    platform = request.args.get("platform", RECIPE_PLATFORMS[0])
    built = current()
    src = url_for("embed.script", version=built.version, _external=True)
    design = design_document(stored.survey)
    view = {
        "platforms": [(name, LABELS[name]) for name in RECIPE_PLATFORMS], "platform": platform, "error": None,
        "version": built.version, "src": src, "module": url_for("embed.module", version=built.version, _external=True),
        "files": [(name, integrity(data)) for name, data in built.files().items()],
        "tag": f'<script src="{src}" integrity="{integrity(built.script)}" crossorigin="anonymous"></script>',
        "design": json.dumps(design, indent=2, ensure_ascii=False),
        "embeddable": [q["id"] for q in embeddable(design)], "recipe": None, "name": NAME,
    }
    status = 200
    if platform not in LABELS:
        view["error"] = f"platform: unknown platform {platform[:40]!r}: choose one of {', '.join(LABELS.values())}"
        view["platform"] = None
        status = 400
    elif view["embeddable"]:
        try:
            view["recipe"] = recipe(platform, stored.survey, design, src=src, integrity=integrity(built.script),
                                    version=built.version)
        except PlatformExportError as exc:  # two ids that would share one field of the platform, say
            view["error"] = str(exc)
            status = 400
    return render_template("dashboard/embed.html", stored=stored, role=role, view=view), status
