"""The conformance suite: scenarios and strategies, faults, claims, checkers, the pytest plugin."""
