"""Every known bug of the library, the sinks one after another: the report, results.json and the
gate list them in this order."""
from __future__ import annotations

from conformance.catalog.known_bugs import aiven, camel, confluent, iceberg, lenses
from conformance.catalog.known_bugs.entry import KnownBug

KNOWN_BUGS: tuple[KnownBug, ...] = confluent.BUGS + iceberg.BUGS + camel.BUGS + aiven.BUGS + lenses.BUGS

BY_ID: dict[str, KnownBug] = {b.id: b for b in KNOWN_BUGS}
