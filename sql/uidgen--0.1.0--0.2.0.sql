/* uidgen--0.1.0--0.2.0.sql: update script (hand-edited) */

\echo Use "ALTER EXTENSION uidgen UPDATE TO '0.2.0'" to load this file. \quit

-- New canonical names of the UUIDv7 generators.  PostgreSQL 18 added
-- pg_catalog.uuidv7() and pg_catalog.uuidv7(interval), and pg_catalog comes
-- first in every search_path: there an unqualified uuidv7() calls
-- PostgreSQL's generator, and uuidv7('2025-01-01') is ambiguous.  The new
-- names mean uidgen's on every version.  Same C functions as the aliases.
CREATE FUNCTION uuidv7_next() RETURNS uuid
    AS 'MODULE_PATHNAME', 'uuidv7_next'
    LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION uuidv7_at(ts timestamptz) RETURNS uuid
    AS 'MODULE_PATHNAME', 'uuidv7_at'
    LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- uuidv7() and uuidv7(timestamptz) stay, deprecated: column defaults and
-- views stored as public.uuidv7() (and dumps of them) keep working.
-- Schema-qualified: even in this script, an unqualified uuidv7() would be
-- pg_catalog's on PostgreSQL 18 and later.
COMMENT ON FUNCTION @extschema@.uuidv7() IS
    'deprecated alias of uuidv7_next(), kept for dumps of 0.1.0; on PostgreSQL 18 and later an unqualified uuidv7() is PostgreSQL''s own';
COMMENT ON FUNCTION @extschema@.uuidv7(timestamptz) IS
    'deprecated alias of uuidv7_at(timestamptz), kept for dumps of 0.1.0; on PostgreSQL 18 and later uuidv7(''<literal>'') is ambiguous with PostgreSQL''s uuidv7(interval)';

-- The invalidation triggers fire also under session_replication_role =
-- replica (logical replication apply workers, many migration tools), where
-- ordinary triggers do not, and seq_next() went on serving a dropped
-- sequence's blocks.
ALTER TABLE @extschema@.id_sequences ENABLE ALWAYS TRIGGER id_sequences_invalidate;
ALTER TABLE @extschema@.id_sequences ENABLE ALWAYS TRIGGER id_sequences_invalidate_all;

DO $$
DECLARE
    saved text := pg_catalog.current_setting('client_min_messages');
BEGIN
    IF pg_catalog.current_setting('server_version_num')::integer >= 180000 THEN
        -- CREATE and ALTER EXTENSION run their script with client_min_messages
        -- raised to warning, which would swallow the NOTICE: let it through
        -- (unless the session asked for error or above), then put the
        -- setting back as it was.
        IF saved = 'warning' THEN
            PERFORM pg_catalog.set_config('client_min_messages', 'notice', true);
        END IF;
        RAISE NOTICE 'on PostgreSQL 18 and later an unqualified uuidv7() calls PostgreSQL''s built-in generator, not uidgen''s'
            USING HINT = 'Call uuidv7_next() (or @extschema@.uuidv7()) for uidgen''s server-wide ordered UUIDv7.';
        PERFORM pg_catalog.set_config('client_min_messages', saved, true);
    END IF;
END
$$;
