"""The names of the interval methods, importable without numpy or scipy (the command line's
``--method`` choices).  :data:`deniable.estimators.intervals.INTERVAL_FUNCTIONS` maps exactly these names to
their functions; ``tests/unit/test_estimators_intervals.py`` checks that the two agree."""

METHODS = ("exact", "likelihood", "wilson", "clopper-pearson", "wald")
