-- snowflake_next() and its decoders: the SQL surface, layout and errors.
-- Written to pass on any server with uidgen preloaded, whatever its
-- uidgen.* settings: expected values are computed from current_setting().

SET TIME ZONE 'UTC';

CREATE TEMP VIEW layout AS
SELECT current_setting('uidgen.worker_id')::int AS worker_id,
       current_setting('uidgen.worker_bits')::int AS worker_bits,
       current_setting('uidgen.sequence_bits')::int AS sequence_bits,
       current_setting('uidgen.epoch')::timestamptz AS epoch;

-- Declared volatility and parallel safety.
SELECT p.oid::regprocedure AS function, provolatile, proparallel, proisstrict
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'uidgen'
WHERE proname LIKE 'snowflake%' OR proname = 'uidgen_status'
ORDER BY p.oid::regprocedure::text COLLATE "C";

-- The settings are registered under the reserved prefix.
SELECT name, context, vartype, unit, min_val, max_val, boot_val
FROM pg_settings
WHERE name IN ('uidgen.epoch', 'uidgen.max_clock_drift', 'uidgen.sequence_bits',
               'uidgen.worker_bits', 'uidgen.worker_id')
ORDER BY name;
SET uidgen.no_such_setting = 1;

-- 100000 IDs in one statement: distinct and strictly increasing.
WITH ids AS (
    SELECT n, snowflake_next() AS id FROM generate_series(1, 100000) AS n
), ordered AS (
    SELECT id, lag(id) OVER (ORDER BY n) AS previous FROM ids
)
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(id > previous) AS increasing, bool_and(id > 0) AS positive
FROM ordered;

-- Each field of a fresh ID: this server's worker id, a sequence within its
-- width, a timestamp within a kernel clock tick before now and the drift
-- bound after it.
SELECT snowflake_worker(id) = l.worker_id AS worker_matches,
       snowflake_sequence(id) BETWEEN 0 AND (1 << l.sequence_bits) - 1 AS sequence_fits,
       snowflake_timestamp(id) BETWEEN t0 - interval '10 ms'
           AND clock_timestamp() + current_setting('uidgen.max_clock_drift')::interval
           AS timestamp_plausible,
       id >= snowflake_floor(t0 - interval '10 ms') AS above_floor
FROM (SELECT clock_timestamp() AS t0) AS t,
     LATERAL (SELECT snowflake_next() AS id) AS g, layout AS l;

-- The layout: an ID assembled from its fields decodes to those fields.
WITH fields(at, worker, seq) AS (
    VALUES (timestamptz '2025-03-04 05:06:07.089+00', 0, 0),
           (timestamptz '2030-12-31 23:59:59.999+00', -1, -1),
           (timestamptz '2026-06-15 12:00:00.5+00', 1, 1)
), ids AS (
    SELECT at,
           CASE worker WHEN -1 THEN (1 << l.worker_bits) - 1 ELSE worker END AS worker,
           CASE seq WHEN -1 THEN (1 << l.sequence_bits) - 1 ELSE seq END AS seq,
           l.sequence_bits
    FROM fields, layout AS l
)
SELECT at,
       snowflake_timestamp(id) = at AS timestamp_round_trips,
       snowflake_worker(id) = worker AS worker_round_trips,
       snowflake_sequence(id) = seq AS sequence_round_trips,
       snowflake_floor(snowflake_timestamp(id)) = snowflake_floor(at) AS floor_round_trips
FROM (SELECT *, snowflake_floor(at) | (worker::bigint << sequence_bits) | seq AS id FROM ids) AS i
ORDER BY at;

-- snowflake_floor(): the first ID of the millisecond, for range predicates.
SELECT snowflake_floor(l.epoch) AS floor_at_epoch,
       snowflake_floor(l.epoch + interval '1 ms') = 1::bigint << (l.worker_bits + l.sequence_bits)
           AS one_ms_is_one_timestamp_unit,
       snowflake_floor(l.epoch + interval '1.9 ms') = snowflake_floor(l.epoch + interval '1 ms')
           AS truncates_to_the_millisecond,
       snowflake_floor('2026-01-01 00:00:00.000+00') < snowflake_floor('2026-01-01 00:00:00.001+00')
           AS ordered
FROM layout AS l;

-- Range predicates on IDs of the last day use the floor.
CREATE TEMP TABLE events (id bigint PRIMARY KEY DEFAULT snowflake_next(), note text);
INSERT INTO events (note) SELECT 'event ' || n FROM generate_series(1, 1000) AS n;
SELECT count(*) FROM events WHERE id >= snowflake_floor(now() - interval '1 day');
SELECT count(*) FROM events WHERE id >= snowflake_floor(clock_timestamp() + interval '1 day');

-- As a DEFAULT in a partitioned table with ID-range partitions.
CREATE TEMP TABLE measurements (id bigint DEFAULT snowflake_next(), value int)
    PARTITION BY RANGE (id);
CREATE TEMP TABLE measurements_past PARTITION OF measurements
    FOR VALUES FROM (MINVALUE) TO (snowflake_floor('2026-01-01 00:00:00+00'));
CREATE TEMP TABLE measurements_now PARTITION OF measurements
    FOR VALUES FROM (snowflake_floor('2026-01-01 00:00:00+00')) TO (MAXVALUE);
INSERT INTO measurements (value) VALUES (1), (2);
INSERT INTO measurements (id, value)
    SELECT snowflake_floor('2025-06-01 00:00:00+00'), 3;
SELECT tableoid::regclass AS partition, value FROM measurements ORDER BY value;

-- Errors.
SELECT error_of('SELECT snowflake_timestamp(-1)');
SELECT error_of('SELECT snowflake_worker(-42)');
SELECT error_of('SELECT snowflake_sequence(-9223372036854775808)');
SELECT error_of($$SELECT snowflake_floor('1969-12-31 23:59:59+00')$$);
SELECT error_of($$SELECT snowflake_floor('infinity')$$);
SELECT error_of($$SELECT snowflake_floor('-infinity')$$);
SELECT error_of($$SELECT snowflake_floor('9999-01-01 00:00:00+00')$$);
SELECT error_of('SELECT snowflake_floor(epoch - interval ''1 ms'') FROM layout')
    LIKE '22008: timestamp out of range for snowflake IDs: %' AS before_epoch_refused;
-- After 294247-01-10 a timestamptz's Unix microsecond overflows int64: out of
-- range (checked before the conversion's sum), also as an epoch argument.
SELECT error_of($$SELECT snowflake_floor('294270-06-01+00')$$);
SELECT error_of(format($$SELECT snowflake_at('294270-06-01+00', %s, 0)$$,
                       CASE worker_id WHEN 0 THEN 1 ELSE 0 END)) FROM layout;
SELECT error_of($$SELECT snowflake_timestamp(1, '294270-06-01+00', 10, 12)$$);
SELECT error_of($$SELECT snowflake_worker(1, '294270-06-01+00', 10, 12)$$);
SELECT error_of($$SELECT snowflake_sequence(1, '294270-06-01+00', 10, 12)$$);
SELECT error_of('SET uidgen.worker_id = 1');
SELECT error_of('SET uidgen.epoch = ''2020-01-01''');
SELECT error_of('SET uidgen.max_clock_drift = 5');
SELECT snowflake_timestamp(NULL), snowflake_floor(NULL);

-- The decoders with the layout as arguments (IMMUTABLE): the same fields
-- as the STABLE decoders under the layout in force.
WITH ids AS (SELECT snowflake_next() AS id FROM generate_series(1, 1000))
SELECT bool_and(snowflake_timestamp(id, l.epoch, l.worker_bits, l.sequence_bits)
                = snowflake_timestamp(id)) AS timestamp_matches,
       bool_and(snowflake_worker(id, l.epoch, l.worker_bits, l.sequence_bits)
                = snowflake_worker(id)) AS worker_matches,
       bool_and(snowflake_sequence(id, l.epoch, l.worker_bits, l.sequence_bits)
                = snowflake_sequence(id)) AS sequence_matches
FROM ids, layout AS l;

-- Under the default layout written out: 1000 ms after the epoch, worker 5,
-- sequence 7; and the same bits read under two other layouts.
SELECT snowflake_timestamp(id, '2024-01-01+00', 10, 12) AS ts,
       snowflake_worker(id, '2024-01-01+00', 10, 12) AS worker,
       snowflake_sequence(id, '2024-01-01+00', 10, 12) AS seq,
       snowflake_timestamp(id, '2020-01-01+00', 0, 0) AS ts_no_fields,
       snowflake_worker(id, '2020-01-01+00', 0, 0) AS worker_no_fields,
       snowflake_sequence(id, '2020-01-01+00', 0, 0) AS seq_no_fields,
       snowflake_timestamp(id, '2024-01-01+00', 12, 10) AS ts_wide_worker,
       snowflake_worker(id, '2024-01-01+00', 12, 10) AS worker_wide,
       snowflake_sequence(id, '2024-01-01+00', 12, 10) AS seq_narrow
FROM (SELECT (1000::bigint << 22) | (5 << 12) | 7 AS id) AS i;

-- Usable in an index expression, a generated column and a partitioning
-- expression, where the STABLE forms are refused.
CREATE TEMP TABLE orders (
    id bigint PRIMARY KEY,
    created_at timestamptz
        GENERATED ALWAYS AS (snowflake_timestamp(id, '2024-01-01+00', 10, 12)) STORED
);
CREATE INDEX orders_created_at ON orders (snowflake_timestamp(id, '2024-01-01+00', 10, 12));
CREATE INDEX orders_worker ON orders (snowflake_worker(id, '2024-01-01+00', 10, 12),
                                      snowflake_sequence(id, '2024-01-01+00', 10, 12));
INSERT INTO orders (id)
SELECT (n::bigint * 3600000 << 22) | ((n % 4) << 12) | n FROM generate_series(1, 48) AS n;
SELECT count(*) AS first_day,
       min(created_at) AS first, max(created_at) AS last
FROM orders
WHERE snowflake_timestamp(id, '2024-01-01+00', 10, 12) < '2024-01-02+00';
SELECT count(*) AS worker_2 FROM orders WHERE snowflake_worker(id, '2024-01-01+00', 10, 12) = 2;
SELECT error_of('CREATE INDEX ON orders (snowflake_timestamp(id))');
SELECT error_of('CREATE TEMP TABLE orders2 (id bigint,
                 at timestamptz GENERATED ALWAYS AS (snowflake_timestamp(id)) STORED)');
CREATE TEMP TABLE orders_by_day (id bigint NOT NULL)
    PARTITION BY RANGE (snowflake_timestamp(id, '2024-01-01+00', 10, 12));
CREATE TEMP TABLE orders_day1 PARTITION OF orders_by_day
    FOR VALUES FROM ('2024-01-01+00') TO ('2024-01-02+00');
CREATE TEMP TABLE orders_later PARTITION OF orders_by_day
    FOR VALUES FROM ('2024-01-02+00') TO (MAXVALUE);
INSERT INTO orders_by_day SELECT id FROM orders;
SELECT tableoid::regclass AS partition, count(*)
FROM orders_by_day GROUP BY 1 ORDER BY 1;

-- The layout is checked as the settings are (22023), the ID and the
-- range of the timestamp as by the STABLE decoders.
SELECT error_of($$SELECT snowflake_timestamp(1, '2024-01-01+00', -1, 12)$$);
SELECT error_of($$SELECT snowflake_worker(1, '2024-01-01+00', 23, 0)$$);
SELECT error_of($$SELECT snowflake_sequence(1, '2024-01-01+00', 0, 21)$$);
SELECT error_of($$SELECT snowflake_sequence(1, '2024-01-01+00', 10, -1)$$);
SELECT error_of($$SELECT snowflake_timestamp(1, '2024-01-01+00', 12, 11)$$);
SELECT error_of($$SELECT snowflake_timestamp(1, '1969-12-31 23:59:59+00', 10, 12)$$);
SELECT error_of($$SELECT snowflake_worker(1, 'infinity', 10, 12)$$);
SELECT error_of($$SELECT snowflake_timestamp(-1, '2024-01-01+00', 10, 12)$$);
SELECT error_of($$SELECT snowflake_timestamp(9223372036854775807, '2024-01-01+00', 0, 0)$$);
SELECT snowflake_timestamp(9223372036854775807, '2024-01-01+00', 10, 12) AS last_instant,
       snowflake_timestamp(NULL, '2024-01-01+00', 10, 12) AS null_id,
       snowflake_worker(1, NULL, 10, 12) AS null_epoch;

-- snowflake_at(ts, worker_id, sequence): backfilled IDs carry another
-- worker id than uidgen.worker_id, so they never equal a live ID, even in
-- the same millisecond.  The live IDs of one statement, and for each of
-- their milliseconds every sequence under another worker id.
CREATE TEMP TABLE live AS
SELECT snowflake_next() AS id FROM generate_series(1, 20000);
CREATE TEMP TABLE backfilled AS
SELECT ms, seq, snowflake_at(ms, other.worker_id, seq) AS id, other.worker_id
FROM (SELECT DISTINCT snowflake_timestamp(id) AS ms FROM live) AS m,
     (SELECT CASE l.worker_id WHEN 0 THEN 1 ELSE 0 END AS worker_id, l.sequence_bits
      FROM layout AS l) AS other,
     generate_series(0, (1 << other.sequence_bits) - 1) AS seq;
SELECT count(*) = (SELECT count(DISTINCT snowflake_timestamp(id)) FROM live)
                  * (1 << (SELECT sequence_bits FROM layout)) AS every_sequence,
       count(DISTINCT id) = count(*) AS distinct_ids,
       (SELECT count(*) FROM live JOIN backfilled USING (id)) = 0 AS no_live_id_repeated,
       bool_and(snowflake_timestamp(id) = ms) AS timestamp_round_trips,
       bool_and(snowflake_worker(id) = worker_id) AS worker_round_trips,
       bool_and(snowflake_sequence(id) = seq) AS sequence_round_trips,
       bool_and(id >= snowflake_floor(ms) AND id < snowflake_floor(ms + interval '1 ms'))
           AS within_its_millisecond
FROM backfilled;

-- A fixed instant under the layout in force.
SELECT snowflake_at('2025-06-01 12:00:00.123456+00', w, 3)
           = snowflake_floor('2025-06-01 12:00:00.123+00') | (w::bigint << l.sequence_bits) | 3
           AS assembled,
       snowflake_at('2025-06-01 12:00:00.123456+00', w, 3)
           < snowflake_at('2025-06-01 12:00:00.123456+00', w, 4) AS sequence_orders
FROM layout AS l, LATERAL (SELECT CASE l.worker_id WHEN 0 THEN 1 ELSE 0 END AS w) AS o;

-- Errors: this server's worker id, fields that do not fit, instants the
-- layout does not cover (the SQLSTATE only: the messages name the settings).
SELECT what, left(error_of(q), 5) AS sqlstate
FROM layout AS l,
     LATERAL (VALUES (1, 'own worker id', format('SELECT snowflake_at(now(), %s, 0)', l.worker_id)),
                     (2, 'worker id too wide', format('SELECT snowflake_at(now(), %s, 0)', 1 << l.worker_bits)),
                     (3, 'negative worker id', 'SELECT snowflake_at(now(), -1, 0)'),
                     (4, 'sequence too wide', format('SELECT snowflake_at(now(), %s, %s)',
                         CASE l.worker_id WHEN 0 THEN 1 ELSE 0 END, 1 << l.sequence_bits)),
                     (5, 'negative sequence', format('SELECT snowflake_at(now(), %s, -1)',
                         CASE l.worker_id WHEN 0 THEN 1 ELSE 0 END)),
                     (6, 'before the epoch', format('SELECT snowflake_at(%L::timestamptz - interval ''1 ms'', %s, 0)',
                         l.epoch, CASE l.worker_id WHEN 0 THEN 1 ELSE 0 END)),
                     (7, 'infinity', format('SELECT snowflake_at(''infinity'', %s, 0)',
                         CASE l.worker_id WHEN 0 THEN 1 ELSE 0 END)))
         AS e(ord, what, q)
ORDER BY ord;
SELECT error_of('SELECT snowflake_at(now(), worker_id, 0) FROM layout')
    LIKE '22023: worker id % of a backfilled snowflake ID must differ from this server''s worker id'
    AS own_worker_id_refused;
SELECT snowflake_at(NULL, 1, 0), snowflake_at(now(), NULL, 0), snowflake_at(now(), 1, NULL);

-- The status row (its last ID at least the one taken just before: a
-- window of time would depend on how fast the run is).
SELECT snowflake_next() AS just_taken \gset
SELECT state, s.worker_id = l.worker_id AS worker_id_matches,
       timestamp_bits + s.worker_bits + s.sequence_bits AS total_bits,
       s.epoch = l.epoch AS epoch_matches,
       last_id >= :just_taken AS last_id_recent,
       ids_issued >= 101002 AS counted,
       high_water_mark > snowflake_timestamp(last_id) AS mark_above_last_id,
       clock_ahead <= current_setting('uidgen.max_clock_drift')::interval AS within_drift
FROM uidgen_status() AS s, layout AS l;
