"""S3 as the sinks see it: the fault front and its rules, the in-memory S3 of the simulation,
and the reader that samples a bucket into an observation."""
