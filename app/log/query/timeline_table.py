"""The timeline's spans stored by column (issue 31): what the cache saves and reads back.

A log of 1 GB has ~300,000 spans; one Python dict per span is most of the cost of reading them back.  A
:class:`SpanTable` keeps them grouped by *shape* (the span's keys, in their order: a timeline has a dozen shapes)
and, within a shape, by column:

* ``c``: one value for every span of the shape (a ``kind``, a ``dispatchType``, a ``model``);
* ``i``: integers (none a bool) or null, as the bytes of 64-bit integers (null: :data:`NULL_INT`, never a
  logged value: the spans' integers are JSON-safe, ``|v| < 2**53``);
* ``d``: objects with the same keys in the same order (an attempt's ``tokens``): a table of their own;
* ``v``: any other values, as they are.

``order`` names the shape of each span in log order.  A span is a dict again only when asked (:meth:`dicts`,
iteration, indexing): the same keys in the same order, the same values of the same types (an int is never a
float or a bool), so ``json.dumps`` of :meth:`dicts` is byte for byte that of the spans it was made from
(``tests/test_timeline_table.py``).  :meth:`column` gives one field of every span in log order without a dict.
:meth:`pack` / :meth:`unpack` are the MessagePack form the cache saves (a few arrays, so reading it back costs
about its bytes).
"""
from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any, Optional, Union, overload

import msgspec

from ..format.payloads import JsonObj
from ..gcpause import collector_paused
from ..index.fastindex import load_rowscan_c

NULL_INT = -(1 << 63)
_LIMIT = 1 << 62
_NONE = type(None)
_LITTLE = sys.byteorder == "little"
Column = list[Any]       # [code, payload] (``c``, ``i``, ``v``) or ["d", keys, columns]
_columns = getattr(load_rowscan_c(), "tl_columns", None)
_shapes_c = getattr(load_rowscan_c(), "tl_shapes", None)
_getcols = getattr(load_rowscan_c(), "tl_getcols", None)


def _ints(raw: bytes) -> array[int]:
    a = array("q")
    a.frombytes(raw)
    if not _LITTLE:
        a.byteswap()
    return a


def columns_py(rows: list[JsonObj], keys: list[str]) -> Optional[list[Union[bytes, list[Any]]]]:
    """The columns of ``rows`` (dicts each holding exactly ``keys``, in that order): per key, the bytes of its
    ``i`` column (:func:`encode_column`) when that is one, else the list of its values; None when a row is not such
    a dict.  The definition of ``tl_columns`` (the row scanner's, which reads each dict once)."""
    if not all(type(r) is dict and list(r) == keys for r in rows):
        return None
    out: list[Union[bytes, list[Any]]] = []
    for k in keys:
        vals = [r[k] for r in rows]
        col = encode_column(vals)
        out.append(col[1] if col[0] == "i" else vals)
    return out


def getcols_py(rows: list[JsonObj], keys: list[str]) -> Optional[list[list[Any]]]:
    """``[[r.get(k) for r in rows] for k in keys]`` (None when a row is not a dict): the definition of
    ``tl_getcols`` (the row scanner's, which reads each dict once for all the keys)."""
    if not all(type(r) is dict for r in rows):
        return None
    return [[r.get(k) for r in rows] for k in keys]


def shapes_py(spans: list[JsonObj]) -> tuple[bytes, list[tuple[tuple[str, ...], list[JsonObj]]]]:
    """The spans grouped by shape: (the shape of each span, as bytes; each shape's keys and spans in log order), the
    shapes in the order of their first span (ValueError over 256).  The definition of ``tl_shapes`` (the row
    scanner's, which declines with None where this raises or a span is not a dict)."""
    keys_of = list(map(tuple, spans))
    index = {k: i for i, k in enumerate(dict.fromkeys(keys_of))}
    if len(index) > 256:
        raise ValueError("more than 256 span shapes")
    order = bytes(map(index.__getitem__, keys_of))
    groups: list[tuple[tuple[str, ...], list[JsonObj]]] = [(k, []) for k in index]
    for s, i in zip(spans, order):
        groups[i][1].append(s)
    return order, groups


def encode_rows(rows: list[JsonObj], keys: list[str]) -> list[Column]:
    """The columns of ``rows`` (dicts each holding exactly ``keys``, in that order), encoded
    (:func:`encode_column`); the integers and the lists of values made by ``tl_columns`` where the row scanner is
    built (its definition: :func:`columns_py`)."""
    got = _columns(rows, keys) if _columns is not None else None
    if got is None:
        return [encode_column(list(map(itemgetter(k), rows))) for k in keys]
    out = []
    for c in got:
        if type(c) is bytes:
            if not _LITTLE:
                a = array("q")
                a.frombytes(c)
                a.byteswap()
                c = a.tobytes()
            out.append(["i", c])
        else:
            out.append(encode_column(c))
    return out


def encode_column(vals: list[Any]) -> Column:
    types = set(map(type, vals))
    if types == {str}:                  # (one value: a count, no set of every string hashed)
        return ["c", vals[0]] if vals.count(vals[0]) == len(vals) else ["v", vals]
    if types <= {int, _NONE} and int in types:
        try:
            a = array("q", vals if _NONE not in types else [NULL_INT if v is None else v for v in vals])
        except OverflowError:
            a = None
        real = vals if _NONE not in types else [v for v in vals if v is not None]
        if a is not None and min(real) > -_LIMIT and max(real) < _LIMIT:
            if not _LITTLE:
                a.byteswap()
            return ["i", a.tobytes()]
    if types == {dict}:
        keys = set(map(tuple, vals))
        if len(keys) == 1:
            ks = next(iter(keys))
            if ks:
                return ["d", list(ks), encode_rows(vals, list(ks))]
    return ["v", vals]


def _valid(col: Any, n: int) -> bool:
    """``col`` is a column of ``n`` values (checked when a saved table is read: then reading it cannot fail)."""
    if type(col) is not list or not col:
        return False
    code = col[0]
    if code == "c":
        return len(col) == 2
    if code == "i":
        return len(col) == 2 and type(col[1]) is bytes and len(col[1]) == 8 * n
    if code == "v":
        return len(col) == 2 and type(col[1]) is list and len(col[1]) == n
    return code == "d" and len(col) == 3 and type(col[1]) is list and type(col[2]) is list \
        and len(col[1]) == len(col[2]) and all(type(k) is str for k in col[1]) and all(_valid(c, n) for c in col[2])


def _decode_column(col: Column, n: int) -> Sequence[Any]:
    """A column's values (read-only sequence of ``n``)."""
    code = col[0]
    if code == "c":
        return _Const(col[1], n)
    if code == "i":
        a = _ints(col[1])
        return a.tolist() if NULL_INT not in a else [None if v == NULL_INT else v for v in a]
    if code == "d":
        keys = col[1]
        subs = [_decode_column(c, n) for c in col[2]]
        return [dict(zip(keys, t)) for t in zip(*subs)] if subs else [{} for _ in range(n)]
    vals: list[Any] = col[1]
    return vals


class _Const(Sequence[Any]):
    __slots__ = ("value", "n")

    def __init__(self, value: Any, n: int) -> None:
        self.value, self.n = value, n

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: Union[int, slice]) -> Any:
        if isinstance(i, slice):
            return [self.value] * len(range(*i.indices(self.n)))
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return self.value

    def __iter__(self) -> Iterator[Any]:
        return repeat(self.value, self.n)


class _Shape:
    """The spans of one shape: their keys and their (encoded) columns, decoded when first read."""
    __slots__ = ("keys", "cols", "n", "_decoded")

    def __init__(self, keys: list[str], cols: list[Column], n: int) -> None:
        self.keys, self.cols, self.n = keys, cols, n
        self._decoded: Optional[list[Sequence[Any]]] = None

    def columns(self) -> list[Sequence[Any]]:
        if self._decoded is None:
            self._decoded = [_decode_column(c, self.n) for c in self.cols]
        return self._decoded

    def column(self, key: str) -> Optional[Sequence[Any]]:
        try:
            k = self.keys.index(key)
        except ValueError:
            return None
        got = self._decoded[k] if self._decoded is not None else _decode_column(self.cols[k], self.n)
        return got

    def dicts(self) -> list[JsonObj]:
        keys = self.keys
        return [dict(zip(keys, t)) for t in zip(*self.columns())]

    def dicts_of(self, keys: Sequence[str]) -> list[JsonObj]:
        """Each span's dict of only ``keys`` (those it has, in its own order)."""
        ks = [k for k in self.keys if k in keys]
        cols = self.columns()
        return [dict(zip(ks, t)) for t in zip(*(cols[self.keys.index(k)] for k in ks))]


class SpanTable(Sequence[JsonObj]):
    """Spans in log order, kept by shape and column (see the module's doc).  A sequence of span dicts (built
    when read; :meth:`dicts` builds them all once and keeps them)."""

    def __init__(self, shapes: list[_Shape], order: bytes) -> None:
        self.shapes = shapes
        self.order = order
        self._dicts: Optional[list[JsonObj]] = None
        self._row: Optional[array[int]] = None

    # ------------------------------------------------------------------ building and saving
    @classmethod
    def of(cls, spans: Sequence[JsonObj]) -> SpanTable:
        """The table of ``spans`` (dicts, in log order); the dicts are kept as they are (:meth:`dicts`)."""
        with collector_paused():        # (lists and tuples of the spans' values, no cycles)
            return cls._of(spans if isinstance(spans, list) else list(spans))

    @classmethod
    def _of(cls, spans: list[JsonObj]) -> SpanTable:
        got = _shapes_c(spans) if _shapes_c is not None else None
        order, groups = got if got is not None else shapes_py(spans)
        shapes = [_Shape(list(keys), encode_rows(rows, list(keys)) if keys else [], len(rows)) for keys, rows in groups]
        t = cls(shapes, order)
        t._dicts = spans
        return t

    def pack(self) -> list[Any]:
        """The MessagePack-ready form: ``[order, [[keys, n, columns], ...]]``."""
        return [self.order, [[s.keys, s.n, s.cols] for s in self.shapes]]

    @classmethod
    def unpack(cls, packed: Any) -> SpanTable:
        """The table of :meth:`pack`'s form (ValueError when it is not one)."""
        try:
            order, shapes = packed
            got = [_Shape(list(keys), list(cols), int(n)) for keys, n, cols in shapes]
        except (TypeError, ValueError) as e:
            raise ValueError(f"not a span table: {e}") from None
        if not isinstance(order, bytes) or any(len(s.cols) != len(s.keys) for s in got) \
                or any(order.count(i) != s.n for i, s in enumerate(got)) or (order and max(order) >= len(got)) \
                or not all(_valid(c, s.n) for s in got for c in s.cols) \
                or not all(type(k) is str for s in got for k in s.keys):
            raise ValueError("not a span table")
        return cls(got, order)

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        return _from_bytes, (msgspec.msgpack.encode(self.pack()),)

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self.order)

    def dicts(self) -> list[JsonObj]:
        """Every span as a dict, in log order (built once)."""
        if self._dicts is None:
            per = [iter(s.dicts()) for s in self.shapes]
            nexts = [it.__next__ for it in per]
            self._dicts = [nexts[i]() for i in self.order]
        return self._dicts

    def iter_dicts(self) -> Iterator[JsonObj]:
        """Every span as a dict, in log order, made one at a time and not kept (those :meth:`dicts` built, when
        it was called)."""
        if self._dicts is not None:
            yield from self._dicts
            return
        per = [_shape_dicts(s) for s in self.shapes]
        nexts = [it.__next__ for it in per]
        for i in self.order:
            yield nexts[i]()

    @overload
    def __getitem__(self, i: int) -> JsonObj: ...

    @overload
    def __getitem__(self, i: slice) -> list[JsonObj]: ...

    def __getitem__(self, i: Union[int, slice]) -> Any:
        if self._dicts is not None or isinstance(i, slice):
            return self.dicts()[i]
        n = len(self.order)
        if not -n <= i < n:
            raise IndexError(i)
        i %= n
        if self._row is None:                     # (each span's index within its shape)
            seen = [0] * len(self.shapes)
            row = array("q", bytes(8 * n))
            for k, sh in enumerate(self.order):
                row[k] = seen[sh]
                seen[sh] += 1
            self._row = row
        shape = self.shapes[self.order[i]]
        j = self._row[i]
        return dict(zip(shape.keys, (c[j] for c in shape.columns())))

    def __iter__(self) -> Iterator[JsonObj]:
        return iter(self.dicts())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SpanTable):
            return self.dicts() == other.dicts()
        if isinstance(other, list):
            return self.dicts() == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def has_kind(self, kind: str) -> bool:
        """Whether a span is of ``kind`` (read from the ``kind`` columns, no dict built)."""
        return any(self._holds(sh, kind) for sh in self.shapes)

    @staticmethod
    def _holds(sh: _Shape, kind: str) -> bool:
        c = sh.column("kind")
        return c is not None and (c.value == kind if isinstance(c, _Const) else kind in c)

    def of_kind(self, kind: str, keys: Optional[Sequence[str]] = None) -> list[JsonObj]:
        """The spans of ``kind`` as dicts, in log order (only the shapes holding such spans are built); ``keys``:
        only those of their keys (``kind`` among them)."""
        if self._dicts is not None:
            got = [s for s in self._dicts if s["kind"] == kind]
            return got if keys is None else [{k: s[k] for k in keys if k in s} for s in got]
        per: dict[int, Iterator[JsonObj]] = {}
        for k, sh in enumerate(self.shapes):
            if self._holds(sh, kind):
                per[k] = iter(sh.dicts() if keys is None else sh.dicts_of(keys))
        out = []
        for k in self.order:
            it = per.get(k)
            if it is not None:
                s = next(it)
                if s["kind"] == kind:
                    out.append(s)
        return out

    def columns_of(self, keys: Sequence[str]) -> dict[str, list[Any]]:
        """:meth:`column` of each of ``keys`` (the dicts, when kept, read once for all of them: ``tl_getcols``)."""
        if self._dicts is not None and _getcols is not None and len(keys) > 1:
            with collector_paused():        # (lists of the spans' values, no cycles)
                got = _getcols(self._dicts, list(keys))
            if got is not None:
                return dict(zip(keys, got))
        return {k: self.column(k) for k in keys}

    def column(self, key: str) -> list[Any]:
        """``key`` of every span in log order (None where a span has no such key), without building a dict."""
        if self._dicts is not None:
            return [s.get(key) for s in self._dicts]
        per: list[Iterator[Any]] = []
        for s in self.shapes:
            c = s.column(key)
            per.append(iter(c) if c is not None else repeat(None))
        nexts = [it.__next__ for it in per]
        return [nexts[i]() for i in self.order]


def _shape_dicts(s: _Shape) -> Iterator[JsonObj]:
    keys = s.keys
    return (dict(zip(keys, t)) for t in zip(*s.columns()))


def _from_bytes(blob: bytes) -> SpanTable:
    return SpanTable.unpack(msgspec.msgpack.decode(blob))


__all__ = ["NULL_INT", "SpanTable"]
