"""Sphinx extension of the blackjack-env site: the pages the code already knows, generated at build time.

On ``builder-inited`` it writes into ``docs/generated/`` (not in git; rewritten files only when
their text changed):

* ``envs/<env>.rst`` and ``envs/<env>.png``: the environment cards (:mod:`.cards`);
* ``rules.rst``: every ``Rules`` field and preset (:mod:`.rules_page`);
* ``cli.rst``: every command and subcommand, through sphinx-argparse (:mod:`.cli_page`);
* ``results/<table>.inc``: the results pages' tables, from ``benchmarks/results/`` (:mod:`.results_page`).

It also renders the envs' docstrings' Gymnasium sections in the API reference
(``autodoc-process-docstring``), and resolves a reference to a name by where its object is
documented (``missing-reference``): ``blackjack_env.Rules`` and a type hint's
``blackjack_env.solver.solution.Solution`` find ``blackjack_env.rules.Rules`` and
``blackjack_env.solver.Solution``. A name whose object is documented nowhere still fails the
strict build.
"""

from __future__ import annotations

import importlib
import inspect
import time
from pathlib import Path
from typing import Any

from .sections import rest_lines

GENERATED = "generated"
_MISSING = object()


def generate(app: Any) -> None:
    """Write every generated page (and picture) before Sphinx looks for its sources."""
    from sphinx.util import logging

    from .cards import write_cards
    from .cli_page import write_cli
    from .results_page import write_results
    from .rules_page import write_rules

    logger = logging.getLogger(__name__)
    start = time.perf_counter()
    folder = Path(app.srcdir) / GENERATED
    folder.mkdir(exist_ok=True)
    before = {p for p in folder.rglob("*") if p.is_file()}
    cards = write_cards(folder / "envs")
    write_rules(folder)
    write_cli(folder)
    kept = {folder / "rules.rst", folder / "cli.rst", *write_results(folder / "results")}
    for card in cards:
        kept |= {folder / "envs" / f"{card.slug}.rst", folder / "envs" / f"{card.slug}.png"}
    for stale in before - kept:
        stale.unlink()
    app._bjdocs_names = None
    logger.info(f"blackjack_docs: generated pages in {time.perf_counter() - start:.1f} s")


def process_docstring(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Gymnasium sections as rubrics and tables; a constant without a comment of its own shows no
    docstring (not its type's: a dict's is Python's ``dict`` help)."""
    if what in ("data", "attribute") and "\n".join(lines).strip() == inspect.cleandoc(type(obj).__doc__ or ""):
        lines[:] = []
        return
    lines[:] = rest_lines(lines)


def lookup(target: str, module: str | None = None, cls: str | None = None) -> Any:
    """The object a dotted name means, read as written, in ``module`` or in ``module.cls``."""
    target = target.lstrip("~.")
    candidates = [target]
    if module:
        candidates += [f"{module}.{cls}.{target}"] if cls else []
        candidates.append(f"{module}.{target}")
    for name in candidates:
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except Exception:  # not a module (or one that cannot be imported here)
                continue
            try:
                for attr in parts[i:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                break
            return obj
    return _MISSING


def plain(obj: Any) -> bool:
    """A value any number of names could hold (identity says nothing about where it is documented)."""
    return obj is None or isinstance(obj, (str, int, float, bool, bytes))


def documented_names(app: Any, env: Any) -> dict[int, str]:
    """id(object) -> the name it is documented under, for every documented Python object that is
    not a plain value."""
    if getattr(app, "_bjdocs_names", None) is None:
        names: dict[int, str] = {}
        for name in sorted(env.get_domain("py").objects, key=len):
            obj = lookup(name)
            if obj is not _MISSING and not plain(obj):
                names.setdefault(id(obj), name)
        app._bjdocs_names = names
    return app._bjdocs_names


def documented_as(env: Any, target: str, obj: Any) -> str | None:
    """The one documented name whose last part is ``target``'s (and, for a plain value, whose
    value equals ``obj``), or None."""
    last = target.lstrip("~.").rsplit(".", 1)[-1]
    found = [
        name
        for name in env.get_domain("py").objects
        if name.rsplit(".", 1)[-1] == last and (obj is _MISSING or lookup(name) == obj)
    ]
    return found[0] if len(found) == 1 else None


def resolve_alias(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """A Python reference Sphinx could not resolve, resolved to where its object is documented:
    a re-export (``blackjack_env.Rules``), a type hint's defining module
    (``blackjack_env.solver.solution.Solution``), a name the referring module imports. Another
    project's object, imported by name in the referring module, is shown as plain text (as
    ``nitpick_ignore_regex`` does for names written in full). Anything else stays unresolved."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    obj = lookup(target, node.get("py:module"), node.get("py:class"))
    name = None
    if obj is _MISSING:
        if "." not in target.lstrip("~."):
            name = documented_as(env, target, _MISSING)  # a bare name, as a type hint left unevaluated
    elif plain(obj):
        name = documented_as(env, target, obj)
    else:
        name = documented_names(app, env).get(id(obj))
        module = getattr(obj, "__module__", None) or getattr(obj, "__name__", None)
        if name is None and isinstance(module, str) and module.split(".")[0] != "blackjack_env":
            return contnode
    if name is None:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", name, node, contnode)


def prose_attributes(app: Any) -> None:
    """Napoleon reads an attribute's, a constant's or a property's docstring as Google's inline
    ``type: description``; this package's are prose with colons (``#: Rounds per chunk: the unit of
    seeding``), so napoleon is kept off them (their types come from the annotations)."""
    from sphinx.ext import napoleon

    for listener in list(app.events.listeners.get("autodoc-process-docstring", [])):
        if listener.handler is napoleon._process_docstring:
            app.disconnect(listener.id)

            def process(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
                if what not in ("attribute", "data", "property"):
                    napoleon._process_docstring(app, what, name, obj, options, lines)

            app.connect("autodoc-process-docstring", process, priority=listener.priority)


def public_data(module_name: str) -> list[str]:
    """The names in a module's ``__all__`` that ``automodule`` leaves out: plain data (not a class,
    function or module) without a ``#:`` comment in that module's source (autodoc documents module
    data only with one, and a re-exported constant's comment is in another module)."""
    from sphinx.pycode import ModuleAnalyzer

    module = importlib.import_module(module_name)
    commented = {name for namespace, name in ModuleAnalyzer.for_module(module_name).find_attr_docs() if not namespace}
    return [
        name
        for name in getattr(module, "__all__", ())
        if name not in commented
        and not (inspect.isclass(obj := getattr(module, name)) or callable(obj) or inspect.ismodule(obj))
    ]


def public_module_rest(module_name: str) -> list[str]:
    """``automodule`` of a module's ``__all__``, then ``autodata`` of the constants it leaves out and
    an entry for each name the module loads lazily."""
    lines = [f".. automodule:: {module_name}", ""]
    for name in public_data(module_name):
        lines += [f".. autodata:: {module_name}.{name}", ""]
    module = importlib.import_module(module_name)
    for name in lazy_names(module):
        kind = "autoclass" if inspect.isclass(getattr(module, name)) else "autofunction"
        lines += [f".. {kind}:: {module_name}.{name}", ""]
    return lines


def lazy_names(module: Any) -> list[str]:
    """The names in a module's ``__all__`` that its ``__getattr__`` loads on first use (so that
    importing the module stays light): ``automodule`` sees only what the module has loaded."""
    return [name for name in getattr(module, "__all__", ()) if name not in vars(module)]


LONGEST_VALUE = 80


def trim_long_values(app: Any, doctree: Any) -> None:
    """A constant's value is shown on its signature line only when short: a table of meanings is
    read on the pages that show it (the env cards), not as one long repr."""
    from sphinx import addnodes

    for desc in doctree.findall(addnodes.desc):
        if desc.get("domain") != "py" or desc.get("objtype") not in ("data", "attribute"):
            continue
        for signature in desc.findall(addnodes.desc_signature):
            for annotation in list(signature.findall(addnodes.desc_annotation)):
                text = annotation.astext().strip()
                if text.startswith("=") and len(text) > LONGEST_VALUE:
                    annotation.parent.remove(annotation)


def fields_listed_once(app: Any, domain: str, objtype: str, contentnode: Any) -> None:
    """A dataclass whose docstring lists its fields (``Attributes:``) shows them once: autodoc's
    typehints would list the constructor's parameters, the same names, again (runs after them)."""
    from docutils import nodes

    if domain != "py" or objtype != "class":
        return
    for field_list in list(contentnode.findall(nodes.field_list)):
        fields = [(field[0].astext().split(), field) for field in field_list.children if isinstance(field, nodes.field)]
        variables = {words[1] for words, _ in fields if len(words) == 2 and words[0] == "ivar"}
        params = [(words, field) for words, field in fields if len(words) == 2 and words[0] in ("param", "type")]
        if variables and {words[1] for words, _ in params} <= variables:
            for _, field in params:
                field_list.remove(field)


def public_module_directive() -> type:
    from sphinx.util.docutils import SphinxDirective

    class PublicModule(SphinxDirective):
        """``.. public-module:: NAME``: every name of the module's ``__all__``, through autodoc."""

        required_arguments = 1

        def run(self) -> list[Any]:
            from sphinx.ext.autodoc.mock import mock

            with mock(self.config.autodoc_mock_imports):  # as autodoc imports it
                rest = public_module_rest(self.arguments[0])
            return self.parse_text_to_nodes("\n".join(rest))

    return PublicModule


#: A class name two packages use, and its class in each: a reference by the short name (a type hint)
#: goes to the one of the package it is written in.
SHARED_NAMES = {
    "Learner": {
        "blackjack_env.train": "blackjack_env.train.learner.Learner",
        "blackjack_env.evaluate": "blackjack_env.evaluate.report.learner.Learner",
    }
}


def qualify_shared_names(app: Any, doctree: Any) -> None:
    """A short ``Learner`` in a signature or a type field means the class of its own package."""
    from sphinx import addnodes

    for node in doctree.findall(addnodes.pending_xref):
        targets = SHARED_NAMES.get(node.get("reftarget", ""))
        module = node.get("py:module") or ""
        for package, target in (targets or {}).items():
            if module.startswith(package):
                node["reftarget"] = target
                node["refspecific"] = False


def setup(app: Any) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.autodoc")
    app.add_directive("public-module", public_module_directive())
    app.setup_extension("sphinx.ext.napoleon")
    prose_attributes(app)
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", process_docstring)
    app.connect("missing-reference", resolve_alias)
    app.connect("doctree-read", trim_long_values)
    app.connect("doctree-read", qualify_shared_names)
    app.connect("object-description-transform", fields_listed_once, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
