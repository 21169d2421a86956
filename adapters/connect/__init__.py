"""The Kafka Connect family: the target, what it observes, its REST client and faults, the connector profiles
(Confluent, Camel, Aiven, Iceberg, Lenses), plugins and Iceberg's table, and Connect in containers."""
