"""Dependency graphs of pipeline steps, as pure functions over plain values.

A pipeline step that binds ``${{parent.jobs.prep.outputs.clean}}`` waits for ``prep``: the
binding is an edge ``prep -> train`` (producer first). The linter uses :func:`find_cycles` to
report steps that can never start; the runner uses :func:`topological_order` (or
:func:`generations`, for steps that may run side by side) to run the others in order.

Everything here is deterministic: nodes are visited in the order they are given (the order of
the steps in the file), and edges in the order they were bound, so a report or a run order is
the same on every machine. Nothing recurses, so a pipeline of any size is safe.
"""

from __future__ import annotations

from typing import Hashable, Iterable, Mapping, Sequence, TypeVar

N = TypeVar("N", bound=Hashable)



class CycleError(ValueError):
    """The graph has a cycle; ``cycle`` is one closed path ``[a, b, ..., a]``."""

    def __init__(self, cycle: Sequence):
        self.cycle = list(cycle)
        super().__init__("cycle: " + format_path(self.cycle))


def format_path(path: Sequence) -> str:
    """``a -> b -> a``."""
    return " -> ".join(str(node) for node in path)


def build_edges(dependencies: Mapping[N, Iterable[N]], nodes: Iterable[N] | None = None) -> list[tuple[N, N]]:
    """Edges ``(producer, consumer)`` from ``consumer -> the nodes it reads from``.

    Duplicates are dropped, first occurrence kept. With ``nodes`` given, edges that touch a node
    outside it (a binding to a step that does not exist) are dropped too.
    """
    known = set(nodes) if nodes is not None else None
    seen: set[tuple[N, N]] = set()
    edges: list[tuple[N, N]] = []
    for consumer, producers in dependencies.items():
        if known is not None and consumer not in known:
            continue
        for producer in producers:
            if known is not None and producer not in known:
                continue
            edge = (producer, consumer)
            if edge not in seen:
                seen.add(edge)
                edges.append(edge)
    return edges


def successors(nodes: Iterable[N], edges: Iterable[tuple[N, N]]) -> dict[N, list[N]]:
    """``node -> the nodes that read from it``, for every node (edge endpoints included)."""
    result: dict[N, list[N]] = {node: [] for node in nodes}
    for producer, consumer in edges:
        result.setdefault(producer, [])
        result.setdefault(consumer, [])
        if consumer not in result[producer]:
            result[producer].append(consumer)
    return result


def find_cycles(nodes: Iterable[N], edges: Iterable[tuple[N, N]]) -> list[list[N]]:
    """Every cycle that a depth-first walk closes, once each, as a closed path ``[a, b, a]``.

    The walk starts from the nodes in their given order. Each edge that leads back to a node
    still on the walk's path (a back edge) closes one cycle, reported from that node around to
    itself; its last edge ``path[-2] -> path[-1]`` is the back edge. A self-loop gives
    ``[a, a]``. The graph is acyclic exactly when the list is empty.
    """
    graph = successors(nodes, edges)
    state: dict[N, int] = {}  # 1 on the current path, 2 finished
    cycles: list[list[N]] = []
    for root in graph:
        if root in state:
            continue
        path: list[N] = [root]
        position = {root: 0}
        state[root] = 1
        stack: list[tuple[N, int]] = [(root, 0)]
        while stack:
            node, index = stack[-1]
            children = graph[node]
            if index == len(children):
                stack.pop()
                path.pop()
                del position[node]
                state[node] = 2
                continue
            stack[-1] = (node, index + 1)
            child = children[index]
            seen = state.get(child)
            if seen == 1:
                cycles.append(path[position[child]:] + [child])
            elif seen is None:
                state[child] = 1
                position[child] = len(path)
                path.append(child)
                stack.append((child, 0))
    return cycles


def topological_order(nodes: Iterable[N], edges: Iterable[tuple[N, N]]) -> list[N]:
    """The nodes with every producer before its consumers; among nodes that are free to go,
    the one given first goes first. Raises :class:`CycleError` when there is no such order."""
    return [node for generation in generations(nodes, edges) for node in generation]


def generations(nodes: Iterable[N], edges: Iterable[tuple[N, N]]) -> list[list[N]]:
    """Nodes in waves: the first wave depends on nothing, each later wave only on earlier ones
    (steps of one wave can run side by side). Raises :class:`CycleError` on a cycle."""
    edge_list = list(edges)
    graph = successors(nodes, edge_list)
    rank = {node: i for i, node in enumerate(graph)}
    waiting = {node: 0 for node in graph}
    for producer, consumer in set(edge_list):
        waiting[consumer] += 1
    wave = [node for node in graph if waiting[node] == 0]
    waves: list[list[N]] = []
    done = 0
    while wave:
        waves.append(wave)
        done += len(wave)
        following: list[N] = []
        for node in wave:
            for child in graph[node]:
                waiting[child] -= 1
                if waiting[child] == 0:
                    following.append(child)
        wave = sorted(following, key=rank.__getitem__)
    if done != len(graph):
        cycles = find_cycles(graph, edge_list)
        raise CycleError(cycles[0] if cycles else [])
    return waves
