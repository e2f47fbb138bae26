"""Where the app's files are: the browser files it serves (``/static``) and its templates."""

from __future__ import annotations

from pathlib import Path

import deniable.client
import deniable.server.templates

STATIC = Path(deniable.client.__file__).resolve().parent / "static"
TEMPLATES = Path(deniable.server.templates.__file__).resolve().parent
