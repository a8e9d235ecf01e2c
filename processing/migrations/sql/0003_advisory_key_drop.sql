DROP FUNCTION IF EXISTS processing_advisory_key(text, text);
