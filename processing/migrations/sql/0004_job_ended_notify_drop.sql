DROP TRIGGER IF EXISTS processing_job_ended_notify ON processing_terminalcommit;
DROP FUNCTION IF EXISTS processing_job_ended_notify();
