"""Scenarios translated for a target's connector (adapters.connect.connector_config.translate and the runner's
fault steps), and Camel's claim: no JVM, no broker."""
from __future__ import annotations

from adapters.connect.connector_config import translate
from adapters.connect.profiles import PROFILES, STRING_CONVERTER
from conformance.judging.claims import camel_claim, claim_for, errant_records_tolerated
from conformance.catalog.named import SUITE
from conformance.playing.runner import faults_for_target
from conformance.inputs.scenario import FaultStep
from conformance.inputs.targets import translation_for

CAMEL = "org.apache.camel.kafkaconnector.awss3sink.CamelAwss3sinkSinkConnector"


def test_camel_gets_framework_properties_and_counterparts_and_nothing_else():
    sc = SUITE["rotate-interval-table"]()
    t = translate({**sc.connector, "errors.tolerance": "all", "transforms": "x", "transforms.x.type": "T",
                   "camel.kamelet.aws-s3-sink.keyName": "k"}, PROFILES["camel"])
    assert not t.given
    assert t.config["connector.class"] == CAMEL
    assert t.config["camel.kamelet.aws-s3-sink.bucketNameOrArn"] == "sinkcheck"
    assert t.config["errors.tolerance"] == "all" and t.config["transforms.x.type"] == "T"
    assert t.config["camel.kamelet.aws-s3-sink.keyName"] == "k"
    # Confluent's own properties are never sent, and each is listed with why
    for k in ("flush.size", "rotate.interval.ms", "partitioner.class", "format.class", "storage.class", "s3.bucket.name"):
        assert k not in t.config
    assert set(t.dropped) == {"storage.class", "format.class", "flush.size", "rotate.interval.ms",
                              "timestamp.extractor", "partitioner.class", "partition.duration.ms", "path.format",
                              "locale", "timezone"}
    assert "s3.bucket.name" in t.mapped["camel.kamelet.aws-s3-sink.bucketNameOrArn"]


def test_camel_reads_json_values_as_text_and_keeps_writable_converters():
    json_cfg = {"connector.class": "io.confluent.connect.s3.S3SinkConnector",
                "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true"}
    t = translate(json_cfg, PROFILES["camel"])
    assert t.config["value.converter"] == STRING_CONVERTER
    assert "value.converter.schemas.enable" not in t.config and "value.converter.schemas.enable" not in t.dropped
    raw = {"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    assert translate(raw, PROFILES["camel"]).config["value.converter"] == raw["value.converter"]
    # no converter named: the worker's (JsonConverter with schemas) is made explicit, then mapped
    t = translate({}, PROFILES["camel"], {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
                                          "value.converter.schemas.enable": "true"})
    assert t.config["value.converter"] == STRING_CONVERTER


def test_a_config_naming_the_connector_is_used_as_given():
    own = {"connector.class": CAMEL, "camel.kamelet.aws-s3-sink.keyName": "k", "flush.size": "3"}
    t = translate(own, PROFILES["camel"])
    assert t.given and t.config == own and not t.dropped
    # Confluent's profile speaks the scenarios' language: nothing is translated
    assert translate({"flush.size": "3"}, PROFILES["confluent"]).given
    assert translation_for("pysink", {"flush.size": "3"}) is None


def test_aiven_maps_file_size_compression_and_format():
    t = translate({"flush.size": "7", "s3.compression.type": "gzip", "format.class":
                   "io.confluent.connect.s3.format.json.JsonFormat", "rotate.interval.ms": "10"}, PROFILES["aiven"])
    assert (t.config["file.max.records"], t.config["file.compression.type"], t.config["format.output.type"]) == \
        ("7", "gzip", "jsonl")
    assert set(t.dropped) == {"rotate.interval.ms"}


def test_s3_rules_on_multipart_requests_move_to_putobject_for_a_put_sink():
    sc = SUITE["multipart-crash-in-part-four"]()
    assert any(f.params.get("operation") == "UploadPart" for f in sc.faults)
    steps, notes = faults_for_target(sc, "kafka-connect:camel@4.18.0")
    s3 = [f for f in steps if f.kind == "s3"]
    assert s3 and all(f.params["operation"] == "PutObject" and "part_number" not in f.params for f in s3)
    assert notes and all("PutObject" in n for n in notes)
    same, none = faults_for_target(sc, "kafka-connect:confluent@12.1.9")
    assert same == list(sc.faults) and none == []


def test_a_config_update_sends_only_what_the_connector_has():
    sc = SUITE["rotate-interval-table"]()
    from dataclasses import replace

    sc = replace(sc, faults=[FaultStep(2, "update-config", {"config": {"flush.size": "2"}}),
                             FaultStep(3, "update-config", {"config": {"errors.tolerance": "all"}})])
    steps, notes = faults_for_target(sc, "kafka-connect:camel@4.18.0")
    assert [f.params["config"] for f in steps] == [{"errors.tolerance": "all"}]
    assert len(notes) == 1 and "flush.size" in notes[0]


def test_camel_claims_at_least_once_and_what_a_tombstone_does():
    base = {"connector.class": CAMEL}
    c = claim_for("kafka-connect:camel@4.18.0", base)
    assert c.name == "at-least-once" and {"no-loss", "commit-safety", "liveness"} <= c.properties
    assert "no-duplicates" not in c.properties and c.naming == "camel"
    dies = camel_claim(base, null_values=True)
    assert not dies.claims("liveness") and not dies.claims("commit-progress") and dies.claims("no-loss")
    # errors.tolerance=all alone gives the task no errant-record reporter: it still dies
    assert not errant_records_tolerated({"errors.tolerance": "all"})
    assert not camel_claim({"errors.tolerance": "all"}, null_values=True).claims("liveness")
    for extra in ({"errors.log.enable": "true"}, {"errors.deadletterqueue.topic.name": "dlq"}):
        assert camel_claim({"errors.tolerance": "all", **extra}, null_values=True).claims("liveness")
    assert not errant_records_tolerated({"errors.log.enable": "true"})  # reported, but not tolerated
    assert not camel_claim({"camel.kamelet.aws-s3-sink.keyName": "one"}).claims("no-loss")


def test_an_error_200_rule_has_no_putobject_counterpart_and_its_waits_go_with_it():
    sc = SUITE["rotate-interval-table"]()
    from dataclasses import replace

    sc = replace(sc, faults=[
        FaultStep(0, "s3", {"operation": "CompleteMultipartUpload", "action": "error-200", "nth": 1, "name": "a"}),
        FaultStep(0, "s3", {"operation": "UploadPart", "action": "fail", "status": 503, "nth": 1}),
        FaultStep(2, "wait-fired", {"rule": "a"}), FaultStep(2, "wait-fired", {"rule": 1}),
        FaultStep(3, "release", {"rule": 0}), FaultStep(3, "release")])
    steps, notes = faults_for_target(sc, "kafka-connect:camel@4.18.0")
    assert [(f.kind, f.params.get("operation"), f.params.get("rule")) for f in steps] == [
        ("s3", "PutObject", None), ("wait-fired", None, 0), ("release", None, None)]
    assert any("error-200" in n for n in notes)


def test_R8_1_a_412_and_the_head_after_it_are_left_out_on_a_sink_whose_uploads_carry_no_condition():
    from conformance.catalog.named import ALL_NAMED

    sc = ALL_NAMED["s3-412-without-the-object-head-403"]()
    steps, notes = faults_for_target(sc, "kafka-connect:aiven@3.4.2")
    assert not [f for f in steps if f.kind == "s3"]
    assert len([n for n in notes if "aiven's uploads carry no condition" in n]) == 2
    kept, _ = faults_for_target(sc, "kafka-connect:confluent@12.1.9")
    assert [f.params.get("status") for f in kept if f.kind == "s3"] == [412, 403]


def test_a_no_such_upload_rule_is_left_out_on_a_sink_that_puts_each_object_and_the_named_one_is_not_applicable():
    from dataclasses import replace

    from conformance.catalog.named import ALL_NAMED
    from conformance.judging.verdicts import NotApplicable
    from conformance.playing.session import planned

    sc = replace(SUITE["rotate-interval-table"](), faults=[FaultStep(0, "s3", {
        "operation": "UploadPart", "action": "fail", "status": 404, "code": "NoSuchUpload", "nth": 1, "name": "n"})])
    steps, notes = faults_for_target(sc, "kafka-connect:lenses@11.7.2")
    assert not [f for f in steps if f.kind == "s3"] and any("never answers a PutObject" in n for n in notes)
    named = planned(ALL_NAMED["s3-no-such-upload-on-part"](), "kafka-connect:lenses@11.7.2", connector=None,
                    version=None, seed=None)
    assert isinstance(named, NotApplicable) and "one PutObject" in named.reason
    assert not isinstance(planned(ALL_NAMED["s3-no-such-upload-on-part"](), "kafka-connect:aiven@3.4.2",
                                  connector=None, version=None, seed=None), NotApplicable)


def test_lenses_claims_no_liveness_where_its_client_does_not_retry_the_answer_and_the_error_policy_throws():
    from conformance.catalog.named import ALL_NAMED
    from conformance.judging.claims import claim_for

    denied = ALL_NAMED["s3-access-denied-on-complete"]()
    assert not claim_for("lenses", denied.connector, denied.faults, None).claims("liveness")
    assert claim_for("lenses", denied.connector, denied.faults, None).claims("no-loss")
    retrying = {**denied.connector, "connect.s3.error.policy": "RETRY"}
    assert claim_for("lenses", retrying, denied.faults, None).claims("liveness")
    throttled = ALL_NAMED["s3-429-on-part"]()
    assert claim_for("lenses", throttled.connector, throttled.faults, None).claims("liveness")
    # its puts carry If-None-Match: a 412 S3 gives a write it refused (no object there) kills the task
    # under THROW as documented; one to an upload that landed is known bug
    # lenses-retried-upload-412-kills-task, and the claim stays (real 11.7.2 at ci failed all three
    # s3-412 scenarios on liveness and commit-progress, named by no bug)
    for name, claimed in (("s3-412-without-the-object", False), ("s3-412-without-the-object-two-partitions", False),
                          ("s3-412-with-the-object", True)):
        sc = ALL_NAMED[name]()
        assert claim_for("lenses", sc.connector, sc.faults, None).claims("liveness") is claimed, name


def test_R7_4_iceberg_and_camel_claim_no_liveness_where_their_sdk_v2_client_does_not_retry_the_answer():
    # both tasks die on a 403 their client does not retry (Iceberg's S3FileIO: the SDK's default
    # condition and XMLStreamException; Camel: put() throws 'Exchange delivery has failed!'); on
    # real Iceberg 1.12.0 s3-access-denied-on-complete and s3-signature-mismatch-on-part had failed
    # liveness and commit-progress, claims neither sink makes
    from conformance.catalog.named import ALL_NAMED
    from conformance.judging.claims import claim_for

    for name in ("s3-access-denied-on-complete", "s3-signature-mismatch-on-part"):
        sc = ALL_NAMED[name]()
        for kind in ("iceberg", "camel"):
            claim = claim_for(kind, sc.connector, sc.faults, None)
            assert not claim.claims("liveness") and not claim.claims("commit-progress"), (kind, name)
            assert claim.claims("no-loss") and claim.claims("commit-safety") == (kind == "camel")
            assert any("does not retry" in r for r in claim.reasons)
    for name in ("s3-429-on-part", "s3-request-timeout-on-part", "s3-reset-mid-part"):
        sc = ALL_NAMED[name]()
        for kind in ("iceberg", "camel"):
            assert claim_for(kind, sc.connector, sc.faults, None).claims("liveness"), (kind, name)
    # a reporter that tolerates the failed exchange keeps the task alive and its record out of S3
    denied = ALL_NAMED["s3-access-denied-on-complete"]()
    tolerated = {**denied.connector, "errors.tolerance": "all", "errors.log.enable": "true"}
    claim = claim_for("camel", tolerated, denied.faults, None)
    assert claim.claims("liveness") and not claim.claims("no-loss")


def test_a_putobject_rule_counts_records_after_it_and_goes_where_none_reaches_s3():
    """A generated Camel run ended unknown: a Complete rule with nth=2 armed before the last record
    waited for a second PutObject that never came (one record after it), and the task had
    stopped at a null value before that anyway."""
    from dataclasses import replace

    sc = SUITE["rotate-interval-table"]()
    n = len(sc.records)
    sc = replace(sc, faults=[
        FaultStep(n - 1, "s3", {"operation": "CompleteMultipartUpload", "action": "drop-response", "nth": 2,
                                "name": "late"}),
        FaultStep(n, "wait-fired", {"rule": "late"}),
        FaultStep(1, "s3", {"operation": "UploadPart", "action": "fail", "status": 503, "nth": 3, "name": "early"}),
        FaultStep(n, "wait-fired", {"rule": "early"})])
    steps, _ = faults_for_target(sc, "kafka-connect:camel@4.18.0")
    assert [(f.params.get("name"), f.params.get("nth")) for f in steps if f.kind == "s3"] == [("late", 1), ("early", 3)]
    # the task stops at record 2: nothing after the first rule is written, and one record after the second
    steps, notes = faults_for_target(sc, "kafka-connect:camel@4.18.0", writes_until=2)
    assert [(f.kind, f.params.get("name") or f.params.get("rule")) for f in steps] == [("s3", "early"), ("wait-fired", "early")]
    assert [f.params["nth"] for f in steps if f.kind == "s3"] == [1]
    assert any("stops at record 2" in x for x in notes)


def test_R7_4_an_error_inside_completes_200_kills_the_task_with_the_sdk_v1_connector():
    """Found by the gate 10.6.18 → 12.1.9: the AWS SDK v1 client 10.6.18 bundles (1.12.779)
    throws an InternalError inside CompleteMultipartUpload's 200 at once, and its retry
    condition takes no status 200, so the connector's task dies (ConnectException); 12.1.9's
    SDK v2 retries it. The claim drops liveness and commit progress for 10.6.x, and a second
    error-200 rule, which could never fire, is left out."""
    from conformance.judging.claims import SDK_V1_COMPLETE, claim_for, fatal_error_inside_complete

    sc = SUITE["error-inside-200-with-keys"]()
    assert fatal_error_inside_complete(sc.faults, "10.6.18") and not fatal_error_inside_complete(sc.faults, "12.1.9")
    old = claim_for("kafka-connect:confluent@10.6.18", sc.connector, sc.faults, "10.6.18")
    new = claim_for("kafka-connect:confluent@12.1.9", sc.connector, sc.faults, "12.1.9")
    assert not old.claims("liveness") and not old.claims("commit-progress") and old.claims("no-loss")
    assert SDK_V1_COMPLETE in old.caveats and any(SDK_V1_COMPLETE in r for r in old.reasons)
    assert new.claims("liveness") and new.claims("commit-progress")
    # the Python sink is its own S3 client
    assert claim_for("pysink", sc.connector, sc.faults, "10.6.18").claims("liveness")
    steps, notes = faults_for_target(sc, "kafka-connect:confluent@10.6.18", dies_at_error_200=True)
    assert [f.params.get("name") for f in steps if f.kind == "s3"] == ["error-200-1"]
    assert any("second error-200 rule left out" in n for n in notes)
    same, _ = faults_for_target(sc, "kafka-connect:confluent@12.1.9")
    assert same == list(sc.faults)


def test_iceberg_keeps_a_schema_registry_converter_and_reads_other_values_as_schemaless_json():
    """Iceberg's sink writes Structs or Maps as rows: a deployment reading a registry's wire
    format keeps its AvroConverter (its Structs are rows); JSON text under another converter is
    read by JsonConverter without schemas, the Map such a deployment reads. (AvroConverter was
    replaced too, and `--profile ci` on Iceberg stopped at avro-converter-to-avro with exit 4:
    JsonConverter refused its records.)"""
    avro = SUITE["avro-converter-to-avro"]().connector
    t = translate(avro, PROFILES["iceberg"])
    assert t.config["value.converter"] == avro["value.converter"] == "io.confluent.connect.avro.AvroConverter"
    assert t.config["value.converter.schema.registry.url"] == avro["value.converter.schema.registry.url"]
    text = translate({**avro, "value.converter": STRING_CONVERTER}, PROFILES["iceberg"])
    assert text.config["value.converter"] == "org.apache.kafka.connect.json.JsonConverter"
    assert text.config["value.converter.schemas.enable"] == "false"
