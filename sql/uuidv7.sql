-- uuidv7_next(), uuidv7_at() and their helpers: RFC 9562 layout, round trips
-- and errors.  uuidv7_core covers the deprecated names and PostgreSQL 18.

-- Declared volatility and parallel safety.  (Without the schema, which
-- regprocedure shows for uuidv7() from PostgreSQL 18 on: there an
-- unqualified uuidv7() is pg_catalog's.)
SELECT regexp_replace(p.oid::regprocedure::text, '^public\.', '') AS function,
       provolatile, proparallel, proisstrict
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'uidgen'
WHERE proname LIKE 'uuidv7%'
ORDER BY regexp_replace(p.oid::regprocedure::text, '^public\.', '') COLLATE "C";

-- RFC 9562 Appendix A.6: the example UUIDv7 decodes to 2022-02-22 19:22:22 UTC.
SET TIME ZONE 'UTC';
SELECT uuidv7_timestamp('017F22E2-79B0-7CC3-98C4-DC0C0C07398F');

-- Version and variant bits of 100000 generated UUIDs; all distinct and
-- strictly increasing in generation order.
WITH u AS (
    SELECT n, uuidv7_next() AS id FROM generate_series(1, 100000) AS n
), o AS (
    SELECT id, lag(id) OVER (ORDER BY n) AS previous FROM u
)
SELECT count(*) AS uuids, count(DISTINCT id) AS distinct_uuids,
       bool_and(substr(id::text, 15, 1) = '7') AS version_7,
       bool_and(substr(id::text, 20, 1) IN ('8', '9', 'a', 'b')) AS variant_10,
       bool_and(id > previous) AS increasing
FROM o;

-- The timestamp of a fresh UUID is the current millisecond (or a little
-- ahead, within the drift bound).
SELECT uuidv7_timestamp(u) BETWEEN date_trunc('milliseconds', t0)
           AND clock_timestamp() + current_setting('uidgen.max_clock_drift')::interval
           AS timestamp_plausible,
       u >= uuidv7_floor(t0) AS above_floor
FROM (SELECT clock_timestamp() AS t0) AS t, LATERAL (SELECT uuidv7_next() AS u) AS g;

-- The random part really varies: 54 random bits per UUID, so the last 12
-- hex digits of 1000 UUIDs from one millisecond-free source are distinct.
SELECT count(DISTINCT right(uuidv7_next()::text, 12)) AS distinct_tails
FROM generate_series(1, 1000);

-- uuidv7_at(ts) and uuidv7_floor(ts) round trip to the millisecond.
SELECT ts,
       uuidv7_timestamp(uuidv7_at(ts)) AS from_uuidv7,
       uuidv7_timestamp(uuidv7_floor(ts)) AS from_floor,
       uuidv7_floor(ts) AS floor,
       uuidv7_at(ts) >= uuidv7_floor(ts) AND uuidv7_at(ts) < uuidv7_floor(ts + interval '1 ms')
           AS within_its_millisecond
FROM (VALUES (timestamptz '1970-01-01 00:00:00+00'),
             (timestamptz '2022-02-22 19:22:22.123456+00'),
             (timestamptz '2026-11-22 12:34:56.789+00'),
             (timestamptz '10889-08-02 05:31:50.654+00')) AS v(ts)
ORDER BY ts;

-- uuidv7_at(ts) is random within its millisecond, and valid.
SELECT count(DISTINCT u) AS distinct_uuids,
       bool_and(substr(u::text, 15, 1) = '7') AS version_7,
       bool_and(substr(u::text, 20, 1) IN ('8', '9', 'a', 'b')) AS variant_10
FROM (SELECT uuidv7_at('2026-01-01 00:00:00+00') AS u FROM generate_series(1, 1000)) AS g;

-- IMMUTABLE helpers work in generated columns and index expressions.
CREATE TEMP TABLE docs (
    id uuid PRIMARY KEY DEFAULT uuidv7_next(),
    created_at timestamptz GENERATED ALWAYS AS (uuidv7_timestamp(id)) STORED
);
CREATE INDEX ON docs (uuidv7_timestamp(id));
INSERT INTO docs DEFAULT VALUES;
INSERT INTO docs (id) VALUES ('017F22E2-79B0-7CC3-98C4-DC0C0C07398F');
SELECT count(*) FROM docs WHERE id >= uuidv7_floor(now() - interval '1 hour');
SELECT created_at FROM docs WHERE id < uuidv7_floor('2023-01-01');

-- Errors.
SELECT error_of($$SELECT uuidv7_timestamp('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')$$);
SELECT error_of($$SELECT uuidv7_timestamp('017f22e2-79b0-7cc3-58c4-dc0c0c07398f')$$);
SELECT error_of($$SELECT uuidv7_timestamp('00000000-0000-0000-0000-000000000000')$$);
SELECT error_of($$SELECT uuidv7_timestamp(gen_random_uuid())$$);
SELECT error_of($$SELECT uuidv7_at('1969-12-31 23:59:59.999+00')$$);
SELECT error_of($$SELECT uuidv7_at('10889-08-02 05:31:50.656+00')$$);
SELECT error_of($$SELECT uuidv7_floor('infinity')$$);
SELECT error_of($$SELECT uuidv7_floor('-infinity')$$);
-- After 294247-01-10 a timestamptz's Unix microsecond overflows int64: out of
-- range (checked before the conversion's sum).
SELECT error_of($$SELECT uuidv7_at('294270-06-01+00')$$);
SELECT error_of($$SELECT public.uuidv7('294270-06-01+00'::timestamptz)$$);
SELECT error_of($$SELECT uuidv7_floor('294270-06-01+00')$$);
SELECT uuidv7_floor('10889-08-02 05:31:50.655+00') AS last_floor;
SELECT uuidv7_at(NULL), uuidv7_timestamp(NULL), uuidv7_floor(NULL);

-- uuidv7_next(shift): uidgen's clock moved by the shift.  10000 calls
-- with one shift: valid, distinct and strictly increasing in call order.
WITH u AS (
    SELECT n, uuidv7_next(interval '-1 hour') AS id FROM generate_series(1, 10000) AS n
), o AS (
    SELECT id, lag(id) OVER (ORDER BY n) AS previous FROM u
)
SELECT count(DISTINCT id) AS distinct_uuids,
       bool_and(substr(id::text, 15, 1) = '7') AS version_7,
       bool_and(substr(id::text, 20, 1) IN ('8', '9', 'a', 'b')) AS variant_10,
       bool_and(id > previous) AS increasing
FROM o;

-- Calls with a zero shift and without one, alternating, share one clock:
-- strictly increasing together.
WITH u AS (
    SELECT n, CASE n % 2 WHEN 0 THEN uuidv7_next(interval '0') ELSE uuidv7_next() END AS id
    FROM generate_series(1, 10000) AS n
), o AS (
    SELECT id, lag(id) OVER (ORDER BY n) AS previous FROM u
)
SELECT bool_and(id > previous) AS increasing FROM o;

-- The timestamp is the current millisecond plus the shift.
SELECT shift,
       uuidv7_timestamp(uuidv7_next(shift)) BETWEEN date_trunc('milliseconds', t0 + shift)
           AND clock_timestamp() + shift + current_setting('uidgen.max_clock_drift')::interval
           AS timestamp_plausible
FROM (SELECT clock_timestamp() AS t0) AS t,
     (VALUES (interval '-1 day'), (interval '1 ms'), (interval '-2 years 3 months'),
             (interval '90 minutes 0.5 ms')) AS v(shift);

-- Out of the UUIDv7 range (22008), and NULL.
SELECT split_part(error_of($$SELECT uuidv7_next(interval '-100 years')$$), ': "', 1) AS before_1970;
SELECT split_part(error_of($$SELECT uuidv7_next(interval '9000 years')$$), ': "', 1) AS after_10889;
SELECT uuidv7_next(NULL::interval) AS null_shift;

-- Counted in the status.
SELECT uuids_issued >= 101002 AS counted FROM uidgen_status();
