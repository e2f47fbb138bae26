"""The attack on the page layout: the order of cells within a page of the database file, read as bytes.

SQLite writes a new cell below the cells already in its page, so within one page a cell at a
higher byte offset was (usually) written earlier.  :func:`order_agreement` finds each known key
in the raw pages of a file and counts, over every pair of keys found in the same page, how often
the offset order agrees with a given order (the order of submission): about 0.5 when the layout
says nothing about that order, near 1 when it gives it away.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def page_size(data: bytes) -> int:
    size = int.from_bytes(data[16:18], "big")
    return 65536 if size == 1 else size


def order_agreement(path, keys_in_order: list[str]) -> tuple[float, int]:
    """``(fraction of same-page pairs whose offsets agree with the order, number of pairs)``.

    Each key is looked for inside the live cells of every b-tree page (:func:`btree_cells`, from the
    file's own ``sqlite_master``), not in a page's free space, where stale copies of moved cells can
    lie.  A pair agrees when the key that comes first in ``keys_in_order`` sits in the cell at the
    higher offset.
    """
    data = Path(path).read_bytes()
    size = page_size(data)
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    try:
        roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0"))
    finally:
        conn.close()
    pages = {number: cells for number, (_, cells) in btree_cells(data, roots).items()}
    found: dict[int, list[tuple[int, int]]] = {}
    for rank, key in enumerate(keys_in_order):
        key = key.encode()
        at = data.find(key)
        while at >= 0:
            number, offset = at // size + 1, at % size
            cell = next((start for start, body in pages.get(number, ()) if start <= offset < start + len(body)),
                        None)
            if cell is not None:
                found.setdefault(number, []).append((cell, rank))
                break
            at = data.find(key, at + 1)
    agree = pairs = 0
    for cells in found.values():
        ranks = [rank for _, rank in sorted(cells, reverse=True)]  # highest offset first: written first
        for a in range(len(ranks)):
            for b in range(a + 1, len(ranks)):
                pairs += 1
                agree += ranks[a] < ranks[b]
    return (agree / pairs if pairs else float("nan")), pairs


# ------------------------------------------------------------------ every b-tree, cell by cell


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's big-endian varint at ``at``: ``(value, offset after it)``."""
    value = 0
    for i in range(9):
        byte = data[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    raise AssertionError("unreachable")


def _cell_size(page: bytes, at: int, kind: int, usable: int) -> int:
    """The size in bytes of the cell at ``at`` of a page of type ``kind`` (fileformat.html, 1.6)."""
    start = at
    if kind in (2, 5):  # interior: a 4-byte left child first
        at += 4
    if kind == 5:  # table interior: the child pointer and a rowid, no payload
        _, at = _varint(page, at)
        return at - start
    payload, at = _varint(page, at)
    if kind == 13:
        _, at = _varint(page, at)  # the rowid
    most = usable - 35 if kind == 13 else (usable - 12) * 64 // 255 - 23
    if payload <= most:
        return at - start + payload
    least = (usable - 12) * 32 // 255 - 23
    local = least + (payload - least) % (usable - 4)
    if local > most:
        local = least
    return at - start + local + 4  # and the first overflow page's number


def btree_cells(data: bytes, roots: dict[str, int]) -> dict[int, tuple[str, list[tuple[int, bytes]]]]:
    """Walk every b-tree from its root page, leaf **and** interior pages, by raw bytes: ``{page number:
    (name of the b-tree, [(offset, cell bytes), …])}``.  ``roots`` maps a b-tree's name to its root
    page (``sqlite_master.rootpage``; ``sqlite_master`` itself is page 1)."""
    size = page_size(data)
    usable = size - data[20]
    out: dict[int, tuple[str, list[tuple[int, bytes]]]] = {}
    for name, root in {"sqlite_master": 1, **roots}.items():
        stack = [root]
        while stack:
            number = stack.pop()
            if number in out or not 0 < number <= len(data) // size:
                continue
            page = data[(number - 1) * size:number * size]
            parsed = _page_cells(page, 100 if number == 1 else 0, usable)
            if parsed is None:
                continue
            cells, children = parsed
            stack.extend(children)
            out[number] = (name, cells)
    return out


_parsed: dict[tuple[bytes, int, int], tuple[list, list] | None] = {}


def _page_cells(page: bytes, header: int, usable: int):
    """``([(offset, cell bytes), …], [child page numbers])`` of a b-tree page, or None for another page
    (remembered by the page's bytes: most pages do not change from one snapshot to the next)."""
    key = (page, header, usable)
    if key in _parsed:
        return _parsed[key]
    kind = page[header]
    result = None
    if kind in (2, 5, 10, 13):
        count = int.from_bytes(page[header + 3:header + 5], "big")
        pointers = header + (12 if kind in (2, 5) else 8)
        cells, children = [], []
        for i in range(count):
            at = int.from_bytes(page[pointers + 2 * i:pointers + 2 * i + 2], "big")
            cells.append((at, page[at:at + _cell_size(page, at, kind, usable)]))
            if kind in (2, 5):
                children.append(int.from_bytes(page[at:at + 4], "big"))
        if kind in (2, 5):
            children.append(int.from_bytes(page[header + 8:header + 12], "big"))
        result = (cells, children)
    if len(_parsed) > 20_000:
        _parsed.clear()
    _parsed[key] = result
    return result


class LayoutWatch:
    """Which write made each cell what it is: snapshots of a database file's b-tree cells taken after
    each write, then, over the last snapshot, how often the byte offsets within a page agree with the
    order of the writes.

    A cell is *written by* snapshot ``i`` when its bytes are in its b-tree in every snapshot from
    ``i`` on and not in ``i − 1``: a new row, or one whose content changed (a count incremented, a
    slot filled).  A cell that only moved, with the same bytes, keeps its writer (SQLite moving rows
    in key order reveals nothing; a row that grows and moves has new bytes anyway).  The attacker
    compares the cells of one page, so :meth:`agreement` counts the pairs of cells of one page written
    by two different writes (snapshot 0, before the writes, is left out): a pair agrees when the
    earlier write's cell sits at the higher offset (where SQLite puts the older cells).  0.5: the
    layout says nothing about the order; 1: it gives it away.
    """

    def __init__(self):
        self.writer: dict[tuple[str, bytes], int] = {}
        self.where: dict[tuple[str, bytes], tuple[int, int]] = {}
        self.snapshots = 0

    def snapshot(self, path, roots: dict[str, int]) -> None:
        writer, where = {}, {}
        for number, (name, cells) in btree_cells(Path(path).read_bytes(), roots).items():
            for offset, raw in cells:
                key = (name, raw)
                writer[key] = self.writer.get(key, self.snapshots)
                where[key] = (number, offset)
        self.writer, self.where = writer, where
        self.snapshots += 1

    def agreement(self, tables=None) -> tuple[float, int]:
        """``(fraction of same-page pairs in write order, pairs)`` over the b-trees named in ``tables``
        (all when None)."""
        by_page: dict[int, list[tuple[int, int]]] = {}
        for key, i in self.writer.items():
            if i and (tables is None or key[0] in tables):
                number, offset = self.where[key]
                by_page.setdefault(number, []).append((offset, i))
        agree = pairs = 0
        for cells in by_page.values():
            cells.sort(reverse=True)
            for a in range(len(cells)):
                for b in range(a + 1, len(cells)):
                    if cells[a][1] != cells[b][1]:
                        pairs += 1
                        agree += cells[a][1] < cells[b][1]
        return (agree / pairs if pairs else float("nan")), pairs
