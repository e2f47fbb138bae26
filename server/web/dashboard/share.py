"""Sharing an open survey: its full public address and that address as an SVG QR code (segno)."""

from __future__ import annotations

import functools

from markupsafe import Markup, escape

from ..security import public_url


@functools.lru_cache(maxsize=256)
def qr_svg(url: str) -> Markup:
    """The QR code of ``url`` as inline SVG (paths only: no script, no style attribute).

    Kept per address (a few hundred): encoding it took a third of a results page's render, and an
    address's code never changes."""
    import segno

    code = segno.make(url, error="m")
    svg = code.svg_inline(scale=4, border=2, dark="#111111", light="#ffffff", svgclass="qr-code",
                          title=f"QR code of {url}")
    return Markup(svg.replace("<svg ", '<svg role="img" ', 1))


def share_info(stored) -> dict | None:
    """``{"url", "qr"}`` for an open survey (respondents can answer), None otherwise."""
    if stored.status != "open":
        return None
    url = public_url("respond.survey", slug=stored.slug)
    return {"url": url, "qr": qr_svg(url), "url_text": escape(url)}
