"""The respondents' side of the web app: the survey page and the JSON API for reports."""
