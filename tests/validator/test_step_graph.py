"""The step graph (validator/graph.py) and the cycle rule built on it (AML509), by property:
random DAGs never report a cycle and sort with every edge respected; one injected back edge
always yields a cycle that really is a closed path through that edge; and the rule, on generated
pipeline YAML, reports a cycle exactly when the steps' bindings form one."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator import graph
from validator.engine import lint_text

NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,7}", fullmatch=True)


@st.composite
def dags(draw, min_nodes: int = 1, max_nodes: int = 12):
    """(nodes in a shuffled order, edges i -> j only for i < j in the original order)."""
    names = draw(st.lists(NAME, min_size=min_nodes, max_size=max_nodes, unique=True))
    n = len(names)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs else []
    edges = [(names[i], names[j]) for i, j in chosen]
    order = draw(st.permutations(names))
    return list(order), edges


def reachable(start, edges) -> set:
    """Nodes reachable from ``start`` (itself included)."""
    seen = {start}
    frontier = [start]
    while frontier:
        node = frontier.pop()
        for producer, consumer in edges:
            if producer == node and consumer not in seen:
                seen.add(consumer)
                frontier.append(consumer)
    return seen


def has_cycle(nodes, edges) -> bool:
    """Reference answer, independent of graph.py: some edge closes a path back to its start."""
    return any(producer in reachable(consumer, edges) for producer, consumer in edges)


def assert_closed_path(cycle, edges) -> None:
    edge_set = set(edges)
    assert len(cycle) >= 2 and cycle[0] == cycle[-1], cycle
    for a, b in zip(cycle, cycle[1:]):
        assert (a, b) in edge_set, (a, b, cycle)
    # Elementary: no node repeats except the closing one.
    assert len(set(cycle[:-1])) == len(cycle) - 1, cycle


@settings(max_examples=100)
@given(dags())
def test_random_dag_has_no_cycle_and_sorts_with_every_edge_respected(dag) -> None:
    nodes, edges = dag
    assert graph.find_cycles(nodes, edges) == []
    order = graph.topological_order(nodes, edges)
    assert sorted(order) == sorted(nodes)
    position = {node: i for i, node in enumerate(order)}
    for producer, consumer in edges:
        assert position[producer] < position[consumer]
    waves = graph.generations(nodes, edges)
    wave_of = {node: i for i, wave in enumerate(waves) for node in wave}
    for producer, consumer in edges:
        assert wave_of[producer] < wave_of[consumer]


@settings(max_examples=100)
@given(dags(min_nodes=1), st.data())
def test_an_injected_back_edge_is_reported_as_a_real_cycle_through_it(dag, data) -> None:
    nodes, edges = dag
    start = data.draw(st.sampled_from(sorted(nodes)))
    # A back edge end -> start where start already reaches end (end == start: a self-loop).
    end = data.draw(st.sampled_from(sorted(reachable(start, edges))))
    back = (end, start)
    all_edges = edges + [back]
    cycles = graph.find_cycles(nodes, all_edges)
    assert cycles
    for cycle in cycles:
        assert_closed_path(cycle, all_edges)
        # Every cycle of a DAG plus one edge goes through that edge.
        assert back in set(zip(cycle, cycle[1:]))
    # Reported once: no two cycles are the same closed path.
    rotations = {frozenset(zip(c, c[1:])) for c in cycles}
    assert len(rotations) == len(cycles)
    with pytest.raises(graph.CycleError) as raised:
        graph.topological_order(nodes, all_edges)
    assert_closed_path(raised.value.cycle, all_edges)


def test_self_loop_and_two_cycles_are_reported_once_each() -> None:
    edges = graph.build_edges({"a": ["b"], "b": ["a"], "c": ["c", "a"], "d": ["c"]})
    assert graph.find_cycles(["a", "b", "c", "d"], edges) == [["a", "b", "a"], ["c", "c"]]
    assert graph.format_path(["a", "b", "a"]) == "a -> b -> a"


def test_build_edges_drops_duplicates_and_unknown_nodes() -> None:
    edges = graph.build_edges({"train": ["prep", "prep", "ghost"], "prep": []}, ["prep", "train"])
    assert edges == [("prep", "train")]


def test_generations_keep_the_given_order_within_a_wave() -> None:
    edges = graph.build_edges({"score": ["train"], "train": ["prep"], "report": ["prep"]})
    assert graph.generations(["report", "prep", "train", "score"], edges) == [
        ["prep"], ["report", "train"], ["score"]]


# ----------------------------------------------------------------------------- the rule

STEP_NAMES = NAME.filter(lambda n: n not in {"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


@st.composite
def wired_pipelines(draw):
    """Step names and arbitrary bindings between them (self-bindings and cycles included)."""
    names = draw(st.lists(STEP_NAMES, min_size=1, max_size=7, unique=True))
    pairs = [(p, c) for p in names for c in names]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=min(len(pairs), 12)))
    return names, edges


def pipeline_yaml(names, edges) -> str:
    lines = [
        "$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json",
        "type: pipeline",
        "settings:",
        "  default_compute: azureml:cpu-cluster",
        "jobs:",
    ]
    for name in names:
        producers = [p for p, c in edges if c == name]
        reads = " ".join(f"${{{{inputs.in_{k}}}}}" for k in range(len(producers)))
        lines += [
            f"  {name}:",
            "    type: command",
            f"    command: cat {reads} > ${{{{outputs.out}}}}/result.txt" if producers
            else "    command: echo start > ${{outputs.out}}/result.txt",
            "    environment: azureml:sklearn-train:2",
        ]
        if producers:
            lines.append("    inputs:")
            lines += [f"      in_{k}: ${{{{parent.jobs.{p}.outputs.out}}}}" for k, p in enumerate(producers)]
        lines += ["    outputs:", "      out:", "        type: uri_folder"]
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wired_pipelines())
def test_cycle_rule_fires_exactly_when_the_bindings_form_a_cycle(wiring) -> None:
    names, edges = wiring
    report = lint_text(pipeline_yaml(names, edges), "generated.yml")
    codes = [d.code for d in report.diagnostics]
    assert "AML000" not in codes, report.diagnostics
    assert ("AML509" in codes) == has_cycle(names, edges), (edges, report.diagnostics)
    # One finding per cycle the graph module reports, each naming a real closed path.
    found = [d for d in report.diagnostics if d.code == "AML509"]
    as_bound = graph.build_edges({c: [p for p, c2 in edges if c2 == c] for c in names}, names)
    assert len(found) == len(graph.find_cycles(names, as_bound))
    for diagnostic in found:
        path = diagnostic.message.split("(")[1].split(")")[0] if "its own" in diagnostic.message \
            else diagnostic.message.split(": ", 1)[1].split(" (")[0]
        assert_closed_path(path.split(" -> "), edges)
