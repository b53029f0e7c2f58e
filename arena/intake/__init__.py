"""Submission intake: the pure checks a signed agent file passes, and the service the API's route calls.

``limits`` (the knobs), ``signed_requests`` (btauth/1, registration, rate limit, copy budget),
``checks`` (size, UTF-8, syntax, entry point, imports, copies, in order), ``copies`` (fingerprints and
copy disputes), ``sandbox_imports`` (what an agent may import) are pure; ``service`` stores what they
decide through ``arena.store``. Nothing here imports the race or the API.
"""
