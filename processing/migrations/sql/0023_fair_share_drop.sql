DROP FUNCTION IF EXISTS processing_fair_share(varchar);
