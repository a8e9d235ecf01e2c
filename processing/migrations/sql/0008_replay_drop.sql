DROP FUNCTION IF EXISTS processing_replay_begin(bigint, varchar, varchar);
DROP FUNCTION IF EXISTS processing_replay_end(bigint, boolean, varchar, varchar, varchar, varchar, integer, bytea,
                                              integer);
