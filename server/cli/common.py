"""What every command shares: the ``--db`` option, opening the database, one-line errors.

Every problem a person can act on ends a command with exit status 1 and one line
``Error: …`` naming the file and the problem, never a traceback: :func:`fail` raises it, and
:func:`database` turns any SQLite error on the way into one.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import click

from deniable.server.survey.parsing import number_or_none
from deniable.server.survey.tables import plural  # noqa: F401  (the commands' one plural)

DEFAULT_DB = "deniable.db"


def fail(message: str):
    """End the command with ``Error: message`` and exit status 1."""
    raise click.ClickException(message)


def load_survey(path: str):
    """The survey definition in the file ``path``; a bad one is a DefinitionError: one ``Error:`` line naming
    the field (the deniable group's)."""
    from deniable.server.survey.definition import load_definition

    return load_definition(path)


def db_option(default: str | None = DEFAULT_DB, help: str = "The SQLite database file."):
    """The ``--db FILE`` option (``db_path`` in the command), the same in every command."""
    return click.option("--db", "db_path", default=default, show_default=default is not None, metavar="FILE",
                        help=help)


def confidence_option(f):
    return click.option("--confidence", type=click.FloatRange(0, 1, min_open=True, max_open=True),
                        default=0.95, show_default=True, help="Confidence level of the intervals.")(f)


def design_options(weighted: str):
    """``--weights COLUMN`` (``weighted``: what the weights then do) and ``--strata``, ``--cluster``,
    ``--fpc``: a responses file's sampling design, the same in every command that takes it."""
    options = [
        click.option("--weights", metavar="COLUMN",
                     help=f"Sampling weights: the responses file's column COLUMN (numbers > 0). {weighted}"),
        click.option("--strata", metavar="COLUMN", help="With --weights: the column of each response's stratum."),
        click.option("--cluster", metavar="COLUMN",
                     help="With --weights: the column of each response's cluster (primary sampling unit)."),
        click.option("--fpc", metavar="COLUMN",
                     help="With --weights: the column of the number of clusters in the population of each "
                          "response's stratum (finite-population correction)."),
    ]

    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


def _trim_bounds(ctx, param, text: str | None):
    """``--trim LOW,HIGH`` → (low, high), or None; UsageError naming the option for anything else."""
    if text is None:
        return None
    parts = text.split(",")
    low, high = (number_or_none(p) for p in parts) if len(parts) == 2 else (None, None)
    if low is None or high is None or not (0 <= low < high < float("inf")):
        raise click.UsageError(f"--trim: give LOW,HIGH with 0 <= LOW < HIGH (times the mean weight), such as "
                               f"0.3,3; got {text[:40]!r}")
    return low, high


def rake_options(raked: str):
    """``--rake MARGINS.json`` (``raked``: what the raked weights then do) and ``--trim LOW,HIGH``
    (parsed to ``(low, high)`` or None), the same in every command that rakes."""
    rake = click.option("--rake", "margins_path", metavar="MARGINS.json",
                        help="Rake the respondents to population margins of questions asked directly "
                             f'({{"question": {{"option": share, ...}}, ...}}); {raked}')
    trim = click.option("--trim", metavar="LOW,HIGH", callback=_trim_bounds,
                        help="With --rake: keep every weight within LOW..HIGH times the mean weight (e.g. 0.3,3).")
    return lambda f: rake(trim(f))


def show(result, fmt: str) -> None:
    """Print a result that renders itself: its ``to_dict()`` as JSON, its ``to_csv()`` or its ``table()``."""
    if fmt == "json":
        echo_json(result.to_dict())
    elif fmt == "csv":
        click.echo(result.to_csv(), nl=False)
    else:
        click.echo(result.table(), nl=False)


def rrreg_options(models, what: str):
    """``--rrreg MODEL`` (one of ``models``, R RRreg's names; ``what`` the option does) and ``--p P1,P2[,…]``
    (the model's p as RRreg's RRuni takes it), the same in estimate, plan and regress."""
    model = click.option("--rrreg", type=click.Choice(tuple(models)), help=what)
    p = click.option("--p", "rrreg_p", metavar="P1,P2[,…]", help="With --rrreg: the model's p, as RRreg's RRuni takes it.")
    return lambda f: model(p(f))


class _NoPandas:
    """A finder that says pandas is not installed (:func:`no_pandas`)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (not imported by this command)", name=name)
        return None


@contextmanager
def no_pandas():
    """In the block, pandas is not imported by what merely looks for it — unless it is imported already.

    sqlite_utils imports pandas when it is installed (only to store a ``pandas.Timestamp`` as TEXT,
    which deniable never stores), and pyarrow imports it the first time it makes an array (to ask
    whether the input is a pandas object): in a fresh process that import is most of the time of a
    ``deniable export`` of a CSV or Parquet file, which needs no pandas.  Both then go on without it
    for the rest of the process (sqlite_utils' ``pd`` and pyarrow's pandas shim stay "not
    installed"), so only a command that ends after the block, and needs no pandas, uses it."""
    import sys

    if "pandas" in sys.modules:
        yield
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def import_sqlite_utils() -> None:
    """Import sqlite_utils without pandas (:func:`no_pandas`), if it is not imported yet."""
    import sys

    if "sqlite_utils" not in sys.modules:
        with no_pandas():
            import sqlite_utils  # noqa: F401


@contextmanager
def database(path: str, *, create: bool = False, readonly: bool = False):
    """Open the database at ``path`` for the block and close it after.

    ``create`` makes the file (and its schema) if needed; otherwise a missing file is an error.
    ``readonly`` opens it read-only.  Any SQLite or OS error is one line naming the file.  After a
    command that may have written (``create``), the WAL is scrubbed (:mod:`deniable.server.store.scrub`)
    unless a running server is reading; its own scrubber then does it.
    """
    import sqlite3  # here: a command without a database starts without it

    import_sqlite_utils()
    from deniable.server.store.db import connect
    from deniable.server.store.integrity import open_repaired
    from deniable.server.store.scrub import scrub

    if not create and not Path(path).is_file():
        fail(f"{path}: no such database file")
    try:
        db = open_repaired(path) if create else connect(path, readonly=readonly)
    except (OSError, sqlite3.Error) as exc:
        fail(f"{path}: cannot open the database: {getattr(exc, 'strerror', None) or exc}")
    try:
        yield db
        if create:
            scrub(db)
    except sqlite3.Error as exc:
        fail(f"{path}: cannot use the database: {exc}")
    finally:
        db.conn.close()


def echo_json(data) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False))
