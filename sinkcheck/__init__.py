"""sinkcheck's command line. The rooms it drives: reference_impl (the model), conformance
(scenarios, checkers, the suite), adapters (targets), reports (outputs)."""
__version__ = "0.1.0"
