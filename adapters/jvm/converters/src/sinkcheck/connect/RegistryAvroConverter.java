/*
 * sinkcheck's Avro converter for Kafka Connect workers: Confluent's Schema Registry wire format
 * (magic byte 0, a 4-byte big-endian schema id, Avro binary).
 *
 * sinkcheck's own code, not Confluent's. Confluent's io.confluent.connect.avro.AvroConverter is
 * published neither on Maven Central nor in ../shared/confluent, so the workers sinkcheck starts
 * run this class where a connector config names AvroConverter
 * (adapters/connect/converters.py maps the one name to the other). It is built only on Confluent's
 * published 7.7.8 libraries, the same jars AvroConverter's plugin carries: AvroData
 * (kafka-connect-avro-data) for Connect <-> Avro, and the abstract serializer/deserializer of
 * kafka-avro-serializer for the wire format and the registry calls, each configured from the
 * converter's whole config map as AvroConverter configures them.
 *
 * It was held line by line to AvroConverter 7.7.8 (schema-registry tag v7.7.8,
 * avro-converter/src/main/java/io/confluent/connect/avro/AvroConverter.java): one registry client
 * made once per instance (a mock://SCOPE url gives the in-memory registry), the same conversions
 * inside the same try blocks, the same mapping of errors (timeouts to RetriableException, a
 * serialization error caused by I/O to NetworkException, other serialization errors to
 * DataException, an InvalidConfigurationException (401, 403) to ConfigException without its
 * cause) with the same messages, and reads through deserializeWithSchemaAndVersion, so a Connect
 * schema's version is the writer schema's version in its subject unless the Avro schema carries
 * connect.version. Both converters on one classpath against a loopback fake registry gave
 * identical output over 677 lines (schemas, versions, values, exception chains, the REST calls
 * made). Two differences, without effect on what it does: the registry settings are read through
 * AbstractKafkaSchemaSerDeConfig itself, which AvroConverterConfig extends without adding a key
 * (only the name in the "values:" log line differs), and a value is converted with AvroData's
 * public fromConnectData (see fromConnectData below).
 */
package sinkcheck.connect;

import io.confluent.connect.avro.AvroData;
import io.confluent.connect.avro.AvroDataConfig;
import io.confluent.kafka.schemaregistry.avro.AvroSchema;
import io.confluent.kafka.schemaregistry.avro.AvroSchemaProvider;
import io.confluent.kafka.schemaregistry.client.SchemaRegistryClient;
import io.confluent.kafka.schemaregistry.client.SchemaRegistryClientFactory;
import io.confluent.kafka.serializers.AbstractKafkaAvroDeserializer;
import io.confluent.kafka.serializers.AbstractKafkaAvroSerializer;
import io.confluent.kafka.serializers.AbstractKafkaSchemaSerDeConfig;
import io.confluent.kafka.serializers.GenericContainerWithVersion;
import io.confluent.kafka.serializers.KafkaAvroDeserializerConfig;
import io.confluent.kafka.serializers.KafkaAvroSerializerConfig;
import io.confluent.kafka.serializers.NonRecordContainer;
import java.io.IOException;
import java.util.Collections;
import java.util.Map;
import org.apache.avro.generic.GenericContainer;
import org.apache.avro.generic.IndexedRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.storage.Converter;

/** A Converter for the Schema Registry Avro wire format; see the file's header. */
public class RegistryAvroConverter implements Converter {

  private SchemaRegistryClient client;
  private boolean isKey;
  private AvroData avroData;
  private WireWriter writer;
  private WireReader reader;

  @Override
  public void configure(Map<String, ?> configs, boolean isKey) {
    this.isKey = isKey;
    // schema.registry.url is required: a config without it fails here
    AbstractKafkaSchemaSerDeConfig registryConfig = new AbstractKafkaSchemaSerDeConfig(
        AbstractKafkaSchemaSerDeConfig.baseConfigDef(), configs);
    if (client == null) {
      client = SchemaRegistryClientFactory.newClient(
          registryConfig.getSchemaRegistryUrls(),
          registryConfig.getMaxSchemasPerSubject(),
          Collections.singletonList(new AvroSchemaProvider()),
          configs,
          registryConfig.requestHeaders());
    }
    writer = new WireWriter(client, configs);
    reader = new WireReader(client, configs);
    avroData = new AvroData(new AvroDataConfig(configs));
  }

  @Override
  public byte[] fromConnectData(String topic, Schema schema, Object value) {
    return fromConnectData(topic, null, schema, value);
  }

  @Override
  public byte[] fromConnectData(String topic, Headers headers, Schema schema, Object value) {
    try {
      org.apache.avro.Schema avroSchema = avroData.fromConnectSchema(schema);
      // AvroConverter calls the protected fromConnectData(schema, avroSchema, value) it reaches
      // from AvroData's package; the public one converts the schema again, from AvroData's cache
      return writer.write(topic, isKey, headers, avroData.fromConnectData(schema, value),
          new AvroSchema(avroSchema));
    } catch (TimeoutException | SerializationException | InvalidConfigurationException e) {
      throw translate(e, topic, true);
    }
  }

  @Override
  public SchemaAndValue toConnectData(String topic, byte[] value) {
    return toConnectData(topic, null, value);
  }

  @Override
  public SchemaAndValue toConnectData(String topic, Headers headers, byte[] value) {
    try {
      GenericContainerWithVersion read = reader.read(topic, isKey, headers, value);
      if (read == null) {
        return SchemaAndValue.NULL; // a null payload (tombstone)
      }
      GenericContainer container = read.container();
      if (container instanceof IndexedRecord) {
        return avroData.toConnectData(container.getSchema(), container, read.version());
      } else if (container instanceof NonRecordContainer) {
        return avroData.toConnectData(
            container.getSchema(), ((NonRecordContainer) container).getValue(), read.version());
      }
      throw new DataException(String.format(
          "Unsupported type returned during deserialization of topic %s ", topic));
    } catch (TimeoutException | SerializationException | InvalidConfigurationException e) {
      throw translate(e, topic, false);
    }
  }

  /** The serde's Kafka exceptions as AvroConverter throws them to the worker. */
  private static RuntimeException translate(RuntimeException e, String topic, boolean writing) {
    if (e instanceof TimeoutException) {
      return new RetriableException(writing
          ? String.format("Failed to serialize Avro data from topic %s :", topic)
          : String.format("Failed to deserialize data for topic %s to Avro: ", topic), e);
    }
    if (e instanceof SerializationException) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException) {
        return new NetworkException(String.format(writing
                ? "I/O error while serializing Avro data for topic %s: %s"
                : "I/O error while deserializing data for topic %s: %s",
            topic, cause.getMessage()), e);
      }
      return new DataException(writing
          ? String.format("Failed to serialize Avro data from topic %s:", topic)
          : String.format("Failed to deserialize data for topic %s to Avro:", topic), e);
    }
    // InvalidConfigurationException (and its 401/403 subclasses): the cause is not kept
    return new ConfigException(String.format(
        "Failed to access Avro data from topic %s : %s", topic, e.getMessage()));
  }

  /** Writes the wire format; registers or looks up the schema under the configured subject. */
  private static final class WireWriter extends AbstractKafkaAvroSerializer {
    WireWriter(SchemaRegistryClient client, Map<String, ?> configs) {
      schemaRegistry = client;
      // auto.register.schemas (default true), use.latest.version, latest.compatibility.strict,
      // use.schema.id, normalize.schemas, the subject name strategies...; keeps the client
      configure(new KafkaAvroSerializerConfig(configs));
    }

    byte[] write(String topic, boolean isKey, Headers headers, Object avroValue,
        AvroSchema schema) {
      if (avroValue == null) {
        return null;
      }
      return serializeImpl(getSubjectName(topic, isKey, avroValue, schema), topic, headers,
          avroValue, schema);
    }
  }

  /** Reads the wire format, returning the writer schema's registry version with the value. */
  private static final class WireReader extends AbstractKafkaAvroDeserializer {
    WireReader(SchemaRegistryClient client, Map<String, ?> configs) {
      schemaRegistry = client;
      configure(new KafkaAvroDeserializerConfig(configs));
    }

    GenericContainerWithVersion read(String topic, boolean isKey, Headers headers,
        byte[] payload) {
      return deserializeWithSchemaAndVersion(topic, isKey, headers, payload);
    }
  }
}
