"""The one place that reads the environment.

Every setting Quire reads comes from here, with its documented default. The
README lists them; keep the two in step.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env(
    DEBUG=(bool, True),
    ALLOWED_HOSTS=(list, ["127.0.0.1", "localhost", "[::1]", "testserver"]),
    DATABASE_URL=(str, ""),
    SECRET_KEY=(str, ""),
    QUIRE_DEPLOYMENT_FILE=(str, ""),
    QUIRE_DISTRIBUTION=(str, "community"),
    QUIRE_STORAGE_DIR=(str, str(VAR_DIR / "storage")),
    QUIRE_LOG_LEVEL=(str, "INFO"),
)
