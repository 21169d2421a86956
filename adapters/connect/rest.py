"""Kafka Connect's REST API as the targets use it: requests to whichever worker answers, and a
rejected connector config turned into a message that names each property and why."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Mapping

from adapters.processes.connect_worker import ConnectWorker
from adapters.target import TargetError


class ConnectRestError(TargetError):
    def __init__(self, status: int, message: str, body: Any = None):
        super().__init__(f"Kafka Connect REST answered {status}: {message}")
        self.status = status
        self.body = body


class ConnectRest:
    """A small client for the Connect REST API that tries each live worker in turn."""

    def __init__(self, workers: list[ConnectWorker]):
        self.workers = workers

    def request(self, method: str, path: str, body: Any = None, timeout_s: float = 30) -> Any:
        last: Exception | None = None
        urls = [w.rest_url for w in self.workers if w.proc is not None and w.proc.alive]
        if not urls:
            raise TargetError("no live Kafka Connect worker to send the REST request to")
        for url in urls:
            data = json.dumps(body).encode() if body is not None else None
            req = urllib.request.Request(url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json",
                                                  "Accept": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=timeout_s) as r:
                    raw = r.read()
                    return json.loads(raw) if raw else None
            except urllib.error.HTTPError as e:
                raw = e.read()
                try:
                    parsed = json.loads(raw)
                    msg = parsed.get("message", raw.decode(errors="replace"))
                except (ValueError, AttributeError):
                    parsed, msg = None, raw.decode(errors="replace")
                if e.code == 409 or e.code >= 500:
                    last = ConnectRestError(e.code, msg, parsed)
                    continue  # rebalancing or another worker leads: try the next one
                raise ConnectRestError(e.code, msg, parsed) from None
            except (urllib.error.URLError, OSError) as e:
                last = e
        raise TargetError(f"{method} {path} failed on every worker: {last}")


def validation_errors(result: Mapping[str, Any]) -> dict[str, list[str]]:
    """Property -> reasons from a `/connector-plugins/<class>/config/validate` answer."""
    out: dict[str, list[str]] = {}
    for c in result.get("configs", []):
        v = c.get("value", {})
        if v.get("errors"):
            out[v.get("name", "?")] = list(v["errors"])
    return out


def format_config_errors(connector: str, errors: Mapping[str, list[str]]) -> str:
    lines = [f"Kafka Connect rejected the config of connector {connector!r} "
             f"({sum(len(v) for v in errors.values())} error(s)):"]
    for prop, reasons in errors.items():
        for r in reasons:
            lines.append(f"  - {prop}: {r}")
    lines.append("Fix these properties in the connector config (see the connector's "
                 "configuration reference) and run again.")
    return "\n".join(lines)
