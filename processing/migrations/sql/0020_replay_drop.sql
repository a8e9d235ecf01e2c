DROP FUNCTION IF EXISTS processing_replay_begin(varchar, varchar, varchar, varchar, double precision);
DROP FUNCTION IF EXISTS processing_replay_end(boolean, varchar, varchar, integer, bytea, integer);
