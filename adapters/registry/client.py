"""A client of a real Schema Registry over Confluent's REST API (Confluent's own, or Apicurio's
/apis/ccompat/v7), with the standard library only: the calls of adapters.registry.api.

Subjects go into paths percent-encoded whole (topic names carry dots, a subject may carry a
slash). Every refusal is a RegistryError naming the call, the HTTP status, Confluent's error
code and the registry's message; a registry that does not answer is one with status 0.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Iterable

from adapters.registry.api import SUBJECT_NOT_FOUND, NotFound, Registered, RegistryError, error_for
from adapters.registry.snapshot import RegistrySnapshot, SchemaText, SubjectVersion

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


def _subject(subject: str) -> str:
    return urllib.parse.quote(subject, safe="")


def _body(schema_text: str, schema_type: str) -> dict[str, Any]:
    body: dict[str, Any] = {"schema": schema_text}
    if schema_type != "AVRO":  # as Confluent's serializers send it: AVRO is the default, left out
        body["schemaType"] = schema_type
    return body


class RegistryClient:
    """The SchemaRegistry protocol over HTTP at `url`, the base of the API (for Apicurio:
    http://127.0.0.1:P/apis/ccompat/v7)."""

    def __init__(self, url: str, *, timeout_s: float = 10):
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        return f"RegistryClient({self.url!r})"

    def call(self, method: str, path: str, body: Any = None, query: dict[str, str] | None = None) -> Any:
        """One request; the decoded JSON answer, or the RegistryError of a refusal."""
        url = self.url + path + (("?" + urllib.parse.urlencode(query)) if query else "")
        asked = f"{method} {url}" + (f" with {json.dumps(body)[:300]}" if body is not None else "")
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": CONTENT_TYPE, "Accept": CONTENT_TYPE})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
                raw = r.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                answer = json.loads(raw)
            except ValueError:
                answer = None
            if isinstance(answer, dict):
                code = answer.get("error_code")
                raise error_for(asked, e.code, int(code) if isinstance(code, int) else None,
                                str(answer.get("message", ""))) from None
            raise error_for(asked, e.code, None, raw.decode(errors="replace")[:500] or str(e.reason)) from None
        except (urllib.error.URLError, OSError) as e:
            raise RegistryError(asked, 0, None, f"no answer: {getattr(e, 'reason', e)}") from None
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            raise RegistryError(asked, 200, None, f"an answer that is not JSON: {raw[:300]!r}") from None

    # ------------------------------------------------------------------ what a producer asks

    def register(self, subject: str, schema_text: str, schema_type: str = "AVRO", normalize: bool = False) -> int:
        query = {"normalize": "true"} if normalize else None
        return int(self.call("POST", f"/subjects/{_subject(subject)}/versions", _body(schema_text, schema_type),
                             query)["id"])

    def schema(self, schema_id: int) -> tuple[str, str]:
        d = self.call("GET", f"/schemas/ids/{int(schema_id)}")
        return d["schema"], d.get("schemaType") or "AVRO"

    def lookup(self, subject: str, schema_text: str, schema_type: str = "AVRO") -> tuple[int, int]:
        d = self.call("POST", f"/subjects/{_subject(subject)}", _body(schema_text, schema_type))
        return int(d["version"]), int(d["id"])

    def latest(self, subject: str) -> Registered:
        return self.version(subject, "latest")

    def version(self, subject: str, version: int | str) -> Registered:
        d = self.call("GET", f"/subjects/{_subject(subject)}/versions/{version}")
        return Registered(d.get("subject", subject), int(d["version"]), int(d["id"]), d["schema"],
                          d.get("schemaType") or "AVRO")

    # ------------------------------------------------------------------ what the suite asks

    def subjects(self) -> list[str]:
        return list(self.call("GET", "/subjects"))

    def versions(self, subject: str) -> list[int]:
        return [int(v) for v in self.call("GET", f"/subjects/{_subject(subject)}/versions")]

    def set_compatibility(self, level: str, subject: str | None = None) -> None:
        path = "/config" if subject is None else f"/config/{_subject(subject)}"
        self.call("PUT", path, {"compatibility": level})

    def compatibility(self, subject: str | None = None) -> str:
        if subject is None:
            return str(self.call("GET", "/config")["compatibilityLevel"])
        try:
            d = self.call("GET", f"/config/{_subject(subject)}", query={"defaultToGlobal": "true"})
        except NotFound as e:
            if e.error_code != SUBJECT_NOT_FOUND:
                raise
            return self.compatibility()  # Apicurio: a subject it does not know follows the global level
        return str(d["compatibilityLevel"])

    def snapshot(self, subjects: Iterable[str] | None = None) -> RegistrySnapshot:
        """The subjects' versions (all subjects', or those of `subjects` the registry holds), the
        schemas they name and the levels in force: one request per subject version."""
        schemas: dict[int, SchemaText] = {}
        held: dict[str, tuple[SubjectVersion, ...]] = {}
        levels: dict[str, str] = {}
        names = self.subjects()
        if subjects is not None:
            wanted = set(subjects)
            names = [s for s in names if s in wanted]
        for subject in names:
            versions = []
            for v in self.versions(subject):
                r = self.version(subject, v)
                versions.append(SubjectVersion(r.version, r.id))
                schemas.setdefault(r.id, SchemaText(r.schema, r.schema_type))
            held[subject] = tuple(versions)
            levels[subject] = self.compatibility(subject)
        return RegistrySnapshot(schemas, held, levels, self.compatibility())
