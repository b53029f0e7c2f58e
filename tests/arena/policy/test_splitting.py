"""The offline policy's item splitter on a shop request whose later sentence is a bare reference
("They.", "It!", "Both."): it raised AttributeError (the reference's noun group is optional), the
policy server answered 502, and `arena eval` with the offline policy re-ran the episode until it gave up."""

from __future__ import annotations

import pytest

from arena.policy.splitting import split_items


@pytest.mark.parametrize(
    "text",
    [
        "I need a red mug and a blue plate. They.",
        "Find a shop with a desk lamp and a mouse pad. It!",
        "A rice cooker and a kettle. Both.",
    ],
)
def test_a_bare_reference_keeps_the_items(text):
    items = split_items(text)
    assert len(items) == 2, items
