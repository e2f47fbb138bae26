"""The survey-level results' base class (:class:`SurveyResult`), in a module of its own so that
``deniable plan`` (:mod:`.planning`) need not import the estimates (:mod:`.estimates`, which re-exports it)
and the survey definition they read."""

from __future__ import annotations

from deniable.estimators.result import Result


class SurveyResult(Result):
    """A survey-level result: :meth:`to_dict`, the JSON document (``deniable estimate --format json``, the
    exports, the results API); :meth:`to_csv`; :meth:`table`, what ``deniable estimate`` prints; and
    :meth:`summary`, that table, as statsmodels' ``summary()`` prints one."""

    def to_dict(self) -> dict:
        raise NotImplementedError

    def to_csv(self) -> str:
        raise NotImplementedError

    def table(self) -> str:
        raise NotImplementedError

    def summary(self) -> str:
        """The text table (:meth:`table`)."""
        return self.table()
