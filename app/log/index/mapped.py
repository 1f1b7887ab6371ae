"""The seq index's arrays read from a map of its cache file (issue 36: file-backed pages the kernel can drop,
not the window's anonymous memory nor its Python heap); :class:`~app.log.index.reader.SeqIndex` holds them."""
from __future__ import annotations

from array import array
from typing import Any, Optional, Union, overload
from collections.abc import Iterator, Sequence


# (name, array typecode) of the SeqIndex arrays, in the order a cache file stores them
INDEX_ARRAYS = (("seg_pos", "q"), ("seg_end", "q"), ("first_seq", "q"), ("last_seq", "q"), ("line0", "q"),
                ("rows", "q"), ("mark_seq", "q"), ("mark_code", "b"))


def _array_of(code: str, data: bytes) -> array[int]:
    a = array(code)
    a.frombytes(data)
    return a


class MappedArray(Sequence[int]):
    """A read-only ``array`` over a view of a mapped file (an index read from its cache file,
    issue 36): reads as the array would (index, slice, iterate, bisect, ``count``, ``index``,
    equality), and pickles as an array of its own."""

    __slots__ = ("view",)

    def __init__(self, view: memoryview) -> None:
        self.view = view

    @property
    def typecode(self) -> str:
        return self.view.format

    @property
    def itemsize(self) -> int:
        return self.view.itemsize

    def __len__(self) -> int:
        return len(self.view)

    @overload
    def __getitem__(self, i: int) -> int: ...

    @overload
    def __getitem__(self, i: slice) -> MappedArray: ...

    def __getitem__(self, i: Union[int, slice]) -> Union[int, MappedArray]:
        if isinstance(i, slice):
            return MappedArray(self.view[i])
        v: int = self.view[i]
        return v

    def __iter__(self) -> Iterator[int]:
        return iter(self.view)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MappedArray):
            other = other.view
        if isinstance(other, (array, memoryview)):
            return bool(self.view == other)
        return NotImplemented

    __hash__ = None                  # type: ignore[assignment]

    def copy(self) -> array[int]:
        """The values as an array of its own."""
        return _array_of(self.view.format, self.view.tobytes())

    def count(self, value: Any) -> int:
        return self.copy().count(value)

    def index(self, value: Any, start: int = 0, stop: Optional[int] = None) -> int:
        return self.copy().index(value, start, len(self) if stop is None else stop)

    def tolist(self) -> list[int]:
        return list(self.view.tolist())

    def __reduce__(self) -> tuple[Any, tuple[str, bytes]]:
        return _array_of, (self.view.format, self.view.tobytes())
