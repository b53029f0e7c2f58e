"""The race: the daily cycle (closing intake, qualifying, race, judging, scoring, promotion, weights),
the embargo, and the episode and judgment jobs that workers run.

Modules here sit above the store, the judge, the runner and the chain protocol, and below the API.
Submissions reach the store through ``arena/intake``; the cycle's ``intake`` stage (its stored name)
only closes it: it fixes the entrants and the draw's block.
"""
