"""What every Core log line about an attempt names, so an operator can follow one job, claim or worker session
through the log: the job, the attempt's number, the operation, the worker session, the claim and the processor
contract. Never a token or a ticket secret (tests/processing/test_log_lines.py reads a whole run's log)."""


def _fields(job_id, number: int, operation: str, session_id, claim_id, processor_contract: str) -> dict:
    return {
        "job": str(job_id),
        "attempt": number,
        "operation": operation,
        "session": str(session_id),
        "claim": str(claim_id),
        "processor_contract": processor_contract,
    }


def attempt_log(attempt) -> dict:
    """The log fields of a ProcessingAttempt."""
    return _fields(
        attempt.job_id,
        attempt.number,
        attempt.operation,
        attempt.session_id,
        attempt.claim_id,
        attempt.processor_contract,
    )


def claim_log(claim, session_id) -> dict:
    """The log fields of a claim just handed to ``session_id`` (processing/queue/claims.py's Claim)."""
    return _fields(
        claim.job_id, claim.attempt_number, claim.operation, session_id, claim.claim_id, claim.processor_contract
    )
