DROP FUNCTION IF EXISTS processing_claim(uuid, jsonb, integer, integer, integer, integer, uuid, uuid, text, integer);
