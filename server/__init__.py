"""The server side, by concern; imports go ``cli`` → ``web`` → ``store`` → ``survey``.

- :mod:`.survey` — the offline analyst path, no database and no Flask: survey definitions,
  the responses CSV, datasets, estimates output, planning, simulation, plain-words privacy;
- :mod:`.store` — SQLite through sqlite-utils: the schema, surveys, responses, invitations,
  accounts;
- :mod:`.web` — the Flask app: the factory, security, rate limits, errors, and the
  ``respondent`` and ``dashboard`` blueprints;
- :mod:`.cli` — the ``deniable`` command, a thin shell over the three above.
"""
