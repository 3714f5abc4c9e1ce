"""``blackjack-play``: play blackjack by hand in a terminal, on top of the Gymnasium env itself.

    blackjack-play                                   # the default game, bankroll 1000
    blackjack-play --rules vegas-strip --set decks=2 --bankroll 500 --hints
    blackjack-play --seats 5 --seat 2 --shoe         # box 2 of 5 (from 0), the others basic strategy, one shoe

The controls are those of the rule texts: BET an amount, RE-BET the last amount, DEAL, then HIT, STAND,
DOUBLE, SPLIT, SURRENDER, INSURE (even money with a blackjack) or decline, each a one-letter key; at any
prompt ``c`` shows the Hi-Lo running and true count of the cards seen since the shuffle (a counter's
practice: the count stays hidden until asked for). ``--seats``/``--seat`` sit the player in one box of a
table whose other boxes play basic strategy (boxes are numbered from 0, the first dealt, on the table shown
as in ``--seat`` and the envs' pictures); ``--shoe`` deals from one shoe to a cut card at 75% (or the
rules' ``penetration``) instead of shuffling every round. Only the actions legal now (and that the
bankroll can cover) are offered. The env counts money in units of the initial bet; the game shows every
bet, stake and result in chips (units times the bet) and settles the bankroll with the env's reward
times the bet. With ``--hints`` each decision shows basic strategy's choice and the solver's EV of each
offered action for the chart cell of the hand (total-dependent: the EV of the cell's hands, not of these
exact cards).

End of input or Ctrl-C ends the game with a summary (rounds, net, bankroll); the exit code is 0.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any, SupportsFloat, cast

import gymnasium as gym
import numpy as np

from blackjack_env import ENV_ID, Action, Phase, Rules
from blackjack_env import engine as E
from blackjack_env.cards import card_codes
from blackjack_env.env import BlackjackEnv
from blackjack_env.render import count_line, dealer_line, env_view, hand_head
from blackjack_env.solver import solve
from blackjack_env.strategy import N_ROWS, hand_row, row_label, up_label

from .options import OneLineParser, add_rules_arguments, console_entry, rules_from_args

#: One key per game control while a round is played (the letters of printed charts).
PLAY_KEYS: dict[str, Action] = {
    "h": Action.HIT,
    "s": Action.STAND,
    "d": Action.DOUBLE,
    "p": Action.SPLIT,
    "r": Action.SURRENDER,
    "i": Action.INSURANCE,
    "n": Action.NO_INSURANCE,
}
PLAY_WORDS: dict[str, Action] = {
    "hit": Action.HIT,
    "stand": Action.STAND,
    "double": Action.DOUBLE,
    "split": Action.SPLIT,
    "surrender": Action.SURRENDER,
    "insure": Action.INSURANCE,
    "insurance": Action.INSURANCE,
    "even money": Action.INSURANCE,
    "no": Action.NO_INSURANCE,
    "no insurance": Action.NO_INSURANCE,
    "no-insurance": Action.NO_INSURANCE,
}
ACTION_TEXT = {
    Action.HIT: "hit",
    Action.STAND: "stand",
    Action.DOUBLE: "double",
    Action.SPLIT: "split",
    Action.SURRENDER: "surrender",
    Action.INSURANCE: "insurance",
    Action.NO_INSURANCE: "no insurance",
}
BET_HELP = "b AMOUNT bet, r re-bet, d deal, c count, q quit"
COUNT_KEYS = ("c", "count")
SHOE_PENETRATION = 0.75  # --shoe's cut card when the rules have none
QUIT_WORDS = ("q", "quit", "exit")


class EndSession(Exception):
    """The player asked to leave (q)."""


def money(amount: float, sign: bool = False) -> str:
    """Chips as people write them: 10, 12.5, 0.375, 1,250 (with a sign for results); no ``25.0``."""
    if abs(amount) < 5e-5:
        amount = 0.0  # no "-0"
    text = f"{amount:,.4f}".rstrip("0").rstrip(".")
    if sign and amount >= 0:
        text = "+" + text
    return text


def outcome(chips: float) -> str:
    """A settled bet's result in words: ``won 25``, ``lost 12.5`` or ``push``."""
    if abs(chips) < 5e-5:
        return "push"
    return f"won {money(chips)}" if chips > 0 else f"lost {money(-chips)}"


def parse_amount(text: str) -> float:
    """A bet: a positive number with at most two decimals (chips and half chips)."""
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        raise ValueError(f"a bet is a positive number such as 10 or 2.5, got {text!r}") from None
    if not math.isfinite(value) or value <= 0 or abs(value * 100 - round(value * 100)) > 1e-6:
        raise ValueError(f"a bet is a positive number with at most two decimals, got {text!r}")
    return value


@dataclass
class Session:
    """What the player has done so far (the summary printed at the end)."""

    bankroll: float
    start: float
    rounds: int = 0
    last_bet: float | None = None

    @property
    def net(self) -> float:
        return self.bankroll - self.start


class Game:
    """One player at one table: reads commands from ``stdin``, writes the table to ``stdout``.

    Args:
        rules: the game.
        bankroll: chips at the start.
        hints: show basic strategy's action and each offered action's EV at every decision.
        seed: seed of the shoe (None: fresh entropy).
        stacked: cards for the first rounds, one list per round (tests and demonstrations).
        seats, seat: the table's boxes and the player's (the others play basic strategy).
    """

    def __init__(
        self,
        rules: Rules,
        bankroll: float = 1000.0,
        *,
        hints: bool = False,
        seed: int | None = None,
        stacked: Sequence[Sequence[str]] = (),
        stdin: IO[str] | None = None,
        stdout: IO[str] | None = None,
        seats: int = 1,
        seat: int = 0,
    ) -> None:
        self.rules = rules
        self.env = gym.make(ENV_ID, rules=rules, render_mode="ansi", seats=seats, seat=seat)
        self.session = Session(bankroll=bankroll, start=bankroll)
        self.seed = seed
        self.stacked = [list(cards) for cards in stacked]
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout
        self.echo = not _isatty(self.stdin)
        self.solution = None
        if hints:
            self.solution = solve(rules)
        self.bet = 0.0  # the wager of the round being played
        self.in_round = False

    # ------------------------------------------------------------------ input and output
    def say(self, text: str = "") -> None:
        print(text, file=self.stdout)

    def ask(self, prompt: str) -> str:
        """One line of input; EOFError at end of input."""
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            self.say()
            raise EOFError
        line = line.strip()
        if self.echo:
            self.say(line)  # a piped game reads like a typed one
        return line

    # ------------------------------------------------------------------ the game
    def run(self) -> Session:
        """Play rounds until the player quits, input ends or the chips run out."""
        self.say(f"Blackjack: {self.rules.describe()}. Bankroll {money(self.session.bankroll)}.")
        self.say(f"Betting: {BET_HELP}.")
        try:
            while self.session.bankroll > 0:
                self.play_round(self.take_bet())
            self.say("You have no chips left.")
        except EndSession:
            pass
        return self.session

    def take_bet(self) -> float:
        """BET, RE-BET and DEAL: returns the wager once the player deals."""
        circle: float | None = None
        while True:
            shown = f"bet {money(circle)}" if circle else "no bet yet"
            line = self.ask(f"Bankroll {money(self.session.bankroll)}, {shown}. {BET_HELP} > ").lower()
            command, _, rest = line.partition(" ")
            rest = rest.strip()
            if command in QUIT_WORDS:
                raise EndSession
            if line in COUNT_KEYS:
                self.say("  " + self.count_text())
                continue
            try:
                if command in ("b", "bet"):
                    if not rest:
                        raise ValueError("say how much: b 10")
                    circle = self._checked_bet(parse_amount(rest))
                elif command in ("r", "rebet", "re-bet"):
                    if self.session.last_bet is None:
                        raise ValueError("no previous bet to repeat yet: b AMOUNT places one")
                    circle = self._checked_bet(self.session.last_bet)
                elif command in ("d", "deal"):
                    if circle is None:
                        raise ValueError("place a bet first: b AMOUNT, or r to repeat the last one")
                    return circle
                else:
                    try:
                        circle = self._checked_bet(parse_amount(line))  # a bare number bets it
                    except ValueError:
                        raise ValueError(f"unknown command {line!r}; use {BET_HELP}") from None
            except ValueError as error:
                self.say(f"  {error}")

    def _checked_bet(self, amount: float) -> float:
        if amount > self.session.bankroll + 1e-9:
            raise ValueError(f"a bet of {money(amount)} is more than your bankroll of {money(self.session.bankroll)}")
        return amount

    def play_round(self, bet: float) -> None:
        """DEAL a round for ``bet`` and play it to the end."""
        self.bet = bet
        self.session.last_bet = bet
        options = {"cards": self.stacked.pop(0)} if self.stacked else None
        seed = self.seed if self.session.rounds == 0 else None
        obs, info = self.env.reset(seed=seed, options=options)
        self.in_round = True
        mask = info["action_mask"]
        reward: SupportsFloat = 0.0
        done = False
        while not done:
            if Phase(int(obs[E.O_PHASE])) == Phase.SETTLE:
                self.show_table()
                self.say("  (nothing to decide: the round settles)")
                action = Action.STAND
            else:
                action = self.choose(obs, mask)
            obs, reward, done, _, info = self.env.step(int(action))
            mask = info["action_mask"]
        self.in_round = False
        won = float(reward) * bet
        self.session.bankroll = round(self.session.bankroll + won, 9)
        self.session.rounds += 1
        self.show_table()
        self.say(
            f"Round {self.session.rounds}: {money(won, sign=True)} on a bet of {money(bet)}; "
            f"bankroll {money(self.session.bankroll)}"
        )
        self.say()

    def choose(self, obs: np.ndarray, mask: np.ndarray) -> Action:
        """Show the table and the offered actions; read keys until one is offered."""
        offered, unaffordable = self.offered(obs, mask)
        self.show_table()
        if unaffordable:
            names = ", ".join(self.action_name(a, obs) for a in unaffordable)
            self.say(f"  (not enough chips to {names})")
        if self.solution is not None:
            for line in self.hint_lines(obs, offered):
                self.say("  " + line)
        menu = "  ".join(f"{self.key_of(a)} {self.action_name(a, obs)}" for a in offered)
        while True:
            line = self.ask(f"{menu}  (q quit) > ").lower()  # c (the count) works here too
            if line in QUIT_WORDS:
                raise EndSession
            if line in COUNT_KEYS:
                self.say("  " + self.count_text())
                continue
            action = PLAY_KEYS.get(line, PLAY_WORDS.get(line))
            if action is not None and action in offered:
                return action
            if action is None:
                self.say(f"  unknown key {line!r}; type one of: {', '.join(self.key_of(a) for a in offered)}")
            elif action in unaffordable:
                self.say(f"  you have not enough chips to {self.action_name(action, obs)} now")
            else:
                self.say(f"  {self.action_name(action, obs)} is not allowed now")

    def offered(self, obs: np.ndarray, mask: np.ndarray) -> tuple[list[Action], list[Action]]:
        """The legal actions the bankroll covers, and the legal ones it does not."""
        summary = cast(BlackjackEnv, self.env.unwrapped).round_summary()
        committed = sum(hand["bet"] for hand in summary["hands"])
        if summary["insurance_state"] == "taken":
            committed += 0.5
        free = self.session.bankroll - committed * self.bet
        hand_bet = summary["hands"][int(obs[E.O_HAND_INDEX])]["bet"]
        extra = {Action.DOUBLE: hand_bet, Action.SPLIT: hand_bet}
        if not obs[E.O_NATURAL]:
            extra[Action.INSURANCE] = 0.5  # even money costs nothing more
        offered: list[Action] = []
        unaffordable: list[Action] = []
        for action in Action:
            if mask[action]:
                affordable = extra.get(action, 0.0) * self.bet <= free + 1e-9
                (offered if affordable else unaffordable).append(action)
        return offered, unaffordable

    @staticmethod
    def key_of(action: Action) -> str:
        return next(key for key, value in PLAY_KEYS.items() if value == action)

    @staticmethod
    def action_name(action: Action, obs: np.ndarray) -> str:
        if obs[E.O_NATURAL] and action == Action.INSURANCE:
            return "even money"
        if obs[E.O_NATURAL] and action == Action.NO_INSURANCE:
            return "no even money"
        return ACTION_TEXT[action]

    def count_text(self) -> str:
        """The Hi-Lo count of every card seen since the shuffle (the hole card once turned over)."""
        if self.rules.infinite:
            return "no count: an infinite deck has no memory"
        env = cast(BlackjackEnv, self.env.unwrapped)
        if not env._seeded:
            return "no cards dealt yet: the count is 0"
        return count_line(env._st, len(env._shoe))

    def show_table(self) -> None:
        """The table with every bet and result of the player's in chips (the env's action list left out)."""
        self.say("\n".join(self.table_lines()))

    def table_lines(self) -> list[str]:
        """The env's picture of the table (``render.env_view``: the hole card stays hidden) in the
        env's text layout, the player's stakes and results in chips; the other boxes' hands show
        their play and outcome (their stakes are not the player's chips)."""
        view = env_view(self.env.unwrapped)
        lines = [dealer_line(view)]
        table = len(view.seats) > 1
        for seat in view.seats:
            mine = seat["you"]
            if table:
                who = "you" if mine else "basic strategy"
                lines.append(f"Seat {seat['seat']} ({who})" + ("" if seat["playing"] else ": sits out"))
            for i, hand in enumerate(seat["hands"]):
                head = hand_head(i + 1, hand, i == seat["acting_hand"])
                text = self.hand_text(seat, i, view.over) if mine else _other_hand_text(hand, view.over)
                lines.append(f"{head} {text}")
            if mine and seat["insurance_state"] != "not offered":
                lines.append(self.insurance_text(seat, view.over))
        return lines

    def hand_text(self, seat: dict[str, Any], index: int, over: bool) -> str:
        """One hand's stake and status, with its result once the round is over: ``bet 50 (doubled)  stood  won 50``."""
        hand = seat["hands"][index]
        text = f"bet {money(hand['bet'] * self.bet)}{' (doubled)' if hand['doubled'] else ''}  {hand['status']}"
        if over:
            text += "  " + outcome(hand["result"] * self.bet)
            if _natural(seat) and hand["result"] > 0:
                text += " (even money)" if seat["insurance_state"] == "even money" else " (blackjack)"
        return text

    def insurance_text(self, summary: dict[str, Any], over: bool) -> str:
        """The insurance line in chips: what it costs, what was staked, what it won or lost."""
        state = summary["insurance_state"]
        if state == "offered":
            if _natural(summary):
                return f"Insurance: even money offered (takes {money(self.bet)} now)"
            return f"Insurance: offered (costs {money(0.5 * self.bet)})"
        if state == "taken":
            text = f"Insurance: insured for {money(0.5 * self.bet)}"
            return text + (", " + outcome(summary["insurance"] * self.bet) if over else "")
        if state == "even money":
            return f"Insurance: took even money ({money(self.bet)})"
        return f"Insurance: {state}"

    # ------------------------------------------------------------------ hints
    def hint_lines(self, obs: np.ndarray, offered: list[Action]) -> list[str]:
        """Basic strategy's choice and the solver's EV of each offered action for this hand."""
        solution = self.solution
        assert solution is not None
        offered_mask = np.zeros(len(Action), np.bool_)
        offered_mask[offered] = True
        best = Action(solution.table.act(obs, offered_mask))
        up = int(obs[E.O_UP])
        if obs[E.O_PHASE] == E.P_INSURANCE:
            if obs[E.O_NATURAL]:
                gain = float(solution.insurance_ev[N_ROWS])
                evs = f"even money gains {gain:+.4f} per unit bet over declining"
            else:
                row = self._insurance_row(obs)
                evs = f"the insurance bet's EV is {float(solution.insurance_ev[row]):+.4f} per unit bet"
            return [f"Hint: basic strategy says {self.action_name(best, obs)}; {evs} (for two-card hands like yours)."]
        row = int(hand_row(int(obs[E.O_TOTAL]), int(obs[E.O_SOFT]), int(obs[E.O_PAIR]), int(obs[E.O_CAN_SPLIT])))
        section, key = row_label(row)
        cell = f"pair {key},{key}" if section == "pairs" else f"{section} {key}"
        values = []
        for action in offered:
            ev = float(solution.action_ev[row, up - 1, int(action)])
            values.append(f"{ACTION_TEXT[action]} {ev:+.4f}" if not math.isnan(ev) else f"{ACTION_TEXT[action]} n/a")
        frame = "given no dealer blackjack" if self.rules.peek or self.rules.obo else "dealer blackjack included"
        return [  # two lines, each under 120 columns (a terminal's width)
            f"Hint: basic strategy says {self.action_name(best, obs)} ({cell} v {up_label(up)}). "
            f"Total-dependent EVs per unit bet, {frame}:",
            "  " + ", ".join(values),
        ]

    def _insurance_row(self, obs: np.ndarray) -> int:
        """The solver's insurance row for the hand: its pair row where it has one, else its total's."""
        assert self.solution is not None
        total, soft, pair = int(obs[E.O_TOTAL]), int(obs[E.O_SOFT]), int(obs[E.O_PAIR])
        if pair:
            row = int(hand_row(total, soft, pair, 1))
            if not math.isnan(self.solution.insurance_ev[row]):
                return row
        return int(hand_row(total, soft, 0, 0))

    # ------------------------------------------------------------------ the end
    def summary(self) -> str:
        s = self.session
        text = (
            f"Game over: {s.rounds} round{'s' if s.rounds != 1 else ''}, net {money(s.net, sign=True)}, "
            f"bankroll {money(s.bankroll)} (started with {money(s.start)})."
        )
        if self.in_round:
            text += " The unfinished round is not counted."
        return text


def _other_hand_text(hand: dict[str, Any], over: bool) -> str:
    """Another box's hand: its play and, once settled, its outcome (``doubled  stood  won``)."""
    text = ("doubled  " if hand["doubled"] else "") + hand["status"]
    if over:
        result = hand["result"]
        text += "  " + ("push" if abs(result) < 5e-5 else "won" if result > 0 else "lost")
    return text


def _natural(summary: dict[str, Any]) -> bool:
    """Whether the round is a dealt blackjack: one unsplit hand of two cards totalling 21."""
    hands = summary["hands"]
    return len(hands) == 1 and len(hands[0]["cards"]) == 2 and hands[0]["total"] == 21


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _stacked_round(text: str) -> list[str]:
    """--cards A,K,8: one round's stacked cards in deal order."""
    cards = [card.strip() for card in text.split(",") if card.strip()]
    card_codes(cards)  # a bad rank fails here, with the engine's own message
    return cards


def _bankroll(text: str) -> float:
    """--bankroll: chips, a positive number (with at most two decimals, as a bet)."""
    try:
        return parse_amount(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a bankroll is a positive number of chips such as 1000 or 250.5, got {text!r}"
        ) from None


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="blackjack-play",
        description="Play blackjack by hand: bet, re-bet, deal, then hit, stand, double, split, "
        "surrender or insure with one-letter keys. End of input or Ctrl-C ends with a summary.",
    )
    add_rules_arguments(parser)
    parser.add_argument("--bankroll", type=_bankroll, default=1000.0, help="chips to start with (default 1000)")
    parser.add_argument("--hints", action="store_true", help="show basic strategy's action and each action's EV")
    parser.add_argument("--seed", type=int, default=None, help="seed of the shoe: the same seed deals the same cards")
    parser.add_argument("--seats", type=int, default=1, help="boxes at the table, 1-7 (the others play basic strategy)")
    parser.add_argument("--seat", type=int, default=0, help="your box, 0 (dealt first) .. seats-1")
    # argparse %-formats help text: the percent sign is doubled
    shoe_help = f"deal one shoe to a cut card ({SHOE_PENETRATION:.0%}% unless --set penetration)"
    parser.add_argument("--shoe", action="store_true", help=shoe_help)
    # stacked rounds for tests and demonstrations: --cards 8,A,8,K (repeat for later rounds)
    parser.add_argument("--cards", type=_stacked_round, action="append", default=[], help=argparse.SUPPRESS)
    return parser


@console_entry("blackjack-play")
def main(argv: Sequence[str] | None = None, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = stdout if stdout is not None else sys.stdout
    try:
        E.check_seats(args.seats, "--seats")
        E.check_seat(args.seat, args.seats, "--seat")
        rules = rules_from_args(args)
        if args.shoe and rules.penetration <= 0:
            rules = rules.replace(penetration=SHOE_PENETRATION)
        game = Game(
            rules,
            args.bankroll,
            hints=args.hints,
            seed=args.seed,
            stacked=args.cards,
            stdin=stdin,
            stdout=stdout,
            seats=args.seats,
            seat=args.seat,
        )
    except ValueError as error:
        print(f"blackjack-play: error: {error}", file=sys.stderr)
        return 2
    try:
        game.run()
    except EOFError:
        pass
    except KeyboardInterrupt:
        print(file=out)
    except ValueError as error:  # stacked --cards the shoe cannot deal
        print(f"blackjack-play: error: {error}", file=sys.stderr)
        print(game.summary(), file=out)
        return 2
    print(game.summary(), file=out)
    return 0


__all__ = ["build_parser", "main"]


if __name__ == "__main__":
    sys.exit(main())
