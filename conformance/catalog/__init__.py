"""The named scenarios (the suite's own, the gate's, time edges, each connector's own) and the
library of known bugs of real sinks, with the versions they are fixed in."""
