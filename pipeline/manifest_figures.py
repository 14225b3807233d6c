"""The per-stage and kept-output figures of a run's manifest, from its written shards and metrics."""

from __future__ import annotations

from typing import Any

from pipeline.kept_output import MIXTURE_STAGE, mixture_group
from pipeline.recipe import Recipe


def kept_output_figures(recipe: Recipe, shards: list[dict]) -> dict[str, Any]:
    """Rows, repeats, tokens and (with a mixture) the achieved share of each group."""
    kept = [s for s in shards if s["kind"] == "kept"]
    out = recipe.output
    figures: dict[str, Any] = {
        "rows": sum(s["rows"] for s in kept),
        "repeats": sum(s.get("repeats", 0) for s in kept),
        "tokenizer": out.tokenizer,
        "n_tokens": sum(s.get("n_tokens", 0) for s in kept) if out.tokenizer != "none" else None,
        "shuffle_seed": out.shuffle_seed,
    }
    if out.mixture:
        unit = "source_tokens" if out.tokenizer != "none" else "sources"
        achieved: dict[str, int] = dict.fromkeys(out.mixture, 0)
        for shard in kept:
            for source, amount in shard.get(unit, {}).items():
                group = mixture_group(source, list(out.mixture))
                if group is not None:
                    achieved[group] += amount
        total_weight, total = sum(out.mixture.values()), sum(achieved.values())
        figures["mixture"] = {
            group: {
                "weight": round(weight / total_weight, 6),
                "achieved": round(achieved[group] / total, 6) if total else 0.0,
                "unit": "tokens" if unit == "source_tokens" else "rows",
            }
            for group, weight in out.mixture.items()
        }
    return figures


def stage_figures(recipe: Recipe, read_count: int, outcomes: dict, metrics: dict) -> list[dict[str, Any]]:
    """Per stage: in, kept, rejected by reason, failed, seconds, plus the stage's own figures."""
    figures = []
    read_rejected = {k.split("/", 1)[1]: v for k, v in outcomes["rejected"].items() if k.startswith("read/")}
    read_failed = sum(v for k, v in outcomes["failed"].items() if k.startswith("read/"))
    figures.append(
        {
            "name": "read",
            "use": "read",
            "in": read_count,
            "kept": read_count - sum(read_rejected.values()) - read_failed,
            "rejected": read_rejected,
            "failed": read_failed,
        }
    )
    reaching = figures[0]["kept"]
    for stage in recipe.stages:
        prefix = f"{stage.name}/"
        rejected = {k[len(prefix) :]: v for k, v in outcomes["rejected"].items() if k.startswith(prefix)}
        failed = sum(v for k, v in outcomes["failed"].items() if k.startswith(prefix))
        counters = metrics.get(stage.name, {})
        kept = reaching - sum(rejected.values()) - failed
        # `in` and `kept` come from the written files, so they hold on every runner; candidates
        # that bypass a stage count as reaching and passing it.
        entry: dict[str, Any] = {
            "name": stage.name,
            "use": stage.registry_name,
            "in": reaching,
            "kept": kept,
            "rejected": rejected,
            "failed": failed,
            "seconds": round(counters["micros"] / 1e6, 3) if "micros" in counters else None,
        }
        extra = {k: v for k, v in counters.items() if k not in ("in", "kept", "failed", "micros")}
        extra = {k: v for k, v in extra.items() if not k.startswith("rejected.")}
        if extra:
            entry["metrics"] = extra
        static = stage.manifest_extra()
        if static:
            entry["figures"] = static
        figures.append(entry)
        reaching = kept
    if recipe.output.mixture:  # the [output] mixture removes documents too
        prefix = f"{MIXTURE_STAGE}/"
        rejected = {k[len(prefix) :]: v for k, v in outcomes["rejected"].items() if k.startswith(prefix)}
        kept = reaching - sum(rejected.values())
        figures.append(
            {
                "name": MIXTURE_STAGE,
                "use": "[output] mixture",
                "in": reaching,
                "kept": kept,
                "rejected": rejected,
                "failed": 0,
            }
        )
    return figures
