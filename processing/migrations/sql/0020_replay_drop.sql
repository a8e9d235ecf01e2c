DROP FUNCTION IF EXISTS processing_replay_begin(varchar, varchar, varchar, varchar, double precision, integer,
                                                timestamptz);
DROP FUNCTION IF EXISTS processing_replay_end(boolean, varchar, varchar, integer, bytea, integer);
