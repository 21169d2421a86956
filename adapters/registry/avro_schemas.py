"""Avro schemas as a Schema Registry compares them, for the in-memory registry: parsed and checked by
Apache Avro's Python library (`avro`), written back as Avro's Java `Schema.toString()` writes them,
and compared for compatibility by Avro's own ReaderWriterCompatibilityChecker.

Confluent's registry keeps three notions apart, and so does this module:
* the text it stores and serves (`canonical_text`): Java's `toString()` of the parsed schema,
  compact, keys in Avro's order (type, name, namespace, doc, fields; a field's name, type, doc,
  default), names relative to the enclosing namespace. Whitespace, key order and how a name is
  split into namespace and name are gone; docs and defaults stay.
* what gets one id across subjects: that text (Confluent looks ids up by its MD5).
* what a subject counts as a schema it already holds (`equality_key`): Java's `Schema.equals`,
  which ignores docs and aliases, so a doc-only change registers as the version already there.
"""
from __future__ import annotations

import functools
import json
from typing import Any

RESERVED = {"type", "name", "namespace", "doc", "fields", "items", "values", "symbols", "size", "default",
            "aliases", "order"}
PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


class AvroSchemaError(ValueError):
    """The text is not an Avro schema (the registry's 42201)."""


# A registry compares the same few schema texts for every record a producer writes (thousands a
# suite run): each function of a text is computed once per text. The results are immutable (str,
# bool) or never changed by their readers (the parsed schema, only read by the checker); a text
# Avro refuses raises every time, as lru_cache keeps no exception.
_CACHED_TEXTS = 4096


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def parse(text: str) -> Any:
    """The schema parsed and validated by Apache Avro (an avro.schema.Schema)."""
    import avro.errors
    import avro.schema

    try:
        return avro.schema.parse(text)
    except (avro.errors.AvroException, ValueError, TypeError, KeyError, AttributeError) as e:
        raise AvroSchemaError(f"not an Avro schema: {e}") from None


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def canonical_text(text: str) -> str:
    """The schema as Confluent (and Apicurio) store and serve it: Java Avro's toString()."""
    parse(text)  # refuse what Avro refuses before writing anything
    return _dumps(_java_order(json.loads(text), namespace=None, defined=set()))


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def equality_key(text: str) -> str:
    """What Java's Schema.equals compares: the canonical schema less docs and aliases."""
    return _dumps(_strip(json.loads(canonical_text(text))), sort=True)


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def can_read(reader_text: str, writer_text: str) -> bool:
    """Whether a reader with `reader_text` reads all data written with `writer_text` (Avro's
    schema resolution rules, as the Java checker Confluent runs decides them)."""
    from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

    result = ReaderWriterCompatibilityChecker().get_compatibility(parse(reader_text), parse(writer_text))
    return result.compatibility is SchemaCompatibilityType.compatible


# ---------------------------------------------------------------------------- Java's toString


def _dumps(value: Any, sort: bool = False) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=sort)


def _split(name: str, namespace: str | None) -> tuple[str, str | None]:
    if "." in name:
        space, _, simple = name.rpartition(".")
        return simple, space or None
    return name, namespace


def _qualified(full: str, namespace: str | None) -> str:
    space, _, simple = full.rpartition(".")
    return simple if (space or None) == namespace else full


def _resolve(ref: str, namespace: str | None, defined: set[str]) -> str:
    if ref in PRIMITIVES or "." in ref:
        return ref
    return f"{namespace}.{ref}" if namespace and f"{namespace}.{ref}" in defined else ref


def _props(node: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k not in RESERVED}


def _java_order(node: Any, namespace: str | None, defined: set[str]) -> Any:
    """`node` written as Java's Schema.toJson writes it (namespace: the enclosing one; defined:
    the full names met so far, a later mention of one being its name)."""
    if isinstance(node, list):
        return [_java_order(n, namespace, defined) for n in node]
    if isinstance(node, str):
        return _qualified(_resolve(node, namespace, defined), namespace) if node not in PRIMITIVES else node
    kind = node["type"]
    if not isinstance(kind, str) or kind not in ("record", "error", "enum", "fixed", "array", "map"):
        if isinstance(kind, str) and kind in PRIMITIVES:
            props = _props(node)
            return {"type": kind, **props} if props else kind
        return _java_order(kind, namespace, defined)  # {"type": <a schema>} is that schema
    if kind == "array":
        return {"type": "array", "items": _java_order(node["items"], namespace, defined), **_props(node)}
    if kind == "map":
        return {"type": "map", "values": _java_order(node["values"], namespace, defined), **_props(node)}
    simple, space = _split(node["name"], node.get("namespace", namespace))
    space = space or None
    full = f"{space}.{simple}" if space else simple
    defined.add(full)
    out: dict[str, Any] = {"type": kind, "name": simple}
    if space != namespace:
        out["namespace"] = space if space else ""
    if node.get("doc") is not None:
        out["doc"] = node["doc"]
    if kind in ("record", "error"):
        out["fields"] = [_field(f, space, defined) for f in node.get("fields", [])]
    elif kind == "enum":
        out["symbols"] = list(node["symbols"])
        if "default" in node:
            out["default"] = node["default"]
    else:
        out["size"] = node["size"]
    out.update(_props(node))
    if node.get("aliases"):
        out["aliases"] = list(node["aliases"])
    return out


def _field(f: dict[str, Any], namespace: str | None, defined: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": f["name"], "type": _java_order(f["type"], namespace, defined)}
    if f.get("doc") is not None:
        out["doc"] = f["doc"]
    if "default" in f:
        out["default"] = f["default"]
    if f.get("order", "ascending") != "ascending":
        out["order"] = f["order"]
    out.update(_props(f))
    if f.get("aliases"):
        out["aliases"] = list(f["aliases"])
    return out


def _strip(node: Any) -> Any:
    """The canonical JSON of a schema less the docs and aliases of its named types and fields
    (defaults, values of the data, are left alone)."""
    if isinstance(node, list):
        return [_strip(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in node.items() if k not in ("doc", "aliases")}
    for key in ("items", "values", "type"):
        if key in out and not isinstance(out[key], str):
            out[key] = _strip(out[key])
    if "fields" in out:
        out["fields"] = [{**{k: v for k, v in f.items() if k not in ("doc", "aliases")}, "type": _strip(f["type"])}
                         for f in out["fields"]]
    return out
