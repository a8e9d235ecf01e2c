"""No module of Core imports itself through others: each import points down, so any module loads on its own and a
reader can follow a chain of imports to its end. A lazy import inside a function counts too, since it only hides
the cycle until that function runs first. import-linter's contracts see layers, not cycles inside one layer."""

from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent


def _core_packages() -> list[str]:
    """Every top-level package of Core (as tests/test_import_contracts.py counts them)."""
    return sorted({path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests", "scripts"})


def strongly_connected(modules: set[str], imported_by) -> list[list[str]]:
    """The groups of two or more modules that reach one another through ``imported_by(module)``
    (Tarjan's algorithm, with a stack of its own: a chain of imports is deeper than Python's recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []
    for start in sorted(modules):
        if start in index:
            continue
        work = [(start, iter(sorted(imported_by(start) & modules)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[module])
                if low[module] == index[module]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == module:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
            elif target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                on_stack.add(target)
                work.append((target, iter(sorted(imported_by(target) & modules))))
            elif target in on_stack:
                low[module] = min(low[module], index[target])
    return groups


def test_the_cycle_finder_finds_a_cycle_and_only_the_modules_on_it():
    imports = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}

    assert strongly_connected(set(imports), imports.__getitem__) == [["a", "b", "c"]]


def test_no_module_of_core_is_in_an_import_cycle():
    graph = grimp.build_graph(*_core_packages(), cache_dir=None)
    modules = set(graph.modules)

    cycles = strongly_connected(modules, graph.find_modules_directly_imported_by)

    assert cycles == [], "modules that import one another, directly or through others:\n" + "\n".join(
        ", ".join(group) for group in cycles
    )
