"""The package's import graph (read with ast from every module of autotune/, nothing imported):
tune does not import emit, race no sibling stage, module-level imports have no cycle, no import of
any kind runs back up between the package's rooms (its top-level modules and subpackages), and the
vocabulary on the ground floor imports nothing of the package but its errors (issue 56).

How imports count:
- tune -> emit is refused wherever the import is (module level, inside a function, or under
  ``if TYPE_CHECKING``): it is a layering rule (emit renders tune's document, tune never renders).
- For cycles only module-level imports count, without ``if TYPE_CHECKING`` blocks: those run
  when the module loads, so only they can leave a module half-initialised. A function-local
  import runs when the function is called, after every module has loaded; the code base uses
  them on purpose, to load heavy dependencies (numpy, matplotlib, skopt) only when needed.
- Between rooms (``autotune.X`` for a module ``X.py`` or a subpackage ``X/``) every import counts,
  function-local and ``TYPE_CHECKING`` ones too: a function-local import must not hide a layer
  reaching up (test_no_room_imports_a_room_above_it).
- Importing ``a.b.c`` loads the packages ``a.b`` first, so an import adds edges to the target's
  package ``__init__`` modules too, except the importer's own packages (a package being loaded is
  already in sys.modules when its submodules import each other).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "autotune"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, bool]]:
    """(imported autotune module, at module level) for every import statement of the module."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_pkg = path.name == "__init__.py"
    out: list[tuple[str, bool]] = []

    def resolve(base: str, names: list[str]) -> list[str]:
        found = []
        for n in names:  # `from pkg import sub` imports the submodule pkg.sub when there is one
            found.append(f"{base}.{n}" if f"{base}.{n}" in known else base)
        return found

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                out.extend((a.name, top) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                    pkg = pkg[:len(pkg) - (child.level - 1)]
                    base = ".".join(pkg + ([child.module] if child.module else []))
                else:
                    base = child.module or ""
                out.extend((m, top) for m in resolve(base, [a.name for a in child.names]))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, False)
            elif isinstance(child, ast.If) and _is_type_checking(child):
                visit(child, False)
            else:
                visit(child, top)

    visit(tree, True)
    return [(m, top) for m, top in out if m == "autotune" or m.startswith("autotune.")]


def load_edges(target: str, importer: str, known: set[str]) -> set[str]:
    """The modules whose loading ``import target`` in ``importer`` starts (see the module doc)."""
    parts = target.split(".")
    own = {".".join(importer.split(".")[:i]) for i in range(1, importer.count(".") + 2)}  # its packages (and itself)
    parents = {".".join(parts[:i]) for i in range(2, len(parts))} - own  # loaded on the way to the target
    return {m for m in parents | {target} if m in known and m != importer}


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    g: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        for target, top in imports(name, path, known):
            if top:
                g[name] |= load_edges(target, name, known)
    return g


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_graph_sees_every_module_and_real_edges():
    g = graph()
    assert len(g) > 50
    assert "autotune.vocabulary" in g["autotune.tune.space"]
    assert "autotune.emit.envfiles" in g["autotune.emit.write"]


def test_tune_does_not_import_emit():
    mods = modules()
    known = set(mods)
    bad = [(name, target) for name, path in mods.items() if name.startswith("autotune.tune")
           for target, _top in imports(name, path, known) if target.startswith("autotune.emit")]
    assert bad == [], f"tune imports emit: {bad}"


def test_the_race_imports_no_sibling_stage():
    """race/ runs after tune and beside compare, validate, preflight and portfolio: what it shares with
    them lives below all (trials/, tune/defaults.py), so none of them is loaded by a race."""
    mods = modules()
    known = set(mods)
    siblings = ("autotune.compare", "autotune.validate", "autotune.preflight", "autotune.portfolio")
    bad = [(name, target) for name, path in mods.items() if name.startswith("autotune.race")
           for target, _top in imports(name, path, known) if target.startswith(siblings)]
    assert bad == [], f"race imports a sibling stage: {bad}"


def test_no_import_cycle_among_module_level_imports():
    found = cycles(graph())
    assert found == [], "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def room(module: str) -> str:
    """The room a module is in: autotune.X for autotune/X.py and for every module under autotune/X/."""
    return ".".join(module.split(".")[:2])


def rooms_graph() -> dict[str, set[str]]:
    """Room -> the rooms its modules import, every import counted (module level, function-local,
    under TYPE_CHECKING)."""
    mods = modules()
    known = set(mods)
    g: dict[str, set[str]] = {}
    for name, path in mods.items():
        if name == "autotune":
            continue
        src = room(name)
        g.setdefault(src, set())
        for target, _top in imports(name, path, known):
            if target != "autotune" and room(target) != src:
                g[src].add(room(target))
                g.setdefault(room(target), set())
    return g


def test_no_room_imports_a_room_above_it():
    """The rooms form layers: no circle of imports between them, so no arrow runs back up."""
    found = cycles(rooms_graph())
    assert found == [], "rooms in a circle: " + "; ".join(" -> ".join(c) for c in found)


def test_the_vocabulary_imports_nothing_of_the_package_but_its_errors():
    mods = modules()
    got = {t for t, _top in imports("autotune.vocabulary", mods["autotune.vocabulary"], set(mods))}
    assert got <= {"autotune.errors"}, got

