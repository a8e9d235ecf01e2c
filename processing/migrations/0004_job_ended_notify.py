"""NOTIFY ``quire_job_ended`` with the job id when a job's terminal commit is inserted.

A trigger, so every path to a terminal state wakes the requests waiting for the job
(``GET /v1/processing/jobs/{id}?wait=…``) without a statement of its own. PostgreSQL
delivers the notification only if the transaction commits.
"""

from django.db import migrations

NOTIFY = """
CREATE OR REPLACE FUNCTION processing_job_ended_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('quire_job_ended', NEW.job_id::text);
    RETURN NULL;
END
$$;
CREATE TRIGGER processing_job_ended_notify AFTER INSERT ON processing_terminalcommit
    FOR EACH ROW EXECUTE FUNCTION processing_job_ended_notify();
"""

DROP = """
DROP TRIGGER IF EXISTS processing_job_ended_notify ON processing_terminalcommit;
DROP FUNCTION IF EXISTS processing_job_ended_notify();
"""


class Migration(migrations.Migration):
    dependencies = [("processing", "0003_claim_function")]

    operations = [migrations.RunSQL(NOTIFY, DROP)]
