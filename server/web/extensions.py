"""The app's Flask extensions, made once here and bound to each app by :func:`.app.create_app`.

As in Flask's tutorial: a module that needs an extension imports it from here (never from
``app.py``, which imports every blueprint), and ``create_app`` calls its ``init_app``.
"""

from __future__ import annotations

from flask_babel import Babel
from flask_wtf.csrf import CSRFProtect

csrf = CSRFProtect()  # every form POST; the JSON API is exempt (respondent/api.py says why)
babel = Babel()  # the respondents' pages in their language (:mod:`.i18n`)
