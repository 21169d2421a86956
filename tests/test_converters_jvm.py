"""The model's converters against Kafka's own (connect-json / connect-runtime of the Kafka the
workers run, from the `kafka` jar set): the same bytes through both, every JsonConverter type and
logical type, defaults, optionality, the lenient and the strict cases, schemas on and off,
StringConverter and ByteArrayConverter. A tiny Java program (tests/jvm/ConvertLines.java, compiled
here with javac) prints each result canonically; so does this module for the model's."""
from __future__ import annotations

import base64
import decimal
import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from reference_impl.connect_data import DATE, DECIMAL, TIME, TIMESTAMP, Schema, Struct
from reference_impl.converters import (BYTEARRAY_CONVERTER, JSON_CONVERTER, STRING_CONVERTER, Converter,
                                       ConverterError)

pytestmark = pytest.mark.kafka
SOURCE = Path(__file__).parent / "jvm" / "ConvertLines.java"
DAY_MS = 86_400_000

DEC2 = {"type": "bytes", "name": DECIMAL, "parameters": {"scale": "2"}, "optional": True}


def env(schema, payload):
    return {"schema": schema, "payload": payload}


def st(*fields, **extra):
    return {"type": "struct", "fields": [{"field": n, **s} for n, s in fields], **extra}


ENVELOPES = [
    env({"type": "boolean"}, True), env({"type": "int8"}, 127), env({"type": "int8"}, 300), env({"type": "int16"}, -40000),
    env({"type": "int32"}, 2**31), env({"type": "int64"}, 2**63), env({"type": "int64"}, -5),
    env({"type": "float"}, 0.1), env({"type": "double"}, 1e300), env({"type": "double"}, 3),
    env({"type": "float32"}, 1.5), env({"type": "float64"}, 1.5), env({"type": "integer"}, 1),
    env({"type": "string"}, "héllo\n"), env({"type": "string"}, 7), env({"type": "int32"}, "7"),
    env({"type": "int32"}, 1.9), env({"type": "boolean"}, "true"), env({"type": "bytes"}, "AAEC"),
    env({"type": "bytes"}, "not base64!"), env({"type": "bytes"}, 5),
    env({"type": "string", "optional": True}, None), env({"type": "string"}, None),
    env({"type": "string", "optional": "true"}, None), env({"type": "string", "default": "d"}, None),
    env(DEC2, "BNI="), env(DEC2, 12.34), env(DEC2, 12), env(DEC2, 1e2), env(DEC2, True),
    env({"type": "int32", "name": DATE}, 19723), env({"type": "int32", "name": DATE}, 1.5),
    env({"type": "int32", "name": TIME}, 3_600_000), env({"type": "int64", "name": TIMESTAMP}, 1704067200000),
    env({"type": "int64", "name": TIMESTAMP}, "2024"),
    env({"type": "array", "items": {"type": "int32"}}, [1, 2, 3]), env({"type": "array", "items": {"type": "int32"}}, 5),
    env({"type": "array", "items": {"type": "string", "optional": True}}, ["a", None]),
    env({"type": "map", "keys": {"type": "string"}, "values": {"type": "double"}}, {"a": 1.5, "b": 2}),
    env({"type": "map", "keys": {"type": "int32"}, "values": {"type": "string"}}, [[1, "x"], [2, "y"]]),
    env({"type": "map", "keys": {"type": "int32"}, "values": {"type": "string"}}, {"1": "x"}),
    env({"type": "map", "keys": {"type": "int32"}, "values": {"type": "string"}}, [[1]]),
    env(st(("a", {"type": "int32"}), ("b", {"type": "string", "optional": True}), name="r", version=2, doc="d"),
        {"a": 1, "b": "x", "extra": True}),
    env(st(("a", {"type": "int32"})), {"b": 1}),
    env(st(("a", {"type": "int32", "default": 5})), {"a": None}),
    env(st(("a", st(("x", {"type": "float"}), optional=True))), {"a": {"x": 2.5}}),
    env(st(("a", {"type": "array", "items": {"type": "int64"}})), {"a": [1, None]}),
    env(st(("d", DEC2), ("t", {"type": "int64", "name": TIMESTAMP})), {"d": "AQ==", "t": 0}),
    env(st(("p", {"type": "string", "parameters": {"k": "v"}})), {"p": "x"}),
    env(st(("p", {"type": "string", "parameters": {"k": 1}})), {"p": "x"}),
    env(st(("a", {"type": "int32"})), "not an object"),
    env({"type": "struct"}, {}), env({"type": "array"}, [1]), env({"type": "map", "keys": {"type": "string"}}, {}),
    env(None, {"schemaless": [1, 2.5, "x", None, {"n": 2**63}]}), env(None, None),
]
PLAIN_JSON = [{"seq": 1, "f": 1.25, "l": [1, "a", None], "o": {"x": True}}, "text", 5, 2**63, 1.5e-7, None, [], {}]
RAW = [b"seq=1", b"\xff\xfeinvalid utf8", b"", b'{"schema":null}', b"null", b"{not json", None]


def _java(tmp_path: Path, args: list[str], lines: list[bytes | None]) -> list[str]:
    from adapters.processes import jars

    if shutil.which("javac") is None:
        pytest.fail("javac (a JDK 17) is needed for the converter comparison; install openjdk-17-jdk-headless")
    cp = jars.classpath("kafka")
    out = tmp_path / "classes"
    if not (out / "ConvertLines.class").exists():
        subprocess.run(["javac", "-cp", cp, "-d", str(out), str(SOURCE)], check=True, capture_output=True, timeout=120)
    stdin = "\n".join("NULL" if b is None else base64.b64encode(b).decode() for b in lines) + "\n"
    res = subprocess.run(["java", "-cp", f"{out}:{cp}", "ConvertLines", *args], input=stdin, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout.splitlines()


def _schema(s: Schema | None) -> str:
    if s is None:
        return "-"
    out = s.type + ("?" if s.optional else "!")
    if s.name is not None:
        out += f"<{s.name}>"
    if s.version is not None:
        out += f"v{s.version}"
    if s.parameters:
        out += "(" + "".join(f"{k}={v};" for k, v in sorted(s.parameters)) + ")"
    if s.default is not None:
        out += "=" + _value(s.default, s)
    if s.type == "struct":
        out += "{" + "".join(f"{f.name}:{_schema(f.schema)}," for f in s.fields) + "}"
    elif s.type == "array":
        out += f"[{_schema(s.items)}]"
    elif s.type == "map":
        out += f"[{_schema(s.keys)}->{_schema(s.values)}]"
    return out


def _value(v, s: Schema | None) -> str:
    if v is None:
        return "null"
    name = s.name if s is not None else None
    if name == DATE:
        return f"t{v * DAY_MS}"
    if name in (TIME, TIMESTAMP):
        return f"t{v}"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"i{v}"
    if isinstance(v, float):
        if s is not None and s.type == "float32":
            return f"f{struct.unpack('>I', struct.pack('>f', v))[0]:x}"
        return f"d{struct.unpack('>Q', struct.pack('>d', v))[0]:x}"
    if isinstance(v, str):
        return "s" + base64.b64encode(v.encode()).decode()
    if isinstance(v, (bytes, bytearray)):
        return "b" + base64.b64encode(bytes(v)).decode()
    if isinstance(v, decimal.Decimal):
        sign, digits, exp = v.as_tuple()
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        return f"D{unscaled}e{-exp}"
    if isinstance(v, Struct):
        return "S{" + "".join(f"{f.name}={_value(v.values[f.name], f.schema)}," for f in v.schema.fields) + "}"
    if isinstance(v, list):
        items = s.items if s is not None else None
        return "[" + "".join(_value(x, items) + "," for x in v) + "]"
    if isinstance(v, dict):
        ks, vs = (s.keys, s.values) if s is not None else (None, None)
        return "{" + ",".join(sorted(f"{_value(k, ks)}:{_value(x, vs)}" for k, x in v.items())) + "}"
    return f"?{type(v).__name__}"


def _model(conv: Converter, lines: list[bytes | None]) -> list[str]:
    out = []
    for b in lines:
        try:
            cv = conv.to_connect(b)
            out.append(f"ok {_schema(cv.schema)} {_value(cv.value, cv.schema)}")
        except ConverterError:
            out.append("error")
    return out


def _compare(java: list[str], model: list[str], lines: list[bytes | None]) -> None:
    bad = []
    for b, j, m in zip(lines, java, model):
        j = "error" if j.startswith("error") else _bits(j)
        if j != m:
            bad.append(f"input {b!r}\n   Kafka: {j}\n   model: {m}")
    assert len(java) == len(model) == len(lines)
    assert not bad, f"{len(bad)} of {len(lines)} differ:\n" + "\n".join(bad)


def _bits(line: str) -> str:
    """Java prints f<Float.toString>/d<Double.toString>; the comparison is on bit patterns."""
    import re

    def f(m):
        return f"f{struct.unpack('>I', struct.pack('>f', float(m.group(1))))[0]:x}"

    def d(m):
        return f"d{struct.unpack('>Q', struct.pack('>d', float(m.group(1))))[0]:x}"

    line = re.sub(r"(?<![A-Za-z0-9+/])f(-?(?:Infinity|NaN|[0-9.]+(?:E-?[0-9]+)?))", f, line)
    return re.sub(r"(?<![A-Za-z0-9+/])d(-?(?:Infinity|NaN|[0-9.]+(?:E-?[0-9]+)?))", d, line)


@pytest.fixture(scope="module")
def classes(tmp_path_factory):
    return tmp_path_factory.mktemp("jvm")


def test_jsonconverter_with_schemas_agrees_with_kafkas(classes):
    lines = [json.dumps(e).encode() for e in ENVELOPES] + [json.dumps(v).encode() for v in PLAIN_JSON] + RAW
    java = _java(classes, [JSON_CONVERTER, "schemas.enable=true"], lines)
    _compare(java, _model(Converter(JSON_CONVERTER, {"schemas.enable": "true"}), lines), lines)


def test_jsonconverter_without_schemas_agrees_with_kafkas(classes):
    lines = [json.dumps(v).encode() for v in PLAIN_JSON] + [json.dumps(e).encode() for e in ENVELOPES[:5]] + RAW
    java = _java(classes, [JSON_CONVERTER, "schemas.enable=false"], lines)
    _compare(java, _model(Converter(JSON_CONVERTER, {"schemas.enable": "false"}), lines), lines)


@pytest.mark.parametrize("cls", [STRING_CONVERTER, BYTEARRAY_CONVERTER])
def test_string_and_bytearray_converters_agree_with_kafkas(classes, cls):
    java = _java(classes, [cls], RAW)
    _compare(java, _model(Converter(cls), RAW), RAW)


# --- what JsonFormat writes, byte for byte ------------------------------------------------------

MANY_KEYS = {f"k{i}": i for i in range(40)}
WRITE_SCHEMALESS = [
    {"seq": 0, "region": "eu", "ts": 1714557600000}, {"seq": 1, "pad": "x", "zz": None, "a": [1, 2]},
    MANY_KEYS, {"nested": {"b": 1, "a": {"y": 2, "x": 1}}, "list": [{"q": 1, "p": 2}]},
    {"f": 0.1, "g": 1.5e10, "h": 1e-5, "i": 123456.789, "j": 1e300, "k": -0.0, "l": 2.5, "m": 1e7, "n": 9999999.0},
    {"big": 2**63 - 1, "neg": -2**63, "t": True, "u": "ü\u2028\t\"\\\u0001"}, "just text", 42, 3.25, None, [3, "a", None],
    {"": 1, "Aa": 2, "BB": 3},  # "Aa" and "BB" share a hash code
]
WRITE_ENVELOPES = [
    env({"type": "map", "keys": {"type": "string"}, "values": {"type": "int32"}}, {f"key{i}": i for i in range(20)}),
    env({"type": "map", "keys": {"type": "int32"}, "values": {"type": "string"}}, [[i * 17, str(i)] for i in range(20)]),
    env({"type": "map", "keys": {"type": "int64"}, "values": {"type": "string"}}, [[2**40 + i, "x"] for i in range(5)]),
    env(st(("m", {"type": "map", "keys": {"type": "string"}, "values": {"type": "double"}}),
           ("f", {"type": "float"}), ("d", {"type": "double"}), ("dec", DEC2),
           ("day", {"type": "int32", "name": DATE}), ("tod", {"type": "int32", "name": TIME}),
           ("at", {"type": "int64", "name": TIMESTAMP}), ("b", {"type": "bytes"}), ("o", {"type": "string", "optional": True}),
           ("arr", {"type": "array", "items": st(("x", {"type": "int16"}))}), name="rec"),
        {"m": {"zeta": 0.5, "alpha": 1e-4, "mid": 1234567.0}, "f": 0.1, "d": 2.0e-3, "dec": "BNI=", "day": 19723,
         "tod": 3_600_000, "at": 1704067200000, "b": "AAEC", "o": None, "arr": [{"x": 1}, {"x": -2}]}),
    env({"type": "double"}, 1e21), env({"type": "float"}, 3.4e38), env({"type": "int64", "name": TIMESTAMP}, 0),
    env(DEC2, "AQ=="), env({"type": "bytes"}, "AAEC"), env({"type": "string"}, "plain"),
    env({"type": "array", "items": {"type": "double"}}, [0.001, 1e-4, 1e6, 1e7, 12345.678]),
]


def _model_writes(conv: Converter, lines: list[bytes], decimal_format: str) -> list[str]:
    from reference_impl.formats import FormatOptions
    from reference_impl.formats.json_format import FORMAT

    out = []
    for b in lines:
        cv = conv.to_connect(b)
        text = FORMAT.line(cv.value, cv.schema, FormatOptions(json_decimal_format=decimal_format))
        out.append("ok " + base64.b64encode(text[:-1].encode("utf-8")).decode())
    return out


def _compare_writes(java: list[str], model: list[str], lines: list[bytes]) -> None:
    def text(line: str) -> str:
        return base64.b64decode(line[3:]).decode("utf-8", "replace") if line.startswith("ok ") else line

    bad = [f"input {b!r}\n   JsonFormat: {text(j)}\n   model:      {text(m)}"
           for b, j, m in zip(lines, java, model) if j != m]
    assert len(java) == len(model) == len(lines)
    assert not bad, f"{len(bad)} of {len(lines)} written otherwise:\n" + "\n".join(bad)


def test_jsonformat_bytes_of_schemaless_values_are_the_models(classes):
    """Map entries in java.util.HashMap order, numbers as Jackson spells Java's doubles."""
    lines = [json.dumps(v).encode() for v in WRITE_SCHEMALESS]
    conv = Converter(JSON_CONVERTER, {"schemas.enable": "false"})
    java = _java(classes, ["--write=BASE64", JSON_CONVERTER, "schemas.enable=false"], lines)
    _compare_writes(java, _model_writes(conv, lines, "BASE64"), lines)


@pytest.mark.parametrize("decimal_format", ["BASE64", "NUMERIC"])
def test_jsonformat_bytes_of_schema_values_are_the_models(classes, decimal_format):
    lines = [json.dumps(e).encode() for e in WRITE_ENVELOPES]
    conv = Converter(JSON_CONVERTER, {"schemas.enable": "true"})
    java = _java(classes, [f"--write={decimal_format}", JSON_CONVERTER, "schemas.enable=true"], lines)
    _compare_writes(java, _model_writes(conv, lines, decimal_format), lines)


def _pysink_writes(schemas: bool, lines: list[bytes], decimal_format: str) -> list[str]:
    from adapters.pysink.converters import RecordConverter
    from adapters.pysink.jsonwrite import json_record_line

    conv = RecordConverter("json", schemas)
    return ["ok " + base64.b64encode(json_record_line(*conv.read(b), decimal_format)[:-1]).decode() for b in lines]


@pytest.mark.parametrize("decimal_format", ["BASE64", "NUMERIC"])
def test_the_python_sinks_json_lines_are_jsonformats(classes, decimal_format):
    """The Python sink (its own converter and writer, not the model's) writes the same bytes."""
    plain = [json.dumps(v).encode() for v in WRITE_SCHEMALESS]
    java = _java(classes, [f"--write={decimal_format}", JSON_CONVERTER, "schemas.enable=false"], plain)
    _compare_writes(java, _pysink_writes(False, plain, decimal_format), plain)
    enveloped = [json.dumps(e).encode() for e in WRITE_ENVELOPES]
    java = _java(classes, [f"--write={decimal_format}", JSON_CONVERTER, "schemas.enable=true"], enveloped)
    _compare_writes(java, _pysink_writes(True, enveloped, decimal_format), enveloped)
