"""Invitation tokens never start with a character a spreadsheet guard would prefix in the CSV."""

from __future__ import annotations

import csv
import io

from deniable.server.store.invitations import links_csv, new_token


def test_tokens_start_with_a_letter_or_digit_and_the_csv_holds_them_verbatim():
    tokens = [new_token() for _ in range(5000)]  # about 150 would start with - or _ otherwise
    assert all(t[0].isalnum() and len(t) == 24 for t in tokens)
    rows = list(csv.reader(io.StringIO(links_csv(tokens, "https://example.org/s/demo"))))[1:]
    assert [row[0] for row in rows] == tokens
