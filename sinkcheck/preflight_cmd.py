"""`sinkcheck preflight --s3-endpoint URL [--bucket B]`: does this S3 server behave the way
the verdicts assume? A verdict about atomic visibility, conditional writes (R8) or multipart
hygiene is only as good as the server it was measured on.

Checks: a multipart upload is invisible until complete; `If-None-Match: *` is honoured on
PutObject and on CompleteMultipartUpload (412 on an existing key); listing reads its writes;
an aborted upload is gone. Prints a table; exit 0 when all pass, 1 when one fails, 4 when the
server cannot be reached.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from adapters.s3.preflight import preflight, table
from sinkcheck.exitcodes import Exit, UsageError


def cmd_preflight(args: Any) -> int:
    from reports.redact import Redactor
    from sinkcheck.options import out_file
    from sinkcheck.terminal import Terminal

    if args.out:
        out_file(args.out)

    term = Terminal(Redactor([os.environ.get("AWS_SECRET_ACCESS_KEY", ""), os.environ.get("AWS_ACCESS_KEY_ID", "")]))
    if not args.s3_endpoint.startswith(("http://", "https://")):
        raise UsageError(f"--s3-endpoint {args.s3_endpoint}: give a URL such as http://127.0.0.1:9000")
    try:
        checks = preflight(args.s3_endpoint, args.bucket)
    except ConnectionError as e:
        raise UsageError(f"{e}. Start the S3 server or fix --s3-endpoint/--bucket (credentials from AWS_ACCESS_KEY_ID/"
                         "AWS_SECRET_ACCESS_KEY, default sinkcheck/sinkcheck)") from None
    term.out(table(checks))
    ok = sum(1 for c in checks if c.status == "pass")
    term.out(f"{'PASS' if ok == len(checks) else 'FAIL'}: {ok}/{len(checks)} S3 behaviours the verdicts rely on hold at {args.s3_endpoint}")
    if args.out:
        p = Path(args.out)
        p.write_text(term.redactor.text(json.dumps({"format": "sinkcheck.preflight/1", "endpoint": args.s3_endpoint,
                                                    "checks": [asdict(c) for c in checks]}, indent=1)) + "\n")
        term.out(f"  json  {p}  (embed with: sinkcheck run … --preflight {p})")
    return Exit.OK if ok == len(checks) else Exit.FAILED


def add_preflight_parser(sub: Any) -> None:
    p = sub.add_parser("preflight", help="check the S3 server behaves as the verdicts assume")
    p.add_argument("--s3-endpoint", required=True, help="the S3 endpoint URL, e.g. http://127.0.0.1:9000")
    p.add_argument("--bucket", default=None, help="an existing bucket to use (default: create and delete one)")
    p.add_argument("--out", default=None, help="also write the results as JSON (for --preflight of run and gate)")
    p.set_defaults(func=cmd_preflight)
