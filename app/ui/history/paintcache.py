"""The history delegate's caches, bounded by bytes of what the screen shows (issue 36).

Row pixmaps and row documents were kept by count or by a fixed budget (32 MB of pixmaps, about
six to ten viewports at 1400 x 900; 400 documents, about 9 MB): after a scroll through a few
pages, 42 MB of the window's anonymous memory was those caches, whatever the window's size.

* Pixmaps: at most ``PIX_SCREENS`` viewports of pixels (the screen and one viewport above and
  below it: the band the idle-time warmer renders, ``warm.py``), at 4 bytes a pixel.  The warmer
  renders the band's rows nearest first and stops where the band's pixmaps would pass the
  budget (``pix_band``), so it never evicts what it just rendered.
* Documents: at most ``DOC_SCREENS`` viewports of pixels at ``DOC_BYTES_PER_PX`` (a laid-out
  QTextDocument costs about 20 KB plus 80 bytes a character: measured), never fewer than
  ``MIN_DOCS`` (the rows of a screen: a paint never rebuilds what the same paint built).

A pixmap is keyed by its row (weakly held: a dropped page's rows are freed) and the row's state,
not by its document: a row blitted from its pixmap needs no document at all, so documents can be
evicted sooner than pixmaps.  Pure bookkeeping plus byte estimates: no painting here.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Optional

PIX_SCREENS = 3          # pixmaps: the screen and a viewport above and below it
DOC_SCREENS = 4          # documents: what about four screens of rows cost ...
DOC_BYTES_PER_PX = 1.5   # ... at this many bytes per pixel of viewport (a screen of text: ~1 MB at 900 x 750)
MIN_DOCS = 64            # documents kept whatever their size (more than the rows of a screen)
MIN_BUDGET = 1 << 20     # neither cache is bounded below this (a tiny or hidden viewport)
DOC_BASE = 20_000        # a laid-out document's bytes: a base ...
DOC_PER_CHAR = 80        # ... per character (text, layout lines, glyph runs) ...
DOC_PER_BLOCK = 1_000    # ... and per block (measured on history rows at 900 px: text, mono, Markdown)


def pixmap_bytes(w: int, h: int, dpr: float = 1.0) -> int:
    """The bytes of a row pixmap of ``w`` x ``h`` logical pixels (ARGB32)."""
    return int(w * dpr + 0.5) * int(h * dpr + 0.5) * 4


def doc_bytes(doc: Any) -> int:
    """An estimate of a laid-out QTextDocument's heap (measured: within ~20 % on history rows)."""
    return DOC_BASE + DOC_PER_CHAR * doc.characterCount() + DOC_PER_BLOCK * doc.blockCount()


def screen_pixels(vp: Any) -> float:
    """Device pixels of one viewport."""
    dpr = vp.devicePixelRatioF()
    return vp.width() * vp.height() * dpr * dpr


def pix_budget(vp: Any) -> int:
    return max(MIN_BUDGET, int(PIX_SCREENS * 4 * screen_pixels(vp)))


def doc_budget(vp: Any) -> int:
    return max(MIN_BUDGET, int(DOC_SCREENS * DOC_BYTES_PER_PX * screen_pixels(vp)))


class ByteLRU:
    """key -> value, least recently used first, each with its bytes; past ``budget()`` bytes the
    oldest entries go (``floor`` entries are always kept)."""

    def __init__(self, budget: Callable[[], int], floor: int = 1):
        self.budget = budget
        self.floor = floor
        self._d: OrderedDict = OrderedDict()     # key -> (value, bytes)
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._d

    def get(self, key: Hashable) -> Optional[Any]:
        e = self._d.get(key)
        if e is None:
            return None
        self._d.move_to_end(key)
        return e[0]

    def put(self, key: Hashable, value: Any, nbytes: int) -> Any:
        old = self._d.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        self._d[key] = (value, nbytes)
        self.bytes += nbytes
        self.shrink()
        return value

    def pop(self, key: Hashable) -> None:
        e = self._d.pop(key, None)
        if e is not None:
            self.bytes -= e[1]

    def shrink(self) -> None:
        """Evict the least recently used entries past the budget (a smaller viewport: call it)."""
        limit = self.budget()
        while self.bytes > limit and len(self._d) > self.floor:
            _k, (_v, n) = self._d.popitem(last=False)
            self.bytes -= n

    def clear(self) -> None:
        self._d.clear()
        self.bytes = 0


class PixmapCache(ByteLRU):
    """Row pixmaps: key -> (weak reference to the row, QPixmap); bounded by ``pix_budget``."""

    def __init__(self, vp: Any):
        super().__init__(lambda: pix_budget(vp))

    def pixmap(self, key: Hashable, row: Any) -> Optional[Any]:
        """The row's pixmap under ``key`` (None: none, or the id in the key is another row's now)."""
        e = self.get(key)
        if e is None:
            return None
        if e[0]() is not row:
            self.pop(key)
            return None
        return e[1]

    def fits(self, nbytes: int) -> bool:
        """``nbytes`` of pixmaps stay within the budget (the warmer's band)."""
        return nbytes <= self.budget()
