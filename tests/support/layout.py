"""The attack on the page layout: the order of cells within a page of the database file, read as bytes.

SQLite writes a new cell below the cells already in its page, so within one page a cell at a
higher byte offset was (usually) written earlier.  :func:`order_agreement` finds each known key
in the raw pages of a file and counts, over every pair of keys found in the same page, how often
the offset order agrees with a given order (the order of submission): about 0.5 when the layout
says nothing about that order, near 1 when it gives it away.
"""

from __future__ import annotations

from pathlib import Path


def page_size(data: bytes) -> int:
    size = int.from_bytes(data[16:18], "big")
    return 65536 if size == 1 else size


def order_agreement(path, keys_in_order: list[str]) -> tuple[float, int]:
    """``(fraction of same-page pairs whose offsets agree with the order, number of pairs)``.

    A pair agrees when the key that comes first in ``keys_in_order`` sits at the higher offset.
    """
    data = Path(path).read_bytes()
    size = page_size(data)
    rank = {key.encode(): i for i, key in enumerate(keys_in_order)}
    agree = pairs = 0
    for start in range(0, len(data), size):
        page = data[start:start + size]
        found = []
        for key, i in rank.items():
            offset = page.find(key)
            if offset >= 0:
                found.append((offset, i))
        found.sort(reverse=True)  # highest offset first: the order SQLite wrote them in
        ranks = [i for _, i in found]
        for a in range(len(ranks)):
            for b in range(a + 1, len(ranks)):
                pairs += 1
                agree += ranks[a] < ranks[b]
    return (agree / pairs if pairs else float("nan")), pairs
