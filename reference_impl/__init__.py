"""The reference model of the Confluent S3 sink: config, versions, Connect data and converters,
partitioning, time and naming at this level; formats in formats/, the fold and the model in engine/."""
