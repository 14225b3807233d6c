"""`OUT/report.html`: one self-contained page (inline SVG and CSS, no scripts, no network).

Funnel, removals by stage and reason, score histograms kept vs rejected, length before/after,
language mix, duplicate-cluster sizes, synthesis pass rates and browsable samples per reason.
Figures come from the manifest and one streaming scan of the Parquet parts (pipeline.inspect),
so the page stays small (a few KB of samples per reason) whatever the corpus size.
"""

from __future__ import annotations

import html
import json
import math
from collections import Counter
from typing import Any

from pipeline import fileio
from pipeline.inspect import BoundedSample, Scan, cluster_sizes, iter_batches, read_manifest, scan

BAR_WIDTH = 420
HIST_BINS = 24
SAMPLES_PER_REASON = 3
SAMPLE_CHARS = 500
MAX_SHARD_ROWS = 40
KEPT_COLOUR, REJECTED_COLOUR = "#3b7dd8", "#d8663b"


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _bars(rows: list[tuple[str, int]], colour: str) -> str:
    """A horizontal bar chart as inline SVG."""
    if not rows:
        return "<p>none</p>"
    top = max(value for _, value in rows) or 1
    height = 22 * len(rows) + 4
    parts = [f'<svg width="{BAR_WIDTH + 330}" height="{height}" role="img">']
    for index, (label, value) in enumerate(rows):
        y = 22 * index + 2
        width = max(1, int(BAR_WIDTH * value / top))
        parts.append(
            f'<text x="0" y="{y + 15}" font-size="12">{_esc(label[:40])}</text>'
            f'<rect x="250" y="{y}" width="{width}" height="18" fill="{colour}"></rect>'
            f'<text x="{255 + width}" y="{y + 15}" font-size="12">{value:,}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _histogram(series: dict[str, BoundedSample], log: bool = False, title: str = "") -> str:
    """Kept vs rejected histograms on shared bins (share of each series per bin), inline SVG."""
    values = {name: s.values for name, s in series.items() if s.values}
    if not values:
        return "<p>no values</p>"
    transform = (lambda v: math.log10(max(v, 1.0))) if log else (lambda v: v)
    every = [transform(v) for vs in values.values() for v in vs]
    low, high = min(every), max(every)
    # in halves: the span of scores near the float limit (+-1e308, carried from an input) is one too
    half_span = (high / 2 - low / 2) or 1.0
    width, height, left, bottom = 640, 170, 40, 22
    bin_width = (width - left) / HIST_BINS
    parts = [
        f'<svg width="{width + 160}" height="{height + bottom + 8}" role="img"><title>{_esc(title)}</title>'
    ]
    colours = {"kept": KEPT_COLOUR, "rejected": REJECTED_COLOUR, "before": "#888", "after": KEPT_COLOUR}
    shares = {}
    for name, vs in values.items():
        counts = Counter(
            min(HIST_BINS - 1, int((transform(v) / 2 - low / 2) / half_span * HIST_BINS)) for v in vs
        )
        shares[name] = [counts[i] / len(vs) for i in range(HIST_BINS)]
    top = max(max(s) for s in shares.values()) or 1.0
    for offset, (name, share) in enumerate(shares.items()):
        colour = colours.get(name, "#555")
        for index, value in enumerate(share):
            bar = value / top * (height - 10)
            x = left + index * bin_width + offset * bin_width / len(shares)
            parts.append(
                f'<rect x="{x:.1f}" y="{height - bar:.1f}" width="{bin_width / len(shares) - 1:.1f}" '
                f'height="{bar:.1f}" fill="{colour}" opacity="0.85"></rect>'
            )
        parts.append(
            f'<rect x="{width + 10}" y="{10 + 20 * offset}" width="12" height="12" fill="{colour}"></rect>'
            f'<text x="{width + 28}" y="{21 + 20 * offset}" font-size="12">{_esc(name)} '
            f"(n={series[name].seen:,})</text>"
        )
    label = (lambda v: f"{10**v:,.0f}") if log else (lambda v: f"{v:.3g}")
    for index in (0, HIST_BINS // 2, HIST_BINS):
        x = left + index * bin_width
        parts.append(
            f'<text x="{x:.1f}" y="{height + 16}" font-size="11" text-anchor="middle">'
            f"{label(2 * (low / 2 + half_span * index / HIST_BINS))}</text>"
        )
    parts.append(f'<line x1="{left}" y1="{height}" x2="{width}" y2="{height}" stroke="#999"></line></svg>')
    return "".join(parts)


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_esc(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def reason_samples(directory: str, per_reason: int = SAMPLES_PER_REASON) -> dict[str, list[dict]]:
    """The first `per_reason` rejected rows of every stage/reason, streamed (only those rows decoded)."""
    samples: dict[str, list[dict]] = {}
    columns = ["id", "stage", "reason", "detail", "duplicate_of", "text"]
    for _, batch in iter_batches(directory, "rejected", columns):
        stages, reasons = batch.column("stage").to_pylist(), batch.column("reason").to_pylist()
        wanted = []
        for index, key in enumerate(f"{s}/{r}" for s, r in zip(stages, reasons)):
            bucket = samples.setdefault(key, [])
            if len(bucket) + sum(1 for k, _ in wanted if k == key) < per_reason:
                wanted.append((key, index))
        if wanted:
            rows = batch.take([index for _, index in wanted]).to_pylist()
            for (key, _), row in zip(wanted, rows):
                samples[key].append(row)
    return samples


def _clipped(value: Any) -> str:
    """A sample's text, id or detail, escaped, its first SAMPLE_CHARS characters: the page stays
    small whatever a document holds (a 300,000-digit answer in a detail)."""
    text = "" if value is None else str(value)
    return _esc(text[:SAMPLE_CHARS]) + (" …" if len(text) > SAMPLE_CHARS else "")


def _samples_html(samples: dict[str, list[dict]], counts: dict[str, int]) -> str:
    parts = []
    for key in sorted(samples, key=lambda k: (-counts.get(k, 0), k)):
        items = []
        for row in samples[key]:
            survivor = (
                f" · survivor <code>{_clipped(row['duplicate_of'])}</code>" if row.get("duplicate_of") else ""
            )
            items.append(
                f"<li><code>{_clipped(row['id'])}</code> · {_clipped(row.get('detail'))}{survivor}"
                f"<pre>{_clipped(row.get('text') or '')}</pre></li>"
            )
        parts.append(
            f"<details><summary>{_esc(key)} ({counts.get(key, len(samples[key])):,})</summary>"
            f"<ul>{''.join(items)}</ul></details>"
        )
    return "".join(parts) or "<p>nothing was rejected</p>"


def _synthesis_rows(figures: Scan) -> list[list[Any]]:
    rows = []
    for family, outcomes in sorted(figures.synthesis.items()):
        total = sum(outcomes.values())
        reasons = ", ".join(f"{k}={v}" for k, v in sorted(outcomes.items()) if k != "kept")
        rows.append(
            [family, outcomes.get("kept", 0), total, f"{outcomes.get('kept', 0) / total:.0%}", reasons]
        )
    return rows


def render_report(manifest: dict[str, Any], directory: str) -> str:
    """The report page for one output folder."""
    figures = scan(directory)
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
    shards = manifest["shards"]
    shard_rows = [[s["file"], s["rows"], s["bytes"], s["sha256"][:16]] for s in shards[:MAX_SHARD_ROWS]]
    if len(shards) > MAX_SHARD_ROWS:
        shard_rows.append([f"… {len(shards) - MAX_SHARD_ROWS} more in manifest.json", "", "", ""])
    scores = sorted({name for part in figures.scores.values() for name in part})
    score_charts = "".join(
        f"<h3>{_esc(name)}</h3>"
        + _histogram(
            {
                part: figures.scores[part][name]
                for part in ("kept", "rejected")
                if name in figures.scores[part]
            },
            title=name,
        )
        for name in scores
    )
    repeats = manifest.get("kept_output", {}).get("repeats", 0)
    if manifest["recipe"].get("run", {}).get("keep_rejected_text", True):
        before = BoundedSample()
        for part in ("kept", "rejected"):
            before.extend(figures.lengths[part].values)
        before.seen = sum(figures.lengths[part].seen for part in ("kept", "rejected"))
        lengths = {"before": before, "after": figures.lengths["kept"]}
        length_title, length_note = "before vs after", ""
    else:  # rejected rows hold no text: a "before" would be the kept rows again
        lengths = {"kept": figures.lengths["kept"]}
        length_title, length_note = "kept", "<p>Rejected text is not kept (keep_rejected_text = false).</p>"
    if repeats:
        length_note += f"<p>Kept rows include the {repeats:,} repeats of the up-sampling mixture.</p>"
    languages = Counter()
    for part in ("kept", "rejected"):
        languages.update(figures.languages[part])
    language_rows = [
        [lang, figures.languages["kept"][lang], figures.languages["rejected"][lang]]
        for lang, _ in languages.most_common(20)
    ]
    clusters = cluster_sizes(figures.clusters)
    cluster_rows = [[stage, size, n] for stage, sizes in clusters.items() for size, n in sizes.items()]
    synthesis = _synthesis_rows(figures)
    status = "OK" if not manifest["problems"] else "PROBLEMS: " + "; ".join(manifest["problems"])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>gristmill report: {_esc(manifest["run"])}</title>
<style>
body{{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222}}
table{{border-collapse:collapse;margin:1em 0;font-size:13px}}
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:left}} th{{background:#f3f3f3}}
.status{{font-weight:bold}} .num{{font-size:28px;font-weight:bold}}
.cards div{{display:inline-block;margin-right:2.5em}}
details{{margin:.3em 0}} summary{{cursor:pointer;font-weight:600}}
pre{{white-space:pre-wrap;background:#f7f7f7;padding:6px;font-size:12px;max-height:14em;overflow:auto}}
svg{{max-width:100%;height:auto}} h2{{margin-top:1.6em;border-bottom:1px solid #ddd}}
</style></head><body>
<h1>gristmill run: {_esc(manifest["run"])}</h1>
<p class="status">{_esc(status)} · conservation {"holds" if manifest["conservation"] else "BROKEN"} ·
{manifest["seconds"]} s · recipe {_esc(manifest["recipe"]["recipe"])}</p>
{"".join(f'<p class="status">input changed: {_esc(change)}</p>' for change in manifest.get("inputs_changed", []))}
<div class="cards">
<div><div class="num" id="count-read">{counts["input"]:,}</div>read</div>
<div><div class="num" id="count-kept">{counts["kept"]:,}</div>kept</div>
<div><div class="num" id="count-rejected">{counts["rejected"]:,}</div>rejected</div>
<div><div class="num" id="count-failed">{counts["failed"]:,}</div>failed</div>
{f'<div><div class="num" id="count-repeats">{repeats:,}</div>repeats in kept/ (mixture up-sampling)</div>' if repeats else ""}
</div>
<h2>Funnel: documents entering each stage</h2>{_bars(funnel, KEPT_COLOUR)}
<h2>Removed by stage</h2>{_bars(removed, REJECTED_COLOUR)}
<h2>Rejections by stage and reason</h2>{_bars(reasons[:40], "#d09a4a")}
<h2>Scores: kept vs rejected</h2><p>Share of each group per bin.</p>{score_charts or "<p>no scores</p>"}
<h2>Length (characters, log scale): {length_title}</h2>{length_note}
{_histogram(lengths, log=True, title="length")}
<h2>Languages</h2>{_table(["language", "kept", "rejected"], language_rows)}
<h2>Duplicate clusters</h2><p>Cluster size = survivor + removed copies.</p>
{_table(["stage", "cluster size", "clusters"], cluster_rows) if cluster_rows else "<p>no duplicates removed</p>"}
<h2>Synthesis: pass rates by family</h2>
{_table(["family", "admitted", "candidates", "pass rate", "rejections"], synthesis) if synthesis else "<p>no synthesis candidates</p>"}
<h2>Stages</h2>{_table(["stage", "use", "in", "kept", "rejected", "failed", "seconds", "reasons"], stage_rows)}
<h2>Samples per reason</h2>{_samples_html(reason_samples(directory), manifest["rejected_by_reason"])}
<h2>Failures by error</h2>{_table(["stage/error", "count"], sorted(manifest["failed_by_error"].items())) if manifest["failed_by_error"] else "<p>no failures</p>"}
<h2>Shards</h2>{_table(["file", "rows", "bytes", "sha256"], shard_rows)}
<h2>Resolved recipe</h2><pre>{_esc(json.dumps(manifest["recipe"], indent=2))}</pre>
</body></html>
"""


def write_report(directory: str, manifest: dict[str, Any] | None = None) -> str:
    """(Re)write DIR/report.html from the manifest and the Parquet parts; returns its path."""
    directory = directory.rstrip("/") or "."
    manifest = manifest or read_manifest(directory)
    path = f"{directory}/report.html"
    fileio.write_bytes(path, render_report(manifest, directory).encode("utf-8"))
    return path
