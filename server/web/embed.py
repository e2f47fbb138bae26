"""The embeddable randomizer, served for other origins: ``GET /embed/VERSION/deniable-embed.mjs`` (ES module)
and ``…/deniable-embed.js`` (classic script), built by :mod:`deniable.client.embed`.

A survey on another platform loads it with its integrity hash (``deniable embed build`` prints
both), and a module script with ``integrity`` is fetched with CORS: so this path, and only this
path, answers with ``Access-Control-Allow-Origin: *`` (and ``Cross-Origin-Resource-Policy:
cross-origin`` for a classic script loaded without ``crossorigin``).  VERSION is the build's
content hash: the bytes behind it never change, so they are cached as immutable, and any other
version is a 404 (a new build of deniable serves a new version; an old one lives where the
researcher wrote it with ``deniable embed build``).
"""

from __future__ import annotations

from deniable.client.embed import NAME, current
from flask import Blueprint, Response, abort

bp = Blueprint("embed", __name__, url_prefix="/embed")

@bp.get(f"/<version>/{NAME}.mjs")
def module(version):
    """The embed as an ES module, at its version."""
    return _served(version, current().module)


@bp.get(f"/<version>/{NAME}.js")
def script(version):
    """The embed as a classic script (the global ``DeniableEmbed``), at its version."""
    return _served(version, current().script)


def _served(version: str, data: bytes) -> Response:
    if version != current().version:
        abort(404)
    response = Response(data, mimetype="text/javascript")
    response.headers["Access-Control-Allow-Origin"] = "*"
    response.headers["Cross-Origin-Resource-Policy"] = "cross-origin"
    response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
    return response
