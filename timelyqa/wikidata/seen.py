"""The entity ids a dump has given so far, in memory that suits Wikidata's dense numbering: a full dump's 120
million ids take some 16 MB, where a set of strings would take gigabytes."""

from __future__ import annotations

PAGE_BITS = 16
"""Ids share a page by their number's high bits: 65,536 numbers, 8 KB once the page is a bitmap."""
SPARSE_MAX = 256
"""A page holds its numbers as a set until it has this many (about the bitmap's 8 KB), then becomes a bitmap: a
dense run of ids costs a bit each, ids scattered far apart (a hostile or a filtered dump) a set entry each."""


class SeenIds:
    """`add(eid)` is True the first time an id is added, False after; ids are valid entity ids (`Q42`, `P31`)."""

    def __init__(self) -> None:
        self._pages: dict[tuple[str, int], set[int] | bytearray] = {}

    def add(self, eid: str) -> bool:
        number = int(eid[1:])
        key = (eid[0], number >> PAGE_BITS)
        low = number & ((1 << PAGE_BITS) - 1)
        page = self._pages.get(key)
        if page is None:
            self._pages[key] = {low}
            return True
        if isinstance(page, set):
            if low in page:
                return False
            page.add(low)
            if len(page) >= SPARSE_MAX:
                bits = bytearray(1 << (PAGE_BITS - 3))
                for n in page:
                    bits[n >> 3] |= 1 << (n & 7)
                self._pages[key] = bits
            return True
        mask = 1 << (low & 7)
        if page[low >> 3] & mask:
            return False
        page[low >> 3] |= mask
        return True
