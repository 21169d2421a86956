"""An in-memory registry served over HTTP on 127.0.0.1: the subset of Confluent's REST API that
adapters.registry.client speaks and a producer's serializer calls (register, lookup, schema by
id, versions, config), so that a JVM converter or any Confluent client can use the simulation's
registry without a JVM registry. Errors answer as Confluent's do: {"error_code", "message"}.
Seen to serve Confluent's Java KafkaAvroSerializer/Deserializer and AvroData 7.7.8 (auto-register,
use.latest.version, a 409 as SerializationException) and confluent_kafka's AvroSerializer
(register, lookup, latest) and AvroDeserializer; deletes and /compatibility are not served.

    with RegistryHttpServer(InMemoryRegistry()) as srv:
        RegistryClient(srv.url).register("orders-value", schema)
"""
from __future__ import annotations

import json
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from adapters.registry.api import RegistryError
from adapters.registry.memory import InMemoryRegistry

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
_Route = Callable[[InMemoryRegistry, re.Match, dict[str, Any], dict[str, str]], Any]


def _subject(m: re.Match) -> str:
    return urllib.parse.unquote(m.group("s"))


def _register(reg: InMemoryRegistry, m: re.Match, body: dict[str, Any], q: dict[str, str]) -> Any:
    return {"id": reg.register(_subject(m), body["schema"], body.get("schemaType") or "AVRO",
                               q.get("normalize") == "true")}


def _lookup(reg: InMemoryRegistry, m: re.Match, body: dict[str, Any], q: dict[str, str]) -> Any:
    subject = _subject(m)
    version, _ = reg.lookup(subject, body["schema"], body.get("schemaType") or "AVRO")
    return _version_json(reg, subject, version)


def _version_json(reg: InMemoryRegistry, subject: str, version: int | str) -> dict[str, Any]:
    r = reg.version(subject, version)
    d: dict[str, Any] = {"subject": r.subject, "version": r.version, "id": r.id, "schema": r.schema}
    if r.schema_type != "AVRO":  # Confluent leaves AVRO out
        d["schemaType"] = r.schema_type
    return d


def _schema_by_id(reg: InMemoryRegistry, m: re.Match, body: dict[str, Any], q: dict[str, str]) -> Any:
    text, schema_type = reg.schema(int(m.group("id")))
    return {"schema": text} if schema_type == "AVRO" else {"schema": text, "schemaType": schema_type}


def _config(reg: InMemoryRegistry, m: re.Match, body: dict[str, Any], q: dict[str, str]) -> Any:
    subject = _subject(m) if m.groupdict().get("s") else None
    if body:  # PUT
        reg.set_compatibility(body.get("compatibility") or body.get("compatibilityLevel") or "", subject)
        return {"compatibility": reg.compatibility(subject)}
    return {"compatibilityLevel": reg.compatibility(subject)}


ROUTES: list[tuple[str, re.Pattern, _Route]] = [
    ("POST", re.compile(r"/subjects/(?P<s>[^/]+)/versions"), _register),
    ("POST", re.compile(r"/subjects/(?P<s>[^/]+)"), _lookup),
    ("GET", re.compile(r"/subjects"), lambda reg, m, b, q: reg.subjects()),
    ("GET", re.compile(r"/subjects/(?P<s>[^/]+)/versions"), lambda reg, m, b, q: reg.versions(_subject(m))),
    ("GET", re.compile(r"/subjects/(?P<s>[^/]+)/versions/(?P<v>latest|\d+)"),
     lambda reg, m, b, q: _version_json(reg, _subject(m), m.group("v"))),
    ("GET", re.compile(r"/schemas/ids/(?P<id>\d+)"), _schema_by_id),
    ("GET", re.compile(r"/schemas/types"), lambda reg, m, b, q: ["JSON", "PROTOBUF", "AVRO"]),
    ("GET", re.compile(r"/config"), _config),
    ("PUT", re.compile(r"/config"), _config),
    ("GET", re.compile(r"/config/(?P<s>[^/]+)"), _config),
    ("PUT", re.compile(r"/config/(?P<s>[^/]+)"), _config),
    ("GET", re.compile(r"/mode"), lambda reg, m, b, q: {"mode": "READWRITE"}),
]


class _Handler(BaseHTTPRequestHandler):
    registry: InMemoryRegistry  # set on the class made per server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def _answer(self, status: int, value: Any) -> None:
        raw = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _serve(self, method: str) -> None:
        parsed = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(parsed.query))
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length)) if length else {}
        except ValueError:
            self._answer(400, {"error_code": 400, "message": "the body is not JSON"})
            return
        for m_method, pattern, route in ROUTES:
            m = pattern.fullmatch(parsed.path)
            if m and m_method == method:
                try:
                    self._answer(200, route(self.registry, m, body if isinstance(body, dict) else {}, query))
                except RegistryError as e:
                    self._answer(e.status, {"error_code": e.error_code or e.status, "message": e.message})
                except (KeyError, TypeError, ValueError) as e:
                    self._answer(422, {"error_code": 422, "message": f"unprocessable request: {e}"})
                return
        self._answer(404, {"error_code": 404, "message": f"HTTP 404 Not Found: {method} {parsed.path}"})

    def do_GET(self) -> None:  # noqa: N802 - http.server's names
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._serve("PUT")

    def do_DELETE(self) -> None:  # noqa: N802 - no route: answered in JSON, as a client expects
        self._serve("DELETE")


class RegistryHttpServer:
    """`registry` served on a free loopback port by a daemon thread; `url` is the API's base."""

    def __init__(self, registry: InMemoryRegistry | None = None, port: int = 0):
        self.registry = registry if registry is not None else InMemoryRegistry()
        handler = type("Handler", (_Handler,), {"registry": self.registry})
        self._server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "RegistryHttpServer":
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="registry-http", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> "RegistryHttpServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
