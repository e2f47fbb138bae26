"""The Flask app: :mod:`.app` (the factory), security headers, rate limits and errors, and two
blueprint packages, :mod:`.respondent` (survey page, JSON API) and :mod:`.dashboard`."""
