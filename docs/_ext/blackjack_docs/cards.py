"""Environment cards: what each env is, generated from the registry, the spaces and the code.

A card's prose sections come from the env's class docstring (written in Gymnasium's sections);
its tables come from the code: the action ids and names from :class:`blackjack_env.Action` (and the
shoe env's bets), the observation components from ``observation_names`` and the spaces' ``nvec``
for every ``count_obs``, their meanings and the info keys from the dicts beside the code that
builds them (``OBS_MEANINGS``, ``INFO_KEYS`` ...), the arguments from the signatures and the
registry. :func:`build_cards` returns the data (tests/test_docs.py holds it to live envs);
:func:`card_rest` writes a card's page and :func:`draw_picture` its picture of the table.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import blackjack_env
from blackjack_env import env as single
from blackjack_env import shoe_env, vector
from blackjack_env.rules import Rules

from .sections import gym_sections, list_table, to_rest

COUNT_MODES = tuple(single.COUNT_MODES)  # "none", "composition", "hilo"
#: The sections of a card, in Gymnasium's order (the docstring's prose under each heading).
SECTIONS = (
    "Description",
    "Action Space",
    "Observation Space",
    "Starting State",
    "Rewards",
    "Episode End",
    "Information",
    "Arguments",
    "Version History",
)
WHEN = {"always": "after ``reset`` and every step", "settled": "on the step that settles a round"}


@dataclass
class ActionRow:
    id: int
    name: str
    meaning: str


@dataclass
class ObsRow:
    """One observation component: its index and range in every count mode that has it."""

    name: str
    meaning: str
    index: dict[str, int] = field(default_factory=dict)
    values: dict[str, tuple[int, int]] = field(default_factory=dict)
    group: str = ""  # rows of one group are shown as one line (another seat's ten card values)


@dataclass
class Argument:
    name: str
    default: Any  # inspect.Parameter.empty: required
    annotation: str
    registered: Any = inspect.Parameter.empty  # the registry's kwargs value, where it sets one


@dataclass
class Game:
    """One game of a card (a card of several, such as the vector envs', shows each)."""

    label: str
    make: str  # the line that makes it
    action_space: str
    observation_space: dict[str, str]  # count mode -> the space
    default_mode: str  # the count_obs it is made with by default
    actions: list[ActionRow]
    observations: list[ObsRow]
    arguments: list[Argument]
    info_keys: dict[str, tuple[str, str]]


@dataclass
class EnvCard:
    slug: str  # the page's file name
    title: str
    cls: type  # the class whose docstring gives the prose
    version: str
    summary: str
    sections: dict[str, str]
    games: list[Game]
    header: list[tuple[str, str]]  # the header table's extra rows (reST)
    picture: Callable[[], tuple[np.ndarray, str]]  # the frame and its caption

    @property
    def module(self) -> str:
        return self.cls.__module__


# ----------------------------------------------------------------------------- the data
def action_rows(names: list[str], bets: tuple[float, ...] = ()) -> list[ActionRow]:
    """Every action id with its name (as the env names it) and meaning."""
    rows = [ActionRow(int(a), names[int(a)], single.ACTION_MEANINGS[a]) for a in single.Action]
    for i, bet in enumerate(bets):
        a = len(single.Action) + i
        rows.append(ActionRow(a, names[a], shoe_env.BET_MEANING.format(i=i, bet=bet)))
    return rows


def merge_observations(
    named: dict[str, tuple[tuple[str, ...], np.ndarray]], meaning: Callable[[str], str], group: Callable[[str], str]
) -> list[ObsRow]:
    """One row per component over the count modes ({mode: (names, nvec)}), each component placed
    after the one it follows in the first mode that has it."""
    rows: dict[str, ObsRow] = {}
    order: list[str] = []
    for mode, (names, nvec) in named.items():
        assert len(names) == len(nvec), f"{mode}: {len(names)} names for {len(nvec)} components"
        previous = None
        for i, name in enumerate(names):
            if name not in rows:
                rows[name] = ObsRow(name, meaning(name), group=group(name))
                order.insert(order.index(previous) + 1 if previous else 0, name)
            rows[name].index[mode] = i
            rows[name].values[mode] = (0, int(nvec[i]) - 1)
            previous = name
    return [rows[name] for name in order]


def arguments(function: Callable[..., Any], registered: dict[str, Any] | None = None) -> list[Argument]:
    """Every keyword argument of a constructor with its default (and the registry's value)."""
    registered = registered or {}
    out = []
    for p in inspect.signature(function).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        annotation = p.annotation if isinstance(p.annotation, str) else inspect.formatannotation(p.annotation)
        out.append(Argument(p.name, p.default, annotation, registered.get(p.name, inspect.Parameter.empty)))
    return out


def obs_meaning(extra: dict[str, str] | None = None) -> Callable[[str], str]:
    meanings = {**single.OBS_MEANINGS, **(extra or {})}

    def meaning(name: str) -> str:
        seat = re.fullmatch(r"seat_(\d+)_(\w+)", name)
        if seat:
            from blackjack_env.multiagent import SEAT_OBS_MEANING

            return SEAT_OBS_MEANING.format(seat=seat[1], value=seat[2])
        return meanings[name]

    return meaning


def value_group(name: str) -> str:
    """The group of a component that is one of ten card values' (``unseen_A`` .. ``unseen_10``, and
    another seat's ``seat_1_A`` ..): its name without the value; else ""."""
    match = re.fullmatch(r"(unseen|seat_\d+)_(A|[2-9]|10)", name)
    return match[1] if match else ""


def gym_game(env_id: str, label: str, count_modes: tuple[str, ...] = COUNT_MODES) -> Game:
    """A registered single env's game, read from live instances (one per count mode)."""
    spec = gym.spec(env_id)
    envs = {mode: gym.make(env_id, count_obs=mode) for mode in count_modes}
    first = envs[count_modes[0]]
    bets = tuple(getattr(first, "bets", ()))
    extra = shoe_env.SHOE_OBS_MEANINGS if bets else None
    observations = merge_observations(
        {mode: (env.observation_names, env.observation_space.nvec) for mode, env in envs.items()},
        obs_meaning(extra),
        value_group,
    )
    return Game(
        label=label,
        make=f'gymnasium.make("{env_id}")',
        action_space=space_text(first.action_space),
        observation_space={mode: space_text(env.observation_space) for mode, env in envs.items()},
        default_mode=gym.make(env_id).unwrapped.count_obs,
        actions=action_rows(first._action_names(), bets),
        observations=observations,
        arguments=arguments(type(first).__init__, dict(spec.kwargs)),
        info_keys=dict(shoe_env.SHOE_INFO_KEYS if bets else single.INFO_KEYS),
    )


def vector_game(env_id: str, label: str) -> Game:
    """The vector env of a registered id (``vectorization_mode="vector_entry_point"``)."""
    spec = gym.spec(env_id)
    envs = {
        mode: gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", count_obs=mode)
        for mode in COUNT_MODES
    }
    first = envs["none"]
    cls = type(first)
    single_env = gym.make(env_id)  # the same game, one table: its action names and bets
    bets = tuple(getattr(single_env, "bets", ()))
    extra = shoe_env.SHOE_OBS_MEANINGS if bets else None
    observations = merge_observations(
        {mode: (env.observation_names, env.single_observation_space.nvec) for mode, env in envs.items()},
        obs_meaning(extra),
        value_group,
    )
    return Game(
        label=label,
        make=f'gymnasium.make_vec("{env_id}", num_envs=N, vectorization_mode="vector_entry_point")',
        action_space=batch_space_text(first.action_space, first.single_action_space),
        observation_space={
            mode: batch_space_text(env.observation_space, env.single_observation_space) for mode, env in envs.items()
        },
        default_mode=gym.make_vec(env_id, num_envs=1, vectorization_mode="vector_entry_point").count_obs,
        actions=action_rows(single_env._action_names(), bets),
        observations=observations,
        arguments=arguments(cls.__init__, dict(spec.kwargs)),
        info_keys=dict(vector.VECTOR_INFO_KEYS),
    )


def table_game(game: str, seats: int = 3) -> Game:
    """The PettingZoo table's game (``"round"`` or ``"shoe"``) at a table of ``seats``."""
    from blackjack_env import multiagent

    envs = {mode: multiagent.raw_env(seats=seats, game=game, count_obs=mode) for mode in COUNT_MODES}
    first = envs["none"]
    agent = first.possible_agents[0]
    bets = first.bets if game == "shoe" else ()
    extra = shoe_env.SHOE_OBS_MEANINGS if game == "shoe" else None
    observations = merge_observations(
        {
            mode: (env.observation_names_of(agent), env.observation_space(agent)["observation"].nvec)
            for mode, env in envs.items()
        },
        obs_meaning(extra),
        value_group,
    )
    return Game(
        label=f'game="{game}"',
        make=f'blackjack_env.multiagent.env(seats={seats}, game="{game}")',
        action_space=space_text(first.action_space(agent)),
        observation_space={mode: space_text(env.observation_space(agent)) for mode, env in envs.items()},
        default_mode=multiagent.raw_env(seats=seats, game=game).count_obs,
        actions=action_rows(first._action_names, bets),
        observations=observations,
        arguments=arguments(multiagent.BlackjackTableEnv.__init__),
        info_keys=dict(multiagent.TABLE_INFO_KEYS),
    )


def space_text(space: gym.Space) -> str:
    """A space as its repr says it, on one line."""
    return " ".join(str(space).split())


def batch_space_text(space: gym.Space, single_space: gym.Space) -> str:
    """A vector env's space for any N: Gymnasium batches ``MultiDiscrete(nvec)`` observations into a
    ``Box`` of shape (N, k) from 0 to nvec - 1, and ``Discrete(n)`` actions into ``MultiDiscrete``."""
    if isinstance(space, gym.spaces.MultiDiscrete) and isinstance(single_space, gym.spaces.Discrete):
        return f"MultiDiscrete([{single_space.n}] * N)"
    if isinstance(space, gym.spaces.Box) and isinstance(single_space, gym.spaces.MultiDiscrete):
        assert (space.high == single_space.nvec - 1).all() and (space.low == 0).all()
        return f"Box(0, nvec - 1, (N, {len(single_space.nvec)}), {space.dtype}), nvec = {single_space.nvec.tolist()}"
    raise TypeError(f"no text for a batch {space} of {single_space}")


def _prose(cls: type) -> tuple[str, dict[str, str]]:
    summary, sections = gym_sections(cls.__doc__)
    return summary.splitlines()[0] if summary else "", sections


def build_cards() -> list[EnvCard]:
    """Every env's card, in the site's order."""
    from blackjack_env import multiagent

    cards = []
    for env_id, cls, slug, picture in (
        (blackjack_env.ENV_ID, single.BlackjackEnv, "blackjack", picture_round),
        (blackjack_env.SHOE_ENV_ID, shoe_env.BlackjackShoeEnv, "blackjack-shoe", picture_shoe),
    ):
        spec = gym.spec(env_id)
        summary, sections = _prose(cls)
        game = gym_game(env_id, env_id)
        cards.append(
            EnvCard(
                slug=slug,
                title=f"{spec.name}-v{spec.version}",
                cls=cls,
                version=f"v{spec.version}",
                summary=summary,
                sections=sections,
                games=[game],
                header=[
                    ("Import", f"``import blackjack_env``, then ``{game.make}``"),
                    ("Entry point", f":class:`{cls.__module__}.{cls.__qualname__}`"),
                    ("Render modes", ", ".join(f'``"{m}"``' for m in cls.metadata["render_modes"])),
                ],
                picture=picture,
            )
        )
    summary, sections = _prose(vector.BlackjackVectorEnv)
    games = [
        vector_game(env_id, f"{gym.spec(env_id).name}-v{gym.spec(env_id).version}")
        for env_id in (blackjack_env.ENV_ID, blackjack_env.SHOE_ENV_ID)
    ]
    cards.append(
        EnvCard(
            slug="vector",
            title="Vector envs",
            cls=vector.BlackjackVectorEnv,
            version=f"v{gym.spec(blackjack_env.ENV_ID).version}",
            summary=summary,
            sections=sections,
            games=games,
            header=[
                ("Import", f"``import blackjack_env``, then ``{games[0].make}``"),
                (
                    "Vector entry points",
                    ", ".join(f":class:`{c.__module__}.{c.__qualname__}`" for c in _vector_classes()),
                ),
                ("Autoreset", "Gymnasium's next-step autoreset"),
            ],
            picture=picture_vector,
        )
    )
    summary, sections = _prose(multiagent.BlackjackTableEnv)
    seats = inspect.signature(multiagent.BlackjackTableEnv.__init__).parameters["seats"].default
    name = multiagent.BlackjackTableEnv.metadata["name"]
    agents = ", ".join(f"``seat_{s}``" for s in range(seats))
    cards.append(
        EnvCard(
            slug="pettingzoo-table",
            title="PettingZoo table",
            cls=multiagent.BlackjackTableEnv,
            version=name.rsplit("_", 1)[-1],
            summary=summary,
            sections=sections,
            games=[table_game("round", seats), table_game("shoe", seats)],
            header=[
                ("Import", "``from blackjack_env.multiagent import env``, then ``env(seats=3)``"),
                ("Agents", f"1-7 seats; the default {seats}: {agents}"),
                ("API", "AEC (``is_parallelizable``: False)"),
                ("Name", f"``{name}``"),
                (
                    "Render modes",
                    ", ".join(f'``"{m}"``' for m in multiagent.BlackjackTableEnv.metadata["render_modes"]),
                ),
            ],
            picture=picture_table,
        )
    )
    return cards


def _vector_classes() -> tuple[type, ...]:
    return (vector.BlackjackVectorEnv, vector.BlackjackShoeVectorEnv)


# ----------------------------------------------------------------------------- pictures
PICTURE_SEED = 7


def _simple_choice(obs: np.ndarray, mask: np.ndarray) -> int:
    """A fixed little policy for the pictures: bet the second size, decline insurance, hit below
    12, else stand."""
    action = single.Action
    if len(mask) > len(action) and mask[len(action)]:
        return len(action) + 1  # a bet is due: the second bet size
    if mask[action.NO_INSURANCE]:
        return int(action.NO_INSURANCE)
    if mask[action.HIT] and obs[1] < 12:
        return int(action.HIT)
    return int(action.STAND)


def picture_round() -> tuple[np.ndarray, str]:
    """Blackjack-v0 mid-round: the first seed from ``PICTURE_SEED`` whose first decision is a hard
    total below 12 (not a pair), after one HIT."""
    env = gym.make(blackjack_env.ENV_ID, render_mode="rgb_array")
    for seed in range(PICTURE_SEED, PICTURE_SEED + 1000):
        obs, _ = env.reset(seed=seed)
        if obs[0] == single.Phase.PLAY and obs[1] < 12 and not obs[2] and not obs[3]:
            env.step(single.Action.HIT)
            return env.render(), f'``render_mode="rgb_array"``: the round after ``reset(seed={seed})`` and a HIT.'
    raise RuntimeError("no seed gave a picture")


def picture_shoe() -> tuple[np.ndarray, str]:
    """BlackjackShoe-v0 at a table of 3, the agent in seat 1: bets of 2 units and a fixed little
    policy until the agent holds 12 or more in play."""
    env = gym.make(blackjack_env.SHOE_ENV_ID, seats=3, seat=1, render_mode="rgb_array")
    obs, info = env.reset(seed=PICTURE_SEED)
    rounds = 0
    while not (obs[0] == single.Phase.PLAY and info["bet"] and obs[1] >= 12):
        obs, _, done, _, info = env.step(_simple_choice(obs, info["action_mask"]))
        rounds += "hands" in info
        if done:
            raise RuntimeError("the shoe ended before a picture")
    return env.render(), (
        f'``render_mode="rgb_array"`` at a table of 3, the agent in seat 1 betting 2 units (``seats=3, seat=1``): '
        f"round {rounds + 1} of the shoe after ``reset(seed={PICTURE_SEED})``, the agent's hand in play."
    )


def picture_vector() -> tuple[np.ndarray, str]:
    """Tables 0-2 of a vector env after a seeded reset, drawn by the single env seeded alike."""
    frames = []
    for i in range(3):
        env = gym.make(blackjack_env.ENV_ID, render_mode="rgb_array")
        env.reset(seed=PICTURE_SEED + i)
        frames.append(env.render())
    gap = np.full((frames[0].shape[0], 12, 3), 255, np.uint8)
    return np.concatenate([frames[0], gap, frames[1], gap, frames[2]], axis=1), (
        f"Tables 0-2 of ``make_vec(..., num_envs=3)`` after ``reset(seed={PICTURE_SEED})``. The vector env does not "
        f"render: each is drawn by the single env seeded with {PICTURE_SEED} + i, which deals what table i deals."
    )


def picture_table() -> tuple[np.ndarray, str]:
    """The PettingZoo round table of 3 after a seeded reset, seat_0 played (the fixed policy)."""
    from blackjack_env.multiagent import env as table_env

    table = table_env(seats=3, render_mode="rgb_array")
    table.reset(seed=PICTURE_SEED)
    while table.agents and table.agent_selection == "seat_0":
        obs = table.observe("seat_0")
        table.step(_simple_choice(obs["observation"], obs["action_mask"].astype(bool)))
    return table.render(), (
        f'``render_mode="rgb_array"``: the round table of 3 seats after ``reset(seed={PICTURE_SEED})``, seat_0 '
        "played, seat_1's decision due."
    )


def draw_picture(card: EnvCard, folder: Path) -> tuple[Path, str]:
    """Write the card's picture as PNG (only when it changed, so Sphinx keeps its build); returns
    its path and caption."""
    import io

    from PIL import Image

    frame, caption = card.picture()
    data = io.BytesIO()
    Image.fromarray(np.asarray(frame, np.uint8)).save(data, format="PNG", optimize=True)
    path = folder / f"{card.slug}.png"
    if not path.exists() or path.read_bytes() != data.getvalue():
        path.write_bytes(data.getvalue())
    return path, caption


# ----------------------------------------------------------------------------- the page
def literal(value: Any) -> str:
    return f"``{value!r}``" if value is not inspect.Parameter.empty else "(required)"


def values_text(row: ObsRow) -> str:
    ranges = sorted(set(row.values.values()))
    return "; ".join(f"{lo}-{hi}" if lo != hi else f"{lo}" for lo, hi in ranges)


def index_text(row: ObsRow, modes: tuple[str, ...]) -> str:
    indices = [row.index.get(mode) for mode in modes]
    if all(i is not None for i in indices) and len(set(indices)) == 1:
        return str(indices[0])
    return ", ".join(f"{i} ({mode})" for mode, i in zip(modes, indices, strict=True) if i is not None)


def observation_rows(game: Game) -> list[list[str]]:
    """The observation table's rows; a group of ten card values' components on one line."""
    modes = COUNT_MODES
    rows: list[list[str]] = []
    obs = game.observations
    i = 0
    while i < len(obs):
        row = obs[i]
        members = [row]
        while row.group and i + len(members) < len(obs) and obs[i + len(members)].group == row.group:
            members.append(obs[i + len(members)])
        first, last = members[0], members[-1]
        if len(members) == 1:
            name, index, values = f"``{row.name}``", index_text(row, modes), values_text(row)
            meaning = row.meaning
        else:
            name = f"``{first.name}`` ... ``{last.name}``"
            index = index_range(first, last, modes)
            by_range: dict[str, list[str]] = {}
            for member in members:
                by_range.setdefault(values_text(member), []).append(member.name.rsplit("_", 1)[1])
            common = max(by_range, key=lambda rng: len(by_range[rng]))
            values = "; ".join([common] + [f"{rng} ({', '.join(c)})" for rng, c in by_range.items() if rng != common])
            value = first.name.rsplit("_", 1)[1]
            meaning = first.meaning.replace(f"value {value}", "each value A-10", 1)
        rows.append([index, name, values, meaning])
        i += len(members)
    return rows


def index_range(first: ObsRow, last: ObsRow, modes: tuple[str, ...]) -> str:
    parts = [f"{first.index[m]}-{last.index[m]} ({m})" for m in modes if m in first.index]
    if len(parts) == len(modes) and len({(first.index[m], last.index[m]) for m in modes}) == 1:
        return f"{first.index[modes[0]]}-{last.index[modes[0]]}"
    return ", ".join(parts)


def card_rest(card: EnvCard, picture: str, caption: str) -> str:
    """The card's page (reST)."""
    lines = [
        f".. _env-{card.slug}:",
        "",
        card.title,
        "=" * len(card.title),
        "",
        f".. currentmodule:: {card.module}",
        "",
    ]
    lines += [card.summary, ""]
    header: list[list[str]] = []
    for game in card.games:
        suffix = f" ({game.label})" if len(card.games) > 1 else ""
        header.append([f"Action Space{suffix}", f"``{game.action_space}``"])
    for game in card.games:
        suffix = f" ({game.label})" if len(card.games) > 1 else ""
        default = game.default_mode
        header.append(
            [f"Observation Space{suffix}", f'``{game.observation_space[default]}`` (``count_obs="{default}"``)']
        )
    header += [[name, text] for name, text in card.header]
    header.append(["Version", f"{card.version} (blackjack-env {blackjack_env.__version__})"])
    lines += list_table(header, header_rows=0, stub_columns=1, widths=[24, 76], css_class="env-header")
    lines += [
        f".. figure:: {picture}",
        f"   :alt: {card.title}: the table as render_mode='rgb_array' draws it",
        "   :class: env-picture",
        "",
        f"   {caption}",
        "",
    ]
    for title in SECTIONS:
        lines += [title, "-" * len(title), ""]
        prose = card.sections.get(title, "")
        generated = GENERATED.get(title)
        if prose:
            lines += [to_rest(prose, drop_tables=title == "Observation Space"), ""]
        if title == "Action Space":
            lines += action_table(card.games)
        elif generated:
            for game in card.games:
                if len(card.games) > 1:
                    heading = f"``{game.label}``"
                    lines += [heading, "~" * len(heading), ""]
                lines += generated(game)
    missing = set(card.sections) - set(SECTIONS)
    if missing:
        raise ValueError(f"{card.cls.__qualname__}'s docstring has sections the cards do not show: {sorted(missing)}")
    return "\n".join(lines) + "\n"


def action_table(games: list[Game]) -> list[str]:
    """Every action id of the card's games in one table (an id some games lack says which have it)."""
    longest = max(games, key=lambda game: len(game.actions))
    rows = [["id", "name", "meaning"]]
    for action in longest.actions:
        having = [game for game in games if action in game.actions]
        assert all(action in game.actions for game in games if len(game.actions) > action.id)
        note = "" if len(having) == len(games) else f" ({', '.join(f'``{g.label}``' for g in having)})"
        rows.append([str(action.id), f"``{action.name}``", action.meaning + note])
    return list_table(rows, widths=[8, 22, 70])


def observation_table(game: Game) -> list[str]:
    rules = Rules()
    lines = [
        "Every component (``observation_names``), with its index for each ``count_obs`` (the env's default: "
        f'``"{game.default_mode}"``) and its values (``nvec - 1``; the counts\' for the default rules, '
        f"{rules.decks} decks):",
        "",
    ]
    rows = [["index", "name", "values", "meaning"], *observation_rows(game)]
    return lines + list_table(rows, widths=[16, 22, 12, 50])


def info_table(game: Game) -> list[str]:
    rows = [["key", "when", "meaning"]] + [
        [f"``{key}``", WHEN[when], meaning] for key, (when, meaning) in game.info_keys.items()
    ]
    return list_table(rows, widths=[18, 22, 60])


def argument_table(game: Game) -> list[str]:
    lines = [f"``{game.make}`` takes:", ""]
    rows = [["argument", "default", "type"]]
    for a in game.arguments:
        default = literal(a.default)
        if a.registered is not inspect.Parameter.empty:
            default += f" (registered: {literal(a.registered)})"
        rows.append([f"``{a.name}``", default, f"``{a.annotation}``"])
    return lines + list_table(rows, widths=[18, 30, 52])


GENERATED: dict[str, Callable[[Game], list[str]]] = {
    "Observation Space": observation_table,
    "Information": info_table,
    "Arguments": argument_table,
}


def write_cards(folder: Path) -> list[EnvCard]:
    """Every card's page and picture into ``folder``; returns the cards."""
    from .write import write_text

    folder.mkdir(parents=True, exist_ok=True)
    cards = build_cards()
    for card in cards:
        picture, caption = draw_picture(card, folder)
        write_text(folder / f"{card.slug}.rst", card_rest(card, picture.name, caption))
    return cards
