"""Form fields shared by the dashboard's forms."""

from __future__ import annotations

from wtforms import IntegerField

MAX_DIGITS = 18


class BoundedIntegerField(IntegerField):
    """An ``IntegerField`` that refuses integers of more than 18 digits as invalid input.

    WTForms' ``NumberRange`` calls ``math.isnan`` on the value, which raises OverflowError for
    an integer beyond float range (``?fake=1000…0`` with 400 digits was a 500); every bound in
    this app is far below 10^18.
    """

    def process_formdata(self, valuelist):
        super().process_formdata(valuelist)
        if self.data is not None and abs(self.data) >= 10**MAX_DIGITS:
            self.data = None
            raise ValueError(f"Not a valid integer value: more than {MAX_DIGITS} digits.")
