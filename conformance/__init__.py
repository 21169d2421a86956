"""The conformance suite, by role: inputs, catalog (named scenarios, known bugs), generators,
judging (claims, verdicts, checks), playing (runner, session), auditing, calibration; the pytest plugin and suite."""
