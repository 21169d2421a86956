"""The checkers, one function per property, by family (delivery, contents, commits, layout,
liveness, Aiven's and Lenses' own), over the recorded RunData; run.run_checks runs them all."""
