"""deniable: surveys for sensitive questions under local differential privacy.

One import namespace over the project's folders (mapped in ``pyproject.toml``):

- :mod:`deniable.client` (``client/``): the respondent's side — the mechanism's one definition,
  the Python randomizer and the browser files;
- :mod:`deniable.estimators` (``estimators/``): counts in, estimates with honest intervals out;
- :mod:`deniable.server` (``server/``): the offline survey path (``survey``), the SQLite store
  (``store``), the Flask app (``web``) and the command line (``cli``); templates ship as
  ``deniable.server.templates`` (``templates/``).

The public analysis API is ``from deniable.estimators import estimate``.
"""



def __getattr__(name: str):
    if name == "__version__":  # importlib.metadata costs tens of milliseconds: only when asked
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("deniable")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0+unknown"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
