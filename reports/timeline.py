"""A run's timeline as inline SVG: produce events, fault windows shaded from `at_ms` to
`until_ms`, offset commits, objects becoming visible and, for a table sink, the table's
snapshots, on one time axis."""
from __future__ import annotations

from html import escape
from typing import Any

LANES = ("produce", "faults", "commits", "objects")
W, LANE_H, LEFT, TOP = 960, 34, 78, 22


def _times(tl: dict[str, Any]) -> list[int]:
    ts = [e["at"] for k in ("produced", "commits", "visible", "statuses", "snapshots") for e in tl.get(k, [])
          if e.get("at") is not None]
    for f in tl.get("faults", []):
        ts += [t for t in (f.get("at_ms"), f.get("until_ms")) if t is not None]
    return ts


def timeline_svg(tl: dict[str, Any], ident: str = "t") -> str:
    ts = _times(tl)
    lanes = LANES + (("snapshots",) if tl.get("snapshots") else ())
    h = TOP + LANE_H * len(lanes) + 24
    if not ts:
        return (f'<svg class="timeline empty" id="{escape(ident)}" width="{W}" height="40" viewBox="0 0 {W} 40" '
                f'xmlns="http://www.w3.org/2000/svg"><text x="8" y="24" class="tl-note">no timed events recorded</text></svg>')
    t0, t1 = min(ts), max(ts)
    span = max(t1 - t0, 1)

    def x(t: int) -> float:
        return LEFT + (W - LEFT - 12) * (t - t0) / span

    def lane_y(name: str) -> int:
        return TOP + LANE_H * lanes.index(name)

    parts = [f'<svg class="timeline" id="{escape(ident)}" width="{W}" height="{h}" viewBox="0 0 {W} {h}" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="run timeline">']
    # fault windows, shaded across every lane
    for i, f in enumerate(tl.get("faults", [])):
        if f.get("at_ms") is None:
            continue
        a = x(f["at_ms"])
        b = x(f["until_ms"]) if f.get("until_ms") is not None else a + 3
        cls = "tl-fault" if f.get("fired") else "tl-fault tl-unfired"
        label = f"{f['kind']} {f.get('params') or ''} {'fired' if f.get('fired') else 'never fired'} {f.get('detail') or ''}"
        parts.append(f'<rect class="{cls}" x="{a:.1f}" y="{TOP - 4}" width="{max(b - a, 3):.1f}" height="{LANE_H * len(lanes)}">'
                     f'<title>{escape(label)}</title></rect>')
    for name in lanes:
        y = lane_y(name)
        parts.append(f'<text class="tl-lane" x="4" y="{y + LANE_H / 2 + 4:.0f}">{name}</text>'
                     f'<line class="tl-axis" x1="{LEFT}" x2="{W - 12}" y1="{y + LANE_H / 2}" y2="{y + LANE_H / 2}"/>')
    y = lane_y("produce")
    for p in tl.get("produced", []):
        parts.append(f'<line class="tl-produce" x1="{x(p["at"]):.1f}" x2="{x(p["at"]):.1f}" y1="{y + 8}" y2="{y + LANE_H - 8}">'
                     f'<title>produce {escape(p["tp"])}@{p["offset"]} at +{p["at"] - t0} ms</title></line>')
    y = lane_y("faults")
    for f in tl.get("faults", []):
        if f.get("at_ms") is None:
            continue
        parts.append(f'<text class="tl-label" x="{x(f["at_ms"]) + 2:.1f}" y="{y + LANE_H / 2 - 3:.0f}">{escape(f["kind"])}</text>')
    y = lane_y("commits")
    for c in tl.get("commits", []):
        cx = x(c["at"])
        parts.append(f'<path class="tl-commit" d="M{cx:.1f},{y + 9} l5,8 l-5,8 l-5,-8 z">'
                     f'<title>commit {escape(c["tp"])} → {c["offset"]} at +{c["at"] - t0} ms</title></path>')
    y = lane_y("objects")
    for o in tl.get("visible", []):
        parts.append(f'<circle class="tl-object" cx="{x(o["at"]):.1f}" cy="{y + LANE_H / 2}" r="5">'
                     f'<title>visible: {escape(o["key"])} ({o["size"]} bytes) at +{o["at"] - t0} ms</title></circle>')
    if "snapshots" in lanes:
        y = lane_y("snapshots")
        for sn in tl["snapshots"]:
            sx = x(sn["at"])
            parts.append(f'<rect class="tl-commit" x="{sx - 5:.1f}" y="{y + 9}" width="10" height="16">'
                         f'<title>snapshot {sn["id"]}: {sn["records"]} records added at +{sn["at"] - t0} ms; '
                         f'{escape(str(sn["offsets"]))}</title></rect>')
    parts.append(f'<text class="tl-note" x="{LEFT}" y="{h - 6}">0 ms</text>'
                 f'<text class="tl-note" x="{W - 12}" y="{h - 6}" text-anchor="end">+{span} ms</text>')
    parts.append("</svg>")
    return "".join(parts)
