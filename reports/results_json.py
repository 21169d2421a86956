"""results.json: every scenario × target × property verdict with its witnesses, the claim,
the seed and the replay command; the environment, preflight and baseline diff beside them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reports.context import (REPORT_FORMAT, ReportContext, accepted_entries, counts, entry, fault_coverage,
                             known_bugs_section, matrix, not_applicable_entries, overall_status)


def results_document(results: list[Any], ctx: ReportContext) -> dict[str, Any]:
    entries = [entry(r, ctx) for r in results]
    nas = not_applicable_entries(ctx)
    doc = {
        "format": REPORT_FORMAT,
        "command": ctx.command,
        "status": "interrupted" if ctx.interrupted else ctx.verdict or overall_status(entries, ctx.errors),
        "interrupted": ctx.interrupted,
        # the runs' own status: a failure accepted as a known bug (`run --accept-known-bugs`) counted as one
        "runs_status": overall_status(entries, ctx.errors, accepting=False),
        "seed": ctx.seed,
        "profile": ctx.profile,
        "started_at": ctx.started_at,
        "duration_s": ctx.duration_s,
        "counts": counts(entries, nas),
        "targets": sorted({e["target"] for e in entries} | {n["target"] for n in nas}),
        "matrix": matrix(entries, nas),
        "fault_coverage": fault_coverage(entries),
        "results": entries,
        # never run: the user's connector config leaves nothing of the scenario's point (one line why)
        "not_applicable": nas,
        "errors": ctx.errors,
        "environment": ctx.environment,
        "preflight": ctx.preflight,
        "baseline": ctx.baseline,
        "known_bugs": known_bugs_section(results, ctx),
        "known_bug_changes": ctx.known_bug_changes,
        "notes": ctx.notes,
    }
    if ctx.accept_known_bugs:  # each failed run accepted as a known bug of the release that ran
        accepted = accepted_entries(entries)
        doc["counts"]["accepted"] = len(accepted)
        doc["accepted_known_bugs"] = [{"scenario": e["scenario"], "target": e["target"], **e["accepted_known_bug"]}
                                      for e in accepted]
    return ctx.redactor.data(doc)


def write_results_json(path: str | Path, results: list[Any], ctx: ReportContext) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(results_document(results, ctx), indent=1, default=str) + "\n"
    p.write_text(ctx.redactor.text(text), encoding="utf-8")
    return p
