-- Shared by the tests that follow (they run in this database, in order).

-- An error's SQLSTATE and message, without its settings-dependent detail.
CREATE FUNCTION error_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
