"""Progress of long work on a terminal: a bar with the rate and the time left, on stderr.

Only when stderr is a terminal: piped, redirected or captured (a script, a cron job, a test),
nothing at all is written, so the commands' output stays what it was.  ``click.progressbar``
would still print its label there, and it shows no rate.

>>> import io
>>> with progress(10, "storing reports", "rows", stream=io.StringIO()) as bar:
...     bar.update(10)  # a captured stream: quiet
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

REDRAW = 0.2  # seconds between redraws: a terminal need not be written more often


def on_terminal(stream=None) -> bool:
    """Whether ``stream`` (stderr by default) is an interactive terminal (not when closed, nor when not a file)."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return callable(isatty) and not getattr(stream, "closed", False) and bool(isatty())


def amount(x: float) -> str:
    """A count for people: ``1234 → '1,234'``, ``2.5e6 → '2.5M'``.

    >>> amount(950), amount(12_345), amount(2_500_000), amount(3.2e9)
    ('950', '12,345', '2.5M', '3.2G')
    """
    for size, suffix in ((1e9, "G"), (1e6, "M")):
        if x >= size:
            return f"{x / size:.1f}{suffix}"
    return f"{x:,.0f}"


def duration(seconds: float) -> str:
    """``75 → '1:15'``, ``3725 → '1:02:05'``.

    >>> duration(5), duration(75), duration(3725)
    ('0:05', '1:15', '1:02:05')
    """
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Bar:
    """A bar drawn in place on ``stream``: ``label [#####.....]  45%  1.2M rows/s  0:12 left``.

    The rate is the work done over the time since the bar started; the time left is what remains
    at that rate (shown once some work is done)."""

    def __init__(self, total: int, label: str, unit: str, stream):
        self.total, self.label, self.unit, self.stream = max(int(total), 1), label, unit, stream
        self.done = 0
        self.started = time.monotonic()
        self.drawn = 0.0
        self.lock = threading.Lock()

    def update(self, steps: int) -> None:
        with self.lock:
            self.done = min(self.done + int(steps), self.total)
            now = time.monotonic()
            if now - self.drawn >= REDRAW:
                self.drawn = now
                self._draw(now)

    def set(self, done: int) -> None:
        """Say how much is done so far (rather than how much more)."""
        self.update(int(done) - self.done)

    def line(self, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed
        fraction = self.done / self.total
        info = f"{fraction:4.0%}"
        if self.done:
            info += f"  {amount(rate)} {self.unit}/s"
            info += "  done" if self.done >= self.total else f"  {duration((self.total - self.done) / rate)} left"
        width = max(10, min(40, shutil.get_terminal_size().columns - len(self.label) - len(info) - 6))
        filled = int(fraction * width)
        return f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {info}"

    def _draw(self, now: float) -> None:
        self.stream.write("\r" + self.line(now) + "\x1b[K")  # \x1b[K: erase what a longer line left
        self.stream.flush()

    def finish(self) -> None:
        with self.lock:
            if not self.done and not self.drawn:  # nothing was reported (work too small to follow)
                return
            self._draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()


class Quiet:
    """What a bar is when stderr is not a terminal: nothing."""

    def update(self, steps: int) -> None:
        pass

    def set(self, done: int) -> None:
        pass


@contextmanager
def progress(total: int, label: str, unit: str = "", *, stream=None):
    """A :class:`Bar` on stderr (or ``stream``) while the block runs, when it is a terminal; else :class:`Quiet`."""
    stream = sys.stderr if stream is None else stream
    if not on_terminal(stream):
        yield Quiet()
        return
    bar = Bar(total, label, unit, stream)
    try:
        yield bar
    finally:
        bar.finish()


@contextmanager
def watching(path: Path, total: int, label: str, *, stream=None):
    """A bar of the size of the file ``path`` as it grows towards ``total`` bytes, while the block runs
    (work that says nothing of its progress: SQLite's ``VACUUM INTO``, a file copy)."""
    with progress(total, label, "B", stream=stream) as bar:
        if isinstance(bar, Quiet):
            yield bar
            return
        stop = threading.Event()

        def poll():
            while not stop.wait(REDRAW):
                try:
                    bar.set(min(Path(path).stat().st_size, total))
                except OSError:  # not there yet, or already renamed
                    pass

        thread = threading.Thread(target=poll, name="deniable-progress", daemon=True)
        thread.start()
        try:
            yield bar
        finally:
            stop.set()
            thread.join()
        bar.set(total)  # only once the work is done (an error leaves the bar where it was)
