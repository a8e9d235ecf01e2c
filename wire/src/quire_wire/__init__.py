"""The worker protocol's vocabulary, defined once for both sides: Core (Django) and the worker agent.

Only the standard library, in a distribution of its own (wire/, quire-wire) that Core and the worker both
depend on. Every name here is seen on the wire; changing a value changes the protocol
(docs/worker-protocol.md).
"""

import enum

PROTOCOL_VERSION = "1"
# Every protocol endpoint lives under this path; ``PROTOCOL_PREFIX + "/sessions"`` and so on.
PROTOCOL_PREFIX = "/internal/processing/v1"

# Input schemas: what a claim's input is (an operation's ``input_schema``).
PROJECT_BUNDLE_SCHEMA = "project-bundle/v1"  # a project's files and manifest.json, as a tar archive
PPTX_INPUT_SCHEMA = "pptx-input/v1"  # an uploaded .pptx
PDF_VERSION_SCHEMA = "pdf-version/v1"  # one version of a library PDF
# Output schemas that Core reads (the ``schema`` field of the output's manifest or JSON).
WORKSPACE_BUNDLE_SCHEMA = "workspace-bundle/v1"  # a new project's files, from an import
PDF_PAGES_SCHEMA = "pdf-pages/v1"  # a PDF's text, page by page, for the library's index

# Transfer headers: the ticket's secret, and what an upload declares about its body.
TRANSFER_SECRET_HEADER = "X-Quire-Transfer-Secret"  # noqa: S105  a header name, not a secret
MEDIA_TYPE_HEADER = "X-Quire-Media-Type"
SHA256_HEADER = "X-Quire-Sha256"
FILENAME_HEADER = "X-Quire-Filename"  # percent-encoded UTF-8


class FailureClass(enum.StrEnum):
    """The closed failure vocabulary. Workers classify a failed job; Core decides what follows (retry or not)."""

    INVALID_INPUT = "invalid_input"
    PROCESSOR_REJECTED = "processor_rejected"
    UNSUPPORTED_DEPENDENCY = "unsupported_dependency"
    RESOURCE_LIMIT = "resource_limit"
    TRANSIENT_INFRASTRUCTURE = "transient_infrastructure"
    WORKER_INTERRUPTED = "worker_interrupted"
    INTERNAL_CONTRACT_VIOLATION = "internal_contract_violation"
