/* uidgen--0.2.0--0.3.0.sql: update script (hand-edited) */

\echo Use "ALTER EXTENSION uidgen UPDATE TO '0.3.0'" to load this file. \quit

-- 0.3.0's install script also differs in what CREATE EXTENSION says without
-- the preload (a NOTICE), which an update does not repeat.

-- Citus (issue 25) -----------------------------------------------------------

-- uidgen_status() gains worker_id_source: 'setting', 'registry', 'citus'.
DROP FUNCTION uidgen_status();
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
    OUT high_water_mark timestamptz,
    OUT system_identifier bigint,
    OUT timeline integer,
    OUT origin_worker_id integer,
    OUT copy_reason text,
    OUT origin_high_water_mark timestamptz,
    OUT block_sequences_fenced boolean,
    OUT lease_holder text,
    OUT lease_deadline timestamptz,
    OUT worker_id_source text)
    AS 'MODULE_PATHNAME', 'uidgen_status'
    LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- This node's worker id and its source as 'worker,source', adopting its
-- Citus group id when it has no uidgen.worker_id and no registry; what
-- uidgen_citus_check() runs on each node.
CREATE FUNCTION uidgen_citus_worker()
    RETURNS text
    AS 'MODULE_PATHNAME', 'uidgen_citus_worker'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION uidgen_citus_worker() FROM PUBLIC;

-- Refuse snowflake IDs on this node, durably (across restarts), if its
-- worker id is one of "workers"; otherwise, if "complete" (every node
-- answered), lift a refusal it holds.  uidgen_citus_check() calls it on
-- each node.
CREATE FUNCTION uidgen_citus_refuse(workers integer[], complete boolean)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'uidgen_citus_refuse'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION uidgen_citus_refuse(integer[], boolean) FROM PUBLIC;

-- On the coordinator: every node's worker id and its source ('setting',
-- 'registry', 'citus'; the error if it has none), and whether another
-- node uses the same worker id; each such node then refuses snowflake IDs,
-- across restarts, until a later check finds every node with a worker id
-- of its own.
CREATE FUNCTION uidgen_citus_check(
    OUT node text,
    OUT worker_id integer,
    OUT source text,
    OUT conflict boolean,
    OUT error text)
    RETURNS SETOF record
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $check$
DECLARE
    ext_schema text := (SELECT e.extnamespace::regnamespace::text
                        FROM pg_extension e WHERE e.extname = 'uidgen');
    conflicting integer[];
    complete boolean;
    failed text;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension e WHERE e.extname = 'citus') THEN
        RAISE EXCEPTION 'uidgen_citus_check() needs the citus extension in this database'
            USING ERRCODE = '55000',
                  DETAIL = 'It asks every node of the Citus cluster for its worker id through run_command_on_all_nodes().',
                  HINT = 'Run it on the Citus coordinator, in the database where citus is installed.';
    END IF;
    CREATE TEMP TABLE uidgen_citus_nodes ON COMMIT DROP AS
    SELECT n.nodename || ':' || n.nodeport AS node,
           CASE WHEN r.success THEN split_part(r.result, ',', 1)::integer END AS worker_id,
           CASE WHEN r.success THEN split_part(r.result, ',', 2) END AS source,
           CASE WHEN NOT r.success THEN r.result END AS error
    FROM run_command_on_all_nodes(
             format('SELECT %s.uidgen_citus_worker()', quote_ident(ext_schema))) r
    JOIN pg_dist_node n USING (nodeid);
    SELECT array_agg(w) INTO conflicting
    FROM (SELECT c.worker_id AS w FROM uidgen_citus_nodes c
          WHERE c.worker_id IS NOT NULL
          GROUP BY c.worker_id HAVING count(*) > 1) d;
    -- a node that did not answer may share any worker id: refusals stay
    complete := NOT EXISTS (SELECT FROM uidgen_citus_nodes c WHERE c.worker_id IS NULL);
    IF conflicting IS NOT NULL OR complete THEN
        -- a node that could not record its refusal must be told of
        SELECT string_agg(n.nodename || ':' || n.nodeport || ': ' || r.result, '; ')
            INTO failed
            FROM run_command_on_all_nodes(
                     format('SELECT %s.uidgen_citus_refuse(%L, %L)', quote_ident(ext_schema),
                            coalesce(conflicting, '{}'), complete)) r
            JOIN pg_dist_node n USING (nodeid)
            WHERE NOT r.success;
        IF failed IS NOT NULL THEN
            RAISE WARNING 'uidgen_citus_check() could not record its outcome on every node'
                USING DETAIL = format('Nodes that failed: %s.', failed),
                      HINT = 'A node listed here may not refuse a conflicting worker id; run the check again once it answers.';
        END IF;
    END IF;
    RETURN QUERY
    SELECT c.node, c.worker_id, c.source,
           coalesce(c.worker_id = ANY (conflicting), false), c.error
    FROM uidgen_citus_nodes c ORDER BY c.node;
    DROP TABLE uidgen_citus_nodes;
END
$check$;
REVOKE ALL ON FUNCTION uidgen_citus_check() FROM PUBLIC;

-- block prefetch ------------------------------------------------------------

-- What the shared cache holds per sequence of this database: the next ID
-- seq_next() or seq_reserve_block() carves (NULL: it never held a range), how many
-- IDs are held ahead of it (committed ranges: next_block_start of
-- id_sequences is their end), what the next refill asks for, and when the
-- sequence was last used.  Read from shared memory, not transactional.
CREATE FUNCTION seq_prefetched(OUT name text, OUT next_id bigint,
                               OUT reserved_ahead bigint, OUT refill_size bigint,
                               OUT last_used timestamptz)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'seq_prefetched'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

-- Gives back to the row of a sequence of strategy 'table' what the shared
-- cache prefetched and did not hand out: frees its entry and returns the
-- first ID not carved if the cache held the IDs up to next_block_start
-- (else next_block_start).  Only for seq_lock_row(), with the row locked.
CREATE FUNCTION seq_unprefetch(name text, next_block_start bigint) RETURNS bigint
    AS 'MODULE_PATHNAME', 'seq_unprefetch'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION seq_unprefetch(text, bigint) FROM PUBLIC;

-- id_sequences with the carving position: next_id is the next ID handed
-- out, next_block_start the durable end, reserved_ahead what lies between
-- (lost as a gap if the server stops), like last_value and log_cnt of a
-- sequence.
CREATE VIEW id_sequences_prefetch AS
    SELECT s.name, s.strategy, s.next_block_start, p.next_id,
           coalesce(p.reserved_ahead, 0) AS reserved_ahead, p.refill_size, p.last_used
      FROM @extschema@.id_sequences AS s
      LEFT JOIN @extschema@.seq_prefetched() AS p ON p.name = s.name;

GRANT SELECT ON id_sequences_prefetch TO PUBLIC;

-- seq_lock_row() gives the prefetched IDs back (block prefetch)
CREATE OR REPLACE FUNCTION seq_lock_row(name text) RETURNS id_sequences
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    cur @extschema@.id_sequences;
    back bigint;
BEGIN
    SELECT * INTO cur FROM @extschema@.id_sequences AS s
        WHERE s.name = seq_lock_row.name FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'block sequence "%" does not exist', seq_lock_row.name
            USING ERRCODE = 'undefined_object';
    END IF;
    -- the IDs prefetched and not handed out go back to the row (block prefetch)
    IF cur.strategy = 'table' THEN
        back := @extschema@.seq_unprefetch(cur.name, cur.next_block_start);
        IF back < cur.next_block_start THEN
            UPDATE @extschema@.id_sequences AS s SET next_block_start = back
                WHERE s.name = seq_lock_row.name;
            cur.next_block_start := back;
        END IF;
    END IF;
    -- then what Citus workers hold of it is thrown away (Citus section
    -- below): a refill from now on waits for the row
    PERFORM @extschema@.seq_workers_forget(seq_lock_row.name);
    RETURN cur;
END;
$$;

-- Citus block sequences (issue 25) -----------------------------------------

-- Do this database's block sequences live on the Citus coordinator (this
-- is a Citus worker)?  Refuses while id_sequences is distributed.
CREATE FUNCTION seq_on_coordinator() RETURNS boolean
    AS 'MODULE_PATHNAME', 'seq_on_coordinator'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- Runs uidgen's block sequence function "function" with "args" on the
-- Citus coordinator (seq_create() and the others on a worker).
CREATE FUNCTION seq_coordinator_call(function text, args text[]) RETURNS text
    AS 'MODULE_PATHNAME', 'seq_coordinator_call'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION seq_coordinator_call(text, text[]) FROM PUBLIC;

-- Throws away the blocks this Citus worker holds of a sequence (NULL: of
-- all of this database's); the coordinator calls it on every worker.
CREATE FUNCTION seq_forget(name text) RETURNS void
    AS 'MODULE_PATHNAME', 'seq_forget'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION seq_forget(text) FROM PUBLIC;

-- On the coordinator of a Citus cluster, has every worker throw away the
-- blocks it holds of a sequence being changed or dropped; fails if one
-- does not answer, so that the change is not made.  Nothing without citus.
CREATE FUNCTION seq_workers_forget(name text) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    failed text;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension e WHERE e.extname = 'citus') THEN
        RETURN;
    END IF;
    SELECT string_agg(format('%s:%s: %s', r.nodename, r.nodeport, r.result), '; ')
        INTO failed
        FROM run_command_on_workers(
                 format('SELECT %I.seq_forget(%L)', '@extschema@', seq_workers_forget.name)) AS r
        WHERE NOT r.success;
    IF failed IS NOT NULL THEN
        RAISE EXCEPTION 'could not make every citus worker forget its blocks of block sequence "%"',
                        seq_workers_forget.name
            USING ERRCODE = 'connection_failure',
                  DETAIL = format('Workers that did not answer: %s.', failed),
                  HINT = 'Make every worker reachable and try again; nothing was changed.';
    END IF;
END;
$$;
REVOKE ALL ON FUNCTION seq_workers_forget(text) FROM PUBLIC;

-- seq_create(), seq_drop(), seq_alter() and seq_advance() act on the
-- coordinator's sequences on a Citus worker
CREATE OR REPLACE FUNCTION seq_create(name text, start bigint DEFAULT 1,
                           block_size integer DEFAULT 1000,
                           max_value bigint DEFAULT 9223372036854775807,
                           strategy text DEFAULT 'table')
    RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    nsp regnamespace;
    seq regclass;
BEGIN
    IF name IS NULL OR start IS NULL OR block_size IS NULL OR max_value IS NULL
       OR strategy IS NULL THEN
        RAISE EXCEPTION 'arguments of seq_create() must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- a Citus worker: the coordinator's sequences (Citus section below)
    IF @extschema@.seq_on_coordinator() THEN
        PERFORM @extschema@.seq_coordinator_call('seq_create',
            ARRAY[name, start::text, block_size::text, max_value::text, strategy]);
        RETURN;
    END IF;
    IF name = '' THEN
        RAISE EXCEPTION 'block sequence name must not be empty'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF octet_length(name) > 63 THEN
        RAISE EXCEPTION 'block sequence name "%" is too long', name
            USING ERRCODE = 'name_too_long',
                  DETAIL = 'Names are limited to 63 bytes.';
    END IF;
    IF block_size < 1 OR block_size > 1000000000 THEN
        RAISE EXCEPTION 'block_size must be between 1 and 1000000000'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('The value given was %s.', block_size);
    END IF;
    IF start > max_value OR start = 9223372036854775807 THEN
        RAISE EXCEPTION 'start must not be greater than max_value'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('start is %s and max_value is %s; the ID 9223372036854775807 is never issued.',
                                  start, max_value);
    END IF;
    IF strategy NOT IN ('table', 'sequence') THEN
        RAISE EXCEPTION 'unknown block sequence strategy "%"', strategy
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'The strategies are "table" and "sequence".';
    END IF;
    IF strategy = 'sequence' THEN
        SELECT c.relnamespace INTO nsp FROM pg_class c
            WHERE c.oid = '@extschema@.id_sequences'::regclass;
        EXECUTE format('CREATE SEQUENCE %s.%I AS bigint INCREMENT BY %s MINVALUE %s START WITH %s'
                       ' NO MAXVALUE CACHE 1 NO CYCLE OWNED BY @extschema@.id_sequences.name',
                       nsp, 'id_sequences_' || md5(name), block_size, start, start);
        seq := format('%s.%I', nsp, 'id_sequences_' || md5(name))::regclass;
    END IF;
    INSERT INTO @extschema@.id_sequences AS s (name, next_block_start, block_size, max_value,
                                               strategy, sequence)
        VALUES (seq_create.name, seq_create.start, seq_create.block_size, seq_create.max_value,
                seq_create.strategy, seq);
EXCEPTION
    -- the row, or the native sequence of a row, exists
    WHEN unique_violation OR duplicate_table THEN
        RAISE EXCEPTION 'block sequence "%" already exists', seq_create.name
            USING ERRCODE = 'duplicate_object';
END;
$$;

CREATE OR REPLACE FUNCTION seq_drop(name text) RETURNS void
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    seq regclass;
BEGIN
    IF @extschema@.seq_on_coordinator() THEN
        PERFORM @extschema@.seq_coordinator_call('seq_drop', ARRAY[name]);
        RETURN;
    END IF;
    DELETE FROM @extschema@.id_sequences AS s WHERE s.name = seq_drop.name
        RETURNING s.sequence INTO seq;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'block sequence "%" does not exist', seq_drop.name
            USING ERRCODE = 'undefined_object';
    END IF;
    PERFORM @extschema@.seq_workers_forget(seq_drop.name);
    -- its native sequence, unless someone dropped it already
    IF seq IS NOT NULL AND EXISTS (SELECT FROM pg_class c WHERE c.oid = seq) THEN
        EXECUTE format('DROP SEQUENCE %s', seq);
    END IF;
END;
$$;

CREATE OR REPLACE FUNCTION seq_alter(name text, block_size integer DEFAULT NULL,
                          max_value bigint DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    cur @extschema@.id_sequences;
    next_unused numeric;
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'block sequence name must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF @extschema@.seq_on_coordinator() THEN
        PERFORM @extschema@.seq_coordinator_call('seq_alter',
            ARRAY[name, block_size::text, max_value::text]);
        RETURN;
    END IF;
    cur := @extschema@.seq_lock_row(seq_alter.name);
    IF block_size IS NOT NULL AND (block_size < 1 OR block_size > 1000000000) THEN
        RAISE EXCEPTION 'block_size must be between 1 and 1000000000'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('The value given was %s.', block_size);
    END IF;
    IF cur.strategy = 'sequence' AND block_size IS NOT NULL
       AND block_size <> cur.block_size THEN
        RAISE EXCEPTION 'cannot change the block size of block sequence "%"', seq_alter.name
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Its blocks come from a native sequence (strategy "sequence") whose increment is the block size.',
                  HINT = 'Create another block sequence, with seq_create(..., start => ...) above the IDs handed out.';
    END IF;
    next_unused := @extschema@.seq_next_unused(cur);
    IF max_value IS NOT NULL AND max_value::numeric < next_unused - 1 THEN
        RAISE EXCEPTION 'max_value of block sequence "%" cannot be lowered below IDs already handed out', seq_alter.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('IDs up to %s have been handed out.', next_unused - 1);
    END IF;
    UPDATE @extschema@.id_sequences AS s
        SET block_size = coalesce(seq_alter.block_size, s.block_size),
            max_value = coalesce(seq_alter.max_value, s.max_value),
            exhausted = s.exhausted AND seq_alter.max_value IS NULL
        WHERE s.name = seq_alter.name;
END;
$$;

CREATE OR REPLACE FUNCTION seq_advance(name text, past bigint) RETURNS bigint
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    cur @extschema@.id_sequences;
    next_unused numeric;
BEGIN
    IF @extschema@.seq_on_coordinator() THEN
        RETURN @extschema@.seq_coordinator_call('seq_advance', ARRAY[name, past::text])::bigint;
    END IF;
    cur := @extschema@.seq_lock_row(seq_advance.name);
    IF past >= cur.max_value THEN
        RAISE EXCEPTION 'cannot advance block sequence "%" past its max_value', seq_advance.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('past is %s and max_value is %s.', past, cur.max_value),
                  HINT = 'Raise max_value with seq_alter() first.';
    END IF;
    next_unused := @extschema@.seq_next_unused(cur);
    IF past < next_unused THEN
        RETURN next_unused;
    END IF;
    IF cur.strategy = 'sequence' THEN
        PERFORM setval(cur.sequence, past + 1, false);
    END IF;
    UPDATE @extschema@.id_sequences AS s
        SET next_block_start = seq_advance.past + 1
        WHERE s.name = seq_advance.name;
    RETURN past + 1;
END;
$$;

