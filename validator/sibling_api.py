"""What aml-run (runner/) and aml-quiz (quiz/) may use of the validator, by module: the names
they build on. Everything else in the validator is its own business and may change without a
word; a change to a name listed here is a change to what the runner and the quiz rely on.
tests/repo/test_import_graph.py holds runner/ and quiz/ to this list (and to no name starting with
an underscore), and the list to names that exist.

``validator.__all__`` is the API for everyone else (lint from Python).
"""

from __future__ import annotations

SIBLING_API: dict[str, frozenset[str]] = {module: frozenset(names) for module, names in {
    "validator": ("Config", "__version__"),
    "validator.engine": ("lint_file",),
    "validator.errors": ("AmllabError", "UsageError"),
    # The command template language: what the runner renders with a job's values.
    "validator.expressions": ("BLOCK_CLOSE", "BLOCK_OPEN", "Reference", "Template", "parse"),
    "validator.graph": ("generations", "topological_order"),
    "validator.loader": ("parse",),
    # The service's naming rules, for every name that becomes a path.
    "validator.names": ("name_problem",),
    "validator.paths": ("write_text_atomic",),
    # What a command starts and what its script imports (the environment check at Preparing).
    "validator.pycode": ("entry_points", "script_facts"),
    # What an input path or an output path names: an asset's ARM id, a datastore path (either form).
    "validator.references": ("datastore_path", "datastore_uri_prefix", "is_arm_id"),
    # A pipeline's wiring, as the linter reads it.
    "validator.rules.pipeline": ("RUN_SETTINGS", "analyse", "step_edges"),
    # The sweep's search space: one model for the linter, the samplers and the quiz.
    "validator.search_space": ("Branch", "Constant", "DISTRIBUTIONS", "Distribution", "LOG", "MAX_DEPTH",
                               "PARAMETERS", "QUANTIZED", "RANGED", "SearchSpace", "accepts", "algorithm_of",
                               "dotted", "parse"),
    # A spec, loaded and checked: the typed model the runner runs.
    "validator.spec": ("CommandJob", "JobInput", "JobOutput", "Spec", "SpecError", "command_job_from", "job_input",
                       "load_asset", "load_spec"),
    "validator.suggest": ("closest",),
    "validator.triggers": ("TriggerError", "fire_times", "zone_info"),
    "validator.values": ("sdk_number",),
    # The workspace registry's format (what `azureml:name:version` means locally).
    "validator.workspace": ("REGISTER_COMMANDS", "Registry", "TITLES", "clean_stale_temporaries",
                            "is_curated_environment", "latest", "load_registry", "parse_reference", "register"),
}.items()}
