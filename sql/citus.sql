-- The Citus functions on a server without Citus, whose worker id is set
-- (make installcheck runs against servers with any uidgen.worker_id).
-- Nothing here makes the server refuse: a refusal would be kept in its
-- state file until a uidgen_citus_check() lifts it.

-- Where the worker id comes from.
SELECT worker_id = current_setting('uidgen.worker_id')::int AS from_setting,
       worker_id_source
FROM uidgen_status();
SELECT uidgen_citus_worker() = current_setting('uidgen.worker_id') || ',setting'
       AS worker_and_source;

-- A conflict list without this server's worker id refuses nothing.
SELECT uidgen_citus_refuse(ARRAY[worker_id + 1, worker_id + 2], false)
FROM uidgen_status();
SELECT uidgen_citus_refuse('{}', true);
SELECT state FROM uidgen_status();
SELECT snowflake_worker(snowflake_next()) = current_setting('uidgen.worker_id')::int
       AS own_worker;

-- The check needs Citus.
SELECT error_of('SELECT * FROM uidgen_citus_check()');

-- Only superusers run them (revoked from PUBLIC).
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_can_run
FROM pg_proc p
WHERE p.proname LIKE 'uidgen_citus%'
ORDER BY p.proname;

-- A worker's lease on a sequence that does not exist: 42704, no lease
-- recorded (a row created after it would get a range with no lease).
SELECT error_of($$SELECT seq_worker_lease('no_such_sequence')$$);
