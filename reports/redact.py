"""Secrets never leave sinkcheck: one place that redacts them from every output.

A key is secret when its name mentions a secret, password, token, credential, access key or
secret key (`aws.secret.access.key`, `aws.access.key.id`, `sasl.jaas.password`, ...). Every
writer and the terminal go through a `Redactor`: it masks the values of such keys in data,
and the secret values themselves wherever they appear in text (raw, JSON-escaped,
HTML-escaped, URL-encoded), plus `key=value` / `"key": "value"` spellings of secret keys whose
values it was never told about.
"""
from __future__ import annotations

import functools
import html
import json
import re
from typing import Any, Iterable, Mapping
from urllib.parse import quote, quote_plus

MASK = "***redacted***"
_WORDS = ("secret", "password", "passwd", "token", "credential", "accesskey", "secretkey", "apikey", "privatekey")
MIN_SECRET_LEN = 4  # shorter values are masked under their key, but not searched for in free text


@functools.lru_cache(maxsize=4096)
def _secret_name(key: str) -> bool:
    norm = re.sub(r"[\s._\-]", "", key.lower())
    return any(w in norm for w in _WORDS)


def is_secret_key(key: str) -> bool:
    # a report asks this of every key of every run's entry, over and over the same few hundred names
    return _secret_name(str(key))


# `some.secret.key=value`, `"aws.secret.access.key": "value"`, `password: value` in free text
_KV = re.compile(
    # a match starts where a run of name characters starts, or at a quote: one starting inside a
    # run would have started at the run's first character already (its [\w.\-]* takes the rest),
    # and trying every position of a long run made the search quadratic in the run's length
    r"""(?:(?<![\w.\-])|(?=["']))"""
    r"""(?P<k>["']?[\w.\-]*(?:secret|password|passwd|token|credential|access[._\-]?key|api[._\-]?key|private[._\-]?key)[\w.\-]*["']?)"""
    r"""(?P<sep>\s*[:=]\s*)(?P<q>["']?)(?P<v>[^"',\s}\]&]+)""",
    re.IGNORECASE,
)
# every text _KV matches holds one of its names of a secret: a text without any is left as it is
_KV_HINT = re.compile(r"secret|passw|token|credential|(?:access|api|private)[._\-]?key", re.IGNORECASE)


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        for s in secrets:
            self.add_secret(s)

    @classmethod
    def from_configs(cls, *configs: Mapping[str, Any] | None) -> "Redactor":
        r = cls()
        for c in configs:
            if c:
                r.add_config(c)
        return r

    def add_secret(self, value: Any) -> None:
        if value is None:
            return
        s = str(value)
        if len(s) < MIN_SECRET_LEN:
            return
        for form in (s, json.dumps(s)[1:-1], html.escape(s), html.escape(s, quote=False), quote(s, safe=""), quote_plus(s)):
            if form:
                self._secrets.add(form)

    def add_config(self, cfg: Mapping[str, Any]) -> None:
        """Every value under a secret key, at any depth (a `{"name":…, "config":{…}}` wrapper too)."""
        for k, v in cfg.items():
            if isinstance(v, Mapping):
                self.add_config(v)
            elif is_secret_key(k):
                self.add_secret(v)

    @property
    def secrets(self) -> frozenset[str]:
        return frozenset(self._secrets)

    def text(self, text: str) -> str:
        if not text:
            return text
        for s in sorted(self._secrets, key=len, reverse=True):
            if s in text:
                text = text.replace(s, MASK)
        if not _KV_HINT.search(text):
            return text
        return _KV.sub(lambda m: m["k"] + m["sep"] + m["q"] + (m["v"] if m["v"] == MASK or m["v"].startswith("***") else MASK), text)

    def data(self, obj: Any) -> Any:
        """A copy of JSON-like data with secret keys masked and secret values removed from strings."""
        if isinstance(obj, Mapping):
            return {str(k): (MASK if is_secret_key(str(k)) and v not in (None, "") and not isinstance(v, Mapping)
                             else self.data(v)) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [self.data(x) for x in obj]
        if isinstance(obj, str):
            return self.text(obj)
        return obj

    def config(self, cfg: Mapping[str, Any]) -> dict[str, Any]:
        return self.data(cfg)
