"""Response slots: responses are written into rows made ahead of need, so the file's layout keeps no order.

SQLite writes a new cell below the cells already in its page, and moves a cell whose size changes
to the lowest offset of its page: sorting the cells of a page by offset gives the order they were
written in.  So a response is never a new row.  Each survey has **slots** in ``response_slots``
(``WITHOUT ROWID``, key ``(survey_id, id)``, ``id`` random as :func:`.responses.new_response_id`
makes them), made ahead of need and written all at once in key order.  A submission overwrites a
free slot chosen at random (:func:`fill`) with bytes of exactly the slot's size — ``filled`` 0 → 1
(SQLite stores both in no bytes), the day in place of ``0000-00-00``, ``reports`` and ``design``
padded with spaces to the survey's widths, ``text_version`` + 2⁵⁶ (:data:`OFFSET`; the wording the
response's *day* began with, :data:`DAY_VERSION`: a fix made during a day shows at once and is recorded
from the next day, so no version divides a day's responses by time) — and SQLite
overwrites a cell of the same size where it is.  A slot is drawn uniformly among the free ones
(:func:`_fill_free`, from the process's list of the survey's free keys), so nothing about a key — its
place, the gap of keys before it — says when its slot was filled.  (Until issue 41 a slot was "the
first at or after a random key": its chance was the gap before it, so the larger gaps were filled
first, and a growth pass, which splits every gap, left that bias on the slots filled after it —
"larger gap = later" ordered 0.54-0.56 of pairs, tests/store/test_slot_keys_order.py.)

When fewer than half the slots are free, the batch of submissions that notices it starts a
**growth pass** (:func:`growth_due`), which the server runs after answering that batch, in write
transactions of its own (:func:`grow_step`, from
:mod:`deniable.server.web.respondent.group_commit`): range by range of keys, in key order, about
:data:`STEP` slots at a time are deleted and written again in key order together with as many new
free slots drawn in the same range of keys, so no transaction holds the write lock for more than
a few milliseconds and no submission waits for a growth.  Only when a quarter of the slots would
be free anyway (a pass that could not keep up), a report is wider than the slots, or for the first
response, are the survey's slots **rebuilt** whole inside the submission's transaction
(:func:`rebuild`): twice as many (at least :data:`MIN_SLOTS`), the filled ones kept with their ids,
every row deleted and written again in key order.  Either way amortized O(1) per response; after
either, a range's cells are in key order in its pages; afterwards only overwrites in place.

``response_slot_sizes`` keeps per survey the numbers of slots and of filled ones and the two
widths (each + :data:`OFFSET`, so its row is overwritten in place too).  The view ``responses``
(:mod:`.migrations`, m13) shows the filled slots with the columns a response always had, so every
reader reads ``responses``.

The same holds for every counter a submission touches: ``counts`` and ``cell_counts`` keep their
row's size with a ``pad`` column (:func:`padding`), and the answer patterns live in fixed-size
buckets (:func:`entries_of`; written by :func:`.aggregates.add`).
"""

from __future__ import annotations

import base64
import os
import random
import secrets
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import sqlite_utils

OFFSET = 1 << 56  # a stored counter is OFFSET + n: eight bytes whatever n (< 2⁵⁶) is
MASK = OFFSET - 1  # ``column & MASK``: the counter (a value stored without the offset reads the same)
FREE_DAY = "0000-00-00"


def padding(expr: str) -> str:
    """SQL: the zero bytes that, beside the integer ``expr`` in a record, make eight bytes.

    SQLite stores an integer in 0 bytes (0 and 1), 1, 2, 3, 4, 6 or 8; a counter stored with
    ``pad = padding(count)`` keeps its row's size, so an increment overwrites the cell in place,
    and readers read ``count`` as it is."""
    return (f"zeroblob(8 - CASE WHEN {expr} BETWEEN 0 AND 1 THEN 0 WHEN {expr} BETWEEN -128 AND 127 THEN 1 "
            f"WHEN {expr} BETWEEN -32768 AND 32767 THEN 2 WHEN {expr} BETWEEN -8388608 AND 8388607 THEN 3 "
            f"WHEN {expr} BETWEEN -2147483648 AND 2147483647 THEN 4 "
            f"WHEN {expr} BETWEEN -140737488355328 AND 140737488355327 THEN 6 ELSE 8 END)")


def pad_of(n: int) -> bytes:
    """The bytes :func:`padding` gives beside ``n``."""
    if 0 <= n <= 1:
        return bytes(8)
    for size, bound in ((1, 127), (2, 32767), (3, 8388607), (4, 2147483647), (6, 140737488355327)):
        if -bound - 1 <= n <= bound:
            return bytes(8 - size)
    return b""


MIN_SLOTS = 64
GROWTH = 2  # a rebuild makes this many times the slots: 4 rows written per response, at most 2.7 slots per response
PROBES = 200  # listed free keys tried before the list is read again (a quarter free: 4 on average)

_random = random.SystemRandom()


def new_id() -> str:
    """A random slot (and response) identifier of 96 bits."""
    return secrets.token_urlsafe(12)


def width_for(texts, at_least: int = 0) -> int:
    """A width (bytes) for these JSON texts: at least ``at_least``, else the longest plus a quarter,
    rounded up to a multiple of 16."""
    longest = max((len(t.encode()) for t in texts), default=0)
    if longest <= at_least:
        return at_least
    return max(16, at_least * 5 // 4, -(-(longest * 5 // 4) // 16) * 16)


def pad(text: str, width: int) -> str:
    return text + " " * (width - len(text.encode()))


WIDTH_BITS = 24  # ``design_width``: the width in its low bits, the growth pass's cursor above them
WIDTH = (1 << WIDTH_BITS) - 1


def sizes(conn, survey_id: int) -> tuple[int, int, int, int] | None:
    """``(slots, filled, reports width, design width)`` of the survey, or None before its first slot."""
    row = conn.execute("SELECT slots & ?, filled & ?, reports_width & ?, design_width & ? "
                       "FROM response_slot_sizes WHERE survey_id = ?", [MASK, MASK, MASK, WIDTH, survey_id]).fetchone()
    return tuple(row) if row else None


def rebuild(conn, survey_id: int, *, room: int, reports_width: int, design_width: int) -> tuple[int, int, int, int]:
    """Rewrite the survey's slots in key order with ``room`` more free than filled ones at least (and a
    quarter of the slots free after that), at least these widths; inside the caller's transaction."""
    rows = conn.execute("SELECT id, submitted_on, rtrim(reports), rtrim(design), text_version FROM response_slots "
                        "WHERE survey_id = ? AND filled = 1", [survey_id]).fetchall()
    known = sizes(conn, survey_id)
    filled = len(rows)
    slots = max(MIN_SLOTS, GROWTH * (known[0] if known else 0))
    while (slots - filled - room) * 4 < slots:
        slots *= GROWTH
    reports_width = width_for([r[2] for r in rows], reports_width)
    design_width = width_for([r[3] for r in rows], design_width)
    taken = {r[0] for r in rows}
    out = [(survey_id, rid, 1, day, pad(rep, reports_width), pad(des, design_width), version)
           for rid, day, rep, des, version in rows]
    while len(out) < slots:
        rid = new_id()
        if rid not in taken:
            taken.add(rid)
            out.append((survey_id, rid, 0, FREE_DAY, " " * reports_width, " " * design_width, OFFSET))
    out.sort(key=lambda slot: slot[1])
    forget_free(conn, survey_id)
    conn.execute("DELETE FROM response_slots WHERE survey_id = ?", [survey_id])
    conn.executemany("INSERT INTO response_slots VALUES (?, ?, ?, ?, ?, ?, ?)", out)
    conn.execute("INSERT OR REPLACE INTO response_slot_sizes VALUES (?, ?, ?, ?, ?)",
                 [survey_id, OFFSET + slots, OFFSET + filled, OFFSET + reports_width, OFFSET + design_width])
    return slots, filled, reports_width, design_width


def _ready(conn, survey_id: int, n: int, reports: list[str], designs: list[str]) -> tuple[int, int, int, int]:
    """Make sure ``n`` more responses of these texts fit, a quarter of the slots staying free; the sizes."""
    known = sizes(conn, survey_id)
    if known is not None:
        slots, filled, reports_width, design_width = known
        fits = (max(len(t.encode()) for t in reports) <= reports_width
                and max(len(t.encode()) for t in designs) <= design_width)
        if fits and (slots - filled - n) * 4 >= slots:
            return known
    else:
        reports_width = design_width = 0
    return rebuild(conn, survey_id, room=n, reports_width=width_for(reports, reports_width),
                   design_width=width_for(designs, design_width))


class _Free:
    """The free slots of one survey as this process last read them: keys only, in memory, never on disk."""

    __slots__ = ("keys", "slots")

    def __init__(self, keys: list[str], slots: int):
        self.keys, self.slots = keys, slots


_free: dict[tuple[str, int], _Free] = {}  # (database file, survey) → its free slots as last read
_files: dict[int, str] = {}  # id(connection) → its database file (a stale entry, after an id is reused, costs draws only)
FREE_KEYS = "SELECT id FROM response_slots WHERE survey_id = ? AND filled = 0"
SLOTS_NOW = f"SELECT slots & {MASK}, (design_width & {MASK}) >> {WIDTH_BITS} FROM response_slot_sizes WHERE survey_id = ?"


def _file_of(conn) -> str:
    """The connection's database file, asked once per connection: the pooled connections of a file share
    one list.  If a closed connection's id is reused for another file, the list found is another file's:
    its keys fail the check against the file and the list is read again, so that costs draws, never a
    wrong slot or a biased one."""
    path = _files.get(id(conn))
    if path is None:
        if len(_files) >= 256:  # connections long closed (a test run, a command that opened many files)
            _files.clear()
            _free.clear()
        path = _files[id(conn)] = conn.execute("PRAGMA database_list").fetchone()[2]
    return path


def _read_free(conn, survey_id: int, slots: int) -> _Free:
    found = _free[(_file_of(conn), survey_id)] = _Free([key for (key,) in conn.execute(FREE_KEYS, [survey_id])], slots)
    return found


def _stale(free: _Free | None, slots: int, passing: bool) -> bool:
    """Whether the list must be read again: none yet, run out, or the slots changed and no pass is under way
    (a growth pass adds its slots range by range in key order: they join the draw all at once when it ends,
    so no range of keys is drawn before another)."""
    return free is None or not free.keys or (free.slots != slots and not passing)


def read_free_slots(conn, survey_id: int) -> None:
    """Read the survey's free keys now if the next draw would (:func:`_stale`): the server calls it before
    it takes the write lock, so a survey of 10⁶ slots (about a second to read) holds no other writer."""
    row = conn.execute(SLOTS_NOW, [survey_id]).fetchone()
    if row is not None and _stale(_free.get((_file_of(conn), survey_id)), row[0], bool(row[1])):
        _read_free(conn, survey_id, row[0])


def _fill_free(conn, survey_id: int, slots: int, passing: bool, values: list) -> str | None:
    """Overwrite a free slot drawn uniformly among the free ones with ``values`` (:data:`FILL`'s ?1–?4);
    its key.  The slot is drawn from this process's list of the survey's free keys (:class:`_Free`) and
    taken off the list; the write itself checks that it is still free (another process may have
    filled it: then the next is drawn), and the list is read again when :func:`_stale`.  Nothing about a
    key — its place, the gap before it — changes its chance, so the keys of the filled slots say
    nothing of when they were filled; None if no free slot is found (the caller rebuilds)."""
    free = _free.get((_file_of(conn), survey_id))
    if _stale(free, slots, passing):
        free = _read_free(conn, survey_id, slots)
    for reads in range(2):
        keys = free.keys
        for _ in range(min(PROBES, len(keys))):
            at = _random.randrange(len(keys))
            key = keys[at]
            keys[at] = keys[-1]
            keys.pop()
            if conn.execute(FILL, [*values, key]).rowcount:
                return key
        if reads == 0:
            free = _read_free(conn, survey_id, slots)
    return None


def forget_free(conn, survey_id: int) -> None:
    """Drop this process's list of the survey's free slots (after a rebuild gave every free slot a new key)."""
    _free.pop((_file_of(conn), survey_id), None)


# A response records the wording its day began with (:data:`DAY_VERSION`), not the one at its moment.
DAY_VERSION = "(SELECT coalesce(max(version), 1) FROM wording_versions WHERE survey_id = ?1 AND since < ?2)"
OTHER_DAY_VERSION = ("FROM response_slots AS r WHERE survey_id = ?1 AND filled = 1 AND (text_version & "
                     f"{MASK}) != {DAY_VERSION.replace('?2', 'r.submitted_on')}")  # responses off the rule
FILL = ("UPDATE response_slots SET filled = 1, submitted_on = ?2, reports = ?3, design = ?4, "
        f"text_version = {DAY_VERSION} + {OFFSET} WHERE survey_id = ?1 AND id = ?5 AND filled = 0")


COUNT_ONE = ("UPDATE response_slot_sizes SET filled = filled + 1 WHERE survey_id = ? "
             f"RETURNING slots & {MASK}, filled & {MASK}, reports_width & {MASK}, design_width & {MASK}")


def fill(conn, survey_id: int, day: str, reports: str, design: str) -> str:
    """Store one response in a free slot of the survey drawn uniformly at random (inside the caller's
    transaction); its id."""
    known = conn.execute(COUNT_ONE, [survey_id]).fetchone()  # counted first: one statement, not two
    rid = None
    if known is not None:
        slots, filled, reports_width, design_width = known
        passing, design_width = bool(design_width >> WIDTH_BITS), design_width & WIDTH
        if (len(reports.encode()) <= reports_width and len(design.encode()) <= design_width
                and (slots - filled) * 4 >= slots):
            rid = _fill_free(conn, survey_id, slots, passing,
                             [survey_id, day, pad(reports, reports_width), pad(design, design_width)])
    if rid is None:  # growth, wider reports, the first response, or slots changed by hand: rebuild
        slots, _, reports_width, design_width = rebuild(
            conn, survey_id, room=1, reports_width=width_for([reports], known[2] if known else 0),
            design_width=width_for([design], (known[3] & WIDTH) if known else 0))
        conn.execute("UPDATE response_slot_sizes SET filled = filled + 1 WHERE survey_id = ?", [survey_id])
        rid = _fill_free(conn, survey_id, slots, False,
                         [survey_id, day, pad(reports, reports_width), pad(design, design_width)])
        if rid is None:
            raise RuntimeError("no free slot after the slots were rebuilt")
    return rid


def fill_many(conn, survey_id: int, day: str, reports: list[str], designs: list[str]) -> None:
    """Store many responses in free slots drawn uniformly at random, written in key order (bulk inserts)."""
    n = len(reports)
    if not n:
        return
    _, _, reports_width, design_width = _ready(conn, survey_id, n, reports, designs)
    free = [rid for (rid,) in conn.execute("SELECT id FROM response_slots WHERE survey_id = ? AND filled = 0",
                                           [survey_id])]
    if len(free) < n:  # the slots were changed behind the sizes' back: count them again
        _, _, reports_width, design_width = rebuild(conn, survey_id, room=n, reports_width=reports_width,
                                                    design_width=design_width)
        free = [rid for (rid,) in conn.execute("SELECT id FROM response_slots WHERE survey_id = ? AND filled = 0",
                                               [survey_id])]
    # Each response gets a slot drawn at random (so the slots' key order is not the rows' order), and
    # the slots are written in key order.
    chosen = sorted(zip(_random.sample(free, n), reports, designs))
    conn.executemany(FILL, ((survey_id, day, pad(rep, reports_width), pad(des, design_width), rid)
                            for rid, rep, des in chosen))
    conn.execute("UPDATE response_slot_sizes SET filled = filled + ? WHERE survey_id = ?", [n, survey_id])


# ------------------------------------------------------------------ growth in bounded steps, off the submissions

# The slots' keys are 16 characters of the URL-safe base64 alphabet; sorted as SQLite compares them
# (bytes), a key's first PREFIX characters are a number below 64**PREFIX that keeps the key order.
KEY_CHARS = "".join(sorted("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"))
KEY_LENGTH = 16
PREFIX = 5  # 30 bits: the cursor of a growth pass, stored above the design width (WIDTH_BITS)
PREFIXES = 64 ** PREFIX
STEP = 250  # slots rewritten by one step of a growth pass: about a millisecond under the write lock (docs/benchmarks.md: 250 beat 1,000)


def prefix_key(number: int) -> str:
    """The PREFIX characters that are the ``number``-th prefix in key order."""
    chars = []
    for _ in range(PREFIX):
        number, digit = divmod(number, 64)
        chars.append(KEY_CHARS[digit])
    return "".join(reversed(chars))


def prefix_number(key: str) -> int:
    number = 0
    for char in key[:PREFIX]:
        number = number * 64 + KEY_CHARS.index(char)
    return number


SUFFIX_BITS = 6 * (KEY_LENGTH - PREFIX)
# base64 writes digit d as the d-th character of its alphabet; here it must be the d-th in key order
_TO_KEY_ORDER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", KEY_CHARS)


def ids_between(low: int, high: int, n: int) -> list[str]:
    """``n`` random keys whose prefixes are in ``[low, high)``: each uniform over the keys of that range,
    independently (drawn from the system's random source in one read, not one read per key).

    A key is 96 bits: a prefix of 30 (``low`` + a draw below ``high − low``, by rejection, so exactly
    uniform) and 66 random bits.  Twelve bytes are sixteen base64 characters without padding, so the
    keys are encoded all at once and cut every sixteen characters."""
    span = high - low
    limit = ((1 << 64) // span) * span  # a 64-bit draw at or above it is dropped: draw % span is uniform
    prefixes = np.empty(0, dtype=np.uint64)
    while len(prefixes) < n:
        draws = np.frombuffer(os.urandom(8 * (n - len(prefixes) + 16)), dtype=np.uint64)
        if limit < 1 << 64:
            draws = draws[draws < np.uint64(limit)]
        prefixes = np.concatenate([prefixes, draws[:n - len(prefixes)] % np.uint64(span)])
    rest = np.frombuffer(os.urandom(9 * n), dtype=np.uint8).reshape(n, 9)
    # the first 32 bits: the prefix and the top two of the 66 random bits; then 64 random bits
    head = (((prefixes + np.uint64(low)) << np.uint64(2)) | (rest[:, 0] & 3)).astype(">u4")
    raw = np.hstack([head.view(np.uint8).reshape(n, 4), rest[:, 1:]]).tobytes()
    text = base64.urlsafe_b64encode(raw).decode().translate(_TO_KEY_ORDER)
    return [text[at:at + KEY_LENGTH] for at in range(0, len(text), KEY_LENGTH)]


GROWTH_DUE = ("SELECT slots & ?, filled & ?, (design_width & ?) >> ? FROM response_slot_sizes "
              "WHERE survey_id = ?")


def growth_due(conn, survey_id: int) -> bool:
    """Whether the survey's slots are being grown: a pass under way, or started here (inside the
    caller's transaction: one write of the sizes' row in place) because fewer than half its slots
    are free.  The pass itself runs in steps of its own (:func:`grow_step`)."""
    row = conn.execute(GROWTH_DUE, [MASK, MASK, MASK, WIDTH_BITS, survey_id]).fetchone()
    if row is None:
        return False
    slots_now, filled, cursor = row
    if cursor:
        return True
    if (slots_now - filled) * 2 >= slots_now:
        return False
    conn.execute(f"UPDATE response_slot_sizes SET design_width = design_width + {1 << WIDTH_BITS} "
                 "WHERE survey_id = ?", [survey_id])  # cursor 1: the pass starts at the first key
    return True


def grow_step(conn, survey_id: int, step: int = STEP) -> bool:
    """One step of the survey's growth pass, inside the caller's (short) write transaction; True
    while the pass goes on.

    A pass doubles the slots range by range of keys, in key order: the next ``step`` slots at or
    after the cursor (a key prefix) and every other slot of their prefixes are deleted and written
    again in key order together with as many new free slots, their keys drawn uniformly in the same
    range.  Each range ends up with its keys in key order in its pages, as after :func:`rebuild`;
    the range a step rewrites is chosen by key, not by anything a submission did.  The cursor is
    kept in the sizes' row (above the design width), so a pass survives a restart and the workers
    of a server share it; a :func:`rebuild` meanwhile ends it."""
    row = conn.execute("SELECT reports_width & ?, design_width & ? FROM response_slot_sizes WHERE survey_id = ?",
                       [MASK, MASK, survey_id]).fetchone()
    if row is None or not row[1] >> WIDTH_BITS:
        return False
    reports_width, design_width, low = row[0], row[1] & WIDTH, (row[1] >> WIDTH_BITS) - 1
    after = conn.execute("SELECT id FROM response_slots WHERE survey_id = ? AND id >= ? ORDER BY id LIMIT 1 OFFSET ?",
                         [survey_id, prefix_key(low), step]).fetchone()
    high = PREFIXES if after is None else max(low + 1, prefix_number(after[0]))
    where, params = "survey_id = ? AND id >= ?", [survey_id, prefix_key(low)]
    if high < PREFIXES:
        where, params = where + " AND id < ?", params + [prefix_key(high)]
    rows = conn.execute(f"SELECT * FROM response_slots WHERE {where}", params).fetchall()
    taken = {r[1] for r in rows}
    fresh, empty_reports, empty_design = [], " " * reports_width, " " * design_width
    while len(fresh) < len(rows):
        for rid in ids_between(low, high, len(rows) - len(fresh)):
            if rid not in taken:
                taken.add(rid)
                fresh.append((survey_id, rid, 0, FREE_DAY, empty_reports, empty_design, OFFSET))
    out = sorted(rows + fresh, key=lambda slot: slot[1])
    conn.execute(f"DELETE FROM response_slots WHERE {where}", params)
    conn.executemany("INSERT INTO response_slots VALUES (?, ?, ?, ?, ?, ?, ?)", out)
    cursor = 0 if high >= PREFIXES else high + 1
    conn.execute("UPDATE response_slot_sizes SET slots = slots + ?, design_width = ? WHERE survey_id = ?",
                 [len(fresh), OFFSET + design_width + (cursor << WIDTH_BITS), survey_id])
    return bool(cursor)


# ------------------------------------------------------------------ pattern buckets (written by .aggregates)

ENTRIES = 8  # (count, pattern) entries of a pattern bucket


def entries_of(day: str, entries: bytes) -> list[tuple[str, bytes, int]]:
    width = len(entries) // ENTRIES
    return [(day, entries[at + 8:at + width], int.from_bytes(entries[at:at + 8], "big"))
            for at in range(0, len(entries), width)]


def stored_patterns(db: sqlite_utils.Database, survey_id: int) -> list[tuple[str, bytes, int]]:
    """Every ``(day, pattern, count)`` of the survey, sorted by day and pattern: the entries of its
    pattern buckets and any row of the table ``answer_patterns`` (empty since m13)."""
    found: list[tuple[str, bytes, int]] = []
    for day, entries in db.execute("SELECT day, entries FROM pattern_buckets WHERE survey_id = ?", [survey_id]):
        found += (entry for entry in entries_of(day, entries) if entry[2])
    found += db.execute("SELECT day, pattern, count FROM answer_patterns WHERE survey_id = ?", [survey_id]).fetchall()
    found.sort()
    return found


def stored_day(conn, survey_id: int, day: str) -> list[tuple[str, bytes, int]]:
    """The filled entries of the survey's buckets of one day."""
    return [entry for (entries,) in conn.execute("SELECT entries FROM pattern_buckets WHERE survey_id = ? AND day = ?",
                                                 [survey_id, day])
            for entry in entries_of(day, entries) if entry[2]]
