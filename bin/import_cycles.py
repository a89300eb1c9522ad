#!/usr/bin/env python3
"""List the import circles between the project's modules; fail on any of more than 3 modules.

A circle is a set of modules each reaching all the others through imports (a strongly
connected component of the import graph, imports inside functions included: they tie modules
together just the same). Such modules cannot be read, tested or moved one without the others.
Two or three modules importing each other are tolerated (a task and the service that queues it
are the usual pair); a larger circle fails `make lint`. The graph is grimp's, the one
import-linter checks its contracts on, over the packages pyproject.toml gives import-linter.
"""

import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
LONGEST_ALLOWED = 3


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def imported(module: str) -> Iterator[str]:
        return iter(sorted(graph.find_modules_directly_imported_by(module)))

    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, imported(start))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, remaining = work[-1]
            following = next(remaining, None)
            if following is not None:
                if following not in index:
                    index[following] = low[following] = len(index)
                    stack.append(following)
                    on_stack.add(following)
                    work.append((following, imported(following)))
                elif following in on_stack:
                    low[module] = min(low[module], index[following])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda component: (-len(component), component))


def main() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph(*config["root_packages"])
    failed = False
    for component in circles(graph):
        too_long = len(component) > LONGEST_ALLOWED
        failed |= too_long
        label = "TOO LONG" if too_long else "tolerated"
        print(f"import circle of {len(component)} modules ({label}):")
        for module in component:
            inside = sorted(set(graph.find_modules_directly_imported_by(module)) & set(component))
            print(f"  {module} -> {', '.join(inside)}")
    if failed:
        print(f"Break every import circle of more than {LONGEST_ALLOWED} modules.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
