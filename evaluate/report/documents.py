"""report.md and report.html from one source, and summary.json.

``templates/report.j2`` (with ``templates/sections/``) says what the report says, once. It is
rendered twice, each time with its own block macros ``f`` (``templates/markdown.j2``: Markdown that
links the PNG files; ``templates/html.j2``: a self-contained page that embeds them), so the two
documents cannot say different things. The rows of the tables are built here, every number
formatted by :mod:`.formats`.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from blackjack_env.simulate import OUTCOMES

from .formats import (
    WHEN,
    fmt_cost,
    fmt_count,
    fmt_ev,
    fmt_index,
    fmt_optional,
    fmt_per_100,
    fmt_play,
    fmt_rate,
    fmt_share,
)
from .model import Ceiling, Counting, Estimate, Report

TEMPLATES = Path(__file__).with_name("templates")
Rows = list[list[str]]


def _ci(low: float, high: float, formatter: Callable[[float], str] = fmt_ev) -> str:
    """A 95% interval as the tables print it (an infinite end, from fewer than two samples: n/a)."""
    return f"{fmt_optional(low, formatter)} .. {fmt_optional(high, formatter)}"


def headline_rows(report: Report) -> Rows:
    """The policy, basic strategy and (where it played) random play: EV, 95% CI, whose cards."""
    players = (
        ("policy", report.policy, "the policy's cards"),
        ("basic", "basic strategy" + (", flat bet" if report.counting else ""), "the policy's cards, every round"),
        ("random", "random play", "the policy's cards, every round"),
    )
    rows = []
    for name, label, cards in players:
        if name in report.ev:
            estimate: Estimate = report.ev[name]
            rows.append([label, fmt_ev(estimate.value), _ci(estimate.low, estimate.high), cards])
    return rows


def bucket_rows(counting: Counting) -> Rows:
    return [
        [
            b["label"],
            fmt_rate(b["share"]),
            f"{b['rounds']:,}",
            fmt_count("avg_bet", b["avg_bet"]),
            fmt_optional(b["ev_per_unit_bet"]),
            _ci(*b["ci95"]),
        ]
        for b in counting.figures["by_true_count"]
    ]


def ramp_rows(counting: Counting) -> Rows:
    return [[where, f"{bet:g}"] for where, bet in counting.ramp_rows()]


def index_rows(counting: Counting) -> Rows:
    return [
        [e["hand"], e["up"], fmt_play(e["action"]), WHEN[e["when"]], fmt_index(e["index"]), e["basic"]]
        for e in counting.index_rows()
    ]


def deviation_rows(report: Report) -> Rows:
    return [
        [f"{d['section']} {d['hand']}", d["up"], d["played"], d["basic"]]
        + [fmt_cost(d[k]) for k in ("cost", "frequency", "cost_per_round")]
        for d in report.deviations
    ]


def rate_rows(report: Report) -> Rows:
    return [[k, fmt_rate(report.rates["policy"][k]), fmt_rate(report.rates["basic"][k])] for k in OUTCOMES]


def curve_rows(report: Report) -> Rows:
    return [
        [f"{p['step']:g}", fmt_ev(p["ev_gap"]), _ci(p["ev_gap_low"], p["ev_gap_high"]), fmt_rate(p["agreement"])]
        for p in report.curve or []
    ]


def rules_rows(report: Report) -> Rows:
    return [[key, str(value)] for key, value in report.rules.to_dict().items()]


def ceiling_rows(ceiling: Ceiling) -> Rows:
    """Gain over basic strategy per 100 rounds: basic strategy (0: the baseline), the policy, the ceiling."""
    s = ceiling.share
    return [
        ["basic strategy", fmt_per_100(0.0), "(the baseline)"],
        ["the policy (simulated, paired)", fmt_per_100(s["policy_gain"]), _ci(*s["policy_gain_ci95"], fmt_per_100)],
        ["the perfect counter (the ceiling)", fmt_per_100(s["gain"]), _ci(*s["gain_ci95"], fmt_per_100)],
    ]


def percentile_rows(ceiling: Ceiling) -> Rows:
    percentiles = ceiling.round_ev["percentiles"]
    return [
        [f"{p}%", fmt_optional(percentiles["basic"][p]), fmt_optional(percentiles["best"][p])]
        for p in percentiles["basic"]
    ]


def histogram_rows(ceiling: Ceiling) -> Rows:
    # + 0.0: the edge at 0 may be stored as -0.0, which would print as "-0.00000"
    return [
        [fmt_ev(low + 0.0), fmt_ev(high + 0.0), fmt_rate(basic), fmt_rate(best)]
        for low, high, basic, best in ceiling.histogram_rows()
    ]


#: The tables' rows, as the templates call them (``rows.headline(r)``).
ROWS = SimpleNamespace(
    headline=headline_rows,
    buckets=bucket_rows,
    ramp=ramp_rows,
    indices=index_rows,
    deviations=deviation_rows,
    rates=rate_rows,
    curve=curve_rows,
    rules=rules_rows,
    ceiling=ceiling_rows,
    percentiles=percentile_rows,
    histogram=histogram_rows,
)


def render(report: Report, markup: str, img: Callable[[str], str]) -> str:
    """The report in ``markup`` ("markdown" or "html"), figures referenced by ``img(file name)``."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=markup == "html",
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    blocks = env.get_template(f"{markup}.j2").make_module({"img": img, "figures": report.figures})
    text = env.get_template("report.j2").render(
        f=blocks,
        r=report,
        c=report.counting,
        rows=ROWS,
        ev=fmt_ev,
        cost=fmt_cost,
        idx=fmt_index,
        opt=fmt_optional,
        share=fmt_share,
    )
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"  # the templates' spacing, tidied


def render_documents(report: Report, folder: Path) -> None:
    """report.md (linking the PNG files in ``folder``), report.html (embedding them) and summary.json."""

    def embedded(name: str) -> str:
        return "data:image/png;base64," + base64.b64encode((folder / name).read_bytes()).decode("ascii")

    (folder / "report.md").write_text(render(report, "markdown", img=lambda name: name))
    (folder / "report.html").write_text(render(report, "html", img=embedded))
    (folder / "summary.json").write_text(json.dumps(finite(report.to_summary()), indent=1, allow_nan=False))


def finite(value: Any) -> Any:
    """Strict JSON: an infinite interval (fewer than two rounds) is written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value
