"""The model's engine: the rotation fold of one topic-partition, the model across
topic-partitions and its Spark engine, the Expectation it yields and the objects' contents."""
