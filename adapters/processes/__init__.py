"""The real processes on loopback: the managed process and its helpers, the JVM jars from
Maven, the Kafka broker, Kafka Connect workers, moto's S3 server, and the stack that holds them."""
