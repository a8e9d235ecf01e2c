"""Processing's kernel: what every room of Processing builds on, and nothing above it.

The one service that changes a job's state (``transitions``) and the outbox events it writes (``outbox``); the
database's clock, advisory lock keys and queue wake-ups (``clock``, ``advisory``, ``notify``); bytes
(``blobs``, with the keepers other contexts register; ``bundles``, the archive a build runs on; ``transfers``'
ticket secrets); the distribution and deployment (``configuration``, ``partitions``) and what they enable
(``capabilities``); a delivered job as finalization reads it (``delivered``); a build's success as its
project's output (``project_outputs``); and the words of the log lines and pages (``attempt_log``,
``durations``). Modules here import models, operations, selectors and exceptions, and one another; never a room.
"""
