"""What a run is given: the scenario as data and its records' wire form,
the connector's config as the model reads it, and the target named by its spec."""
