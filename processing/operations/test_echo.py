"""An operation for protocol tests and benchmarks only: the worker echoes its input back.

It is registered always but exposed only when ``QUIRE_TEST_OPERATIONS`` is on. Its results are
never reused, so every submission really runs (reuse is exercised with LaTeX builds).
"""

from processing.operations.base import NoOptions, Operation, ResultRole
from quire_wire import PROJECT_BUNDLE_SCHEMA

MiB = 1024 * 1024

TEST_ECHO = Operation(
    name="test.echo/v1",
    job_class="project_build",
    input_schema=PROJECT_BUNDLE_SCHEMA,
    options_type=NoOptions,
    permission="build",
    project_types=("latex", "typst"),
    result_roles=(ResultRole("echo", ("application/octet-stream",), 64 * MiB),),
    reusable=False,
    endpoint="test-echo",
)
