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

-- Refuse snowflake IDs on this node until restart if its worker id is one
-- of "workers"; uidgen_citus_check() calls it on each node.
CREATE FUNCTION uidgen_citus_refuse(workers integer[])
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'uidgen_citus_refuse'
    LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION uidgen_citus_refuse(integer[]) FROM PUBLIC;

-- On the coordinator: every node's worker id and its source ('setting',
-- 'registry', 'citus'; the error if it has none), and whether another
-- node uses the same worker id; each such node then refuses snowflake IDs
-- until it restarts.
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
    IF conflicting IS NOT NULL THEN
        PERFORM run_command_on_all_nodes(
            format('SELECT %s.uidgen_citus_refuse(%L)', quote_ident(ext_schema), conflicting));
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
    -- the cache entry is freed whatever the strategy, so that seq_next()
    -- serves nothing it cached before the change; the IDs prefetched and
    -- not handed out go back to the row (block prefetch, strategy 'table')
    back := @extschema@.seq_unprefetch(cur.name, cur.next_block_start);
    IF cur.strategy = 'table' AND back < cur.next_block_start THEN
        UPDATE @extschema@.id_sequences AS s SET next_block_start = back
            WHERE s.name = seq_lock_row.name;
        cur.next_block_start := back;
    END IF;
    RETURN cur;
END;
$$;
