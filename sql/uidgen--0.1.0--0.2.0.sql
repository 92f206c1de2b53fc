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

-- Snowflake decoders with the layout as arguments (epoch, worker bits,
-- sequence bits; checked as the settings are): pure functions of their
-- arguments, so IMMUTABLE, for index expressions, generated columns and
-- partitioning expressions.  Pass the values of your settings, written out.
CREATE FUNCTION snowflake_timestamp(id bigint, epoch timestamptz,
                                    worker_bits integer, sequence_bits integer)
    RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'snowflake_timestamp_layout'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_worker(id bigint, epoch timestamptz,
                                 worker_bits integer, sequence_bits integer)
    RETURNS integer
    AS 'MODULE_PATHNAME', 'snowflake_worker_layout'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_sequence(id bigint, epoch timestamptz,
                                   worker_bits integer, sequence_bits integer)
    RETURNS integer
    AS 'MODULE_PATHNAME', 'snowflake_sequence_layout'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Backfills: the ID of the millisecond holding ts with the given worker id
-- and sequence.  The worker id must differ from uidgen.worker_id (22023), so
-- no ID snowflake_next() issues can equal it; distinct sequences (or
-- instants) give distinct IDs.  STABLE: it reads the layout settings.
CREATE FUNCTION snowflake_at(ts timestamptz, worker_id integer, sequence integer)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_at'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- uidgen's generator moved by an interval, like PostgreSQL 18's
-- uuidv7(interval) but ordered: the next tick of the clock behind
-- uuidv7_next() plus the duration the shift adds, so calls adding the same
-- duration are strictly increasing server-wide.  Not uuidv7(interval),
-- which is pg_catalog's on PostgreSQL 18 and later.
CREATE FUNCTION uuidv7_next(shift interval) RETURNS uuid
    AS 'MODULE_PATHNAME', 'uuidv7_next_shift'
    LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- PostgreSQL 17 added uuid_extract_version(uuid) and
-- uuid_extract_timestamp(uuid) to pg_catalog: NULL for what they cannot
-- read, LEAKPROOF.  uidgen has the same calls (with 18's reading of
-- version 7 timestamps) on every version: they serve unqualified calls
-- before 17; from 17 on pg_catalog, searched first, serves those, and
-- uidgen's keep stored expressions made before 17 (dumped as
-- public.uuid_extract_timestamp(...)) restorable on a newer server.
-- LEAKPROOF needs a superuser, as CREATE EXTENSION uidgen does.
CREATE FUNCTION uuid_extract_version(uuid) RETURNS smallint
    AS 'MODULE_PATHNAME', 'uidgen_uuid_extract_version'
    LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;

CREATE FUNCTION uuid_extract_timestamp(uuid) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'uidgen_uuid_extract_timestamp'
    LANGUAGE C IMMUTABLE STRICT LEAKPROOF PARALLEL SAFE;

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
