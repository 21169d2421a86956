"""Targets: the sinks under test, and the real processes (broker, worker, S3 server) they run on.

Adapters never import `reference_impl`: a sink under test must not borrow the rules it is
checked by, and observations are recorded raw and decoded later by the checkers.
"""
