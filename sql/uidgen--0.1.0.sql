/* uidgen--0.1.0.sql: install script (hand-edited) */

\echo Use "CREATE EXTENSION uidgen" to load this file. \quit

-- Snowflake IDs ------------------------------------------------------------

-- VOLATILE: every call returns a new ID.  PARALLEL SAFE: the generator state
-- lives in shared memory, so calls from parallel workers are as unique and
-- ordered as calls from the leader.
CREATE FUNCTION snowflake_next() RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_next'
    LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- The decoders read uidgen.epoch, uidgen.worker_bits and uidgen.sequence_bits,
-- which can differ between servers and restarts, so they are STABLE, not
-- IMMUTABLE: an index built on them could silently disagree with a restarted
-- server.  Use them in queries and partition bounds, not in index expressions.
CREATE FUNCTION snowflake_timestamp(id bigint) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'snowflake_timestamp'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_worker(id bigint) RETURNS integer
    AS 'MODULE_PATHNAME', 'snowflake_worker'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_sequence(id bigint) RETURNS integer
    AS 'MODULE_PATHNAME', 'snowflake_sequence'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_floor(ts timestamptz) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_floor'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- UUIDv7 -------------------------------------------------------------------

CREATE FUNCTION uuidv7() RETURNS uuid
    AS 'MODULE_PATHNAME', 'uuidv7_next'
    LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION uuidv7(ts timestamptz) RETURNS uuid
    AS 'MODULE_PATHNAME', 'uuidv7_at'
    LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- Pure functions of their argument (the UUIDv7 layout is fixed by RFC 9562),
-- so IMMUTABLE: usable in generated columns and index expressions.
CREATE FUNCTION uuidv7_timestamp(id uuid) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'uuidv7_timestamp'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION uuidv7_floor(ts timestamptz) RETURNS uuid
    AS 'MODULE_PATHNAME', 'uuidv7_floor'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Status -------------------------------------------------------------------

CREATE FUNCTION uidgen_status(
    OUT state text,
    OUT worker_id integer,
    OUT timestamp_bits integer,
    OUT worker_bits integer,
    OUT sequence_bits integer,
    OUT epoch timestamptz,
    OUT last_id bigint,
    OUT clock_ahead interval,
    OUT ids_issued bigint,
    OUT uuids_issued bigint,
    OUT clock_backward_episodes bigint,
    OUT waits bigint,
    OUT high_water_mark timestamptz)
    AS 'MODULE_PATHNAME', 'uidgen_status'
    LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
