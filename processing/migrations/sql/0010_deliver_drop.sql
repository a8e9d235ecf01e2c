DROP FUNCTION IF EXISTS processing_deliver(uuid, text, jsonb, jsonb, uuid, integer, text, jsonb);
