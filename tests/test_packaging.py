"""The installed project puts one top-level name on sys.path, so it never shadows (or is shadowed by)
another distribution's ``evaluate``, ``train`` or ``agents`` (Hugging Face's ``evaluate`` is common)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project built as a wheel, as `pip install .` would install it."""
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    # setuptools' warnings (a folder it would leave out of the wheel, a bad license field) are a
    # packaging mistake: a user's pip install would print them too
    assert "would be ignored" not in done.stdout + done.stderr
    assert "BuildBackendWarning" not in done.stdout + done.stderr
    (built,) = out.glob("blackjack_env-*.whl")
    return built


def test_the_wheel_ships_the_license_and_the_one_version(wheel: Path) -> None:
    """LICENSE (MIT, as the metadata says) is in the wheel; the version is blackjack_env.__version__."""
    import blackjack_env

    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    (license_file,) = [name for name in names if name.endswith(".dist-info/licenses/LICENSE")]
    assert archive.read(license_file).decode().startswith("MIT License")
    assert wheel.name.startswith(f"blackjack_env-{blackjack_env.__version__}-")
    (metadata,) = [name for name in names if name.endswith(".dist-info/METADATA")]
    assert "License-Expression: MIT" in archive.read(metadata).decode()


def test_the_wheel_ships_every_presets_solution(wheel: Path) -> None:
    """The presets' solutions travel with the package (a preset's first solve compiles no solver)."""
    from blackjack_env.rules import PRESETS

    names = zipfile.ZipFile(wheel).namelist()
    shipped = {Path(name).stem for name in names if name.startswith("blackjack_env/solver/bundled/")}
    assert shipped == set(PRESETS)


def test_the_wheel_has_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top_level == {"blackjack_env"}
    for subpackage in ("agents", "train", "evaluate"):
        assert f"blackjack_env/{subpackage}/__init__.py" in names


def test_blackjack_evaluate_runs_beside_another_evaluate_package(wheel: Path, tmp_path: Path) -> None:
    """A stub distribution whose top-level package is ``evaluate`` (and fails on import, as a foreign
    one would for our modules) sits in the same site directory as the installed project."""
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    stub = site / "evaluate"
    stub.mkdir()
    (stub / "__init__.py").write_text("raise ImportError('the other evaluate package was imported')\n")
    info = site / "evaluate-0.4.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evaluate\nVersion: 0.4.0\n")
    (info / "top_level.txt").write_text("evaluate\n")
    # The site directory comes first on the path, so its blackjack_env (the wheel's), not the
    # checkout's editable one, is the one that runs; run from a folder with no code in it.
    env = {**os.environ, "PYTHONPATH": str(site)}
    script = site / "bin" / "blackjack-evaluate"
    assert script.exists()
    done = subprocess.run(
        [sys.executable, str(script), "--policy", "basic", "--rounds", "2000", "--json", "--no-progress"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rounds"] == 2000
    where = subprocess.run(
        [sys.executable, "-c", "import evaluate, sys"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert "the other evaluate package was imported" in where.stderr  # the stub is really on the path


def test_the_wheel_ships_the_reports_templates_and_renders_from_them(wheel: Path, tmp_path: Path) -> None:
    """report.md and report.html are rendered from template files (blackjack_env/evaluate/report/templates):
    the wheel holds every one of them, and the installed package renders both documents from its own copy."""
    names = zipfile.ZipFile(wheel).namelist()
    templates = ROOT / "evaluate" / "report" / "templates"
    for path in templates.rglob("*.j2"):
        assert f"blackjack_env/evaluate/report/templates/{path.relative_to(templates).as_posix()}" in names
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    code = (
        "from blackjack_env import Rules\n"
        "from blackjack_env.simulate import OUTCOMES\n"
        "from blackjack_env.evaluate.report import Estimate, Report, documents\n"
        "ev = {'policy': Estimate.of(-0.01, 0.001), 'basic': Estimate.of(-0.005, 0.001)}\n"
        "rates = {who: dict.fromkeys(OUTCOMES, 0.125) for who in ('policy', 'basic')}\n"
        "report = Report('agent', Rules(), 1000, 0, False, ev, Estimate.of(-0.005, 0.0005), 1000, rates, None)\n"
        "print(documents.TEMPLATES)\n"
        "for markup in ('markdown', 'html'):\n"
        "    print(documents.render(report, markup, img=lambda name: name))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(str(site))  # the wheel's templates, not the checkout's
    assert "## Outcome rates" in done.stdout and "<h2>Outcome rates</h2>" in done.stdout
