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
-- out, next_block_start the durable end, reserved_ahead the IDs between
-- (next_id + reserved_ahead * increment = next_block_start; lost as a gap
-- if the server stops), like last_value and log_cnt of a sequence.
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
    -- no Citus worker may still serve a block of it (leases, below)
    PERFORM @extschema@.seq_lease_wait(cur.strategy, cur.worker_lease_until);
    -- the cache entry is freed whatever the strategy, so that seq_next()
    -- serves nothing it cached before the change; the IDs prefetched and
    -- not handed out go back to the row (block prefetch, strategy 'table')
    back := @extschema@.seq_unprefetch(cur.name, cur.next_block_start);
    IF cur.strategy = 'table' AND back <> cur.next_block_start THEN
        UPDATE @extschema@.id_sequences AS s SET next_block_start = back
            WHERE s.name = seq_lock_row.name;
        cur.next_block_start := back;
    END IF;
    -- then what Citus workers hold of it is thrown away (Citus section
    -- below): a refill from now on waits for the row
    PERFORM @extschema@.seq_workers_forget(seq_lock_row.name);
    RETURN cur;
END;
$$;

-- Text forms: ULID, TypeID, snowflake IDs in base32 (issue 23) ---------------

-- A UUID's 128 bits as a ULID (https://github.com/ulid/spec): 26 characters
-- of Crockford's base32, upper case; the inverse accepts either case and
-- rejects a first character above '7' (an overflow).  Pure functions of
-- their argument: IMMUTABLE, for indexes and generated columns.  A UUIDv7's
-- ULID sorts (COLLATE "C") as the UUID does.  Bad input: 22P02, naming the
-- character and its position, or the length.
CREATE FUNCTION uuid_to_ulid(id uuid) RETURNS text
    AS 'MODULE_PATHNAME', 'uuid_to_ulid'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION ulid_to_uuid(ulid text) RETURNS uuid
    AS 'MODULE_PATHNAME', 'ulid_to_uuid'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- TypeIDs (https://github.com/jetify-com/typeid, spec version 0.3.0):
-- prefix '_' suffix, the prefix [a-z_] (at most 63, a letter at each end)
-- or empty without the separator, the suffix the UUID in 26 characters of
-- lower-case base32.  A bad prefix given to uuid_to_typeid() is 22023; a
-- bad TypeID is 22P02, as is one of another prefix than the one required.
CREATE FUNCTION uuid_to_typeid(prefix text, id uuid) RETURNS text
    AS 'MODULE_PATHNAME', 'uuid_to_typeid'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION typeid_to_uuid(typeid text) RETURNS uuid
    AS 'MODULE_PATHNAME', 'typeid_to_uuid'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION typeid_to_uuid(typeid text, prefix text) RETURNS uuid
    AS 'MODULE_PATHNAME', 'typeid_to_uuid_of_type'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION typeid_prefix(typeid text) RETURNS text
    AS 'MODULE_PATHNAME', 'typeid_prefix'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- A snowflake ID (any non-negative bigint) as 13 characters of Crockford's
-- base32, upper case, fixed width: its text order (COLLATE "C") is the
-- numeric order.  For JavaScript and JSON, where numbers above 2^53 lose
-- precision.  The inverse accepts either case; a negative ID is 22023.
CREATE FUNCTION snowflake_to_text(id bigint) RETURNS text
    AS 'MODULE_PATHNAME', 'snowflake_to_text'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION text_to_snowflake(id text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'text_to_snowflake'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Converting serial and identity columns (issue 23) ---------------------------

-- What feeds a column now, for the conversions below: its type, whether it
-- is an identity column ('a' always, 'd' by default, '' not), its default
-- expression (NULL if none), and the sequence behind the identity or the
-- default (NULL if none) with the next value that sequence would give
-- (NULL if it gives none: exhausted, or descending).  42703 for a column
-- that does not exist.  Reads the catalogs and the sequence; takes no lock.
CREATE FUNCTION uidgen_column_source(tbl regclass, col name,
                                     OUT type regtype, OUT identity "char",
                                     OUT default_expr text, OUT sequence regclass,
                                     OUT sequence_next numeric)
    LANGUAGE plpgsql STABLE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    attnum smallint;
    last numeric;
    called boolean;
    inc bigint;
    maxv bigint;
BEGIN
    SELECT a.atttypid::regtype, a.attidentity, a.attnum,
           pg_get_expr(d.adbin, d.adrelid)
      INTO type, identity, attnum, default_expr
      FROM pg_attribute a
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', col, tbl
            USING ERRCODE = 'undefined_column';
    END IF;
    IF identity <> '' THEN
        sequence := pg_get_serial_sequence(tbl::text, col)::regclass;
    ELSE
        -- the sequence a default such as nextval('t_id_seq') depends on
        SELECT dep.refobjid::regclass INTO sequence
          FROM pg_attrdef d
          JOIN pg_depend dep ON dep.classid = 'pg_attrdef'::regclass AND dep.objid = d.oid
                            AND dep.refclassid = 'pg_class'::regclass
          JOIN pg_class c ON c.oid = dep.refobjid AND c.relkind = 'S'
         WHERE d.adrelid = tbl AND d.adnum = attnum
         LIMIT 1;
    END IF;
    IF sequence IS NOT NULL THEN
        SELECT s.seqincrement, s.seqmax INTO inc, maxv FROM pg_sequence s WHERE s.seqrelid = sequence;
        EXECUTE format('SELECT last_value, is_called FROM %s', sequence) INTO last, called;
        sequence_next := CASE WHEN NOT called THEN last ELSE last + inc END;
        IF inc < 0 OR sequence_next > maxv THEN
            sequence_next := NULL;
        END IF;
    END IF;
END;
$$;

-- The start of both conversions below ("what" names the caller in errors):
-- refuses unless the transaction reads committed rows with fresh snapshots
-- (25001; an older snapshot, REPEATABLE READ or SERIALIZABLE, could read
-- max(column) from before the lock), locks the table ACCESS EXCLUSIVE,
-- and returns uidgen_column_source(), refusing (55000) a default that is
-- not a sequence's: only serial, identity and default-less columns are
-- converted.
CREATE FUNCTION uidgen_convert_begin(what text, tbl regclass, col name,
                                     OUT type regtype, OUT identity "char",
                                     OUT default_expr text, OUT sequence regclass,
                                     OUT sequence_next numeric)
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    src record;
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION '% needs READ COMMITTED isolation', what
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = format('The transaction is %s: its snapshot may predate the table lock, and the largest value in the column would then be read from before it.',
                                  upper(current_setting('transaction_isolation'))),
                  HINT = 'Run it in a READ COMMITTED transaction (the default).';
    END IF;
    EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', tbl);
    src := @extschema@.uidgen_column_source(tbl, col);
    IF src.default_expr IS NOT NULL AND src.sequence IS NULL THEN
        RAISE EXCEPTION 'column "%" of relation % has a default that is not a sequence''s', col, tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Its default is %s; only a serial or identity column, or one without a default, is converted.',
                                  src.default_expr);
    END IF;
    SELECT src.type, src.identity, src.default_expr, src.sequence, src.sequence_next
      INTO type, identity, default_expr, sequence, sequence_next;
END;
$$;

-- Switches a bigint column fed by a serial (bigserial) sequence, an
-- identity, or nothing, to DEFAULT snowflake_next(), in the caller's
-- transaction.  Locks the table ACCESS EXCLUSIVE first (waiting for every
-- transaction that inserted or holds it; inserts queued behind the lock use
-- the new default once this commits), then draws one snowflake ID and
-- refuses (22003) if the column's largest value or the old sequence's next
-- value is not below it: every later snowflake_next() of this server is
-- above that ID, so no new ID can equal an old one.  An identity is
-- dropped (ALTER COLUMN DROP IDENTITY, which drops its sequence); a serial's
-- sequence is kept, still owned by the column, and no longer used by the
-- default.  Returns the ID drawn: every ID the new default gives is above it.
-- SECURITY INVOKER: the caller must own the table.
CREATE FUNCTION convert_to_snowflake(tbl regclass, col name) RETURNS bigint
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    src record;
    top bigint;
    first bigint;
BEGIN
    src := @extschema@.uidgen_convert_begin('convert_to_snowflake()', tbl, col);
    IF src.type <> 'bigint'::regtype THEN
        RAISE EXCEPTION 'column "%" of relation % is %, not bigint', col, tbl, src.type
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'Snowflake IDs are 64-bit integers.',
                  HINT = format('Widen it first: ALTER TABLE %s ALTER COLUMN %I TYPE bigint.', tbl, col);
    END IF;
    EXECUTE format('SELECT max(%I) FROM %s', col, tbl) INTO top;
    first := @extschema@.snowflake_next();
    IF top >= first OR src.sequence_next >= first THEN
        RAISE EXCEPTION 'existing values of column "%" of relation % could collide with snowflake IDs', col, tbl
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = format('The largest value is %s and the sequence %s would give %s next; both must be below %s, the snowflake ID just drawn, which every later snowflake ID of this server is above.',
                                  coalesce(top::text, 'none'), coalesce(src.sequence::text, '(none)'),
                                  coalesce(src.sequence_next::text, 'none'), first),
                  HINT = 'Use convert_to_block_sequence(), whose IDs continue above the existing ones.';
    END IF;
    IF src.identity <> '' THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
    END IF;
    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT @extschema@.snowflake_next()', tbl, col);
    RETURN first;
END;
$$;

-- Moves a serial, identity or default-less column (bigint, integer or
-- smallint) to a new block sequence "seq" and DEFAULT seq_next(seq), in the
-- caller's transaction.  Locks the table ACCESS EXCLUSIVE first, as above,
-- then creates the sequence with seq_create() (block_size, strategy), its
-- start above the column's largest value and above the next value of the
-- old sequence (so values a session still holds from the old sequence's
-- cache are below it too), its max_value the column type's largest.  An
-- identity is dropped with its sequence; a serial's sequence is kept,
-- owned by the column.  The new default serves from the commit on (the
-- allocator reads committed rows).  Returns the first ID of the sequence.
-- SECURITY INVOKER: the caller must own the table and may call seq_create().
CREATE FUNCTION convert_to_block_sequence(tbl regclass, col name, seq text,
                                          block_size integer DEFAULT 1000,
                                          strategy text DEFAULT 'table')
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    src record;
    top numeric;
    start numeric;
    maxv bigint;
BEGIN
    src := @extschema@.uidgen_convert_begin('convert_to_block_sequence()', tbl, col);
    maxv := CASE src.type WHEN 'bigint'::regtype THEN 9223372036854775807
                          WHEN 'integer'::regtype THEN 2147483647
                          WHEN 'smallint'::regtype THEN 32767 END;
    IF maxv IS NULL THEN
        RAISE EXCEPTION 'column "%" of relation % is %, not an integer type', col, tbl, src.type
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'Block sequences give bigint IDs; the column must be bigint, integer or smallint.';
    END IF;
    EXECUTE format('SELECT max(%I) FROM %s', col, tbl) INTO top;
    start := greatest(top + 1, src.sequence_next, 1);
    IF start > maxv OR start = 9223372036854775807 THEN
        RAISE EXCEPTION 'column "%" of relation % has no values left above its existing ones', col, tbl
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = format('The next free value would be %s; the column''s type %s ends at %s.',
                                  start, src.type, maxv);
    END IF;
    PERFORM @extschema@.seq_create(seq, start::bigint, block_size, maxv, strategy);
    IF src.identity <> '' THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
    END IF;
    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT @extschema@.seq_next(%L)', tbl, col, seq);
    RETURN start::bigint;
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

-- (seq_create() and seq_alter(): replaced by new signatures in the section
-- "Formatted numbers of block sequences" at the end.)

CREATE OR REPLACE FUNCTION seq_advance(name text, past bigint) RETURNS bigint
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    cur @extschema@.id_sequences;
    next_unused numeric;
    next_id numeric;
BEGIN
    IF @extschema@.seq_on_coordinator() THEN
        RETURN @extschema@.seq_coordinator_call('seq_advance', ARRAY[name, past::text])::bigint;
    END IF;
    cur := @extschema@.seq_lock_row(seq_advance.name);
    -- numbering per period (section at the end)
    IF cur.reset <> 'none' THEN
        RETURN @extschema@.seq_advance_period(cur, past);
    END IF;
    IF cur.increment > 0 AND past >= cur.max_value THEN
        RAISE EXCEPTION 'cannot advance block sequence "%" past its max_value', seq_advance.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('past is %s and max_value is %s.', past, cur.max_value),
                  HINT = 'Raise max_value with seq_alter() first.';
    END IF;
    IF cur.increment < 0 AND past <= cur.min_value THEN
        RAISE EXCEPTION 'cannot advance block sequence "%" past its min_value', seq_advance.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('past is %s and min_value is %s.', past, cur.min_value),
                  HINT = 'Lower min_value with seq_alter() first.';
    END IF;
    next_unused := @extschema@.seq_next_unused(cur);
    IF (past - next_unused) * sign(cur.increment) < 0 THEN
        RETURN next_unused;
    END IF;
    -- the first ID of the step beyond past; past the last ID that may be
    -- handed out, the position after it (the sequence is then exhausted)
    next_id := next_unused + (div(past - next_unused, cur.increment) + 1) * cur.increment;
    next_id := next_unused + least(div(next_id - next_unused, cur.increment),
                                   @extschema@.seq_room(next_unused::bigint, cur.increment,
                                                        cur.min_value, cur.max_value)) * cur.increment;
    IF cur.strategy = 'sequence' THEN
        PERFORM setval(cur.sequence, next_id::bigint, false);
    END IF;
    UPDATE @extschema@.id_sequences AS s
        SET next_block_start = next_id
        WHERE s.name = seq_advance.name;
    RETURN next_id;
END;
$$;


-- Gapless numbers (issue 22) ---------------------------------------------------

-- Strategy 'gapless': the number is taken by an UPDATE of the row in the
-- caller's own transaction (src/blocks/gapless.c).
ALTER TABLE id_sequences DROP CONSTRAINT id_sequences_strategy_check;
ALTER TABLE id_sequences ADD CONSTRAINT id_sequences_strategy_check
    CHECK (strategy IN ('table', 'sequence', 'gapless'));

-- seq_create() with strategy 'gapless': replaced by its new signature in
-- the section "Formatted numbers of block sequences" at the end.

-- Leases on Citus worker blocks (issue 25) ---------------------------------

-- The latest moment a block that a Citus worker reserved of this sequence
-- may still be served (src/blocks/leasewait.c); NULL: never leased.  Set
-- by seq_worker_lease() before the worker's range is reserved.
ALTER TABLE id_sequences ADD COLUMN worker_lease_until timestamptz;

-- A Citus worker's lease on the block it is about to reserve of "name":
-- worker_lease_until moved to at least now + uidgen.citus_block_lease,
-- committed before the range (its own statement).  Returns the lease in
-- milliseconds, which the worker serves the block for.  Not for 'gapless'
-- (never served by workers).  42704 if no such sequence.  PUBLIC may call
-- it, as seq_reserve_block(): a worker calls it as the role that runs
-- seq_next() there.  Such a role can make changes of the sequence wait up
-- to two leases after its last call (docs/citus.md).
CREATE FUNCTION seq_worker_lease(name text) RETURNS integer
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    lease interval := coalesce(current_setting('uidgen.citus_block_lease', true), '10s')::interval;
    reset text;
BEGIN
    UPDATE @extschema@.id_sequences AS s
        SET worker_lease_until = greatest(s.worker_lease_until, clock_timestamp() + lease)
        WHERE s.name = seq_worker_lease.name AND s.strategy IS DISTINCT FROM 'gapless'
        RETURNING s.reset INTO reset;
    -- numbers of a period must not outlive it in a worker's range
    IF reset IS DISTINCT FROM 'none' AND FOUND THEN
        RAISE EXCEPTION 'block sequence "%" numbered per period cannot be used on a Citus worker', seq_worker_lease.name
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = format('It restarts every %s, and a worker could hand out a range it holds after the period ended.', reset),
                  HINT = 'Take its numbers on the coordinator.';
    END IF;
    -- no row leased: no range may follow (a row created meanwhile would have none)
    IF NOT FOUND AND NOT EXISTS (SELECT FROM @extschema@.id_sequences s
                                 WHERE s.name = seq_worker_lease.name AND s.strategy = 'gapless') THEN
        RAISE EXCEPTION 'block sequence "%" does not exist', seq_worker_lease.name
            USING ERRCODE = 'undefined_object';
    END IF;
    RETURN (extract(epoch FROM lease) * 1000)::integer;
END;
$$;

-- seq_lock_row() (seq_advance(), seq_alter()) waits here, the row locked,
-- for the leases of the row it locked, whatever the strategy, also when it
-- then changes nothing: seq_advance() to a point below the next unused ID
-- returns without an UPDATE, which the trigger would have made wait.
CREATE FUNCTION seq_lease_wait(strategy text, worker_lease_until timestamptz) RETURNS void
    AS 'MODULE_PATHNAME', 'seq_lease_wait'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION seq_lease_wait(text, timestamptz) FROM PUBLIC;

-- Every change of a row but the allocator's and a lease recording, and
-- TRUNCATE, wait (the row locked) until no worker lease of it can run.
CREATE FUNCTION id_sequences_lease_wait() RETURNS trigger
    AS 'MODULE_PATHNAME', 'seq_lease_trigger'
    LANGUAGE C;
REVOKE ALL ON FUNCTION id_sequences_lease_wait() FROM PUBLIC;

CREATE TRIGGER id_sequences_lease_wait
    BEFORE UPDATE OR DELETE ON id_sequences
    FOR EACH ROW EXECUTE FUNCTION id_sequences_lease_wait();

CREATE TRIGGER id_sequences_lease_wait_all
    BEFORE TRUNCATE ON id_sequences
    FOR EACH STATEMENT EXECUTE FUNCTION id_sequences_lease_wait();

-- ALWAYS, as id_sequences_invalidate: under session_replication_role = replica too.
ALTER TABLE id_sequences ENABLE ALWAYS TRIGGER id_sequences_lease_wait;
ALTER TABLE id_sequences ENABLE ALWAYS TRIGGER id_sequences_lease_wait_all;

-- Formatted numbers of block sequences (issue 22, part 3) -------------------

-- The format language and the check character: src/text/numformat.c.
-- seq_format_valid(format, time_zone, max_value): true, or 22023 for a bad
-- format (NULL: none) or an unknown time zone.  The CHECK below, so that
-- not even a hand-written UPDATE of id_sequences stores a bad format.
CREATE FUNCTION seq_format_valid(format text, time_zone text, max_value bigint)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'seq_format_valid'
    LANGUAGE C STABLE PARALLEL SAFE;

-- A number formatted with a format, the date of "at" in time_zone.
CREATE FUNCTION seq_format_number(format text, time_zone text, n bigint, at timestamptz)
    RETURNS text
    AS 'MODULE_PATHNAME', 'seq_format_number'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- The ISO/IEC 7064 MOD 37,36 check character of the letters and digits of
-- a text (what {check} appends), to verify a number typed in.
CREATE FUNCTION seq_check_char(s text) RETURNS text
    AS 'MODULE_PATHNAME', 'seq_format_check_char'
    LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- format: NULL for none.  time_zone: the zone of the date fields, fixed at
-- creation, never NULL (UTC by default), so that a sequence's dates do not
-- depend on the session's TimeZone.
ALTER TABLE id_sequences
    ADD COLUMN format text,
    ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC',
    ADD CONSTRAINT id_sequences_format_check
        CHECK (@extschema@.seq_format_valid(format, time_zone, max_value));

-- The format and time zone of a sequence: 42704 for no such sequence,
-- 55000 if it has no format (the name is right; the sequence lacks what
-- the call needs).  For seq_format() and seq_next_text().
CREATE FUNCTION seq_format_of(name text, OUT format text, OUT time_zone text,
                              OUT reset text, OUT max_value bigint)
    LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    SELECT s.format, s.time_zone, s.reset, s.max_value INTO format, time_zone, reset, max_value
        FROM @extschema@.id_sequences AS s WHERE s.name = seq_format_of.name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'block sequence "%" does not exist', seq_format_of.name
            USING ERRCODE = 'undefined_object';
    END IF;
    IF format IS NULL THEN
        RAISE EXCEPTION 'block sequence "%" has no format', seq_format_of.name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Give it one with seq_alter(name, format => ...), or call seq_next().';
    END IF;
END;
$$;

-- A number of a sequence formatted with its format, the date of "at" (by
-- default the moment of the call) in its time zone: for the numbers of a
-- reserved block.
CREATE FUNCTION seq_format(name text, n bigint, at timestamptz DEFAULT NULL)
    RETURNS text
    LANGUAGE sql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
SELECT CASE WHEN f.reset = 'none'
            THEN @extschema@.seq_format_number(f.format, f.time_zone, n, coalesce(at, clock_timestamp()))
            ELSE @extschema@.seq_format_period(f.format, f.time_zone, f.reset, f.max_value, n, at) END
  FROM @extschema@.seq_format_of(name) AS f
 WHERE n IS NOT NULL
$$;

-- The next number of a sequence, taken exactly as seq_next() takes it
-- (same strategy, same guarantees; 'gapless': in the caller's
-- transaction), formatted with the date of the moment it was taken.
-- Refused by seq_format_of() before a number is taken.
CREATE FUNCTION seq_next_text(name text) RETURNS text
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    f record;
    n bigint;
BEGIN
    f := @extschema@.seq_format_of(seq_next_text.name);
    n := @extschema@.seq_next(seq_next_text.name);
    IF f.reset <> 'none' THEN
        RETURN @extschema@.seq_format_period(f.format, f.time_zone, f.reset, f.max_value, n, NULL);
    END IF;
    RETURN @extschema@.seq_format_number(f.format, f.time_zone, n, clock_timestamp());
END;
$$;

-- seq_create() and seq_alter() take the format (and seq_create() the time
-- zone) as new last parameters: replaced.  The EXECUTE privileges granted
-- on the old ones (say, to a migrations role) are kept for the end of this
-- script, which grants them again on the new ones.
SELECT pg_catalog.set_config('uidgen_update.acl_seq_create', coalesce(p.proacl::text, ''), true)
    FROM pg_catalog.pg_proc p
    WHERE p.oid = '@extschema@.seq_create(text, bigint, integer, bigint, text)'::pg_catalog.regprocedure;
SELECT pg_catalog.set_config('uidgen_update.acl_seq_alter', coalesce(p.proacl::text, ''), true)
    FROM pg_catalog.pg_proc p
    WHERE p.oid = '@extschema@.seq_alter(text, integer, bigint)'::pg_catalog.regprocedure;
DROP FUNCTION seq_create(text, bigint, integer, bigint, text);
DROP FUNCTION seq_alter(text, integer, bigint);

-- The administrative functions run as the extension owner with a fixed
-- search_path, so that roles granted EXECUTE on them need no privilege on
-- the table and a hostile search_path cannot redirect them.  Only the owner
-- (a superuser) may call them until it grants EXECUTE.
--
-- Strategy 'table' keeps the position in next_block_start; strategy
-- 'sequence' in a native sequence of its own (INCREMENT BY block_size
-- times increment, one nextval() per block), created here next to
-- id_sequences, owned by its name column (DROP EXTENSION drops it) and
-- dropped by seq_drop().
-- Strategy 'gapless' keeps it in next_block_start too, moved by an UPDATE
-- in the caller's own transaction (src/blocks/gapless.c).
CREATE FUNCTION seq_create(name text, start bigint DEFAULT 1,
                           block_size integer DEFAULT 1000,
                           max_value bigint DEFAULT NULL,
                           strategy text DEFAULT 'table',
                           format text DEFAULT NULL,
                           time_zone text DEFAULT 'UTC',
                           increment bigint DEFAULT 1,
                           min_value bigint DEFAULT -9223372036854775808,
                           reset text DEFAULT 'none')
    RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    nsp regnamespace;
    seq regclass;
BEGIN
    IF name IS NULL OR start IS NULL OR block_size IS NULL
       OR strategy IS NULL OR time_zone IS NULL OR increment IS NULL
       OR min_value IS NULL OR reset IS NULL THEN
        RAISE EXCEPTION 'arguments of seq_create() other than format and max_value must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- numbering per period (section at the end): restarts at start, its
    -- min_value; max_value by default the widest count the period leaves
    IF reset <> 'none' THEN
        PERFORM @extschema@.seq_period_check(reset, strategy, start, increment, min_value,
                                             max_value, nullif(format, ''));
        max_value := coalesce(max_value, @extschema@.seq_period_max(reset));
        min_value := start;
    END IF;
    -- no ID above max_value: counting down, start unless given
    max_value := coalesce(max_value, CASE WHEN increment < 0 THEN start
                                          ELSE 9223372036854775807 END);
    -- formatted numbers (section at the end): '' is no format; a bad
    -- format or time zone fails (22023) in the CHECK of id_sequences
    format := nullif(format, '');
    IF format IS NOT NULL AND start < 0 THEN
        RAISE EXCEPTION 'a block sequence with a format must not start below 0'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('start is %s; formatted numbers must not be negative.', start);
    END IF;
    IF format IS NOT NULL AND increment < 0 AND min_value < 0 THEN
        RAISE EXCEPTION 'a block sequence with a format counting down must not go below 0'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('min_value is %s; formatted numbers must not be negative.', min_value),
                  HINT = 'Give it min_value => 0 or above.';
    END IF;
    -- a Citus worker: the coordinator's sequences (Citus section below)
    IF @extschema@.seq_on_coordinator() THEN
        PERFORM @extschema@.seq_coordinator_call('seq_create',
            ARRAY[name, start::text, block_size::text, max_value::text, strategy,
                  format, time_zone, increment::text, min_value::text, reset]);
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
    -- steps and direction (section at the end)
    IF increment = 0 OR abs(increment::numeric) > 1000000000 THEN
        RAISE EXCEPTION 'increment must not be 0 and at most 1000000000 in absolute value'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('The value given was %s.', increment);
    END IF;
    IF min_value > max_value THEN
        RAISE EXCEPTION 'min_value must not be greater than max_value'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('min_value is %s and max_value is %s.', min_value, max_value);
    END IF;
    IF start > max_value THEN
        RAISE EXCEPTION 'start must not be greater than max_value'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('start is %s and max_value is %s.', start, max_value);
    END IF;
    IF start < min_value THEN
        RAISE EXCEPTION 'start must not be less than min_value'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('start is %s and min_value is %s.', start, min_value);
    END IF;
    -- within max_value, but within the increment of the last bigint
    IF increment > 0 AND @extschema@.seq_room(start, increment, min_value, max_value) = 0 THEN
        RAISE EXCEPTION 'start must not be greater than %', 9223372036854775807 - increment
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('start is %s; with increment %s no ID is issued above %s, so that the position after the last ID is a bigint.',
                                  start, increment, 9223372036854775807 - increment);
    END IF;
    IF increment < 0 AND @extschema@.seq_room(start, increment, min_value, max_value) = 0 THEN
        RAISE EXCEPTION 'start must not be less than %', -9223372036854775808 - increment
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('start is %s; with increment %s no ID is issued below %s, so that the position after the last ID is a bigint.',
                                  start, increment, -9223372036854775808 - increment);
    END IF;
    IF strategy NOT IN ('table', 'sequence', 'gapless') THEN
        RAISE EXCEPTION 'unknown block sequence strategy "%"', strategy
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'The strategies are "table", "sequence" and "gapless".';
    END IF;
    IF strategy = 'sequence' THEN
        SELECT c.relnamespace INTO nsp FROM pg_class c
            WHERE c.oid = '@extschema@.id_sequences'::regclass;
        -- one nextval() per block: block_size values apart, each one
        -- increment from the last; counting down from start, counting up
        -- from start on (steps and direction, section at the end)
        EXECUTE format('CREATE SEQUENCE %s.%I AS bigint INCREMENT BY %s %s START WITH %s'
                       ' CACHE 1 NO CYCLE OWNED BY @extschema@.id_sequences.name',
                       nsp, 'id_sequences_' || md5(name), block_size::bigint * increment,
                       CASE WHEN increment < 0 THEN format('MAXVALUE %s NO MINVALUE', start)
                            ELSE format('MINVALUE %s NO MAXVALUE', start) END,
                       start);
        seq := format('%s.%I', nsp, 'id_sequences_' || md5(name))::regclass;
    END IF;
    INSERT INTO @extschema@.id_sequences AS s (name, next_block_start, block_size, max_value,
                                               strategy, sequence, format, time_zone,
                                               increment, min_value, reset)
        VALUES (seq_create.name, seq_create.start, seq_create.block_size, seq_create.max_value,
                seq_create.strategy, seq, seq_create.format, seq_create.time_zone,
                seq_create.increment, seq_create.min_value, seq_create.reset);
EXCEPTION
    -- the row, or the native sequence of a row, exists
    WHEN unique_violation OR duplicate_table THEN
        RAISE EXCEPTION 'block sequence "%" already exists', seq_create.name
            USING ERRCODE = 'duplicate_object';
END;
$$;

-- Changes the block size, max_value, format, increment and/or min_value
-- (NULL: unchanged; format '': none).  The far bound (max_value counting
-- up, min_value counting down) cannot pass an ID already handed out;
-- setting a bound or the increment clears exhausted.  A new increment
-- applies from the next ID not handed out on; its sign, the direction, is
-- fixed (counting the other way would hand out IDs again).  A new format
-- applies to the numbers formatted from then on; texts formatted before
-- are the caller's and stay as they are.  The block size of strategy
-- 'sequence' times its increment is its native sequence's increment,
-- which cannot change safely (ALTER SEQUENCE is transactional, the
-- sequence's position is not): a new block size or increment for it is
-- refused.
CREATE FUNCTION seq_alter(name text, block_size integer DEFAULT NULL,
                          max_value bigint DEFAULT NULL, format text DEFAULT NULL,
                          increment bigint DEFAULT NULL, min_value bigint DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    cur @extschema@.id_sequences;
    next_unused numeric;
    last_used numeric;
    new_format text;
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'block sequence name must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF @extschema@.seq_on_coordinator() THEN
        PERFORM @extschema@.seq_coordinator_call('seq_alter',
            ARRAY[name, block_size::text, max_value::text, format, increment::text,
                  min_value::text]);
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
                  DETAIL = 'Its blocks come from a native sequence (strategy "sequence") whose increment is the block size times the increment.',
                  HINT = 'Create another block sequence, with seq_create(..., start => ...) above the IDs handed out.';
    END IF;
    IF increment = 0 OR abs(increment::numeric) > 1000000000 THEN
        RAISE EXCEPTION 'increment must not be 0 and at most 1000000000 in absolute value'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('The value given was %s.', increment);
    END IF;
    IF sign(increment) <> sign(cur.increment) THEN
        RAISE EXCEPTION 'cannot change the direction of block sequence "%"', seq_alter.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its increment is %s; counting the other way would hand out IDs again.',
                                  cur.increment),
                  HINT = 'Create another block sequence for the other direction.';
    END IF;
    IF cur.strategy = 'sequence' AND increment <> cur.increment THEN
        RAISE EXCEPTION 'cannot change the increment of block sequence "%"', seq_alter.name
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Its blocks come from a native sequence (strategy "sequence") whose increment is the block size times the increment.',
                  HINT = 'Create another block sequence, with seq_create(..., start => ...) beyond the IDs handed out.';
    END IF;
    IF coalesce(min_value, cur.min_value) > coalesce(max_value, cur.max_value) THEN
        RAISE EXCEPTION 'min_value must not be greater than max_value'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('min_value would be %s and max_value %s.',
                                  coalesce(min_value, cur.min_value), coalesce(max_value, cur.max_value));
    END IF;
    -- numbering per period (section at the end)
    IF cur.reset <> 'none' THEN
        PERFORM @extschema@.seq_period_check(cur.reset, cur.strategy,
                                             coalesce(min_value, cur.min_value),
                                             coalesce(increment, cur.increment),
                                             coalesce(min_value, cur.min_value),
                                             coalesce(max_value, cur.max_value),
                                             CASE WHEN format IS NULL THEN cur.format
                                                  ELSE nullif(format, '') END);
    END IF;
    IF cur.reset <> 'none' AND length(max_value::text) <> length(cur.max_value::text) THEN
        RAISE EXCEPTION 'cannot change the number of digits of max_value of block sequence "%"', seq_alter.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('It is numbered per %s: its numbers are the period followed by the count in %s digits, and a count of other digits would not sort with them.',
                                  cur.reset, length(cur.max_value::text));
    END IF;
    next_unused := @extschema@.seq_next_unused(cur);
    new_format := CASE WHEN format IS NULL THEN cur.format ELSE nullif(format, '') END;
    IF new_format IS NOT NULL AND cur.increment > 0 AND next_unused < 0 THEN
        RAISE EXCEPTION 'block sequence "%" cannot have a format while it hands out negative numbers', seq_alter.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its next number is %s; formatted numbers must not be negative.', next_unused);
    END IF;
    IF new_format IS NOT NULL AND cur.increment < 0 AND coalesce(min_value, cur.min_value) < 0 THEN
        RAISE EXCEPTION 'block sequence "%" cannot have a format while it may count down below 0', seq_alter.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its min_value would be %s; formatted numbers must not be negative.',
                                  coalesce(min_value, cur.min_value)),
                  HINT = 'Give it min_value => 0 or above.';
    END IF;
    -- the far bound may not pass the last ID that may have been handed
    -- out: the one before the next, as the last step is not known (the
    -- increment may have changed since an ID was last handed out)
    last_used := next_unused - sign(cur.increment);
    IF cur.increment > 0 AND max_value::numeric < last_used THEN
        RAISE EXCEPTION 'max_value of block sequence "%" cannot be lowered below IDs already handed out', seq_alter.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('IDs up to %s may have been handed out.', last_used);
    END IF;
    -- the near bound cannot pass the next ID either: it would be handed out
    -- outside min_value..max_value
    IF cur.increment > 0 AND min_value::numeric > next_unused THEN
        RAISE EXCEPTION 'min_value of block sequence "%" cannot be raised above its next ID', seq_alter.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its next ID is %s.', next_unused);
    END IF;
    IF cur.increment < 0 AND max_value::numeric < next_unused THEN
        RAISE EXCEPTION 'max_value of block sequence "%" cannot be lowered below its next ID', seq_alter.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its next ID is %s.', next_unused);
    END IF;
    IF cur.increment < 0 AND min_value::numeric > last_used THEN
        RAISE EXCEPTION 'min_value of block sequence "%" cannot be raised above IDs already handed out', seq_alter.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('IDs down to %s may have been handed out.', last_used);
    END IF;
    UPDATE @extschema@.id_sequences AS s
        SET block_size = coalesce(seq_alter.block_size, s.block_size),
            max_value = coalesce(seq_alter.max_value, s.max_value),
            min_value = coalesce(seq_alter.min_value, s.min_value),
            increment = coalesce(seq_alter.increment, s.increment),
            exhausted = s.exhausted AND seq_alter.max_value IS NULL
                        AND seq_alter.min_value IS NULL AND seq_alter.increment IS NULL,
            format = new_format
        WHERE s.name = seq_alter.name;
END;
$$;

REVOKE ALL ON FUNCTION seq_create(text, bigint, integer, bigint, text, text, text, bigint, bigint, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION seq_alter(text, integer, bigint, text, bigint, bigint) FROM PUBLIC;

-- The EXECUTE privileges of the old seq_create() and seq_alter() (kept
-- above), granted again on the new ones, with their grant option.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT f.sig, a.grantee, a.is_grantable
        FROM (VALUES ('@extschema@.seq_create(text, bigint, integer, bigint, text, text, text, bigint, bigint, text)',
                      pg_catalog.current_setting('uidgen_update.acl_seq_create')),
                     ('@extschema@.seq_alter(text, integer, bigint, text, bigint, bigint)',
                      pg_catalog.current_setting('uidgen_update.acl_seq_alter'))) AS f(sig, acl),
             LATERAL pg_catalog.aclexplode(NULLIF(f.acl, '')::pg_catalog.aclitem[]) AS a
        WHERE a.privilege_type = 'EXECUTE'
          AND a.grantee <> (SELECT p.proowner FROM pg_catalog.pg_proc p
                            WHERE p.oid = f.sig::pg_catalog.regprocedure)
    LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s%s', g.sig,
            CASE WHEN g.grantee = 0 THEN 'PUBLIC'
                 ELSE g.grantee::pg_catalog.regrole::text END,
            CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
END;
$$;

-- Steps and direction of block sequences (issue 22, part 1) ------------------

-- increment: the step between two IDs handed out one after the other,
-- negative counting down (strategy 'sequence': its native sequence's
-- increment is the block size times it); min_value: the bound counting
-- down, as max_value is counting up.  0.2.0's rows count up by one.  A sequence with a format
-- counting down stops at 0 or above: formatted numbers are not negative.
ALTER TABLE id_sequences
    ADD COLUMN increment bigint NOT NULL DEFAULT 1
        CONSTRAINT id_sequences_increment_check
        CHECK (increment <> 0 AND increment BETWEEN -1000000000 AND 1000000000),
    ADD COLUMN min_value bigint NOT NULL DEFAULT -9223372036854775808,
    ADD CONSTRAINT id_sequences_format_sign_check
        CHECK (format IS NULL OR increment > 0 OR min_value >= 0);

-- The next ID a sequence has not handed out yet: next_block_start, or for
-- strategy 'sequence' the block after its native sequence's last one (the
-- native sequence's increment is block_size times increment).  Used by
-- seq_alter() and seq_advance() with the row locked.
CREATE OR REPLACE FUNCTION seq_next_unused(cur id_sequences) RETURNS numeric
    LANGUAGE sql STABLE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
SELECT CASE WHEN cur.strategy = 'sequence'
            THEN coalesce(pg_sequence_last_value(cur.sequence)::numeric
                          + cur.block_size::numeric * cur.increment,
                          cur.next_block_start)
            ELSE cur.next_block_start END
$$;

-- How many IDs a sequence may still hand out from "next" on: up to
-- max_value counting up, down to min_value counting down, and never the
-- last |increment| values of bigint, so that the position after the last
-- ID handed out (next_block_start) is a bigint too.  0 when none.  What the
-- allocator, gapless numbers and the skip after a promotion check
-- (src/blocks); a SQL body, inlined into their statements.  Its operators
-- are bound when the script runs, with the extension's schema on the
-- search_path, and it then runs as the allocator (a superuser) and as the
-- owner of id_sequences: every operator is pg_catalog's, by name, and
-- every operand numeric, so that none created in that schema beforehand
-- (say -(bigint, numeric)) is bound instead.
CREATE FUNCTION seq_room(next bigint, increment bigint, min_value bigint, max_value bigint)
    RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE
        WHEN increment::pg_catalog.numeric OPERATOR(pg_catalog.>) 0::pg_catalog.numeric
             AND next::pg_catalog.numeric OPERATOR(pg_catalog.<=)
                 least(max_value::pg_catalog.numeric,
                       9223372036854775807::pg_catalog.numeric OPERATOR(pg_catalog.-) increment::pg_catalog.numeric)
        THEN pg_catalog.div(least(max_value::pg_catalog.numeric,
                                  9223372036854775807::pg_catalog.numeric OPERATOR(pg_catalog.-) increment::pg_catalog.numeric)
                            OPERATOR(pg_catalog.-) next::pg_catalog.numeric,
                            increment::pg_catalog.numeric) OPERATOR(pg_catalog.+) 1::pg_catalog.numeric
        WHEN increment::pg_catalog.numeric OPERATOR(pg_catalog.<) 0::pg_catalog.numeric
             AND next::pg_catalog.numeric OPERATOR(pg_catalog.>=)
                 greatest(min_value::pg_catalog.numeric,
                          (-9223372036854775808)::pg_catalog.numeric OPERATOR(pg_catalog.-) increment::pg_catalog.numeric)
        THEN pg_catalog.div(greatest(min_value::pg_catalog.numeric,
                                     (-9223372036854775808)::pg_catalog.numeric OPERATOR(pg_catalog.-) increment::pg_catalog.numeric)
                            OPERATOR(pg_catalog.-) next::pg_catalog.numeric,
                            increment::pg_catalog.numeric) OPERATOR(pg_catalog.+) 1::pg_catalog.numeric
        ELSE 0::pg_catalog.numeric END;

-- Numbering per period (issue 22, part 2) ------------------------------------

-- reset: 'none', or the period ('year', 'month', 'day', in time_zone) at
-- whose change the count restarts at min_value (the start).  A number of
-- such a sequence is the period's key (YYYY, YYYYMM or YYYYMMDD) followed
-- by the count in as many digits as max_value has: 2026000042 for the
-- 42nd of 2026 with max_value 999999.  So numbers of different periods
-- never collide and sort by period, then count.  period: the key of the
-- period next_block_start counts in (NULL before the first number);
-- reset_skip: the IDs by which the next period starts beyond min_value
-- (grown by the skip after a promotion or take-over near the period's end,
-- each time).  Counting up
-- only, not for strategy 'sequence'.  src/blocks/period.c.
-- The key of the period "at" falls in, in time_zone: YYYY, YYYYMM or
-- YYYYMMDD (NULL for reset 'none'); 22023 for an unknown reset or zone.
CREATE FUNCTION seq_period_key(reset text, time_zone text, at timestamptz)
    RETURNS integer
    AS 'MODULE_PATHNAME', 'seq_period_key'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- The finest date field of a format: 0 none (or no format), 1 a year
-- ({YYYY}, {YY}), 2 a month, 3 a day; 22023 for a bad format.
CREATE FUNCTION seq_format_finest(format text)
    RETURNS integer
    AS 'MODULE_PATHNAME', 'seq_format_finest'
    LANGUAGE C IMMUTABLE PARALLEL SAFE;

ALTER TABLE id_sequences
    ADD COLUMN reset text NOT NULL DEFAULT 'none'
        CONSTRAINT id_sequences_reset_check
        CHECK (reset IN ('none', 'year', 'month', 'day')),
    ADD COLUMN period integer,
    ADD COLUMN reset_skip bigint NOT NULL DEFAULT 0
        CONSTRAINT id_sequences_reset_skip_check CHECK (reset_skip >= 0),
    ADD CONSTRAINT id_sequences_period_check
        CHECK (CASE WHEN reset = 'none' THEN period IS NULL AND reset_skip = 0
                    ELSE strategy <> 'sequence' AND increment > 0 AND min_value >= 0
                         AND max_value < CASE reset WHEN 'year' THEN 100000000000000
                                                    WHEN 'month' THEN 1000000000000
                                                    ELSE 10000000000 END
                         AND @extschema@.seq_format_finest(format) <=
                             CASE reset WHEN 'year' THEN 1 WHEN 'month' THEN 2 ELSE 3 END
               END);

-- The largest max_value of a sequence numbered per reset.
CREATE FUNCTION seq_period_max(reset text) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE reset WHEN 'year' THEN 99999999999999::pg_catalog.int8
                      WHEN 'month' THEN 999999999999::pg_catalog.int8
                      ELSE 9999999999::pg_catalog.int8 END;

-- Refuse what a sequence numbered per period cannot be (for seq_create()
-- and seq_alter(), before the CHECK above would fail with 23514).
CREATE FUNCTION seq_period_check(reset text, strategy text, start bigint, increment bigint,
                                 min_value bigint, max_value bigint, format text)
    RETURNS void
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    IF reset NOT IN ('none', 'year', 'month', 'day') THEN
        RAISE EXCEPTION 'unknown reset "%"', reset
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A block sequence restarts every "year", "month" or "day", or never ("none").';
    END IF;
    IF strategy = 'sequence' THEN
        RAISE EXCEPTION 'strategy "sequence" cannot restart its numbers every period'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'A native sequence cannot restart in the transaction that hands out the first number of a period.',
                  HINT = 'Use strategy "table" or "gapless".';
    END IF;
    IF increment < 0 THEN
        RAISE EXCEPTION 'a block sequence numbered per period must count up'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('increment is %s.', increment);
    END IF;
    IF start < 0 THEN
        RAISE EXCEPTION 'a block sequence numbered per period must not start below 0'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('start is %s.', start);
    END IF;
    IF min_value <> start AND min_value <> -9223372036854775808 THEN
        RAISE EXCEPTION 'min_value of a block sequence numbered per period is its start'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('start is %s and min_value is %s; every period starts counting at start.',
                                  start, min_value);
    END IF;
    IF max_value IS NOT NULL AND max_value > @extschema@.seq_period_max(reset) THEN
        RAISE EXCEPTION 'max_value of a block sequence numbered per % must not be greater than %',
                        reset, @extschema@.seq_period_max(reset)
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('max_value is %s; a number is the period''s key followed by the count in as many digits as max_value has, and must fit in 18 digits.',
                                  max_value);
    END IF;
    IF @extschema@.seq_format_finest(format) > array_position(ARRAY['year', 'month', 'day'], reset) THEN
        RAISE EXCEPTION 'the format of a block sequence numbered per % must not have a date field finer than the %', reset, reset
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('The format is %L; a number is formatted with the first day of its period.', format);
    END IF;
END;
$$;

-- A number of a sequence numbered per period (key, then the count in as
-- many digits as max_value has) formatted with its format and the first
-- day of its period ("at" must be NULL: the number carries its date).
CREATE FUNCTION seq_format_period(format text, time_zone text, reset text, max_value bigint,
                                  n bigint, at timestamptz)
    RETURNS text
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    scale bigint := (10::numeric ^ length(max_value::text))::bigint;
    key bigint := n / scale;
    digits integer := CASE reset WHEN 'year' THEN 4 WHEN 'month' THEN 6 ELSE 8 END;
    day date;
BEGIN
    IF at IS NOT NULL THEN
        RAISE EXCEPTION 'a number of a block sequence numbered per period carries its date'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Call seq_format() without "at".';
    END IF;
    IF n < 0 OR length(key::text) <> digits THEN
        RAISE EXCEPTION '% is not a number of a block sequence numbered per %', n, reset
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its numbers are the period''s key in %s digits followed by the count in %s digits.',
                                  digits, length(max_value::text));
    END IF;
    day := CASE reset WHEN 'year' THEN make_date(key::integer, 1, 1)
                      WHEN 'month' THEN make_date((key / 100)::integer, (key % 100)::integer, 1)
                      ELSE make_date((key / 10000)::integer, (key / 100 % 100)::integer,
                                     (key % 100)::integer) END;
    RETURN @extschema@.seq_format_number(format, time_zone, n % scale,
                                         day::timestamp AT TIME ZONE time_zone);
END;
$$;

-- seq_advance() of a sequence numbered per period, its row locked: "past"
-- is a number (the period's key, then the count).  One of the period of
-- the time now moves the count beyond it, on the step (restarting the
-- count first if the row's period has ended); one of an earlier period
-- changes nothing (numbers of different periods never collide); one of a
-- later period is refused (22023), and so is a row counting in a period
-- that has not begun by the clock (22008).  Returns the next number the
-- sequence will hand out.
CREATE FUNCTION seq_advance_period(cur id_sequences, past bigint) RETURNS bigint
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    scale numeric := trunc(10::numeric ^ length(cur.max_value::text));
    now_key integer := @extschema@.seq_period_key(cur.reset, cur.time_zone, clock_timestamp());
    past_key numeric := div(past, scale);
    past_count numeric := mod(past, scale);
    base numeric;
    next_count numeric;
BEGIN
    IF cur.period > now_key THEN
        RAISE EXCEPTION 'block sequence "%" counts in a period that has not begun by the clock', cur.name
            USING ERRCODE = 'datetime_field_overflow',
                  DETAIL = format('It numbers period %s; the time now falls in period %s.', cur.period, now_key);
    END IF;
    IF past < 0 OR length(past_key::text) <> length(now_key::text) THEN
        RAISE EXCEPTION '% is not a number of a block sequence numbered per %', past, cur.reset
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its numbers are the period''s key in %s digits followed by the count in %s digits.',
                                  length(now_key::text), length(cur.max_value::text));
    END IF;
    IF past_key > now_key THEN
        RAISE EXCEPTION 'cannot advance block sequence "%" into a period that has not begun', cur.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('past is a number of period %s; the time now falls in period %s.', past_key, now_key);
    END IF;
    IF past_key = now_key AND past_count >= cur.max_value THEN
        RAISE EXCEPTION 'cannot advance block sequence "%" past its max_value', cur.name
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('past is count %s of period %s and max_value is %s.', past_count, past_key, cur.max_value),
                  HINT = 'Raise max_value with seq_alter() first, within its number of digits.';
    END IF;
    -- the next count of the period of the time now (a restart if the row's ended)
    base := CASE WHEN cur.period = now_key THEN cur.next_block_start
                 ELSE cur.min_value + least(cur.reset_skip,
                          @extschema@.seq_room(cur.min_value, cur.increment, cur.min_value, cur.max_value))
                      * cur.increment END;
    IF past_key < now_key OR past_count < base THEN
        RETURN (now_key * scale + base)::bigint;
    END IF;
    -- the first count of the step beyond past; past the last one, the
    -- position after it (exhausted until the period ends)
    next_count := base + (div(past_count - base, cur.increment) + 1) * cur.increment;
    next_count := base + least(div(next_count - base, cur.increment),
                               @extschema@.seq_room(base::bigint, cur.increment,
                                                    cur.min_value, cur.max_value)) * cur.increment;
    UPDATE @extschema@.id_sequences AS s
        SET next_block_start = next_count, period = now_key,
            reset_skip = CASE WHEN s.period = now_key THEN s.reset_skip ELSE 0 END,
            exhausted = s.exhausted AND s.period IS NOT DISTINCT FROM now_key
        WHERE s.name = cur.name;
    RETURN (now_key * scale + next_count)::bigint;
END;
$$;
REVOKE ALL ON FUNCTION seq_advance_period(id_sequences, bigint) FROM PUBLIC;

-- The key of the period "at" falls in (as seq_period_key()) and the bounds
-- within which the shared cache hands out its numbers: every moment from
-- starts up to ends (excluded) is in it; they are the period's own bounds
-- but where the zone changes its UTC offset inside the period, where they
-- stop early.  NULLs for reset 'none'.
CREATE FUNCTION seq_period_bounds(reset text, time_zone text, at timestamptz,
                                  OUT key integer, OUT starts timestamptz, OUT ends timestamptz)
    AS 'MODULE_PATHNAME', 'seq_period_bounds'
    LANGUAGE C STABLE STRICT PARALLEL SAFE;
