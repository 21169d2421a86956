"""Targets: the Target interface and the Observation (target.py, observation.py); the sinks under test
(connect/, pysink/, spark_streaming/), and what they run on (processes/, kafka/, s3/).

Adapters never import `reference_impl`: a sink under test must not borrow the rules it is
checked by, and observations are recorded raw and decoded later by the checkers.
"""
