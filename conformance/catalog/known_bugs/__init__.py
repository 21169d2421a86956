"""Known bugs of real sinks: one entry a bug, each with its upstream citation, the versions that
have it and the first that does not, the configs it needs, what a user sees, the workaround, and
the named scenarios that show it.

The model never imitates a bug (it holds every version to what the documentation promises), so
a scenario of an entry fails on an affected version with the bug's own witness and passes on a
fixed one. `relevant` answers "which known bugs touch this run's scenarios (config and faults)
and version, and did the run reproduce them?" for the report, results.json and the gate.

One module per sink holds its entries (confluent, iceberg, camel, aiven, lenses); `entry` the
KnownBug record, `predicates` the conditions entries read from a config or a run's verdicts,
`library` every entry in one tuple, `matching` what a run is told of them (and which of its
failures a team that accepts its release's known bugs accepts: `acceptance`).

To add an entry: append a `KnownBug` to its sink's `BUGS` with a citation you have read (the issue,
PR or commit as `owner/repo#N`), the affected versions read from the tags, a predicate over the
connector config as the user gives it (in `predicates`), where a fault sets the bug off a
predicate over the scenario that says it carries that fault (`triggered_by`, in `predicates`),
and a named scenario
(conformance.catalog.named) that shows it; tests/test_known_bugs.py replays the scenario through the
model of both versions.
"""
from conformance.catalog.known_bugs.entry import KnownBug
from conformance.catalog.known_bugs.library import BY_ID, KNOWN_BUGS
from conformance.catalog.known_bugs.matching import (acceptance, acceptances, accepted_line, gate_changes, gate_line,
                                                     known_bug_line, relevant, reproduced, reproduction, sink_of,
                                                     version_of)

__all__ = ["BY_ID", "KNOWN_BUGS", "KnownBug", "acceptance", "acceptances", "accepted_line", "gate_changes", "gate_line",
           "known_bug_line", "relevant", "reproduced", "reproduction", "sink_of", "version_of"]
