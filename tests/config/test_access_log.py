"""The access log keeps a line per request a person made; polls are logged at DEBUG, so they do not flood it."""

import logging

import pytest

from config.http.access_log import PollsAtDebug

JOB = "5b0e3c7e-8a0f-4d8e-9a4f-0c1d2e3f4a5b"
POLLS = [
    "/internal/processing/v1/sessions/abc/acquire",
    "/internal/processing/v1/claims/abc/heartbeat",
    "/tasks/badge",
    f"/tasks/{JOB}",
    f"/projects/{JOB}/processing/build-status",
    f"/v1/processing/jobs/{JOB}?wait=20",
    "/healthz",
]
REQUESTS = ["/", f"/projects/{JOB}/", "/tasks", f"/v1/processing/jobs/{JOB}", "/login/", "/v1/projects"]


def access_record(path: str) -> logging.LogRecord:
    return logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "GET", path, "1.1", 200),
        None,
    )


@pytest.fixture
def access_logger():
    logger = logging.getLogger("uvicorn.access")
    level = logger.level
    yield logger
    logger.setLevel(level)


@pytest.mark.parametrize("path", POLLS)
def test_a_poll_is_not_logged_at_info_and_is_at_debug(access_logger, path):
    access_logger.setLevel(logging.INFO)
    assert PollsAtDebug().filter(access_record(path)) is False

    access_logger.setLevel(logging.DEBUG)
    record = access_record(path)
    assert PollsAtDebug().filter(record) is True and record.levelno == logging.DEBUG


@pytest.mark.parametrize("path", REQUESTS)
def test_a_request_a_person_made_is_logged_at_info(access_logger, path):
    access_logger.setLevel(logging.INFO)
    record = access_record(path)

    assert PollsAtDebug().filter(record) is True and record.levelno == logging.INFO
