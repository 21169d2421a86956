"""Spark Structured Streaming as a sink under test: a query from Kafka to S3 (the Kafka source
`spark-sql-kafka-0-10` at pyspark's version, the `text` file sink on S3A), its checkpoint on
local disk, run as its own OS process so that it can be killed mid-batch and restarted.

    adapters.spark_streaming.query   the query's entry point (python -m adapters.spark_streaming.query QUERY.json)
    adapters.spark_streaming.logs    reading the checkpoint (offsets/, commits/) and the `_spark_metadata` log
    adapters.spark_streaming.target  SparkStreamingTarget: the Target
"""
