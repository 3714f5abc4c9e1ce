"""``blackjack-evaluate report``: a policy's evaluation as a report to open in a browser.

    blackjack-evaluate report --policy basic --rounds 1e7 --out reports/basic
    blackjack-evaluate report --policy my_agent/ --run my_agent/ --rules vegas-strip --out reports/agent

writes into ``--out``:

* ``report.html``: self-contained (figures embedded as base64 PNG; nothing is fetched when opened),
* ``report.md``: the same content as Markdown, beside the PNG files it shows,
* ``ev.png``, ``rates.png``, and for strategy-table policies ``chart.png`` (and ``deviations.png``
  where the policy differs from basic strategy), with ``--run`` ``learning_curve.png``; for a
  counting strategy ``true_count.png``, ``chart.png`` (basic strategy's chart with the index plays
  marked) and ``bankroll.png``,
  and with ``--ceiling`` ``ceiling.png`` and ``round_ev.png``,
* ``summary.json``: every number the report prints.

The simulated numbers come from one run in which basic strategy and random play are dealt the very
cards the policy was dealt, every round (common random numbers), so the gap to basic strategy has a
tight interval and random play shows the scale (on a panel of its own in ``ev.png``, so that it does not
flatten the others). For a strategy-table policy the exact analysis adds its exact EV and, for every cell
where it plays otherwise than basic strategy, that deviation's exact cost per occurrence and per round.

A counting strategy (``--policy hilo-i18-fab4 --spread 1-8``, a system's name, or a counting-strategy
JSON; the rules need a finite shoe dealt to a cut card) gets the counter's pages instead of the exact
analysis: SCORE, DI, N0, the risk of ruin of ``--bankroll`` units (1,000 when not given), win and SD
per 100 rounds, its EV per unit bet by true count with 95% CIs beside the distribution of the true
count and the average bet there, its index plays beside basic strategy's chart, and a few bankroll
paths. Its baseline is basic strategy at a flat bet on the same shoes, so the paired gap is what
counting gains; random play is left out (see :func:`paired_run`).

``--ceiling`` (a shoe dealt to a cut card; ``--ceiling-samples N``, as ``blackjack-evaluate
--ceiling``) adds the ceiling of the same game: what a perfect counter, who knew the shoe's
composition before every round, gains over basic strategy with the policy's bets, beside the
policy's paired gain (a bar each, with 95% CIs) and the policy's share of it; and the distribution
of the round-start EV over the sampled shoes beside the policy's EV by true count.

A learner's run (``--policy`` a ``blackjack-train --env shoe`` run folder holding
``counting-strategy.json`` or ``linear-model.json``, or that model file) gets the counter's pages and
the learner's (``learner``): ``learner_curve.png`` (its metrics.csv against rounds and wall time,
with the share of the ceiling where the run priced it), ``learned_ramp.png`` (bet and learned round
value by count), ``learned_indices.png`` (its learned deviations beside the generated indices of the
same system, on basic strategy's chart) and, for a composition model, ``learned_count.png`` (its
betting weights as a count's tags beside the built-in systems').

A network of the shoe game (``--policy`` a ``blackjack-train --env shoe --algo ppo`` or ``--algo
batch-ppo`` run folder) cannot run in the compiled simulator: the vector env plays it (``network``)
with its bets, its play at a flat bet and basic strategy at a flat bet on the same shoes, gains paired
per shoe; it gets the counter's pages (its rounds filed by the Hi-Lo true count when the bet is made,
counted from the unseen cards) and its run's learning curve (``learner_curve.png``), without outcome
rates or index plays.

``--run DIR`` (a training run) adds the learning curve from ``DIR/metrics.csv``: a CSV with a
header and the columns ``step`` (training steps), ``ev_gap`` (EV minus basic strategy's EV per
round), ``ev_gap_low`` and ``ev_gap_high`` (its 95% interval) and ``agreement`` (share of
decisions that agree with basic strategy, 0..1); other columns are ignored.

The files are built in a temporary folder beside ``--out`` and moved in when complete. A new
``--out`` is created by one rename; an existing one keeps every file the report does not write,
and the report refuses (naming them) to replace files it would write unless ``--overwrite``.

The package: ``model`` (the numbers and the run that fills them; ``learner`` and ``network`` the
pages of a shoe learner's run and of a network), ``figures``,
``templates/`` (the documents' words, written once for both formats, see ``documents``),
``formats`` (how each kind of number is printed), ``writer`` (the one place files are
written) and ``cli``. A new section is a template in ``templates/sections/`` included by
``templates/report.j2``, with its numbers in the model and its figure in ``figures``.
"""

from .cli import build_parser, format_headline, main
from .documents import render_documents
from .figures import FIGURE_FILES, draw_figures, ev_figure
from .formats import (
    COUNT_FIGURES,
    fmt_cost,
    fmt_count,
    fmt_ev,
    fmt_index,
    fmt_optional,
    fmt_per_100,
    fmt_rate,
    fmt_share,
)
from .model import (
    BANKROLL_METHOD,
    DEFAULT_BANKROLL,
    METRICS_COLUMNS,
    METRICS_FILE,
    BankrollPaths,
    Ceiling,
    Counting,
    Estimate,
    Report,
    build_report,
    paired_run,
    read_metrics,
)
from .writer import REPORT_FILES, check_out, write_report

__all__ = [
    "BANKROLL_METHOD",
    "COUNT_FIGURES",
    "DEFAULT_BANKROLL",
    "FIGURE_FILES",
    "METRICS_COLUMNS",
    "METRICS_FILE",
    "REPORT_FILES",
    "BankrollPaths",
    "Ceiling",
    "Counting",
    "Estimate",
    "Report",
    "build_parser",
    "build_report",
    "check_out",
    "draw_figures",
    "ev_figure",
    "fmt_cost",
    "fmt_count",
    "fmt_ev",
    "fmt_index",
    "fmt_optional",
    "fmt_per_100",
    "fmt_rate",
    "fmt_share",
    "format_headline",
    "main",
    "paired_run",
    "read_metrics",
    "render_documents",
    "write_report",
]
