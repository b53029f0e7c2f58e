"""A key-value cache for the running decode batch that appends in place instead of copying itself.

transformers' ``DynamicLayer`` appends a step's keys and values with ``torch.cat``, which copies the
whole cache of every layer at every decode step: for 4 rows of 1,500 tokens that is 18 layers x 2 x
6 MB, about 220 MB written a step, a fifth of a step's time on the 2-core machine (profiled,
docs/results/student-serving.md). ``GrowingLayer`` keeps each tensor in a buffer with room at the
end and hands out a view of the filled part: the values, the shape and the layout of the last
dimension are those ``torch.cat`` gives, so attention computes the same numbers
(tests/distill/test_serve_greedy_head.py compares the tokens).
"""

from __future__ import annotations

from typing import Any

from transformers.cache_utils import DynamicLayer

_ROOM = 128  # tokens of room added past the filled part when a buffer grows (a step adds one)


class _Buffer:
    """One tensor ([batch, heads, length, head_dim]) in a buffer with room to append along length."""

    def __init__(self, value: Any) -> None:
        self.set(value)

    def set(self, value: Any) -> None:
        self.buffer = value
        self.length = value.shape[-2] if value is not None and value.dim() == 4 else 0

    def view(self) -> Any:
        if self.buffer is None or self.buffer.dim() != 4:
            return self.buffer
        return self.buffer[:, :, : self.length]

    def append(self, new: Any) -> Any:
        import torch

        end = self.length + new.shape[-2]
        grown = self.buffer is None or self.buffer.dim() != 4
        if grown or end > self.buffer.shape[-2] or self.buffer.shape[:2] != new.shape[:2]:
            buffer = new.new_empty((*new.shape[:2], end + _ROOM, new.shape[-1]))
            if not grown and self.length:
                buffer[:, :, : self.length] = self.buffer[:, :, : self.length]
            self.buffer = buffer
        with torch.no_grad():
            self.buffer[:, :, self.length : end] = new
        self.length = end
        return self.view()


class GrowingLayer(DynamicLayer):
    """A ``DynamicLayer`` whose ``update`` writes into spare room; ``keys`` and ``values`` may be
    read and assigned as usual (an assigned tensor becomes the new buffer, without room yet)."""

    @property
    def keys(self) -> Any:
        return self._keys.view()

    @keys.setter
    def keys(self, value: Any) -> None:
        if "_keys" not in self.__dict__:
            self._keys = _Buffer(value)
        else:
            self._keys.set(value)

    @property
    def values(self) -> Any:
        return self._values.view()

    @values.setter
    def values(self, value: Any) -> None:
        if "_values" not in self.__dict__:
            self._values = _Buffer(value)
        else:
            self._values.set(value)

    def update(self, key_states, value_states, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        return self._keys.append(key_states), self._values.append(value_states)


def growing_cache() -> Any:
    """An empty ``DynamicCache`` (no config: every position of every layer kept, see distill/serve.py)
    whose layers are ``GrowingLayer``."""
    from transformers import DynamicCache

    cache = DynamicCache()
    cache.layer_class_to_replicate = GrowingLayer
    return cache
