-- The Citus functions on a server without Citus, whose worker id is set
-- (uidgen.worker_id = 0 in the regression server's configuration).

-- Where the worker id comes from.
SELECT worker_id, worker_id_source FROM uidgen_status();
SELECT uidgen_citus_worker();

-- A conflict list without this server's worker id refuses nothing.
SELECT uidgen_citus_refuse(ARRAY[1, 2]);
SELECT uidgen_citus_refuse('{}');
SELECT state FROM uidgen_status();
SELECT snowflake_worker(snowflake_next());

-- The check needs Citus.
SELECT error_of('SELECT * FROM uidgen_citus_check()');

-- Only superusers run them (revoked from PUBLIC).
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_can_run
FROM pg_proc p
WHERE p.proname LIKE 'uidgen_citus%'
ORDER BY p.proname;
