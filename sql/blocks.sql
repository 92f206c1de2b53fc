-- Block sequences: the whole SQL surface and every error.

-- err(sql): 'ok', or the SQLSTATE and message of the error it raised
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- The catalog, its privileges, and pg_dump's knowledge of it
SELECT attname, format_type(atttypid, atttypmod), attnotnull
  FROM pg_attribute
 WHERE attrelid = 'id_sequences'::regclass AND attnum > 0
 ORDER BY attnum;
SELECT 'id_sequences'::regclass = ANY (extconfig) AS dumped
  FROM pg_extension WHERE extname = 'uidgen';
-- Its ACL, grant by grant: the owner holds every privilege, PUBLIC only
-- SELECT, nothing is grantable.  (Not relacl as text: PostgreSQL 17 added the
-- MAINTAIN privilege, which the owner then holds too.)
SELECT grantee, grantor, grantable,
       string_agg(privilege_type, ', ' ORDER BY privilege_type COLLATE "C")
           FILTER (WHERE privilege_type <> 'MAINTAIN') AS privileges,
       bool_or(privilege_type = 'MAINTAIN')
           = (grantee = 'owner' AND current_setting('server_version_num')::int >= 170000)
           AS maintain_as_expected
  FROM (SELECT CASE a.grantee WHEN 0 THEN 'PUBLIC' WHEN c.relowner THEN 'owner'
                    ELSE a.grantee::regrole::text END AS grantee,
               CASE a.grantor WHEN c.relowner THEN 'owner'
                    ELSE a.grantor::regrole::text END AS grantor,
               a.is_grantable AS grantable, a.privilege_type
          FROM pg_class c, aclexplode(c.relacl) a
         WHERE c.oid = 'id_sequences'::regclass) AS g
 GROUP BY grantee, grantor, grantable
 ORDER BY grantee COLLATE "C";
-- id_sequences_timeline: the timeline of the last skip ahead
-- (uidgen.promotion_skip), one row, the current timeline since the install;
-- not dumped (a restore starts from the timeline of its server); PUBLIC may
-- only read it.
SELECT attname, format_type(atttypid, atttypmod), attnotnull
  FROM pg_attribute
 WHERE attrelid = 'id_sequences_timeline'::regclass AND attnum > 0
 ORDER BY attnum;
SELECT 'id_sequences_timeline'::regclass = ANY (extconfig) AS dumped
  FROM pg_extension WHERE extname = 'uidgen';
SELECT count(*) AS rows,
       bool_and(timeline = ('x' || substr(pg_walfile_name(pg_current_wal_insert_lsn()), 1, 8))::bit(32)::bigint)
           AS current_timeline
  FROM id_sequences_timeline;
SELECT has_table_privilege('public', 'id_sequences_timeline', 'SELECT') AS public_reads,
       has_table_privilege('public', 'id_sequences_timeline', 'INSERT, UPDATE, DELETE, TRUNCATE')
           AS public_writes;
SELECT p.oid::regprocedure AS function, provolatile, proparallel, prosecdef,
       proconfig, proacl IS NOT NULL AND NOT has_function_privilege('public', p.oid, 'EXECUTE') AS restricted
  FROM pg_proc p
 WHERE proname IN ('seq_create', 'seq_drop', 'seq_alter', 'seq_advance', 'seq_lock_row', 'seq_next_unused',
                   'seq_reserve_block', 'seq_next')
 ORDER BY p.oid::regprocedure::text COLLATE "C";

-- Settings
SHOW uidgen.block_timeout;
SHOW uidgen.block_cache_entries;
SHOW uidgen.block_databases;
SHOW uidgen.allocator_idle_timeout;
SHOW uidgen.promotion_skip;
SELECT pg_temp.err('SET uidgen.promotion_skip = 5');
SELECT pg_temp.err('SET uidgen.block_cache_entries = 10');
-- (the range without units: PostgreSQL 17 added them, "(1 ms .. 2147483647 ms)")
SELECT regexp_replace(pg_temp.err('SET uidgen.block_timeout = 0'),
                      '\((\d+) ms \.\. (\d+) ms\)$', '(\1 .. \2)') AS err;

-- seq_create()
SELECT seq_create('orders');
SELECT seq_create('small', start => 1, block_size => 10, max_value => 25);
SELECT seq_create('neg', -5, 3);
SELECT seq_create('top', 9223372036854775800, 5);
SELECT name, next_block_start, block_size, max_value, exhausted
  FROM id_sequences ORDER BY name;
SELECT pg_temp.err($$SELECT seq_create('orders')$$);
SELECT pg_temp.err($$SELECT seq_create('')$$);
SELECT pg_temp.err($$SELECT seq_create(repeat('x', 64))$$);
SELECT pg_temp.err($$SELECT seq_create('b', block_size => 0)$$);
SELECT pg_temp.err($$SELECT seq_create('b', block_size => 1000000001)$$);
SELECT pg_temp.err($$SELECT seq_create('b', start => 10, max_value => 9)$$);
SELECT pg_temp.err($$SELECT seq_create('b', start => 9223372036854775807)$$);
SELECT pg_temp.err($$SELECT seq_create(NULL)$$);
SELECT pg_temp.err($$SELECT seq_create('b', block_size => NULL)$$);
SELECT count(*) FROM id_sequences WHERE name = 'b';
-- a 63-byte name is fine
SELECT seq_create(repeat('y', 63));
SELECT * FROM seq_reserve_block(repeat('y', 63), 2);
SELECT seq_drop(repeat('y', 63));
\set VERBOSITY default
SELECT seq_create('b', start => 10, max_value => 9);
\set VERBOSITY terse

-- seq_reserve_block(): exactly n consecutive IDs, or a block
SELECT * FROM seq_reserve_block('orders', 1000);
SELECT * FROM seq_reserve_block('orders');
SELECT * FROM seq_reserve_block('orders', 1);
SELECT seq_reserve_block('orders', 5);
SELECT last_id - first_id + 1 AS ids FROM seq_reserve_block('orders', 1000000000);
-- the next ID to hand out; the row's next_block_start may lie ahead of it
SELECT next_id, next_block_start >= next_id AS durable_ahead
  FROM id_sequences_prefetch WHERE name = 'orders';
SELECT * FROM seq_reserve_block('neg', 2);
SELECT * FROM seq_reserve_block('neg');
SELECT * FROM seq_reserve_block('orders', NULL);
SELECT * FROM seq_reserve_block(NULL, 1);
-- errors: bad n, unknown sequence
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('orders', 0)$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('orders', -1)$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('orders', 1000000001)$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nosuch', 1)$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('nosuch')$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block(repeat('z', 100), 1)$$);
\set VERBOSITY default
SELECT * FROM seq_reserve_block('orders', 0);
SELECT * FROM seq_reserve_block('nosuch', 1);
\set VERBOSITY terse

-- A reservation survives the caller's rollback, and an error after it
BEGIN;
SELECT * FROM seq_reserve_block('orders', 10);
ROLLBACK;
BEGIN;
SELECT * FROM seq_reserve_block('orders', 10);
SELECT 1 / 0;
ROLLBACK;
SELECT * FROM seq_reserve_block('orders', 10);

-- Exhaustion: never a partial block; exhausted is set, committed and sticky
SELECT * FROM seq_reserve_block('small');
SELECT * FROM seq_reserve_block('small');
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('small')$$);
SELECT next_block_start, exhausted FROM id_sequences WHERE name = 'small';
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('small', 1)$$);
\set VERBOSITY default
SELECT * FROM seq_reserve_block('small', 1);
\set VERBOSITY terse
-- raising max_value clears the flag
SELECT seq_alter('small', max_value => 30);
SELECT next_block_start, max_value, exhausted FROM id_sequences WHERE name = 'small';
SELECT * FROM seq_reserve_block('small', 10);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('small', 1)$$);
-- the top of bigint: 9223372036854775807 itself is never issued
SELECT * FROM seq_reserve_block('top');
SELECT * FROM seq_reserve_block('top', 2);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('top', 1)$$);
SELECT next_block_start, exhausted FROM id_sequences WHERE name = 'top';

-- seq_alter()
SELECT seq_alter('orders', block_size => 7);
SELECT last_id - first_id + 1 AS ids FROM seq_reserve_block('orders');
SELECT seq_alter('orders', block_size => NULL, max_value => NULL);
SELECT block_size FROM id_sequences WHERE name = 'orders';
SELECT pg_temp.err($$SELECT seq_alter('orders', block_size => 0)$$);
SELECT pg_temp.err($$SELECT seq_alter('orders', max_value => 5)$$);
SELECT pg_temp.err($$SELECT seq_alter('nosuch', block_size => 5)$$);
SELECT pg_temp.err($$SELECT seq_alter(NULL, block_size => 5)$$);
-- max_value may be lowered down to the last ID handed out
SELECT seq_alter('neg', max_value => 0);
SELECT * FROM seq_reserve_block('neg', 1);
SELECT pg_temp.err($$SELECT seq_alter('neg', max_value => -1)$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('neg', 1)$$);
SELECT next_block_start, max_value, exhausted FROM id_sequences WHERE name = 'neg';

-- seq_advance(): forwards only
SELECT seq_create('imported', block_size => 100);
SELECT seq_advance('imported', 5000);
SELECT * FROM seq_reserve_block('imported');
SELECT seq_advance('imported', 10);
-- (not always 5101: a prefetch the allocator took before the
-- seq_advance() is left out of its round if the change committed first
-- (blockcache_drop_stale()), but seq_advance() below the next unused ID
-- only locks the row, and a round whose UPDATE follows that lock's
-- release commits the prefetch for nobody: a gap, never a repeat; seen
-- under valgrind)
SELECT first_id >= 5101 AS forwards, last_id - first_id + 1 AS ids
  FROM seq_reserve_block('imported');
SELECT pg_temp.err($$SELECT seq_advance('imported', 9223372036854775807)$$);
SELECT pg_temp.err($$SELECT seq_advance('nosuch', 1)$$);
SELECT seq_advance('imported', NULL);

-- A sequence changed by the caller's own open transaction: an error at
-- once, not a wait for ourselves
BEGIN;
SELECT seq_advance('imported', 100000);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('imported', 1)$$);
SELECT pg_temp.err($$SELECT seq_next('imported')$$);
ROLLBACK;
BEGIN;
SELECT seq_create('uncommitted');
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('uncommitted', 1)$$);
ROLLBACK;
-- seq_next() on a sequence its own open transaction created: unknown (the
-- allocator does not see it), and the cache entry it took is given back,
-- so that once the sequence is committed seq_next() serves it from 1
BEGIN;
SELECT seq_create('uncommitted_next', start => 1, block_size => 4);
SELECT pg_temp.err($$SELECT seq_next('uncommitted_next')$$);
COMMIT;
SELECT seq_next('uncommitted_next'), seq_next('uncommitted_next');
SELECT seq_drop('uncommitted_next');

-- seq_drop()
SELECT seq_drop('imported');
SELECT pg_temp.err($$SELECT seq_drop('imported')$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('imported', 1)$$);
SELECT seq_drop(NULL);

-- seq_next(): consecutive IDs from the shared cache, block after block
SELECT seq_create('pk', block_size => 4);
SELECT array_agg(seq_next('pk')) FROM generate_series(1, 10);
SELECT seq_next('pk') > 10 AS beyond;
SELECT pg_temp.err($$SELECT seq_next('nosuch')$$);
SELECT pg_temp.err($$SELECT seq_next(repeat('z', 100))$$);
SELECT seq_next(NULL);
-- a dropped and recreated sequence is not served from the old blocks
SELECT seq_drop('pk');
SELECT pg_temp.err($$SELECT seq_next('pk')$$);
SELECT seq_create('pk', start => 1, block_size => 4);
SELECT seq_next('pk'), seq_next('pk');
-- also where ordinary triggers do not fire (logical replication apply
-- workers and many migration tools run with session_replication_role =
-- replica): blocks 1..4 were cached above, the new sequence starts at 1 again
SET session_replication_role = replica;
SELECT seq_drop('pk');
SELECT seq_create('pk', start => 1, block_size => 4);
SELECT seq_next('pk'), seq_next('pk');
RESET session_replication_role;
-- nor one that was advanced, or altered (blocks of 100: no prefetch yet)
SELECT seq_create('pk2', block_size => 100);
SELECT seq_next('pk2');
SELECT seq_advance('pk2', 1000);
SELECT seq_next('pk2');
-- (max_value down to the last ID handed out: whatever was cached is gone)
SELECT seq_alter('pk2', max_value => 1001);
SELECT pg_temp.err($$SELECT seq_next('pk2')$$);
SELECT next_block_start, exhausted FROM id_sequences WHERE name = 'pk2';
SELECT seq_alter('pk2', block_size => 50, max_value => 1150);
SELECT seq_next('pk2');

-- id_sequences renamed, or without its primary key (an extension member
-- changed by hand): seq_next() and seq_reserve_block() refuse with 55000,
-- they neither look elsewhere nor report the sequence unknown
SELECT seq_create('by_hand', start => 1, block_size => 10);
BEGIN;
ALTER TABLE id_sequences RENAME TO id_sequences_renamed;
SELECT pg_temp.err($$SELECT seq_next('by_hand')$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('by_hand', 1)$$);
ROLLBACK;
BEGIN;
ALTER TABLE id_sequences DROP CONSTRAINT id_sequences_pkey;
SELECT pg_temp.err($$SELECT seq_next('by_hand')$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('by_hand', 1)$$);
ROLLBACK;
-- and nothing was reserved by them
SELECT * FROM seq_reserve_block('by_hand', 1);
SELECT seq_drop('by_hand');

-- Not in a read-only transaction (nor on a standby: see the TAP tests)
SELECT seq_create('ro');
BEGIN TRANSACTION READ ONLY;
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('ro', 1)$$);
SELECT pg_temp.err($$SELECT seq_next('ro')$$);
ROLLBACK;
SET default_transaction_read_only = on;
\set VERBOSITY default
SELECT * FROM seq_reserve_block('ro', 1);
\set VERBOSITY terse
RESET default_transaction_read_only;

-- Any isolation level: the caller's snapshot is not used
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT * FROM seq_reserve_block('ro', 1);
SELECT * FROM seq_reserve_block('ro', 1);
COMMIT;

-- Privileges: plain roles read the table and reserve, but cannot write the
-- table nor manage sequences unless granted EXECUTE
CREATE ROLE regress_blocks_user;
CREATE ROLE regress_blocks_admin;
GRANT EXECUTE ON FUNCTION seq_create(text, bigint, integer, bigint, text, text, text, bigint, bigint, text),
    seq_drop(text) TO regress_blocks_admin;
SET ROLE regress_blocks_user;
SELECT pg_temp.err($$INSERT INTO id_sequences (name, next_block_start, block_size, max_value) VALUES ('evil', 1, 1, 10)$$);
SELECT pg_temp.err($$UPDATE id_sequences SET next_block_start = 1$$);
SELECT pg_temp.err($$DELETE FROM id_sequences$$);
SELECT pg_temp.err($$TRUNCATE id_sequences$$);
SELECT pg_temp.err($$SELECT name FROM id_sequences WHERE name = 'ro' FOR UPDATE$$);
SELECT pg_temp.err($$SELECT seq_create('evil')$$);
SELECT pg_temp.err($$SELECT seq_drop('ro')$$);
SELECT pg_temp.err($$SELECT seq_alter('ro', block_size => 1)$$);
SELECT pg_temp.err($$SELECT seq_advance('ro', 100)$$);
SELECT count(*) FROM id_sequences WHERE name = 'ro';
SELECT * FROM seq_reserve_block('ro', 3);
SELECT seq_next('ro');
RESET ROLE;
SET ROLE regress_blocks_admin;
SELECT seq_create('delegated');
SELECT pg_temp.err($$SELECT seq_advance('delegated', 100)$$);
SELECT seq_drop('delegated');
RESET ROLE;
REVOKE EXECUTE ON FUNCTION seq_create(text, bigint, integer, bigint, text, text, text, bigint, bigint, text),
    seq_drop(text) FROM regress_blocks_admin;
DROP ROLE regress_blocks_user;
DROP ROLE regress_blocks_admin;

-- A hostile search_path: a fake id_sequences table and operators first
CREATE SCHEMA regress_hostile;
CREATE TABLE regress_hostile.id_sequences (LIKE public.id_sequences INCLUDING DEFAULTS);
INSERT INTO regress_hostile.id_sequences (name, next_block_start, block_size, max_value)
    VALUES ('h', -100, 1, 1000), ('ro', -100, 1, 1000);
CREATE FUNCTION regress_hostile.texteq(text, text) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE OPERATOR regress_hostile.= (LEFTARG = text, RIGHTARG = text,
                                   FUNCTION = regress_hostile.texteq);
CREATE FUNCTION regress_hostile.int8pl(bigint, bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE AS 'SELECT 0::bigint';
CREATE OPERATOR regress_hostile.+ (LEFTARG = bigint, RIGHTARG = bigint,
                                   FUNCTION = regress_hostile.int8pl);
SET search_path = regress_hostile, pg_catalog, public;
SELECT 'a'::text = 'b'::text AS hostile_eq, 2::bigint + 2::bigint AS hostile_plus;
SELECT public.seq_create('h', 10, 5);
SELECT * FROM public.seq_reserve_block('h', 3);
SELECT * FROM public.seq_reserve_block('h');
SELECT public.seq_next('h'), public.seq_next('h');
SELECT public.seq_alter('h', block_size => 2);
SELECT public.seq_advance('h', 100);
SELECT * FROM public.seq_reserve_block('h');
SELECT * FROM public.seq_reserve_block('ro', 1);
SELECT public.seq_drop('h');
SELECT pg_temp.err($$SELECT public.seq_drop('h')$$);
RESET search_path;
SELECT name, next_block_start FROM regress_hostile.id_sequences ORDER BY name;
SELECT name, next_block_start, block_size FROM id_sequences WHERE name IN ('h', 'ro') ORDER BY name;
DROP SCHEMA regress_hostile CASCADE;

-- TRUNCATE (by the owner) empties the seq_next() cache too
SELECT seq_create('t', block_size => 10);
SELECT seq_next('t');
TRUNCATE id_sequences;
SELECT seq_create('t', start => 500, block_size => 10);
SELECT seq_next('t');

-- The allocator of this database
SELECT count(*) AS allocators FROM pg_stat_activity
 WHERE backend_type = 'uidgen allocator' AND datname = current_database();

-- Another database: its own allocator, its own cache entries (same name,
-- other sequence), and no blocks cached from a dropped extension's table
SELECT current_database() AS regress_db \gset
CREATE DATABASE regress_blocks_other;
\c regress_blocks_other
-- (quiet: from PostgreSQL 18 on, CREATE EXTENSION raises a NOTICE about
-- uuidv7() unless client_min_messages is error or above;
-- test/t/120_extension_update.pl checks it)
SET client_min_messages = error;
CREATE EXTENSION uidgen;
SELECT seq_create('t', start => 1000000, block_size => 100);
SELECT seq_next('t');
DROP EXTENSION uidgen;
CREATE EXTENSION uidgen;
RESET client_min_messages;
SELECT seq_create('t', block_size => 100);
SELECT seq_next('t');
SELECT count(*) AS allocators FROM pg_stat_activity
 WHERE backend_type = 'uidgen allocator' AND datname = current_database();
\c :regress_db
SELECT seq_next('t');
-- dropping a database asks its allocator to leave
DROP DATABASE regress_blocks_other;
