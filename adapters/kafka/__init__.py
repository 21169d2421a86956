"""Kafka clients every target shares: producing a scenario's records onto fresh topics, and
reading a consumer group's committed offsets."""
