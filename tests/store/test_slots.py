"""Response slots, padded counters and pattern buckets (server/store/slots.py): a submission overwrites
cells in place, growth and wider reports keep every response, and the readers see what they saw."""

from __future__ import annotations

import json
import sqlite3

import numpy as np

from deniable.server.store import slots
from deniable.server.store.responses import insert_many, load_db_dataset
from support.store import store_response
from deniable.server.store.surveys import option_counts, respondent_count
from support.layout import btree_cells


def positions(db, path) -> dict[str, set[tuple[int, int, int]]]:
    """Per b-tree, the (page, offset, size) of every cell after a checkpoint."""
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    roots = dict(db.execute("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0").fetchall())
    found: dict[str, set] = {}
    for number, (name, cells) in btree_cells(path.read_bytes(), roots).items():
        found.setdefault(name, set()).update((number, offset, len(raw)) for offset, raw in cells)
    return found


def test_a_submission_overwrites_cells_in_place(db, stored, db_path):
    from pathlib import Path

    for i in range(3):  # the slots, the day's buckets and the counts exist
        store_response(db, stored, {"drug_use": i % 2, "cheating": i})
    before = positions(db, Path(db_path))
    total = slots.sizes(db.conn, stored.id)[0]
    for i in range(25):  # counts grow past 1 (0 → 1 byte) with no cell moving (a pass starts at 33 of 64)
        store_response(db, stored, {"drug_use": 1, "cheating": 3, "age_group": i % 4})
    assert slots.sizes(db.conn, stored.id)[0] == total  # no growth in between
    after = positions(db, Path(db_path))
    for name in ("response_slots", "counts", "pattern_buckets", "response_slot_sizes"):
        assert after[name] == before[name], name


def test_growth_and_wider_reports_keep_every_response(db, stored):
    ids = {store_response(db, stored, {"drug_use": i % 2, "cheating": i % 4}): i for i in range(100)}
    slots_now, filled, reports_width, _ = slots.sizes(db.conn, stored.id)
    assert filled == 100 and (slots_now - filled) * 4 >= slots_now and slots_now >= 128
    # A report wider than the slots (here: the slots made narrow by hand) rebuilds them wider.
    slots.rebuild(db.conn, stored.id, room=0, reports_width=0, design_width=0)
    narrow = slots.sizes(db.conn, stored.id)[2]
    wide = store_response(db, stored, {"drug_use": 1, "cheating": 3, "age_group": 3})
    rows = dict(db.execute("SELECT id, reports FROM responses").fetchall())
    assert set(rows) == set(ids) | {wide}
    for rid, i in ids.items():
        assert json.loads(rows[rid]) == {"drug_use": i % 2, "cheating": i % 4}
    assert slots.sizes(db.conn, stored.id)[2] >= narrow
    widths = {n for (n,) in db.execute("SELECT length(reports) FROM response_slots WHERE survey_id = ?", [stored.id])}
    assert len(widths) == 1  # every slot of the survey has the same width
    assert respondent_count(db, stored.id) == 101
    assert option_counts(db, stored.id)["cheating"].sum() == 101


def test_the_view_reads_and_deletes_like_the_table(db, stored, db_path):
    insert_many(db, stored, {"drug_use": np.arange(50) % 2, "cheating": np.arange(50) % 4})
    conn = sqlite3.connect(db_path)
    try:
        row = conn.execute("SELECT * FROM responses LIMIT 1").fetchone()
        assert len(row) == 6 and not row[3].endswith(" ") and row[5] == 1  # reports unpadded, text version 1
        conn.execute("DELETE FROM responses WHERE id = ?", [row[0]])
        conn.commit()
        freed = conn.execute("SELECT filled, trim(reports), length(reports) FROM response_slots WHERE id = ?",
                             [row[0]]).fetchone()
    finally:
        conn.close()
    assert freed[0] == 0 and freed[1] == "" and freed[2] > 0  # a free slot again, its bytes blanked
    assert len(load_db_dataset(db, "demo").columns["drug_use"]) == 49
    assert slots.sizes(db.conn, stored.id)[1] == 49


def test_padding_keeps_eight_bytes():
    """SQLite stores 0 and 1 in no bytes, then 1, 2, 3, 4, 6 or 8: count and pad make eight."""
    conn = sqlite3.connect(":memory:")
    sizes = {0: 0, 1: 0, 2: 1, 127: 1, 128: 2, 32767: 2, 32768: 3, 2**23: 4, 2**31: 6, 2**47: 8, 2**62: 8}
    for n, size in sizes.items():
        pad = conn.execute(f"SELECT {slots.padding(':n')}", {"n": n}).fetchone()[0]
        assert pad == slots.pad_of(n) == bytes(8 - size), n


def test_a_growth_pass_doubles_the_slots_in_bounded_steps_and_keeps_every_response(db, stored):
    """A pass starts when fewer than half the slots are free and rewrites at most about
    :data:`.slots.STEP` slots per step; free slots it did not touch keep their keys (a full
    :func:`.slots.rebuild` would have drawn every free key again), and every response stays."""
    insert_many(db, stored, {"drug_use": np.arange(1000) % 2, "cheating": np.arange(1000) % 4})
    total, filled, _, _ = slots.sizes(db.conn, stored.id)
    with db.conn:
        db.execute(f"UPDATE response_slot_sizes SET filled = filled + {total // 2 + 1 - filled}")  # make it due
        assert slots.growth_due(db.conn, stored.id)
        db.execute(f"UPDATE response_slot_sizes SET filled = filled - {total // 2 + 1 - filled}")
    before = dict(db.execute("SELECT id, reports FROM response_slots").fetchall())
    steps = 0
    while True:
        old = {r for (r,) in db.execute("SELECT id FROM response_slots")}
        with db.conn:
            more = slots.grow_step(db.conn, stored.id, step=300)
        new = {r for (r,) in db.execute("SELECT id FROM response_slots")}
        steps += 1
        assert len(new - old) <= 300 + 2  # a bounded step (plus the slots that share the last prefix)
        if not more:
            break
    assert steps >= total // 300
    after = dict(db.execute("SELECT id, reports FROM response_slots").fetchall())
    assert len(after) == 2 * total and slots.sizes(db.conn, stored.id)[:2] == (2 * total, filled)
    assert all(after[rid] == reports for rid, reports in before.items())  # every slot kept, bytes and all
    ids = sorted(after)
    gaps = np.diff([slots.prefix_number(rid) for rid in ids])
    assert (gaps >= 0).all()
    assert not slots.growth_due(db.conn, stored.id)  # the pass ended; 3/4 free again
    assert respondent_count(db, stored.id) == 1000
    assert option_counts(db, stored.id)["cheating"].sum() == 1000


def test_prefix_numbers_keep_the_key_order():
    keys = sorted(slots.new_id() for _ in range(2000))
    numbers = [slots.prefix_number(k) for k in keys]
    assert numbers == sorted(numbers)
    assert all(slots.prefix_key(n) == k[:slots.PREFIX] for n, k in zip(numbers, keys))
    drawn = sorted(slots.ids_between(100, 200, 200))
    assert all(slots.prefix_key(100) <= k < slots.prefix_key(200) and len(k) == 16 for k in drawn)


def _bits(key: str) -> int:
    """A key's 96 bits (the inverse of ids_between's encoding)."""
    return sum(slots.KEY_CHARS.index(c) << 6 * (len(key) - 1 - i) for i, c in enumerate(key))


def test_keys_between_are_uniform_over_their_range():
    """ids_between draws every key of its range alike: each prefix of a range that is not a power of two
    (rejection, not a biased modulo), each of the 66 bits after the prefix, and each key distinct."""
    from scipy.stats import chisquare

    low, high, n = 61, 68, 70_000
    keys = slots.ids_between(low, high, n)
    assert len(keys) == n == len(set(keys)) and all(len(k) == slots.KEY_LENGTH for k in keys)
    prefixes = np.array([slots.prefix_number(k) for k in keys])
    assert prefixes.min() >= low and prefixes.max() < high
    assert chisquare(np.bincount(prefixes - low, minlength=high - low)).pvalue > 1e-6
    bits = np.array([[(_bits(k) >> b) & 1 for b in range(slots.SUFFIX_BITS)] for k in keys[:4000]])
    assert (abs(bits.mean(axis=0) - 0.5) < 0.05).all()  # 4,000 draws: 0.05 is over six standard deviations
    assert all(_bits(k) >> slots.SUFFIX_BITS == p for k, p in zip(keys[:4000], prefixes))
    whole = slots.ids_between(0, slots.PREFIXES, 2000)  # the whole range, a power of two: no draw refused
    assert len(set(whole)) == 2000 and max(map(slots.prefix_number, whole)) >= slots.PREFIXES // 2
