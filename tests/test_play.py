"""blackjack-play driven through standard input: every control, bad input, end of input, hints.

Rounds are made deterministic with the hidden ``--cards`` option (stacked cards in deal order:
player, dealer up, player, hole card, then the cards play draws)."""

from __future__ import annotations

import io
import re

import pytest

from blackjack_env import Rules
from blackjack_env.evaluate.play import main, money, parse_amount
from blackjack_env.solver import solve

ROUND = re.compile(r"Round (\d+): ([+-][\d,.]+) on a bet of ([\d,.]+); bankroll ([\d,.]+)")
SUMMARY = re.compile(r"Game over: (\d+) rounds?, net ([+-][\d,.]+), bankroll ([\d,.]+)")


def play(*args: str, keys: str = "") -> tuple[int, str]:
    """Run the game with these arguments and typed lines; returns (exit code, transcript)."""
    out = io.StringIO()
    code = main(list(args), stdin=io.StringIO(keys), stdout=out)
    return code, out.getvalue()


def chips(text: str) -> float:
    return float(text.replace(",", ""))


def rounds(transcript: str) -> list[tuple[float, float, float]]:
    """(chips won, bet in chips, bankroll after) of every finished round."""
    return [(chips(m[2]), chips(m[3]), chips(m[4])) for m in ROUND.finditer(transcript)]


def summary(transcript: str) -> tuple[int, float, float]:
    m = SUMMARY.search(transcript)
    assert m, transcript
    return int(m[1]), float(m[2].replace(",", "")), float(m[3].replace(",", ""))


def lines(*typed: str) -> str:
    return "".join(f"{line}\n" for line in typed)


# ---------------------------------------------------------------------- every action
@pytest.mark.parametrize(
    ("cards", "typed", "reward"),
    [
        # 6,5 = 11 v 10, double draws a 10: 21 against the dealer's 17
        ("6,10,5,7,10", ("d",), 2.0),
        # 12 v 7: hit a 5, stand on 17; the dealer's 16 draws a 10 and busts
        ("10,7,2,9,5,10", ("h", "s"), 1.0),
        # 8,8 v 6: split; 8+10 and 8+9 stand, the dealer's 16 busts with a 10
        ("8,6,8,10,10,9,10", ("p", "s", "s"), 2.0),
        # 16 v 10: late surrender loses half
        ("10,10,6,7", ("r",), -0.5),
        # 19 v A, insured; the dealer has blackjack: the hand loses 1, insurance wins 1
        ("10,A,9,K", ("i",), 0.0),
        # 19 v A, no insurance; the dealer has blackjack
        ("10,A,9,K", ("n",), -1.0),
        # blackjack v A: even money pays 1
        ("A,A,K,5", ("i",), 1.0),
        # blackjack v A, declined: the dealer has no blackjack, 3:2
        ("A,A,K,5", ("n",), 1.5),
        # blackjack v 9: nothing to decide, paid 3:2 at once
        ("A,9,K,7", (), 1.5),
    ],
)
def test_every_control_settles_with_the_envs_reward_times_the_bet(cards: str, typed: tuple[str, ...], reward: float):
    code, text = play("--cards", cards, "--bankroll", "500", keys=lines("b 10", "d", *typed))
    assert code == 0
    assert rounds(text) == [(10 * reward, 10.0, 500 + 10 * reward)]
    assert summary(text) == (1, 10 * reward, 500 + 10 * reward)


def test_word_commands_re_bet_and_a_bare_number_bet() -> None:
    typed = lines("25", "deal", "stand", "rebet", "d", "surrender")
    code, text = play("--cards", "10,7,10,9", "--cards", "10,10,6,7", keys=typed)
    assert code == 0
    # 20 v 16+... the dealer's 7,9 draws from the seeded shoe; whatever it is, the re-bet is 25
    results = rounds(text)
    assert len(results) == 2
    assert results[1][0] == -12.5 and results[1][1] == 25.0
    assert summary(text)[2] == pytest.approx(1000 + results[0][0] - 12.5)


def test_only_legal_actions_are_offered() -> None:
    _, text = play("--cards", "10,7,2,9,5,10", keys=lines("b 10", "d", "h", "s"))
    menus = [line for line in text.splitlines() if "(q quit) >" in line]
    assert menus[0].startswith("s stand  h hit  d double  r surrender  (q quit)")  # 12: no split, no insurance
    assert menus[1].startswith("s stand  h hit  (q quit)")  # three cards: no double, no surrender
    _, text = play("--cards", "10,A,9,K", keys=lines("b 10", "d", "n"))
    assert "i insurance  n no insurance  (q quit) >" in text
    _, text = play("--cards", "A,A,K,5", keys=lines("b 10", "d", "i"))
    assert "i even money  n no even money  (q quit) >" in text


def test_a_split_shows_both_hands_and_the_table() -> None:
    _, text = play("--cards", "8,6,8,10,10,9,10", keys=lines("b 10", "d", "p", "s", "s"))
    assert "Dealer: 6 ??" in text
    assert "-> Hand 2: 8 9" in text
    assert "Dealer: 6 10 10  (26)" in text


# ---------------------------------------------------------------------- money in chips
def table_lines(transcript: str, start: str) -> list[str]:
    """The transcript's lines that start with ``start`` (after the hand marker), in order."""
    return [line for line in transcript.splitlines() if line[3:].startswith(start) or line.startswith(start)]


def test_a_hand_shows_the_players_bet_in_chips_not_units() -> None:
    # 4,J = 14 v 6: stand; the dealer's 6,7 draws a 10 and busts
    code, text = play("--cards", "4,6,J,7,10", keys=lines("b 25", "d", "s"))
    assert code == 0
    assert re.search(r"-> Hand 1: 4 J +14 +bet 25  playing$", text, re.M), text
    assert re.search(r"   Hand 1: 4 J +14 +bet 25  stood  won 25$", text, re.M), text
    assert "units" not in text and "bet 1 " not in text and "result" not in text
    assert "Round 1: +25 on a bet of 25; bankroll 1,025" in text
    assert "Game over: 1 round, net +25, bankroll 1,025 (started with 1,000)." in text


def test_a_double_shows_the_doubled_stake_and_result_in_chips() -> None:
    # 6,5 = 11 v 10, double draws a 10: 21 against the dealer's 17
    _, text = play("--cards", "6,10,5,7,10", keys=lines("b 25", "d", "d"))
    assert table_lines(text, "Hand 1:") == [
        "-> Hand 1: 6 5              11  bet 25  playing",
        "   Hand 1: 6 5 10           21  bet 50 (doubled)  stood  won 50",
    ]
    assert rounds(text) == [(50.0, 25.0, 1050.0)]
    assert summary(text) == (1, 50.0, 1050.0)


def test_a_split_shows_two_hands_of_the_bet_in_chips() -> None:
    # 8,8 v 6: split; 8+10 stands, 8+3 doubles to 21 with a 10; the dealer's 6,10 draws a 9 and busts
    _, text = play("--cards", "8,6,8,10,10,3,10,9", keys=lines("b 25", "d", "p", "s", "d"))
    assert table_lines(text, "Hand 1:")[:2] == [
        "-> Hand 1: 8 8              16  bet 25  playing",
        "-> Hand 1: 8 10             18  bet 25  playing",
    ]
    assert "   Hand 2: 8                8   bet 25  waiting" in text
    assert "-> Hand 2: 8 3              11  bet 25  playing" in text
    assert "   Hand 1: 8 10             18  bet 25  stood  won 25" in text
    assert "   Hand 2: 8 3 10           21  bet 50 (doubled)  stood  won 50" in text
    assert rounds(text) == [(75.0, 25.0, 1075.0)]
    assert summary(text) == (1, 75.0, 1075.0)


def test_a_loss_and_a_surrender_are_lost_chips() -> None:
    # 10,6 = 16 v 10: stand against the dealer's 17; then surrender the same hand
    typed = lines("b 25", "d", "s", "r", "d", "r")
    _, text = play("--cards", "10,10,6,7", "--cards", "10,10,6,7", keys=typed)
    assert "   Hand 1: 10 6             16  bet 25  stood  lost 25" in text
    assert "   Hand 1: 10 6             16  bet 25  surrendered  lost 12.5" in text
    assert rounds(text) == [(-25.0, 25.0, 975.0), (-12.5, 25.0, 962.5)]
    assert "Game over: 2 rounds, net -37.5, bankroll 962.5 (started with 1,000)." in text


def test_insurance_is_staked_and_settled_in_chips() -> None:
    # 19 v A, insured; the dealer has blackjack: the hand loses 25, the insurance wins 25
    _, text = play("--cards", "10,A,9,K", keys=lines("b 25", "d", "i"))
    assert table_lines(text, "Insurance:") == [
        "Insurance: offered (costs 12.5)",
        "Insurance: insured for 12.5",
        "Insurance: insured for 12.5, won 25",
    ]
    assert "   Hand 1: 10 9             19  bet 25  stood  lost 25" in text
    assert rounds(text) == [(0.0, 25.0, 1000.0)]
    # 19 v A, insured; no dealer blackjack (A,7 stands): the hand wins 25, the insurance loses 12.5
    _, text = play("--cards", "10,A,9,7", keys=lines("b 25", "d", "i", "s"))
    assert "Insurance: insured for 12.5, lost 12.5" in text
    assert "   Hand 1: 10 9             19  bet 25  stood  won 25" in text
    assert rounds(text) == [(12.5, 25.0, 1012.5)]


def test_blackjack_and_even_money_pay_in_chips() -> None:
    _, text = play("--cards", "A,9,K,7", keys=lines("b 25", "d"))
    assert "   Hand 1: A K              soft 21  bet 25  stood  won 37.5 (blackjack)" in text
    assert "Round 1: +37.5 on a bet of 25; bankroll 1,037.5" in text
    assert "Game over: 1 round, net +37.5, bankroll 1,037.5 (started with 1,000)." in text
    _, text = play("--cards", "A,A,K,5", keys=lines("b 25", "d", "i"))
    assert table_lines(text, "Insurance:") == [
        "Insurance: even money offered (takes 25 now)",
        "Insurance: took even money (25)",
    ]
    assert "   Hand 1: A K              soft 21  bet 25  stood  won 25 (even money)" in text
    assert rounds(text) == [(25.0, 25.0, 1025.0)]


# ---------------------------------------------------------------------- bad input
def test_bad_input_gets_one_line_and_a_new_prompt() -> None:
    typed = lines("d", "r", "b", "b -5", "b 1.234", "b lots", "b 5000", "x", "b 10", "d", "zz", "p", "i", "s")
    code, text = play("--cards", "10,7,2,9,5,10", keys=typed)
    assert code == 0
    expected = [
        "  place a bet first: b AMOUNT, or r to repeat the last one",
        "  no previous bet to repeat yet: b AMOUNT places one",
        "  say how much: b 10",
        "  a bet is a positive number with at most two decimals, got '-5'",
        "  a bet is a positive number with at most two decimals, got '1.234'",
        "  a bet is a positive number such as 10 or 2.5, got 'lots'",
        "  a bet of 5,000 is more than your bankroll of 1,000",
        "  unknown command 'x'; use b AMOUNT bet, r re-bet, d deal, c count, q quit",
        "  unknown key 'zz'; type one of: s, h, d, r",
        "  split is not allowed now",
        "  insurance is not allowed now",
    ]
    got = [line for line in text.splitlines() if line.startswith("  ") and not line.startswith("   ")]
    assert got == expected
    assert len(rounds(text)) == 1  # the stand after the bad keys finished the round


def test_actions_the_bankroll_cannot_cover_are_withheld() -> None:
    code, text = play("--cards", "6,10,5,7,10", "--bankroll", "10", keys=lines("b 10", "d", "d", "s"))
    assert code == 0
    assert "(not enough chips to double)" in text
    assert "s stand  h hit  r surrender  (q quit) >" in text
    assert "  you have not enough chips to double now" in text
    # 11 stands against the dealer's 17: the bankroll is gone and the game ends
    assert "You have no chips left." in text
    assert summary(text) == (1, -10.0, 0.0)


# ---------------------------------------------------------------------- ending
def test_end_of_input_mid_round_ends_cleanly() -> None:
    code, text = play("--cards", "10,7,2,9,5,10", keys=lines("b 10", "d"))
    assert code == 0
    assert summary(text) == (0, 0.0, 1000.0)
    assert "The unfinished round is not counted." in text


def test_quit_and_ctrl_c_end_with_a_summary() -> None:
    code, text = play("--cards", "A,9,K,7", keys=lines("b 10", "d", "q", "b 10"))
    assert code == 0 and summary(text) == (1, 15.0, 1015.0)

    class Interrupting(io.StringIO):
        def readline(self, *args: object) -> str:
            raise KeyboardInterrupt

    out = io.StringIO()
    assert main([], stdin=Interrupting(), stdout=out) == 0
    assert summary(out.getvalue()) == (0, 0.0, 1000.0)


def test_reads_sys_stdin_and_writes_sys_stdout(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(lines("b 2.5", "d")))
    assert main(["--cards", "A,9,K,7", "--rules", "single-deck-6to5"]) == 0
    text = capsys.readouterr().out
    assert "Blackjack: 1D" in text and "6:5" in text
    assert rounds(text) == [(3.0, 2.5, 1003.0)]


def test_bad_rules_are_one_line_and_exit_2(capsys) -> None:
    assert main(["--set", "decks=lots"], stdin=io.StringIO(""), stdout=io.StringIO()) == 2
    assert capsys.readouterr().err.startswith("blackjack-play: error: ")
    with pytest.raises(SystemExit):
        main(["--cards", "A,Z"], stdin=io.StringIO(""))


def test_a_seed_deals_the_same_session() -> None:
    # stray keys in either phase are answered and ignored, so this plays whatever is dealt
    typed = lines(*["b 10", "d", "n", "s", "s", "s"] * 4)
    one = play("--seed", "11", keys=typed)[1]
    assert one == play("--seed", "11", keys=typed)[1]
    assert len(rounds(one)) >= 2


# ---------------------------------------------------------------------- hints
def test_hints_show_basic_strategy_and_the_cells_exact_evs() -> None:
    rules = Rules()
    sol = solve(rules)
    _, text = play("--hints", "--cards", "8,9,8,7,10,10,10", keys=lines("b 10", "d", "p", "s", "s"))
    assert "Hint: basic strategy says split (pair 8,8 v 9)." in text
    text_lines = text.splitlines()
    at = next(i for i, line in enumerate(text_lines) if "Total-dependent EVs per unit bet" in line)
    ev_line = text_lines[at + 1]
    assert max(len(line) for line in text_lines) <= 120  # no line wraps in a 120-column terminal
    evs = sol.cell_ev("pairs", "8", 9)
    for name in ("stand", "hit", "double", "split", "surrender"):
        assert f"{name} {evs[name]:+.4f}" in ev_line
    # after the split the first hand is a hard 18 v 9 (no surrender, no split offered)
    hard18 = sol.cell_ev("hard", "18", 9)
    assert "Hint: basic strategy says stand (hard 18 v 9)." in text
    assert f"stand {hard18['stand']:+.4f}, hit {hard18['hit']:+.4f}, double {hard18['double']:+.4f}" in text


def test_hints_for_insurance_and_even_money() -> None:
    sol = solve(Rules())
    _, text = play("--hints", "--cards", "10,A,9,K", keys=lines("b 10", "d", "n"))
    from blackjack_env.strategy import row_of_label

    assert (
        f"Hint: basic strategy says no insurance; the insurance bet's EV is "
        f"{sol.insurance_ev[row_of_label('hard', '19')]:+.4f} per unit bet" in text
    )
    _, text = play("--hints", "--cards", "A,A,K,5", keys=lines("b 10", "d", "n"))
    say = "even money" if sol.table.insurance[1] else "no even money"
    assert f"Hint: basic strategy says {say}; even money gains {sol.insurance_ev[-1]:+.4f}" in text


def test_money_and_amounts() -> None:
    assert money(1250) == "1,250" and money(7.5) == "7.5" and money(0, sign=True) == "+0"
    assert money(-12.5, sign=True) == "-12.5" and money(25.0) == "25" and money(1062.5) == "1,062.5"
    assert money(0.375) == "0.375" and money(2.25) == "2.25" and money(-0.0, sign=True) == "+0"
    assert money(0.1 + 0.2) == "0.3"
    assert parse_amount("1,000") == 1000.0
    with pytest.raises(ValueError):
        parse_amount("nan")


def test_a_seat_at_a_table_and_the_count_on_demand() -> None:
    """--seats/--seat sit the player in one box (the others play basic strategy),
    --shoe keeps one shoe between rounds, and c shows the Hi-Lo count at any prompt."""
    # one deck; seats 0-2 get 9,2 / 10,7 / 5,6 against an 8 up (3 in the hole); seat 0 plays basic
    # strategy (it doubles 11 against an 8 and draws the 4) before the player (seat 1) stands on 17
    cards = "9,10,5,8,2,7,6,3,4"
    code, out = play("--seats", "3", "--seat", "1", "--shoe", "--set", "decks=1", "--cards", cards,
                     keys=lines("c", "b 10", "d", "c", "s", "c", "q"))  # fmt: skip
    assert code == 0
    assert "no cards dealt yet: the count is 0" in out
    assert "Seat 1 (you)" in out and "Seat 0 (basic strategy)" in out and "Seat 2 (basic strategy)" in out
    counts = re.findall(r"Hi-Lo running ([+-]\d+), true ([+-][\d.]+); (\d+) of 52 cards dealt", out)
    # at the player's turn 9 cards are dealt, 8 seen (the 3 is in the hole): 5 2 6 4 count +1, the 10 -1
    assert counts[0] == ("+3", "+3.5", "9")  # true: 3 * 52 / 44 unseen (43 in the shoe, the hole card)
    assert int(counts[1][2]) > 9  # after the round: the hole card turned over and the dealer's draws
    assert "Round 1:" in out


def test_a_bad_seat_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = play("--seats", "2", "--seat", "2")
    assert code == 2
    assert capsys.readouterr().err.strip().startswith("blackjack-play: error: --seat must be a box 0..1")


def test_boxes_are_numbered_from_0_and_the_other_boxes_show_their_play() -> None:
    """--seats 2 --seat 1: box 0 (basic strategy) gets 10,9 and stands; the player's A,7 against a 6
    reads soft 18 and stands; the dealer's 6,10 draws a 10 and busts. The table names the boxes as
    --seat does; the other box shows its play and outcome, not the player's chips."""
    _, text = play("--seats", "2", "--seat", "1", "--cards", "10,A,6,9,7,10,10", keys=lines("b 10", "d", "s"))
    assert table_lines(text, "Seat") == ["Seat 0 (basic strategy)", "Seat 1 (you)"] * 2
    assert "-> Hand 1: A 7              soft 18  bet 10  playing" in text
    assert "   Hand 1: 10 9             19  stood  won" in text.splitlines()
    assert "   Hand 1: A 7              soft 18  bet 10  stood  won 10" in text
    assert rounds(text) == [(10.0, 10.0, 1010.0)]
