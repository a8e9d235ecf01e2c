-- NOTIFY quire_job_ended with the job id when a job's terminal commit is inserted: what wakes the requests
-- waiting for a job (processing.queue.wakeups, JOB_ENDED_CHANNEL). The current definition; migration 0004
-- installed it (frozen copy: processing/migrations/sql/0004_job_ended_notify.sql), and tests/processing/migrations
-- compares the two.

CREATE OR REPLACE FUNCTION processing_job_ended_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('quire_job_ended', NEW.job_id::text);
    RETURN NULL;
END
$$;
CREATE OR REPLACE TRIGGER processing_job_ended_notify AFTER INSERT ON processing_terminalcommit
    FOR EACH ROW EXECUTE FUNCTION processing_job_ended_notify();
