"""The planner's disk cache (:mod:`.planning`): computed worst cases h(n) and plans, kept under
``$XDG_CACHE_HOME/deniable`` in a folder named by a digest of the code that computes them (and of the numpy
and scipy it runs on), so a changed planner never reads an old number.  A cache is only ever a speed-up:
every entry read is checked by the caller, and one that cannot be read or written is skipped."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import tempfile
from pathlib import Path

import numpy as np


def cache_dir() -> Path | None:
    """Where computed worst cases and plans are kept: ``$XDG_CACHE_HOME/deniable``, else ``~/.cache/deniable``
    (None when neither is an absolute path, e.g. without a home directory)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, empty or relative: the XDG specification says ignore it
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "deniable" if os.path.isabs(base) else None


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    """A digest of the code that computes the numbers cached, and of the numpy and scipy it runs on.

    Read from the files, without importing them: a plan answered from the cache needs no scipy.
    """
    here = Path(__file__).resolve().parent
    scipy_dir = importlib.util.find_spec("scipy").submodule_search_locations[0]
    digest = hashlib.sha256(f"numpy {np.__version__}".encode())
    for path in (Path(scipy_dir) / "version.py", here / "binomial.py", here / "exact.py", here / "likelihood_ratio.py",
                 here / "root_finding.py", here / "planning.py", Path(__file__)):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_file(kind: str, key: tuple[float, ...], name: str) -> Path | None:
    """``<cache>/<kind>-<code digest>/<key floats in hex>/<name>.json`` (None: no usable cache)."""
    base = cache_dir()
    if base is None:
        return None
    try:
        code = _code_digest()
    except (OSError, AttributeError, TypeError, IndexError):  # not readable files (a zipped install): no cache
        return None
    return base / f"{kind}-{code}" / "_".join(float(v).hex() for v in key) / f"{name}.json"


def is_unit(value) -> bool:
    """Whether a number read from the cache is a float in [0, 1] (a half-width or a probability)."""
    return isinstance(value, float) and 0.0 <= value <= 1.0


def read_entry(path: Path | None) -> list | None:
    """The cached JSON list, or None when absent or unreadable (the caller checks its numbers)."""
    if path is None:
        return None
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, list) else None


def write_entry(path: Path | None, values: list) -> None:
    """Write one entry atomically (a temporary file renamed over it); a cache that cannot be written is skipped."""
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(json.dumps(values))
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass
