"""The documentation site says what the code does.

The env cards, the rules page and the command-line reference are generated from the code at build
time (docs/_ext/blackjack_docs); here their data, built by the same functions without a Sphinx
build, is held to live envs and parsers: a card that disagrees with the code fails. The API pages'
examples run, and the project files (CITATION.cff, CHANGELOG.md, CI's docs build) are checked.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import inspect
import io
import re
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import blackjack_env
from blackjack_env import Action, shoe_env, vector
from blackjack_env import env as single
from blackjack_env import rules as R

pytest.importorskip("sphinx")
pytest.importorskip("sphinxarg")
pytest.importorskip("pettingzoo")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

from blackjack_docs import cards as C  # noqa: E402
from blackjack_docs import cli_page, rules_page  # noqa: E402
from blackjack_docs.sections import gym_sections, markdown_tables  # noqa: E402

from blackjack_env import multiagent  # noqa: E402

COUNT_MODES = ("none", "composition", "hilo")


@pytest.fixture(scope="module")
def cards() -> dict[str, C.EnvCard]:
    return {card.slug: card for card in C.build_cards()}


def game_of(cards: dict[str, C.EnvCard], slug: str, label: str) -> C.Game:
    (game,) = [g for g in cards[slug].games if g.label == label]
    return game


def live_envs() -> list[tuple[str, str, Any]]:
    """(card, game label, maker(count_obs) -> (observation names, nvec, n_actions, bets)) of every
    env, made here the way a user makes it."""

    def gym_env(env_id: str):
        def make(mode: str):
            env = gym.make(env_id, count_obs=mode).unwrapped
            return env.observation_names, env.observation_space.nvec, env.action_space.n, getattr(env, "bets", ())

        return make

    def vector_env(env_id: str):
        def make(mode: str):
            envs = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", count_obs=mode)
            bets = getattr(gym.make(env_id).unwrapped, "bets", ())
            return envs.observation_names, envs.single_observation_space.nvec, envs.single_action_space.n, bets

        return make

    def table(game: str):
        def make(mode: str):
            env = multiagent.raw_env(game=game, count_obs=mode)
            agent = env.possible_agents[0]
            bets = env.bets if game == "shoe" else ()
            nvec = env.observation_space(agent)["observation"].nvec
            return env.observation_names_of(agent), nvec, env.action_space(agent).n, bets

        return make

    return [
        ("blackjack", blackjack_env.ENV_ID, gym_env(blackjack_env.ENV_ID)),
        ("blackjack-shoe", blackjack_env.SHOE_ENV_ID, gym_env(blackjack_env.SHOE_ENV_ID)),
        ("vector", "Blackjack-v0", vector_env(blackjack_env.ENV_ID)),
        ("vector", "BlackjackShoe-v0", vector_env(blackjack_env.SHOE_ENV_ID)),
        ("pettingzoo-table", 'game="round"', table("round")),
        ("pettingzoo-table", 'game="shoe"', table("shoe")),
    ]


LIVE = live_envs()
IDS = [f"{slug}:{label}" for slug, label, _ in LIVE]


# ----------------------------------------------------------------------------- which cards
def test_every_registered_env_and_vector_entry_point_has_a_card(cards: dict[str, C.EnvCard]) -> None:
    ours = [spec for spec in gym.registry.values() if spec.namespace == "blackjack_env"]
    assert {spec.id for spec in ours} == {blackjack_env.ENV_ID, blackjack_env.SHOE_ENV_ID}
    labels = {game.label for card in cards.values() for game in card.games}
    for spec in ours:
        assert spec.id in labels  # the single env's own card
        assert f"{spec.name}-v{spec.version}" in {g.label for g in cards["vector"].games}
        module, name = spec.vector_entry_point.split(":")
        assert getattr(importlib.import_module(module), name) in C._vector_classes()


def test_the_home_page_lists_every_card() -> None:
    index = (DOCS / "index.md").read_text()
    for card in C.build_cards():
        assert f"generated/envs/{card.slug}\n" in index


# ----------------------------------------------------------------------------- the cards' tables
@pytest.mark.parametrize(("slug", "label", "make"), LIVE, ids=IDS)
def test_card_actions_are_the_envs(cards: dict[str, C.EnvCard], slug: str, label: str, make: Any) -> None:
    _, _, n_actions, bets = make("none")
    game = game_of(cards, slug, label)
    names = [a.name for a in Action] + [f"BET {bet:g}" for bet in bets]
    assert [(a.id, a.name) for a in game.actions] == list(enumerate(names))
    assert len(game.actions) == n_actions
    assert all(a.meaning for a in game.actions)


@pytest.mark.parametrize(("slug", "label", "make"), LIVE, ids=IDS)
@pytest.mark.parametrize("mode", COUNT_MODES)
def test_card_observations_are_the_envs(
    cards: dict[str, C.EnvCard], slug: str, label: str, make: Any, mode: str
) -> None:
    names, nvec, _, _ = make(mode)
    game = game_of(cards, slug, label)
    rows = sorted((row for row in game.observations if mode in row.index), key=lambda row: row.index[mode])
    assert [row.index[mode] for row in rows] == list(range(len(names)))
    assert [row.name for row in rows] == list(names)
    assert [row.values[mode] for row in rows] == [(0, int(n) - 1) for n in nvec]
    assert all(row.meaning for row in game.observations)


def test_observation_meanings_agree_with_the_docstrings() -> None:
    """The class docstrings keep their own tables (``help()`` shows them): they say what the code's
    meaning dicts say, the cards show the code's."""
    _, sections = gym_sections(single.BlackjackEnv.__doc__)
    (table,) = markdown_tables(sections["Observation Space"])
    assert [tuple(row) for row in table[1:]] == [
        (str(i), name, single.OBS_MEANINGS[name]) for i, name in enumerate(single.OBS_NAMES)
    ]
    _, sections = gym_sections(shoe_env.BlackjackShoeEnv.__doc__)
    (table,) = markdown_tables(sections["Observation Space"])
    assert [tuple(row) for row in table[1:]] == [
        (name, shoe_env.SHOE_OBS_MEANINGS[name]) for name in shoe_env.SHOE_OBS_NAMES
    ]


def collect_infos(play: Any) -> tuple[list[dict[str, Any]], list[bool]]:
    infos: list[dict[str, Any]] = []
    settled: list[bool] = []
    play(infos, settled)
    return infos, settled


def single_rollouts(env_id: str, episodes: int, **kwargs: Any) -> Any:
    def play(infos: list[dict[str, Any]], settled: list[bool]) -> None:
        env = gym.make(env_id, **kwargs)
        rng = np.random.default_rng(0)
        for episode in range(episodes):
            _, info = env.reset(seed=episode)
            infos.append(info)
            settled.append(False)
            terminated = False
            while not terminated:
                _, _, terminated, _, info = env.step(blackjack_env.sample_legal(info["action_mask"], rng))
                infos.append(info)
                rounds_settled = terminated if env_id == blackjack_env.ENV_ID else "round_result" in info
                settled.append(bool(rounds_settled))

    return play


def vector_rollouts(env_id: str) -> Any:
    def play(infos: list[dict[str, Any]], settled: list[bool]) -> None:
        envs = gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point")
        rng = np.random.default_rng(0)
        _, info = envs.reset(seed=0)
        infos.append(info)
        for _ in range(300):
            *_, info = envs.step(blackjack_env.sample_legal(info["action_mask"], rng))
            infos.append(info)
        settled.extend([False] * len(infos))

    return play


def table_rollouts(game: str) -> Any:
    def play(infos: list[dict[str, Any]], settled: list[bool]) -> None:
        table = multiagent.raw_env(seats=2, game=game)
        rng = np.random.default_rng(0)
        for episode in range(40 if game == "round" else 1):
            table.reset(seed=episode)
            infos.extend(table.infos.values())  # after reset: empty
            settled.extend([False] * len(table.infos))
            while table.agents:
                agent = table.agent_selection
                mask = table.observe(agent)["action_mask"]
                was = dict(table.infos)
                if table.terminations[agent]:
                    table.step(None)
                    continue
                table.step(int(rng.choice(np.flatnonzero(mask))))
                for other, info in table.infos.items():
                    if info is not was.get(other):  # set on this step: the round was settled
                        infos.append(info)
                        settled.append(True)

    return play


INFO_CASES = {
    "blackjack": [
        single_rollouts(blackjack_env.ENV_ID, 300),
        single_rollouts(blackjack_env.ENV_ID, 100, seats=3, seat=1, others="random"),
    ],
    "blackjack-shoe": [
        single_rollouts(blackjack_env.SHOE_ENV_ID, 1),
        single_rollouts(blackjack_env.SHOE_ENV_ID, 1, seats=2, others="random", bets=(0, 1, 5)),
    ],
    "vector": [vector_rollouts(blackjack_env.ENV_ID), vector_rollouts(blackjack_env.SHOE_ENV_ID)],
    "pettingzoo-table": [table_rollouts("round"), table_rollouts("shoe")],
}


@pytest.mark.parametrize("slug", list(INFO_CASES))
def test_card_info_keys_are_the_keys_a_rollout_sees(cards: dict[str, C.EnvCard], slug: str) -> None:
    """Every info key a seeded random masked rollout sees (reset and step infos, the settling and
    terminal steps included) is on the card, every key on the card is seen, an ``"always"`` key in
    every info, a ``"settled"`` key only on a step that settled a round."""
    documented: dict[str, tuple[str, str]] = {}
    for game in cards[slug].games:
        documented.update(game.info_keys)
    seen: set[str] = set()
    for play in INFO_CASES[slug]:
        infos, settled = collect_infos(play)
        for info, was_settled in zip(infos, settled, strict=True):
            keys = {key for key in info if not key.startswith("_")}  # Gymnasium's own _key flags
            seen |= keys
            for key, (when, _) in documented.items():
                if when == "always":
                    assert key in keys, (key, sorted(keys))
                elif key in keys:
                    assert when == "settled" and was_settled, (key, when)
    assert seen == set(documented)
    assert all(when in C.WHEN and meaning for when, meaning in documented.values())


@pytest.mark.parametrize(
    ("slug", "label", "constructor", "registered"),
    [
        ("blackjack", blackjack_env.ENV_ID, single.BlackjackEnv.__init__, gym.spec(blackjack_env.ENV_ID).kwargs),
        (
            "blackjack-shoe",
            blackjack_env.SHOE_ENV_ID,
            shoe_env.BlackjackShoeEnv.__init__,
            gym.spec(blackjack_env.SHOE_ENV_ID).kwargs,
        ),
        ("vector", "Blackjack-v0", vector.BlackjackVectorEnv.__init__, gym.spec(blackjack_env.ENV_ID).kwargs),
        (
            "vector",
            "BlackjackShoe-v0",
            vector.BlackjackShoeVectorEnv.__init__,
            gym.spec(blackjack_env.SHOE_ENV_ID).kwargs,
        ),
        ("pettingzoo-table", 'game="round"', multiagent.BlackjackTableEnv.__init__, {}),
        ("pettingzoo-table", 'game="shoe"', multiagent.BlackjackTableEnv.__init__, {}),
    ],
)
def test_card_arguments_are_the_signatures(
    cards: dict[str, C.EnvCard], slug: str, label: str, constructor: Any, registered: dict[str, Any]
) -> None:
    game = game_of(cards, slug, label)
    parameters = [p for p in inspect.signature(constructor).parameters.values() if p.name != "self"]
    assert [(a.name, a.default) for a in game.arguments] == [(p.name, p.default) for p in parameters]
    for argument in game.arguments:
        assert argument.registered == registered.get(argument.name, inspect.Parameter.empty)


def test_the_entry_points_are_the_cards_classes(cards: dict[str, C.EnvCard]) -> None:
    for slug, env_id in (("blackjack", blackjack_env.ENV_ID), ("blackjack-shoe", blackjack_env.SHOE_ENV_ID)):
        module, name = gym.spec(env_id).entry_point.split(":")
        assert cards[slug].cls is getattr(importlib.import_module(module), name)
        assert cards[slug].version == f"v{gym.spec(env_id).version}"


def test_every_docstring_section_is_on_its_card(cards: dict[str, C.EnvCard]) -> None:
    for card in cards.values():
        assert set(card.sections) <= set(C.SECTIONS), card.slug
        assert {"Description", "Action Space", "Observation Space", "Version History"} <= set(card.sections)
        text = C.card_rest(card, f"{card.slug}.png", "caption")
        for title in C.SECTIONS:
            assert f"\n{title}\n{'-' * len(title)}\n" in text


def test_the_pictures_are_frames_of_a_round_in_play(cards: dict[str, C.EnvCard]) -> None:
    for card in cards.values():
        frame, caption = card.picture()
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3 and caption


# ----------------------------------------------------------------------------- the rules page
def test_the_rules_page_has_every_field_with_its_default() -> None:
    rows = rules_page.field_rows()
    fields = dataclasses.fields(R.Rules)
    assert [(r.name, r.default, r.type) for r in rows] == [(f.name, f.default, f.type) for f in fields]
    assert all(r.meaning and r.allowed for r in rows)
    for name, choices in (("double_on", R.DOUBLE_ON_CHOICES), ("surrender", R.SURRENDER_CHOICES)):
        assert all(f"``{choice}``" in R.FIELD_VALUES[name] for choice in choices)
    text = rules_page.rules_rest()
    for row in rows:
        assert f"``{row.name}``" in text and f"``{row.default!r}`` ({row.type})" in text


def test_the_allowed_values_are_the_validators() -> None:
    """FIELD_VALUES' ranges, as the validators hold them."""
    ok = {"decks": [0, 1, 8], "blackjack_pays": [0, 1.2, 10], "split_to": [1, R.MAX_HANDS], "penetration": [0, 0.99]}
    bad = {"decks": [-1, 1.5], "blackjack_pays": [-0.1, 10.5], "split_to": [0, R.MAX_HANDS + 1], "penetration": [1.0]}
    for name, values in ok.items():
        for value in values:
            R.Rules(**{name: value})
    for name, values in bad.items():
        for value in values:
            with pytest.raises(ValueError, match=name):
                R.Rules(**{name: value})
    for field in dataclasses.fields(R.Rules):
        if field.type == "bool":
            assert R.FIELD_VALUES[field.name] == "true or false"
            with pytest.raises(ValueError, match=field.name):
                R.Rules(**{field.name: 2})
    assert R.Rules.from_dict({"decks": "inf"}).decks == 0


def test_the_rules_page_has_every_preset() -> None:
    rows = rules_page.preset_rows()
    assert [row.name for row in rows] == list(R.PRESETS)
    assert [row.name for row in rows if row.default] == [R.DEFAULT_PRESET]
    for row in rows:
        preset = R.PRESETS[row.name]
        assert R.Rules().replace(**row.changes) == preset.rules == R.Rules.preset(row.name)
        assert row.source == preset.source and row.source and row.description
    text = rules_page.rules_rest()
    assert all(f"``{name}``" in text for name in R.PRESETS)


# ----------------------------------------------------------------------------- the CLI reference
def test_the_cli_reference_covers_every_command_and_subcommand() -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    commands = cli_page.commands()
    progs = [c.prog for c in commands]
    assert [p for p in progs if " " not in p] == list(scripts)
    assert {"blackjack-evaluate report", "blackjack-evaluate sweep"} <= set(progs)
    text = cli_page.cli_rest()
    for command in commands:
        assert command.parser().prog == command.prog  # the directive's :prog: is the parser's own
        assert f":module: {command.module}\n   :func: {command.func}\n   :prog: {command.prog}\n" in text
        main, _, word = command.prog.partition(" ")
        if word:  # the command dispatches the subcommand to the module the page documents
            module = importlib.import_module(scripts[main].split(":")[0])
            out = io.StringIO()
            with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
                module.main([word, "--help"])
            assert out.getvalue().startswith(f"usage: {command.prog} ")


def test_sphinx_argparse_shows_every_option() -> None:
    from sphinxarg.parser import parse_parser

    for command in cli_page.commands():
        parser = command.parser()
        parsed = repr(parse_parser(parser))
        for action in parser._actions:
            if action.help != "==SUPPRESS==" and not isinstance(action, argparse._HelpAction):  # -h: every command
                for option in action.option_strings:
                    assert repr(option) in parsed, (command.prog, option)


# ----------------------------------------------------------------------------- the API reference
PUBLIC_MODULES = [
    "blackjack_env.rules",
    "blackjack_env.env",
    "blackjack_env.shoe_env",
    "blackjack_env.vector",
    "blackjack_env.simulate",
    "blackjack_env.strategy",
    "blackjack_env.counting",
    "blackjack_env.wrappers",
    "blackjack_env.sb3",
    "blackjack_env.multiagent",
    "blackjack_env.render",
    "blackjack_env.solver",
    "blackjack_env.agents",
    "blackjack_env.evaluate.cli",
    "blackjack_env.evaluate.strategy",
    "blackjack_env.evaluate.play",
    "blackjack_env.evaluate.sweep",
    "blackjack_env.evaluate.report",
    "blackjack_env.evaluate.runner",
    "blackjack_env.train.cli",
    "blackjack_env.train.learner",
    "blackjack_env.train.trainer",
    "blackjack_env.train.registry",
    "blackjack_env.train.settings",
]


def api_text() -> str:
    return "\n".join(page.read_text() for page in sorted((DOCS / "api").glob("*.md")))


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_module_has_all_and_an_api_page(name: str) -> None:
    module = importlib.import_module(name)
    assert isinstance(module.__all__, list) and module.__all__, name
    assert all(hasattr(module, public) for public in module.__all__)
    assert f".. public-module:: {name}\n" in api_text()


def test_lazily_loaded_names_get_their_own_entry() -> None:
    """``automodule`` sees only a module's loaded names; one its ``__getattr__`` loads is added."""
    from blackjack_docs import public_module_rest

    agents = importlib.import_module("blackjack_env.agents")
    vars(agents).pop("PPOAgent", None)  # as a fresh import has it
    assert ".. autoclass:: blackjack_env.agents.PPOAgent" in public_module_rest("blackjack_env.agents")
    assert not any(
        "autoclass:: blackjack_env.agents.BasicStrategyAgent" in line
        for line in public_module_rest("blackjack_env.agents")
    )


def test_the_package_names_are_documented() -> None:
    """``blackjack_env``'s own names are on its page; the others are re-exports of public modules'."""
    exported = {
        id(getattr(importlib.import_module(m), n)) for m in PUBLIC_MODULES for n in importlib.import_module(m).__all__
    }
    page = (DOCS / "api" / "blackjack_env.md").read_text()
    for name in blackjack_env.__all__:
        value = getattr(blackjack_env, name)
        assert id(value) in exported or f".. autodata:: blackjack_env.{name}" in page, name


def test_the_api_pages_are_in_the_toctree() -> None:
    index = (DOCS / "api" / "index.md").read_text()
    for page in (DOCS / "api").glob("*.md"):
        if page.stem != "index":
            assert f"\n{page.stem}\n" in index


def examples() -> list[tuple[str, int, str]]:
    out = []
    for page in [DOCS / "index.md", *sorted((DOCS / "api").glob("*.md"))]:
        for i, code in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL)):
            out.append((page.relative_to(DOCS).as_posix(), i, code))
    return out


@pytest.mark.parametrize(("page", "number", "code"), examples(), ids=[f"{p}:{n}" for p, n, _ in examples()])
def test_the_examples_run(page: str, number: int, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, f"{page}:example {number}", "exec"), {"__name__": "__docs_example__"})


def test_the_main_entry_points_have_examples() -> None:
    code = "\n".join(text for _, _, text in examples())
    for name in (
        "Rules.preset",
        'gym.make("blackjack_env/Blackjack-v0"',
        'gym.make("blackjack_env/BlackjackShoe-v0"',
        "gym.make_vec(",
        "from blackjack_env.multiagent import env",
        "solve(",
        "ceiling(",
        "simulate(",
        "BasicStrategyAgent(",
        "load_agent(",
        "CountingStrategy.from_dict(",
    ):
        assert name in code, name


# ----------------------------------------------------------------------------- project files
def test_citation_version_is_the_package_version() -> None:
    text = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^cff-version: 1\.2\.0$", text, flags=re.MULTILINE)
    (version,) = re.findall(r'^version: "?([^"\n]+)"?$', text, flags=re.MULTILINE)
    assert version == blackjack_env.__version__
    for key in ("message", "title", "authors", "license", "date-released"):
        assert re.search(rf"^{key}:", text, flags=re.MULTILINE), key
    # CFF 1.2.0 allows no other top-level keys than these
    allowed = {
        "abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi", "identifiers",
        "keywords", "license", "license-url", "message", "preferred-citation", "references", "repository",
        "repository-artifact", "repository-code", "title", "type", "url", "version",
    }  # fmt: skip
    assert set(re.findall(r"^([a-z-]+):", text, flags=re.MULTILINE)) <= allowed
    assert re.search(r'^date-released: "\d{4}-\d{2}-\d{2}"$', text, flags=re.MULTILINE)


def test_the_changelog_has_unreleased_and_the_current_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text
    assert re.search(
        rf"^## \[{re.escape(blackjack_env.__version__)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", text, flags=re.MULTILINE
    )


def test_ci_builds_the_docs_strictly_on_the_docs_extra_alone() -> None:
    """As a user who installs only the docs extra builds it (no torch, SB3 or Ray: conf.py mocks them)."""
    ci = (ROOT / ".ci" / "run").read_text()
    installs = [line for line in ci.splitlines() if line.startswith(".venv-docs/bin/python -m pip install")]
    assert len(installs) == 1 and installs[0].endswith(' -e ".[docs]"')  # the docs extra, nothing beside it
    assert ".venv-docs/bin/python -m sphinx -W --keep-going -n -q docs docs/_build/html" in ci
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "docs/_build/" in ignored and "docs/generated/" in ignored
