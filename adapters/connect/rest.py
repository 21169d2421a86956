"""Kafka Connect's REST API as the targets use it: requests to whichever worker answers, and a
rejected connector config turned into a message that names each property and why."""
from __future__ import annotations

import json
import time
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


def _not_applied(e: ConnectRestError) -> bool:
    """An answer that says Connect applied nothing and will take the request once its group
    settles: 409 (a rebalance under way, a config change settling), or 500 from a worker that
    could not forward the request to the leader (a leader that just left the group)."""
    return e.status == 409 or (e.status == 500 and "trying to forward REST request" in str(e))


class ConnectRest:
    """A small client for the Connect REST API that tries each live worker in turn."""

    def __init__(self, workers: list[ConnectWorker]):
        self.workers = workers

    def request(self, method: str, path: str, body: Any = None, timeout_s: float = 30,
                busy_wait_s: float | None = None) -> Any:
        """Send to each live worker in turn until one answers. Where every worker answered that
        it applied nothing for now (_not_applied), try them all again for up to `busy_wait_s`
        (default 30 s for a change, none for a GET: its callers poll)."""
        busy_wait_s = busy_wait_s if busy_wait_s is not None else (0.0 if method == "GET" else 30.0)
        deadline = time.monotonic() + busy_wait_s
        pause_s = 0.5
        while True:
            try:
                return self._request_once(method, path, body, timeout_s)
            except ConnectRestError as e:
                if not _not_applied(e) or time.monotonic() + pause_s > deadline:
                    if _not_applied(e) and busy_wait_s > 0:
                        raise TargetError(f"{method} {path}: every worker answered {e.status} for {busy_wait_s:.0f}s "
                                          f"(a rebalance, a config change or a leader change that did not "
                                          f"settle): {e}") from None
                    raise
            time.sleep(pause_s)
            pause_s = min(pause_s * 2, 4.0)

    def _request_once(self, method: str, path: str, body: Any, timeout_s: float) -> Any:
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
        if isinstance(last, ConnectRestError) and _not_applied(last):
            raise last
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
