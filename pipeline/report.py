"""A self-contained HTML report of a run: counts, the stage funnel, reasons, shards."""

from __future__ import annotations

import html
import json
from typing import Any

from pipeline import fileio

BAR_WIDTH = 420


def _bars(rows: list[tuple[str, int]], colour: str) -> str:
    """An inline SVG horizontal bar chart (no scripts, no external files)."""
    if not rows:
        return "<p>none</p>"
    top = max(value for _, value in rows) or 1
    height = 22 * len(rows) + 4
    parts = [f'<svg width="{BAR_WIDTH + 330}" height="{height}" role="img">']
    for index, (label, value) in enumerate(rows):
        y = 22 * index + 2
        width = max(1, int(BAR_WIDTH * value / top))
        parts.append(
            f'<text x="0" y="{y + 15}" font-size="12">{html.escape(label[:40])}</text>'
            f'<rect x="250" y="{y}" width="{width}" height="18" fill="{colour}"></rect>'
            f'<text x="{255 + width}" y="{y + 15}" font-size="12">{value:,}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape('' if v is None else str(v))}</td>" for v in row) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_report(manifest: dict[str, Any]) -> str:
    """The report page for one manifest."""
    counts = manifest["counts"]
    stages = manifest["stages"]
    funnel = [(s["name"], s["in"]) for s in stages if s.get("in") is not None] + [("kept", counts["kept"])]
    removed = [(s["name"], sum(s["rejected"].values()) + (s.get("failed") or 0)) for s in stages]
    reasons = sorted(manifest["rejected_by_reason"].items(), key=lambda kv: -kv[1])
    stage_rows = [
        [
            s["name"],
            s["use"],
            s.get("in"),
            s.get("kept"),
            sum(s["rejected"].values()),
            s.get("failed"),
            s.get("seconds"),
            ", ".join(f"{k}={v}" for k, v in sorted(s["rejected"].items())),
        ]
        for s in stages
    ]
    shard_rows = [[s["file"], s["rows"], s["bytes"], s["sha256"][:16]] for s in manifest["shards"]]
    status = "OK" if not manifest["problems"] else "PROBLEMS: " + "; ".join(manifest["problems"])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gristmill report: {html.escape(manifest["run"])}</title>
<style>
body{{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}}
table{{border-collapse:collapse;margin:1em 0;font-size:13px}}
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:left}} th{{background:#f3f3f3}}
.status{{font-weight:bold}} .num{{font-size:28px;font-weight:bold}}
.cards div{{display:inline-block;margin-right:2.5em}}
</style></head><body>
<h1>gristmill run: {html.escape(manifest["run"])}</h1>
<p class="status">{html.escape(status)} · conservation {"holds" if manifest["conservation"] else "BROKEN"} ·
{manifest["seconds"]} s · recipe {html.escape(str(manifest["recipe"]["recipe"]))}</p>
<div class="cards">
<div><div class="num">{counts["input"]:,}</div>read</div>
<div><div class="num">{counts["kept"]:,}</div>kept</div>
<div><div class="num">{counts["rejected"]:,}</div>rejected</div>
<div><div class="num">{counts["failed"]:,}</div>failed</div>
</div>
<h2>Documents entering each stage</h2>{_bars(funnel, "#4a7bd0")}
<h2>Removed by stage</h2>{_bars(removed, "#d0664a")}
<h2>Rejections by reason</h2>{_bars(reasons[:30], "#d09a4a")}
<h2>Stages</h2>{_table(["stage", "use", "in", "kept", "rejected", "failed", "seconds", "reasons"], stage_rows)}
<h2>Failures by error</h2>{_table(["stage/error", "count"], sorted(manifest["failed_by_error"].items()))}
<h2>Shards</h2>{_table(["file", "rows", "bytes", "sha256"], shard_rows)}
<h2>Resolved recipe</h2><pre>{html.escape(json.dumps(manifest["recipe"], indent=2))}</pre>
</body></html>
"""


def write_report(directory: str, manifest: dict[str, Any] | None = None) -> str:
    """(Re)write DIR/report.html from the manifest; returns its path."""
    if manifest is None:
        manifest = json.loads(fileio.read_bytes(fileio.join(directory, "manifest.json")))
    path = fileio.join(directory, "report.html")
    fileio.write_bytes(path, render_report(manifest).encode())
    return path
