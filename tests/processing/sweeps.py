"""A maintenance sweep in a test: its live-documents step also cleans the channel layer's database, which the
test must allow, or that step fails (logged, and named in the report's ``failed``) while the test passes."""

SWEEP_DATABASES = ["default", "channels_postgres"]
