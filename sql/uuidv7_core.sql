-- uidgen's UUIDv7 beside PostgreSQL's own: pg_catalog.uuidv7() and
-- pg_catalog.uuidv7(interval) since 18, uuid_extract_version() and
-- uuid_extract_timestamp() since 17.  pg_catalog is searched first, so on 18
-- and later an unqualified uuidv7() is PostgreSQL's; uuidv7_next() and
-- uuidv7_at() are uidgen's on every version, and so are the deprecated
-- aliases public.uuidv7() and public.uuidv7(timestamptz).
--
-- This file's output is the same on every major: whatever depends on the
-- version is computed from server_version_num and compared in SQL, so each
-- line says "as expected on this server" (t), never which version it is.

SET TIME ZONE 'UTC';

-- Whether the server is PostgreSQL major or later.
CREATE FUNCTION pg_temp.pg_at_least(major integer) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT current_setting('server_version_num')::integer >= major * 10000
$$;

-- The UUIDs uidgen generated while running q (uidgen_status().uuids_issued
-- is counted by uidgen's generator only, never by PostgreSQL's).
CREATE FUNCTION pg_temp.uidgen_calls(q text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    before bigint := (SELECT uuids_issued FROM public.uidgen_status());
BEGIN
    EXECUTE q;
    RETURN (SELECT uuids_issued FROM public.uidgen_status()) - before;
END $$;

-- The SQLSTATE q raised, or 00000.
CREATE FUNCTION pg_temp.sqlstate_of(q text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN '00000';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;

-- The one value q returns, as text (to call functions that older servers
-- do not have: only executed when the version has them).
CREATE FUNCTION pg_temp.value_of(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v text;
BEGIN
    EXECUTE q INTO STRICT v;
    RETURN v;
END $$;

-- Precondition: PostgreSQL's own functions exist exactly from the major
-- that introduced them.
SELECT f AS core_function,
       since,
       (to_regprocedure(f) IS NOT NULL) = pg_temp.pg_at_least(since) AS exists_as_expected
FROM (VALUES (1, 'pg_catalog.uuidv7()', 18),
             (2, 'pg_catalog.uuidv7(interval)', 18),
             (3, 'pg_catalog.uuid_extract_version(uuid)', 17),
             (4, 'pg_catalog.uuid_extract_timestamp(uuid)', 17)) AS v(ord, f, since)
ORDER BY ord;

-- Column defaults: which function each one is bound to, resolved once, at
-- CREATE TABLE.  The function is the funcid of the stored expression
-- (pg_attrdef.adbin); a default calling uidgen's function also has its
-- pg_depend row on it, one calling a built-in function has none (built-in
-- objects are pinned: no dependency is recorded on them).
CREATE TABLE core_defaults (
    next_default uuid DEFAULT uuidv7_next(),
    unqualified_default uuid DEFAULT uuidv7(),
    qualified_default uuid DEFAULT public.uuidv7()
);

CREATE TEMP VIEW default_targets AS
SELECT a.attname AS column_name,
       substring(ad.adbin::text FROM ':funcid (\d+) ')::oid AS funcid,
       (SELECT array_agg(d.refobjid)
        FROM pg_depend d
        WHERE d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
          AND d.refclassid = 'pg_proc'::regclass) AS depends_on,
       ad.adbin, ad.adrelid
FROM pg_attrdef ad
JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
WHERE ad.adrelid = 'core_defaults'::regclass;

-- Whether a function is a member of the extension uidgen.
CREATE FUNCTION pg_temp.uidgen_member(f oid) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT FROM pg_depend e
                   WHERE e.classid = 'pg_proc'::regclass AND e.objid = f
                     AND e.deptype = 'e' AND e.refclassid = 'pg_extension'::regclass
                     AND e.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'uidgen'))
$$;

-- uuidv7_next() and public.uuidv7() are uidgen's on every version;
-- unqualified uuidv7() is pg_catalog.uuidv7() from 18 on, uidgen's before.
SELECT column_name, expected,
       CASE WHEN uidgen_expected
            THEN funcid = expected_target::regprocedure
                 AND pg_temp.uidgen_member(funcid)
                 AND depends_on = ARRAY[funcid]
            ELSE funcid = to_regprocedure('pg_catalog.uuidv7()')
                 AND NOT pg_temp.uidgen_member(funcid)
                 AND depends_on IS NULL
       END AS bound_as_expected
FROM default_targets
JOIN (VALUES ('next_default', 'uidgen''s uuidv7_next() on every version',
              true, 'public.uuidv7_next()'),
             ('unqualified_default', 'pg_catalog.uuidv7() from 18 on, uidgen''s uuidv7() before',
              NOT pg_temp.pg_at_least(18), 'public.uuidv7()'),
             ('qualified_default', 'uidgen''s uuidv7() on every version',
              true, 'public.uuidv7()'))
     AS e(column_name, expected, uidgen_expected, expected_target) USING (column_name)
ORDER BY column_name;

-- The aliases are the same C functions as the new names.
SELECT regexp_replace(p.oid::regprocedure::text, '^public\.', '') AS alias,
       p.prosrc = n.prosrc AND p.probin = n.probin
           AND p.provolatile = n.provolatile AND p.proisstrict = n.proisstrict
           AND p.proparallel = n.proparallel AS same_as_new_name
FROM pg_proc p
JOIN pg_proc n ON n.oid = CASE p.pronargs WHEN 0 THEN 'public.uuidv7_next()'::regprocedure
                                          ELSE 'public.uuidv7_at(timestamptz)'::regprocedure END
WHERE p.oid IN ('public.uuidv7()'::regprocedure, 'public.uuidv7(timestamptz)'::regprocedure)
ORDER BY p.pronargs;

-- What pg_dump writes for each default (it dumps with an empty search_path):
-- uidgen's functions always schema-qualified, so a dump of a 0.1.0
-- database holds "DEFAULT public.uuidv7()", which the alias keeps valid.
SET search_path = '';
SELECT column_name,
       pg_get_expr(adbin, adrelid) = CASE
           WHEN column_name = 'next_default' THEN 'public.uuidv7_next()'
           WHEN column_name = 'qualified_default' THEN 'public.uuidv7()'
           WHEN pg_temp.pg_at_least(18) THEN 'uuidv7()'
           ELSE 'public.uuidv7()' END AS dumped_as_expected
FROM pg_temp.default_targets
ORDER BY column_name;
RESET search_path;

-- An inserted row: uidgen generates the values of the defaults bound to it
-- (3 before 18, 2 from 18 on); all three are version 7 UUIDs.
SELECT pg_temp.uidgen_calls('INSERT INTO core_defaults DEFAULT VALUES')
       = CASE WHEN pg_temp.pg_at_least(18) THEN 2 ELSE 3 END AS uidgen_calls_as_expected;
SELECT substr(next_default::text, 15, 1) AS next_version,
       substr(unqualified_default::text, 15, 1) AS unqualified_version,
       substr(qualified_default::text, 15, 1) AS qualified_version
FROM core_defaults;

-- Direct calls: how many UUIDs uidgen generated for each.
SELECT call, expected,
       pg_temp.uidgen_calls('SELECT ' || call) = CASE WHEN from18 AND pg_temp.pg_at_least(18)
                                                      THEN 0 ELSE 1 END AS as_expected
FROM (VALUES (1, 'uuidv7_next()', '1', false),
             (2, 'public.uuidv7()', '1', false),
             (3, 'uuidv7()', '1 before 18, 0 (PostgreSQL''s) from 18 on', true))
     AS c(ord, call, expected, from18)
ORDER BY ord;

-- uuidv7_at() on every version, with a literal and with NULL (STRICT);
-- the deprecated public.uuidv7(timestamptz) likewise.
SELECT uuidv7_timestamp(uuidv7_at('2025-01-01')) = timestamptz '2025-01-01' AS at_literal,
       uuidv7_at(NULL) IS NULL AS at_null,
       uuidv7_timestamp(public.uuidv7('2025-01-01')) = timestamptz '2025-01-01' AS alias_literal,
       public.uuidv7(NULL) IS NULL AS alias_null,
       uuidv7_timestamp(uuidv7(timestamptz '2025-01-01')) = timestamptz '2025-01-01' AS unqualified_typed;

-- Unqualified uuidv7() with an argument: a literal or NULL is ambiguous
-- from 18 on (42725: uuidv7(interval) or uuidv7(timestamptz)?), uidgen's
-- before; an interval is PostgreSQL's from 18 on and has no function before
-- (42883).
SELECT call, expected,
       pg_temp.sqlstate_of('SELECT ' || call)
           = CASE WHEN pg_temp.pg_at_least(18) THEN on18 ELSE before18 END AS as_expected
FROM (VALUES (1, 'uuidv7_at(''2025-01-01'')', '00000', '00000', 'works on every version'),
             (2, 'uuidv7_at(NULL)', '00000', '00000', 'works on every version'),
             (3, 'public.uuidv7(''2025-01-01'')', '00000', '00000', 'works on every version'),
             (4, 'uuidv7(''2025-01-01'')', '00000', '42725', 'works before 18, 42725 from 18 on'),
             (5, 'uuidv7(NULL)', '00000', '42725', 'works before 18, 42725 from 18 on'),
             (6, 'uuidv7(interval ''1 day'')', '42883', '00000', '42883 before 18, PostgreSQL''s from 18 on'))
     AS c(ord, call, before18, on18, expected)
ORDER BY ord;

-- PostgreSQL's decoders read uidgen's UUIDs: uuid_extract_version() = 7
-- from 17 on; uuid_extract_timestamp() = uuidv7_timestamp() from 18 on, and
-- NULL on 17 (which decodes version 1 only).
CREATE TEMP TABLE samples AS
SELECT 1 AS ord, 'uuidv7_next()' AS source, uuidv7_next() AS u
UNION ALL SELECT 2, 'uuidv7_at()', uuidv7_at('2022-02-22 19:22:22.123+00')
UNION ALL SELECT 3, 'RFC 9562 A.6', '017f22e2-79b0-7cc3-98c4-dc0c0c07398f';
SELECT source,
       CASE WHEN pg_temp.pg_at_least(17)
            THEN pg_temp.value_of(format('SELECT pg_catalog.uuid_extract_version(%L)', u)) = '7'
            ELSE to_regproc('pg_catalog.uuid_extract_version') IS NULL END AS version_as_expected,
       CASE WHEN pg_temp.pg_at_least(18)
            THEN pg_temp.value_of(format('SELECT pg_catalog.uuid_extract_timestamp(%L)', u))::timestamptz
                 = uuidv7_timestamp(u)
            WHEN pg_temp.pg_at_least(17)
            THEN pg_temp.value_of(format('SELECT pg_catalog.uuid_extract_timestamp(%L)', u)) IS NULL
            ELSE to_regproc('pg_catalog.uuid_extract_timestamp') IS NULL END AS timestamp_as_expected
FROM samples
ORDER BY ord;

-- And the other way round: uuidv7_timestamp() decodes PostgreSQL's UUIDv7
-- (18 and later) to the millisecond uuid_extract_timestamp() gives.
SELECT NOT pg_temp.pg_at_least(18)
       OR pg_temp.value_of('SELECT uuidv7_timestamp(u) = pg_catalog.uuid_extract_timestamp(u)
                            FROM (SELECT pg_catalog.uuidv7() AS u) s')::boolean
       AS decodes_core_uuidv7;

-- uuid_extract_version(uuid) and uuid_extract_timestamp(uuid): uidgen has
-- them on every version; an unqualified call is uidgen's before 17 and
-- pg_catalog's from 17 on, with the same properties.
SELECT f AS function,
       pg_temp.uidgen_member(to_regprocedure('public.' || f)) AS uidgen_has_it,
       pg_temp.uidgen_member(to_regprocedure(f)) = NOT pg_temp.pg_at_least(17)
           AS unqualified_call_as_expected,
       p.prorettype::regtype AS returns, p.provolatile, p.proleakproof,
       p.proisstrict, p.proparallel
FROM (VALUES (1, 'uuid_extract_version(uuid)'),
             (2, 'uuid_extract_timestamp(uuid)')) AS v(ord, f)
JOIN pg_proc p ON p.oid = to_regprocedure(f)
ORDER BY ord;

-- A column mixing UUID versions: NULL for what they cannot read, never an
-- error.  Version 1 and version 7 timestamps are read as PostgreSQL 18
-- reads them; PostgreSQL 17 reads version 1 only (its version 7 timestamps
-- are NULL: the last column).
CREATE TEMP TABLE mixed (ord int, what text, u uuid);
INSERT INTO mixed VALUES
    (1, 'RFC 9562 A.1, version 1', 'c232ab00-9414-11ec-b3c8-9f6bdeced846'),
    (2, 'version 1, 1582-10-15', '00000000-0000-1000-8000-000000000000'),
    (3, 'version 1, 1970-01-01', '13814000-1dd2-11b2-8000-000000000000'),
    (4, 'RFC 9562 A.3, version 4', '919108f7-52d1-4320-9bac-f847db4148a8'),
    (5, 'RFC 9562 A.5, version 6', '1ec9414c-232a-6b00-b3c8-9f6bdeced846'),
    (6, 'RFC 9562 A.6, version 7', '017f22e2-79b0-7cc3-98c4-dc0c0c07398f'),
    (7, 'uuidv7_at()', uuidv7_at('2026-11-22 12:34:56.789+00')),
    (8, 'version 7, other variant', '017f22e2-79b0-7cc3-58c4-dc0c0c07398f'),
    (9, 'nil', '00000000-0000-0000-0000-000000000000'),
    (10, 'max', 'ffffffff-ffff-ffff-ffff-ffffffffffff');
CREATE INDEX ON mixed (uuid_extract_timestamp(u));
CREATE INDEX ON mixed (uuid_extract_version(u));
SELECT what, uuid_extract_version(u) AS version,
       CASE WHEN uuid_extract_version(u) = 7 THEN NULL
            ELSE uuid_extract_timestamp(u) END AS timestamp_unless_v7,
       CASE WHEN uuid_extract_version(u) = 7
            THEN uuid_extract_timestamp(u) IS NOT DISTINCT FROM
                 CASE WHEN pg_temp.pg_at_least(17) AND NOT pg_temp.pg_at_least(18)
                      THEN NULL ELSE uuidv7_timestamp(u) END
       END AS v7_timestamp_as_expected
FROM mixed
ORDER BY ord;
-- uidgen's own decoders (schema-qualified: from 17 on the unqualified
-- names are PostgreSQL's) on the same column, on every version: version 1
-- to the microsecond, version 7 to the millisecond, NULL for the other
-- versions and variants; the same as PostgreSQL's wherever it reads them.
SELECT what, public.uuid_extract_version(u) AS version,
       public.uuid_extract_timestamp(u) AS timestamp,
       public.uuid_extract_version(u) IS NOT DISTINCT FROM uuid_extract_version(u)
           AS version_as_core,
       public.uuid_extract_timestamp(u) IS NOT DISTINCT FROM uuid_extract_timestamp(u)
           OR (pg_temp.pg_at_least(17) AND NOT pg_temp.pg_at_least(18)
               AND uuid_extract_version(u) = 7 AND uuid_extract_timestamp(u) IS NULL)
           AS timestamp_as_core
FROM mixed
ORDER BY ord;
SELECT count(*) AS version_7 FROM mixed WHERE uuid_extract_version(u) = 7;
SELECT count(*) AS before_2000 FROM mixed WHERE uuid_extract_timestamp(u) < '2000-01-01+00';
SELECT uuid_extract_version(NULL) AS null_version, uuid_extract_timestamp(NULL) AS null_timestamp;

-- uuidv7_next(shift) beside PostgreSQL 18's uuidv7(shift): the same
-- millisecond for the same shift, give or take the time between the calls
-- (a minute: a loaded machine can stall a process for seconds; the shift
-- is three days).
SELECT NOT pg_temp.pg_at_least(18)
       OR pg_temp.value_of($$SELECT uuidv7_timestamp(uuidv7_next(interval '-3 days'))
                                    - pg_catalog.uuid_extract_timestamp(pg_catalog.uuidv7(interval '-3 days'))
                                    BETWEEN interval '-1 minute' AND interval '1 minute'$$)::boolean
       AS shift_as_core;

DROP VIEW default_targets;
DROP TABLE core_defaults;
