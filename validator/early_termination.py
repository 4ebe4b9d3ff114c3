"""The early-termination policies a sweep's spec may name, and each one's own settings beside
``evaluation_interval`` and ``delay_evaluation``: the one list that the linter's rules, the
bundled schemas (tools/build_schemas.py) and the runner's policies (runner.sweep.policies, held
to it by a test) share.

The sweep YAML reference lists the three policies and their keys:
https://learn.microsoft.com/azure/machine-learning/reference-yaml-job-sweep?view=azureml-api-2#early-termination-policies
(``exclude_finished_jobs``, which a how-to page mentions, is not among them: azure-ai-ml
refuses it in YAML, and the runner honours it only where that finding is suppressed).
"""

from __future__ import annotations

TIMING = ("evaluation_interval", "delay_evaluation")
POLICIES: dict[str, tuple[str, ...]] = {
    "bandit": ("slack_factor", "slack_amount"),
    "median_stopping": (),
    "truncation_selection": ("truncation_percentage",),
}
