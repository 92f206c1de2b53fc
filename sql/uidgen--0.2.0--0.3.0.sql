/* uidgen--0.2.0--0.3.0.sql: update script (hand-edited) */

\echo Use "ALTER EXTENSION uidgen UPDATE TO '0.3.0'" to load this file. \quit

-- Besides the sections below, 0.3.0's install script differs only in what
-- CREATE EXTENSION says without the preload (a NOTICE), which an update does
-- not repeat.

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
    RETURN cur;
END;
$$;
