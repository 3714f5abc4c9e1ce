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
from typing import TYPE_CHECKING, Any

from blackjack_env.counting import hand_label
from blackjack_env.simulate import OUTCOMES

from .formats import (
    WHEN,
    fmt_cost,
    fmt_count,
    fmt_ev,
    fmt_gain_100,
    fmt_index,
    fmt_optional,
    fmt_per_100,
    fmt_play,
    fmt_rate,
    fmt_share,
    fmt_tag,
)
from .learner import COUNT_FIGURE_SYSTEMS, Learner, has_hilo_flat
from .model import Ceiling, Counting, Estimate, Report

if TYPE_CHECKING:
    from .network import Network

TEMPLATES = Path(__file__).with_name("templates")
Rows = list[list[str]]


def _ci(low: float, high: float, formatter: Callable[[float], str] = fmt_ev) -> str:
    """A 95% interval as the tables print it (an infinite end, from fewer than two samples: n/a)."""
    return f"{fmt_optional(low, formatter)} .. {fmt_optional(high, formatter)}"


def headline_rows(report: Report) -> Rows:
    """The policy, basic strategy, and where they played the policy at a flat bet and random play: EV,
    95% CI, whose cards."""
    players = (
        ("policy", report.policy),
        ("flat", "the policy at a flat bet"),
        ("basic", "basic strategy" + (", flat bet" if report.counting else "")),
        ("random", "random play"),
    )
    rows = []
    for name, label in players:
        if name in report.ev:
            estimate: Estimate = report.ev[name]
            rows.append([label, fmt_ev(estimate.value), _ci(estimate.low, estimate.high), report.cards(name)])
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
        [
            hand_label(e["hand"], e.get("cards", "any")),
            e["up"],
            fmt_play(e["action"]),
            WHEN[e["when"]],
            fmt_index(e["index"]),
            e["basic"],
        ]
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
    (policy_low, policy_high), (low, high) = s["policy_gain_ci95"], s["gain_ci95"]
    return [
        ["basic strategy", fmt_per_100(0.0), "(the baseline)"],
        ["the policy (simulated, paired)", fmt_per_100(s["policy_gain"]), _ci(policy_low, policy_high, fmt_per_100)],
        ["the perfect counter (the ceiling)", fmt_per_100(s["gain"]), _ci(low, high, fmt_per_100)],
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


def bets_text(bets: tuple[float, ...] | list[float]) -> str:
    return ", ".join(f"{b:g}" for b in bets)


def learner_curve_header(learner: Learner | Network) -> list[str]:
    header = [learner.trained, "wall time (min)", "EV per 100, its bets", "gain over basic, its bets", "95% CI"]
    header += ["gain over Hi-Lo EV-max", "95% CI", "flat-bet gain over basic", "95% CI"]
    header += ["Hi-Lo I18+Fab4 flat gain"] if has_hilo_flat(learner.curve) else []
    share = ["flat-bet share of the ceiling", "95% CI", "share with its bets", "95% CI"]
    return header + (share if learner.has_share else [])


def learner_curve_rows(learner: Learner | Network) -> Rows:
    """Per evaluation: rounds, wall time and every figure per 100 rounds (95% CIs), the share where priced."""
    rows = []
    for p in learner.curve or []:
        row = [f"{p['step']:,.0f}", f"{p['wall_s'] / 60:.1f}", fmt_per_100(p["ev"])]
        for key in ("gain_vs_basic", "gain_vs_hilo", "flat_gain"):
            row += [fmt_per_100(p[key]), _ci(p[f"{key}_low"], p[f"{key}_high"], fmt_per_100)]
        if has_hilo_flat(learner.curve):
            row.append(fmt_per_100(p["flat_gain_hilo"]))
        if learner.has_share:
            for key in ("flat_share", "bets_share"):
                row += [fmt_optional(p[key], fmt_share), _ci(p[f"{key}_low"], p[f"{key}_high"], fmt_share)]
        rows.append(row)
    return rows


def learned_ramp_rows(learner: Learner) -> Rows:
    """Per count (bucket): the bet, the learned value per unit bet and its CI, the greedy rounds behind it."""
    return [
        [
            r["label"],
            f"{r['bet']:g}",
            fmt_optional(r["value"]),
            _ci(*r["ci95"]) if r["ci95"] else "n/a",
            "n/a" if r["rounds"] is None else f"{r['rounds']:,.0f}",
        ]
        for r in learner.ramp
    ]


def learned_index_rows(learner: Learner) -> Rows:
    """Per question: the learned and the generated entry with their gains per 100 rounds, and the status."""
    return [
        [
            hand_label(d["hand"], d["cards"]),
            d["up"],
            d["learned"] or "-",
            fmt_optional(d.get("learned_gain_per_100"), fmt_gain_100),
            d["generated"] or "-",
            fmt_optional(d.get("generated_gain_per_100"), fmt_gain_100),
            d["status"],
        ]
        for d in learner.deviations
    ]


def status_text(learner: Learner) -> str:
    counts = learner.status_counts()
    return "; ".join(f"{n} {status}" for status, n in counts.items())


def learned_count_rows(learner: Learner) -> Rows:
    """Per card value: the learned tag and the figure's systems' tags (balanced and scaled alike)."""
    tags = learner.count_tags or {}
    return [
        [value, fmt_tag(tags["learned"][i]), *(fmt_tag(tags["systems"][n][i]) for n in COUNT_FIGURE_SYSTEMS)]
        for i, value in enumerate(tags.get("values", []))
    ]


def learned_count_header() -> list[str]:
    return ["value", "learned", *COUNT_FIGURE_SYSTEMS]


def count_correlation_rows(learner: Learner) -> Rows:
    tags = learner.count_tags or {}
    return [[name, fmt_optional(r, "{:.3f}".format)] for name, r in tags.get("correlation", {}).items()]


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
    bets=bets_text,
    learner_curve_header=learner_curve_header,
    learner_curve=learner_curve_rows,
    learned_ramp=learned_ramp_rows,
    learned_indices=learned_index_rows,
    status=status_text,
    learned_count=learned_count_rows,
    learned_count_header=learned_count_header,
    count_correlation=count_correlation_rows,
)


def render(report: Report, markup: str, img: Callable[[str], str]) -> str:
    """The report in ``markup`` ("markdown" or "html"), figures referenced by ``img(file name)``."""
    import jinja2  # optional dependency: Jinja2 (the report extra)

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
        per100=fmt_per_100,
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
