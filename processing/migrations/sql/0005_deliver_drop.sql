DROP FUNCTION IF EXISTS processing_deliver(uuid, jsonb, uuid, integer, text, jsonb);
