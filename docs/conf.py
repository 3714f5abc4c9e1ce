"""Sphinx configuration of the blackjack-env documentation (built with ``python -m sphinx -W --keep-going -n docs
docs/_build/html``: every warning, broken reference or docstring that fails to render is an error)."""

from __future__ import annotations

import blackjack_env

project = "blackjack-env"
author = "The blackjack-env developers"
copyright = "2026, The blackjack-env developers"  # noqa: A001 (Sphinx's name)
release = version = blackjack_env.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinxarg.ext",
    "sphinx_copybutton",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

nitpicky = True
autodoc_typehints = "description"
autodoc_member_order = "bysource"

html_theme = "furo"
html_title = f"blackjack-env {release}"
