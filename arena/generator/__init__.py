"""Generating solvable problems from a catalog (``arena problems generate``).

It stands above ``arena/problems`` (the problem model and its phrasing) and ``arena/scoring``: every
generated problem is checked with the outcome scorer against the catalog it was drawn from, so the
generator reads the scorer and the scorer reads only the problem model.
"""
