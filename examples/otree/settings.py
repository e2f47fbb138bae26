"""oTree settings of the deniable recipe (docs/embedding.md, "oTree"): one app, ``protected``."""

from os import environ

SESSION_CONFIGS = [
    {"name": "protected", "display_name": "Protected questions (deniable)", "app_sequence": ["protected"],
     "num_demo_participants": 3},
]

SESSION_CONFIG_DEFAULTS = {"real_world_currency_per_point": 1.00, "participation_fee": 0.00, "doc": ""}

PARTICIPANT_FIELDS = []
SESSION_FIELDS = []

LANGUAGE_CODE = "en"
REAL_WORLD_CURRENCY_CODE = "USD"
USE_POINTS = True

ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = environ.get("OTREE_ADMIN_PASSWORD")

DEMO_PAGE_INTRO_HTML = ""

SECRET_KEY = environ.get("OTREE_SECRET_KEY", "replace-me-in-production")
