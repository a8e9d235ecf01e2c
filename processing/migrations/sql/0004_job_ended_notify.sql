CREATE OR REPLACE FUNCTION processing_job_ended_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('quire_job_ended', NEW.job_id::text);
    RETURN NULL;
END
$$;
CREATE TRIGGER processing_job_ended_notify AFTER INSERT ON processing_terminalcommit
    FOR EACH ROW EXECUTE FUNCTION processing_job_ended_notify();
