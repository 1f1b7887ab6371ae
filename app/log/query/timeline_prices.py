"""The timeline's price lookups (issue 31): the estimated cost of an attempt's tokens at a price table (USD per
million tokens; see :mod:`app.store.timeline_cache` for where the table comes from).  Pure, no Qt."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional


def cost_of(tokens: Mapping[str, int], price: Optional[Mapping[str, Any]]) -> Optional[float]:
    """Estimated cost of ``tokens`` at ``price`` (USD per million tokens: ``input``, ``output``, ``cacheRead``).
    dsh's TokenUsage counts are disjoint (spec §2): cache writes are priced as input, reasoning as output."""
    q = _price_floats(price)
    return _cost(tokens, q) if q is not None else None


def _price_floats(price: Optional[Mapping[str, Any]]) -> Optional[tuple[float, float, float]]:
    """(input, output, cache read) USD per million tokens of a price entry, None when it has none."""
    if not price:
        return None
    try:
        p_in, p_out = float(price.get("input", 0)), float(price.get("output", 0))
        p_cache = float(price.get("cacheRead", p_in))
    except (TypeError, ValueError):
        return None
    return p_in, p_out, p_cache


def _cost(tokens: Mapping[str, int], q: tuple[float, float, float]) -> float:
    p_in, p_out, p_cache = q
    t = tokens.get
    return ((t("input", 0) + t("cacheWrite", 0)) * p_in + t("cacheRead", 0) * p_cache
            + (t("output", 0) + t("reasoning", 0)) * p_out) / 1e6


class Prices:
    """Price lookups of a table (model name, else the longest matching ``prefix*``), remembered per model."""

    def __init__(self, prices: Mapping[str, Any]) -> None:
        self.prices = prices
        self.memo: dict[object, Optional[Mapping[str, Any]]] = {}
        self.floats: dict[object, Optional[tuple[float, float, float]]] = {}

    def of(self, model: object) -> Optional[Mapping[str, Any]]:
        if not isinstance(model, str):
            return None
        if model not in self.memo:
            p = self.prices.get(model)
            if not isinstance(p, Mapping):
                best = max((k for k in self.prices if k.endswith("*") and model.startswith(k[:-1])), key=len,
                           default=None)
                p = self.prices[best] if best is not None and isinstance(self.prices[best], Mapping) else None
            self.memo[model] = p
        return self.memo[model]

    def cost(self, tokens: Mapping[str, int], model: object) -> Optional[float]:
        """:func:`cost_of` ``tokens`` at ``model``'s price (its floats read once per model)."""
        try:
            q = self.floats[model]
        except KeyError:
            q = self.floats[model] = _price_floats(self.of(model))
        except TypeError:                             # (a model that is no key: no price, as of() says)
            q = _price_floats(self.of(model))
        return _cost(tokens, q) if q is not None else None


__all__ = ["Prices", "cost_of"]
