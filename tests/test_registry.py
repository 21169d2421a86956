"""The Schema Registries held to each other: the same behaviour tests run on the in-memory registry
(called directly, and over HTTP through the client), and on a real Apicurio Registry 3.3.3
speaking Confluent's API (one server for the module, marked `kafka` like the other tests that
start JVM processes). Every expectation below was first seen on the real server; where Apicurio
and Confluent part, the in-memory registry follows Confluent and the tests at the end pin the
difference on each side. Then the server's process: found Java, stopped without leftovers."""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.processes import jars, registry as registry_process
from adapters.processes.managed import child_pids, listening_ports, port_open
from adapters.processes.registry import JavaUnavailable, SchemaRegistryServer
from adapters.registry.api import IncompatibleSchema, InvalidSchema, LEVELS, NotFound, SchemaRegistry
from adapters.registry.client import RegistryClient
from adapters.registry.memory import InMemoryRegistry
from adapters.registry.memory_http import RegistryHttpServer
from adapters.registry.snapshot import RegistrySnapshot, SchemaText, SubjectVersion
from adapters.target import TargetError


def rec(*fields: tuple, name: str = "R", doc: str | None = None) -> str:
    """An Avro record; a field is (name, type) or (name, type, {more attributes})."""
    d: dict = {"type": "record", "name": name}
    if doc:
        d["doc"] = doc
    d["fields"] = [{"name": f[0], "type": f[1], **(f[2] if len(f) > 2 else {})} for f in fields]
    return json.dumps(d)


S = {
    "a": rec(("a", "int")),
    "ab_req": rec(("a", "int"), ("b", "string")),
    "ab_def": rec(("a", "int"), ("b", "string", {"default": "x"})),
    "b_only": rec(("b", "string", {"default": "x"})),
    "a_long": rec(("a", "long")),
    "a_opt": rec(("a", ["null", "int"], {"default": None})),
    "enum_ab": rec(("e", {"type": "enum", "name": "E", "symbols": ["A", "B"]})),
    "enum_abc": rec(("e", {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]})),
    "renamed": rec(("a", "int"), name="Q"),
}

# a sequence registered in one subject: + registered, x refused (409), per level in LEVELS' order
# (NONE, BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE); seen on
# Apicurio 3.3.3, whose Avro checker is Avro's Java SchemaCompatibility, as Confluent's is
EVOLUTIONS = {
    ("a", "ab_req"): "++ +x +x ++ ++ +x +x",        # a new field without a default
    ("a", "ab_def"): "++ ++ ++ ++ ++ ++ ++",        # a new field with one
    ("ab_req", "a"): "++ ++ ++ +x +x +x +x",        # a required field removed
    ("a", "a_long"): "++ ++ ++ +x +x +x +x",        # int widened to long
    ("a_long", "a"): "++ +x +x ++ ++ +x +x",
    ("a", "a_opt"): "++ ++ ++ +x +x +x +x",         # int into [null, int]
    ("enum_ab", "enum_abc"): "++ ++ ++ +x +x +x +x",  # a symbol added
    ("enum_abc", "enum_ab"): "++ +x +x ++ ++ +x +x",
    ("a", "renamed"): "++ +x +x +x +x +x +x",        # another record name
    ("a", "ab_def", "ab_req"): "+++ +++ ++x +++ +++ +++ ++x",  # only the first version refuses
    ("ab_req", "ab_def", "a"): "+++ +++ +++ +++ ++x +++ ++x",
    ("b_only", "a", "ab_def"): "+++ +xx +xx +++ +++ +xx +xx",  # a refused version is not the latest
}


# ------------------------------------------------------------------ the registries


@pytest.fixture(scope="module")
def apicurio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SchemaRegistryServer]:
    server = SchemaRegistryServer(tmp_path_factory.mktemp("registry"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=["memory", "memory-http", pytest.param("apicurio", marks=pytest.mark.kafka)])
def registry(request: pytest.FixtureRequest) -> Iterator[SchemaRegistry]:
    if request.param == "memory":
        yield InMemoryRegistry()
    elif request.param == "memory-http":
        with RegistryHttpServer(InMemoryRegistry()) as srv:
            yield RegistryClient(srv.url)
    else:
        server: SchemaRegistryServer = request.getfixturevalue("apicurio")
        if not (server.proc and server.proc.alive):
            server.start()  # test_stop_leaves_no_process_or_port stopped it
        client = server.client()
        yield client
        client.set_compatibility("BACKWARD")  # the server is shared: leave the global level as found


@pytest.fixture
def subject() -> Callable[[str], str]:
    """Subjects of this test only (the real server is shared by the module), dotted as topics are."""
    prefix = f"t{uuid.uuid4().hex[:10]}"
    return lambda name: f"{prefix}.{name}-value"


def _is_real(reg: SchemaRegistry) -> bool:
    return isinstance(reg, RegistryClient) and "/apis/ccompat/" in reg.url


# ------------------------------------------------------------------ ids and versions


def test_registries_follow_the_protocol():
    assert isinstance(InMemoryRegistry(), SchemaRegistry)
    assert isinstance(RegistryClient("http://127.0.0.1:1"), SchemaRegistry)


def test_reregistering_a_schema_answers_its_id_without_a_new_version(registry, subject):
    s = subject("orders")
    first = registry.register(s, S["a"])
    assert registry.register(s, S["a"]) == first
    assert registry.register(s, S["a"], "AVRO") == first
    assert registry.versions(s) == [1]
    second = registry.register(s, S["ab_def"])
    assert second != first
    assert registry.register(s, S["a"]) == first  # an older version: its id, still no new version
    assert registry.versions(s) == [1, 2]


def test_one_schema_under_two_subjects_has_one_id(registry, subject):
    a = registry.register(subject("orders"), S["ab_def"])
    b = registry.register(subject("orders.copy"), S["ab_def"])
    assert a == b
    assert registry.versions(subject("orders.copy")) == [1]


def test_versions_count_from_one_per_subject(registry, subject):
    s = subject("evolving")
    ids = [registry.register(s, S[n]) for n in ("a", "ab_def")]
    other = subject("other")
    registry.register(other, S["ab_def"])
    assert registry.versions(s) == [1, 2]
    assert registry.versions(other) == [1]
    latest = registry.latest(s)
    assert (latest.subject, latest.version, latest.id, latest.schema_type) == (s, 2, ids[1], "AVRO")
    assert json.loads(latest.schema) == json.loads(S["ab_def"])
    assert s in registry.subjects() and other in registry.subjects()


def test_lookup_answers_version_and_id(registry, subject):
    s = subject("orders")
    ids = [registry.register(s, S[n]) for n in ("a", "ab_def")]
    assert registry.lookup(s, S["a"]) == (1, ids[0])
    assert registry.lookup(s, S["ab_def"]) == (2, ids[1])
    with pytest.raises(NotFound) as miss:
        registry.lookup(s, S["enum_ab"])
    assert miss.value.error_code == 40403
    with pytest.raises(NotFound) as unknown:
        registry.lookup(subject("nothing"), S["a"])
    assert unknown.value.error_code == 40401
    with pytest.raises(NotFound) as no_versions:
        registry.versions(subject("nothing"))
    assert no_versions.value.error_code == 40401
    with pytest.raises(NotFound) as no_latest:
        registry.latest(subject("nothing"))
    assert no_latest.value.error_code == 40401


def test_schema_by_id_is_the_canonical_text(registry, subject):
    """Both store the schema as Avro's Java toString() writes it: compact, keys in Avro's order,
    the namespace split off the name; the type comes back with it."""
    odd = ('{"fields": [{"type": "int", "name": "a", "doc": "d"}], "name": "x.y.Odd", '
           '"type": "record"}')
    i = registry.register(subject("odd"), odd)
    assert registry.schema(i) == ('{"type":"record","name":"Odd","namespace":"x.y","fields":'
                                  '[{"name":"a","type":"int","doc":"d"}]}', "AVRO")
    with pytest.raises(NotFound) as e:
        registry.schema(987654321)
    assert e.value.error_code == 40403


def test_a_subject_holds_a_schema_whatever_its_whitespace_or_docs(registry, subject):
    """Within a subject a schema is found by what Java's Schema.equals compares: not whitespace,
    key order or docs."""
    s = subject("orders")
    first = registry.register(s, S["ab_def"])
    pretty = json.dumps(json.loads(S["ab_def"]), indent=2)
    documented = rec(("a", "int", {"doc": "the id"}), ("b", "string", {"default": "x"}), doc="an order")
    assert registry.register(s, pretty) == first
    assert registry.register(s, documented) == first
    assert registry.lookup(s, documented) == (1, first)
    assert registry.versions(s) == [1]
    changed_default = rec(("a", "int"), ("b", "string", {"default": "y"}))
    assert registry.register(s, changed_default) != first  # a default is part of the schema
    assert registry.versions(s) == [1, 2]


def test_json_and_protobuf_schemas_keep_their_type(registry, subject):
    js = '{\n  "type": "object",\n  "properties": {"a": {"type": "integer"}}\n}'
    i = registry.register(subject("json"), js, "JSON")
    assert registry.register(subject("json"), js.replace("\n", ""), "JSON") == i  # same schema, compact
    assert registry.versions(subject("json")) == [1]
    text, kind = registry.schema(i)
    assert kind == "JSON" and json.loads(text) == json.loads(js)
    proto = 'syntax = "proto3";\nmessage M { string a = 1; }\n'
    p = registry.register(subject("proto"), proto, "PROTOBUF")
    assert registry.schema(p) == (proto, "PROTOBUF")
    assert registry.lookup(subject("proto"), proto, "PROTOBUF") == (1, p)
    assert registry.latest(subject("proto")).schema_type == "PROTOBUF"


def test_subject_names_with_dots_and_slashes(registry, subject):
    for name in ("orders.eu.v2", "a/b", "with space"):
        s = subject(name)
        i = registry.register(s, S["a"])
        assert registry.versions(s) == [1]
        assert registry.lookup(s, S["a"]) == (1, i)
        assert s in registry.subjects()


def test_an_invalid_schema_or_level_is_refused(registry, subject):
    with pytest.raises(InvalidSchema) as bad:
        registry.register(subject("bad"), '{"type":"record","name":"R","fields":[{"name":"a","type":"nosuch"}]}')
    assert (bad.value.status, bad.value.error_code) == (422, 42201)
    with pytest.raises(InvalidSchema) as level:
        registry.set_compatibility("SIDEWAYS", subject("bad"))
    assert (level.value.status, level.value.error_code) == (422, 42203)


# ------------------------------------------------------------------ compatibility


def test_backward_refuses_a_new_field_without_a_default(registry, subject):
    s = subject("orders")
    assert registry.compatibility() == "BACKWARD"  # Confluent's default: the server is started with it
    registry.register(s, S["a"])
    with pytest.raises(IncompatibleSchema) as e:
        registry.register(s, S["ab_req"])
    assert e.value.status == 409 and e.value.message
    assert registry.versions(s) == [1]
    registry.register(s, S["ab_def"])
    assert registry.versions(s) == [1, 2]


def test_none_accepts_anything(registry, subject):
    s = subject("anything")
    registry.set_compatibility("NONE", s)
    ids = [registry.register(s, S[n]) for n in ("a", "ab_req", "renamed", "enum_ab")]
    assert len(set(ids)) == 4 and registry.versions(s) == [1, 2, 3, 4]


def test_forward_refuses_removing_a_required_field(registry, subject):
    s = subject("orders")
    registry.set_compatibility("FORWARD", s)
    registry.register(s, S["ab_req"])
    with pytest.raises(IncompatibleSchema):
        registry.register(s, S["a"])
    registry.register(s, S["ab_def"])  # the latest (ab_req) reads it
    assert registry.compatibility(s) == "FORWARD"


@pytest.mark.parametrize("level", LEVELS)
def test_each_level_as_confluent_defines_it(registry, subject, level):
    at = LEVELS.index(level)
    got, want = {}, {}
    for seq, outcomes in EVOLUTIONS.items():
        s = subject("-".join(seq))
        registry.set_compatibility(level, s)
        marks = ""
        for name in seq:
            try:
                registry.register(s, S[name])
                marks += "+"
            except IncompatibleSchema:
                marks += "x"
        got[seq], want[seq] = marks, outcomes.split()[at]
    assert got == want


def test_the_global_level_governs_subjects_without_their_own(registry, subject):
    s, own = subject("follows"), subject("own")
    registry.register(s, S["a"])
    registry.register(own, S["a"])
    registry.set_compatibility("BACKWARD", own)
    registry.set_compatibility("NONE")
    assert registry.compatibility() == "NONE"
    assert registry.compatibility(s) == "NONE"
    assert registry.compatibility(own) == "BACKWARD"
    registry.register(s, S["ab_req"])
    with pytest.raises(IncompatibleSchema):
        registry.register(own, S["ab_req"])
    registry.set_compatibility("BACKWARD")


# ------------------------------------------------------------------ snapshots


def _projection(snap: RegistrySnapshot, prefix: str) -> dict:
    """The part of a snapshot under `prefix`, ids renamed in order of first appearance, subjects
    taken alphabetically (Apicurio's ids have gaps and the real server holds other tests' subjects)."""
    names: dict[int, str] = {}
    subjects = {}
    for s in sorted(x for x in snap.subjects if x.startswith(prefix)):
        subjects[s[len(prefix):]] = [(v.version, names.setdefault(v.id, f"#{len(names) + 1}"))
                                     for v in snap.subjects[s]]
    schemas = {label: (snap.schemas[i].text, snap.schemas[i].schema_type) for i, label in names.items()}
    levels = {s[len(prefix):]: lvl for s, lvl in snap.compatibility.items() if s.startswith(prefix)}
    return {"subjects": subjects, "schemas": schemas, "levels": levels}


def test_snapshot_holds_what_was_registered_and_round_trips(registry, subject):
    orders, copy = subject("orders"), subject("copy")
    prefix = orders[: orders.index(".") + 1]
    a = registry.register(orders, S["a"])
    ab = registry.register(orders, S["ab_def"])
    registry.register(copy, S["ab_def"])
    registry.set_compatibility("FULL", copy)
    snap = registry.snapshot([orders, copy, subject("never-registered")])
    assert set(snap.subjects) == {orders, copy}
    assert set(registry.snapshot().subjects) >= {orders, copy}
    assert snap.version_of(orders, a) == 1 and snap.version_of(orders, ab) == 2 and snap.version_of(copy, ab) == 1
    assert snap.version_of(copy, a) is None
    assert snap.schema(ab) == SchemaText(registry.schema(ab)[0], "AVRO")
    assert snap.latest(orders) == SubjectVersion(2, ab)
    assert snap.global_compatibility == "BACKWARD"
    again = RegistrySnapshot.from_json(json.loads(json.dumps(snap.to_json())))
    assert again == snap
    assert _projection(snap, prefix) == {
        "subjects": {"copy-value": [(1, "#1")], "orders-value": [(1, "#2"), (2, "#1")]},
        "schemas": {"#1": ('{"type":"record","name":"R","fields":[{"name":"a","type":"int"},'
                           '{"name":"b","type":"string","default":"x"}]}', "AVRO"),
                    "#2": ('{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}', "AVRO")},
        "levels": {"orders-value": "BACKWARD", "copy-value": "FULL"},
    }


def test_a_memory_registry_from_a_snapshot_goes_on_from_it(registry, subject):
    s = subject("orders")
    a = registry.register(s, S["a"])
    snap = registry.snapshot([s])
    copy = InMemoryRegistry.from_snapshot(snap)
    assert copy.register(s, S["a"]) == a
    with pytest.raises(IncompatibleSchema):
        copy.register(s, S["ab_req"])
    unseen = rec(("a", "int"), (f"f{uuid.uuid4().hex}", "string", {"default": "x"}))
    new = copy.register(s, unseen)
    assert new > max(snap.schemas) and copy.versions(s) == [1, 2]
    assert copy.snapshot() != snap and copy.snapshot([s]).subjects[s][0] == snap.subjects[s][0]


# ------------------------------------------------------------------ drawn histories, both registries


OPS = st.lists(st.one_of(
    st.tuples(st.just("register"), st.integers(0, 2), st.sampled_from(sorted(S) + ["ab_def_doc"])),
    st.tuples(st.just("level"), st.one_of(st.none(), st.integers(0, 2)), st.sampled_from(LEVELS)),
), min_size=1, max_size=12)


def _play(reg: SchemaRegistry, prefix: str, ops: list[tuple]) -> list[str]:
    """What each call answered, ids named in order of first appearance; then each subject's versions."""
    schemas = {**S, "ab_def_doc": rec(("a", "int"), ("b", "string", {"default": "x", "doc": "b"}), doc="doc")}
    names: dict[int, str] = {}
    out = []
    try:
        for op, which, arg in ops:
            s = None if which is None else f"{prefix}.s{which}-value"
            if op == "level":
                reg.set_compatibility(arg, s)
                continue
            try:
                out.append(names.setdefault(reg.register(s, schemas[arg]), f"#{len(names) + 1}"))
            except IncompatibleSchema:
                out.append("409")
        for i in range(3):
            try:
                out.append(f"s{i}: {reg.versions(f'{prefix}.s{i}-value')}")
            except NotFound:
                out.append(f"s{i}: -")
    finally:
        reg.set_compatibility("BACKWARD")
    return out


@pytest.mark.kafka
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_drawn_histories_answer_alike(apicurio, ops):
    """Registers and level changes drawn by Hypothesis, played on a fresh in-memory registry and on
    the real one (fresh subjects, a level set globally put back): the same answers, call by call."""
    if not (apicurio.proc and apicurio.proc.alive):
        apicurio.start()
    prefix = f"h{uuid.uuid4().hex[:10]}"
    assert _play(InMemoryRegistry(), prefix, ops) == _play(apicurio.client(), prefix, ops)


# ------------------------------------------------------------------ where Apicurio is not Confluent


@pytest.fixture(params=["memory", pytest.param("apicurio", marks=pytest.mark.kafka)])
def either(request: pytest.FixtureRequest) -> tuple[str, SchemaRegistry]:
    if request.param == "memory":
        return "memory", InMemoryRegistry()
    server: SchemaRegistryServer = request.getfixturevalue("apicurio")
    if not (server.proc and server.proc.alive):
        server.start()
    return "apicurio", server.client()


def test_known_difference_the_same_schema_written_otherwise_under_another_subject(either, subject):
    """Confluent gives a schema one id however it is written (it looks ids up by the canonical
    text); Apicurio 3.3.3 by the text as sent, so a pretty-printed copy under another subject gets
    an id of its own (within one subject it finds the version it holds, as Confluent does)."""
    kind, reg = either
    compact = reg.register(subject("compact"), S["ab_def"])
    pretty = reg.register(subject("pretty"), json.dumps(json.loads(S["ab_def"]), indent=2))
    assert (pretty == compact) is (kind == "memory")
    assert reg.schema(pretty) == reg.schema(compact)  # the same canonical text either way


def test_known_difference_another_schema_type_under_none(either, subject):
    """Confluent lets a subject at NONE change schema type (PROTOBUF then AVRO); Apicurio 3.3.3
    refuses it with 422 (it reads the new schema as the subject's first type)."""
    kind, reg = either
    s = subject("switch")
    reg.set_compatibility("NONE", s)
    reg.register(s, 'syntax = "proto3";\nmessage M { string a = 1; }\n', "PROTOBUF")
    if kind == "memory":
        reg.register(s, S["a"])
        assert reg.versions(s) == [1, 2]
    else:
        with pytest.raises(InvalidSchema):
            reg.register(s, S["a"])
        assert reg.versions(s) == [1]


def test_known_difference_a_protobuf_version_dropping_fields_needs_them_reserved(either, subject):
    """Confluent takes a Protobuf version that drops fields under BACKWARD; Apicurio 3.3.3 only
    when it reserves their numbers and names (a nested message gone included), and never takes a
    version using a number or name the latest one reserved. What the generator's Protobuf producer
    writes for an older version after a newer one (records.protobuf_subjects; generated-007 on
    real 12.1.9: HTTP 409, 2 fields removed without reservation)."""
    from conformance.generators.records import PROTOBUF_ADDED
    from conformance.inputs.protobuf_notation import dropped_fields, message_layout, producer_schema

    kind, reg = either
    base = {"type": "struct", "name": "order", "optional": False,
            "fields": [{"field": "seq", "type": "int64", "optional": False}]}
    v0, v1, v2 = base, {**base, "fields": base["fields"] + list(PROTOBUF_ADDED[:2])}, \
        {**base, "fields": base["fields"] + list(PROTOBUF_ADDED)}

    def reserving(v: dict, *earlier: dict) -> str:
        return producer_schema(v, dropped_fields([message_layout(e) for e in earlier], message_layout(v)))

    plain, reserved = subject("plain"), subject("reserved")
    for s in (plain, reserved):
        reg.register(s, producer_schema(v0), "PROTOBUF")
        newest = reg.register(s, producer_schema(v2), "PROTOBUF")
    if kind == "memory":
        reg.register(plain, producer_schema(v1), "PROTOBUF")
    else:
        with pytest.raises(IncompatibleSchema, match="removed without reservation"):
            reg.register(plain, producer_schema(v1), "PROTOBUF")
    reg.register(reserved, reserving(v1, v0, v2), "PROTOBUF")
    assert reg.register(reserved, producer_schema(v2), "PROTOBUF") == newest  # held: its id, no check
    assert reg.versions(reserved) == [1, 2, 3]
    # after a drop the dropped fields cannot come back: v1, v0 reserving v1's fields, then v2
    back = subject("back")
    reg.register(back, producer_schema(v1), "PROTOBUF")
    reg.register(back, reserving(v0, v1), "PROTOBUF")
    if kind == "memory":
        reg.register(back, producer_schema(v2), "PROTOBUF")
    else:
        with pytest.raises(IncompatibleSchema, match="Conflict of reserved"):
            reg.register(back, producer_schema(v2), "PROTOBUF")


# ------------------------------------------------------------------ the server's process


def _fake_jdk(root: Path, name: str, version: str) -> Path:
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("#!/bin/sh\nexit 1\n")
    (home / "bin" / "java").chmod(0o755)
    (home / "release").write_text(f'JAVA_VERSION="{version}"\n')
    return home


def test_java_21_is_found_or_its_absence_said(tmp_path, monkeypatch):
    root = tmp_path / "jvm"
    old = _fake_jdk(root, "java-17-openjdk-amd64", "17.0.15")
    monkeypatch.setattr(registry_process, "JVM_ROOT", root)
    monkeypatch.delenv(registry_process.JAVA_HOME_ENV, raising=False)
    monkeypatch.setattr(registry_process, "java", lambda: str(old / "bin" / "java"))  # the default java: 17
    with pytest.raises(JavaUnavailable) as e:
        registry_process.registry_java()
    msg = str(e.value)
    assert "Java 21+" in msg and registry_process.JAVA_HOME_ENV in msg and "install" in msg.lower()
    # an environment problem: the target checks map a JarFetchError to exit 4; a run sees a TargetError
    assert isinstance(e.value, jars.JarFetchError) and isinstance(e.value, TargetError)

    _fake_jdk(root, "temurin-21-jdk-amd64", "21.0.5")
    newest = _fake_jdk(root, "temurin-25-jdk-amd64", "25.0.3")
    assert registry_process.registry_java() == str(newest / "bin" / "java")

    monkeypatch.setenv(registry_process.JAVA_HOME_ENV, str(old))
    with pytest.raises(JavaUnavailable, match="is Java 17"):
        registry_process.registry_java()
    monkeypatch.setenv(registry_process.JAVA_HOME_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(JavaUnavailable, match="not a Java installation"):
        registry_process.registry_java()


def test_start_without_java_21_fails_before_fetching_anything(tmp_path, monkeypatch):
    monkeypatch.setattr(registry_process, "JVM_ROOT", tmp_path / "empty")
    monkeypatch.delenv(registry_process.JAVA_HOME_ENV, raising=False)
    monkeypatch.setattr(registry_process, "java", lambda: "/nonexistent/java")

    def no_fetch(name: str, **kw: object) -> Path:
        raise AssertionError(f"fetched jar set {name} although Java 21 is missing")

    monkeypatch.setattr(jars, "ensure", no_fetch)
    with pytest.raises(JavaUnavailable):
        SchemaRegistryServer(tmp_path).start()


def test_the_apicurio_set_is_unpacked_not_copied(tmp_path):
    cmd = jars._maven_command(jars.JAR_SETS["apicurio"], tmp_path)
    assert "dependency:unpack" in cmd and f"-DoutputDirectory={tmp_path}" in cmd
    assert any(a.startswith("-Dsinkcheck.markers=") and str(tmp_path) in a for a in cmd)
    assert "dependency:copy-dependencies" in jars._maven_command(jars.JAR_SETS["kafka"], tmp_path)


@pytest.mark.kafka
def test_stop_leaves_no_process_or_port(apicurio):
    """Last in the module: it stops the module's server (the registry fixture starts it again)."""
    assert apicurio.proc is not None and apicurio.proc.alive
    assert apicurio.startup_s is not None and apicurio.log_path.is_file()
    assert apicurio.url.startswith("http://127.0.0.1:") and apicurio.url.endswith("/apis/ccompat/v7")
    ours = {apicurio.proc.pid} | child_pids(apicurio.proc.pid)
    assert apicurio.ports() <= listening_ports()
    apicurio.stop()
    assert not (ours & child_pids()), "the registry's process is still there"
    assert not (apicurio.ports() & listening_ports())
    assert not any(port_open(p) for p in apicurio.ports())
