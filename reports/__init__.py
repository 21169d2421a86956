"""Reports: results.json, junit.xml and one self-contained report.html from a list of
RunResults, plus the upgrade-gate diff. Every output goes through `reports.redact`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from reports.context import ReportContext


def write_reports(out_dir: str | Path, results: list[Any], ctx: ReportContext) -> dict[str, Path]:
    from reports.html import write_html
    from reports.junit import write_junit
    from reports.results_json import write_results_json

    out = Path(out_dir)
    return {
        "html": write_html(out / "report.html", results, ctx),
        "junit": write_junit(out / "junit.xml", results, ctx),
        "json": write_results_json(out / "results.json", results, ctx),
    }


__all__ = ["ReportContext", "write_reports"]
