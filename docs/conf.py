"""Sphinx configuration of the blackjack-env documentation (built with ``python -m sphinx -W --keep-going -n docs
docs/_build/html``: every warning, broken reference or docstring that fails to render is an error).

The environment cards, the rules page and the command-line reference are generated from the code at
build time into ``docs/generated/`` by the local extension ``docs/_ext/blackjack_docs``; the API
reference is autodoc over each public module's ``__all__``. Nothing is downloaded (no intersphinx):
references to other projects' names are ignored by module (``nitpick_ignore_regex``), the package's
own must resolve.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import blackjack_env

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "blackjack-env"
author = "The blackjack-env developers"
copyright = "2026, The blackjack-env developers"
release = version = blackjack_env.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinxarg.ext",
    "sphinx_copybutton",
    "blackjack_docs",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "_ext"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

nitpicky = True
# Other projects' names (no intersphinx: the build stays offline); every blackjack_env name must resolve.
_EXTERNAL_MODULES = (
    "builtins|typing|typing_extensions|collections|pathlib|argparse|dataclasses|enum|io|os|json|concurrent|"
    "threading|contextlib|types|numbers|numpy|np|numba|gymnasium|gym|pettingzoo|torch|torchrl|stable_baselines3|"
    "sb3_contrib|matplotlib|PIL|ray|jinja2|tqdm"
)
_BUILTINS = (
    "int|float|complex|str|bool|bytes|dict|list|tuple|set|frozenset|object|type|None|Ellipsis|callable|slice|range|"
    "Exception|ValueError|TypeError|KeyError|RuntimeError|OSError|FileNotFoundError|UserWarning|KeyboardInterrupt|"
    "NotImplementedError|AttributeError|ImportError"
)
nitpick_ignore_regex = [
    (r"py:.*", rf"({_EXTERNAL_MODULES})(\..*)?"),
    (r"py:.*", rf"({_BUILTINS})"),
    (r"py:class", r"Figure"),  # matplotlib's, imported for type checking only (evaluate/report/figures.py)
]

# The docs extra installs no deep-learning stack: where one of these is missing, autodoc imports the
# modules that need it against a stand-in (an install with them documents the real bases).
autodoc_mock_imports = [
    name
    for name in ("torch", "stable_baselines3", "sb3_contrib", "ray", "torchrl")
    if importlib.util.find_spec(name) is None
]

autodoc_typehints = "description"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}
autodoc_inherit_docstrings = False  # Gymnasium's own docstrings of reset/step/render are not ours to check
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # Attributes sections as fields, not as attribute entries that autodoc repeats

html_theme = "furo"
html_title = f"blackjack-env {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]

# Options, JSON and code in prose stay as typed: no "--" to en dash, no curly quotes.
smartquotes = False
