"""How far the suite can be trusted: the kill matrix (does each faulty variant of the Python
sink fail a property) and fidelity (does the model agree with a real connector's run)."""
