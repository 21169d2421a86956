"""The audit of a bucket after the fact: listing and reading its objects, matching them to the
records of the topics, and comparing each topic-partition with the model."""
