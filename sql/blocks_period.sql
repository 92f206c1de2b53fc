-- Numbering per period (issue 22, part 2): seq_create(..., reset), numbers
-- made of the period's key and the count, the restart when the period
-- changes (the period is moved back by hand, as the owner, so that no clock
-- is needed), 22008 when the clock is behind the row's period, reset_skip,
-- exhaustion per period, gapless numbers, formats, and every error.  The
-- key of the current period is seq_period_key(), so that nothing here
-- depends on today's date.

-- err(sql): 'ok', or the SQLSTATE and message of the error it raised
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
-- the key of the current period in UTC
CREATE FUNCTION pg_temp.k(reset text) RETURNS bigint LANGUAGE sql
    RETURN seq_period_key(reset, 'UTC', clock_timestamp());

-- The new columns and constraints
SELECT attname, format_type(atttypid, atttypmod), attnotnull,
       pg_get_expr(d.adbin, d.adrelid) AS default
  FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE attrelid = 'id_sequences'::regclass AND attname IN ('reset', 'period', 'reset_skip')
 ORDER BY attnum;
SELECT conname, pg_get_constraintdef(oid)
  FROM pg_constraint
 WHERE conrelid = 'id_sequences'::regclass
   AND conname IN ('id_sequences_reset_check', 'id_sequences_reset_skip_check',
                   'id_sequences_period_check')
 ORDER BY conname;

-- Period keys: in the sequence's time zone, at New Year, on a 23-hour day
SELECT seq_period_key('year', 'UTC', '2026-12-31 23:30:00+00') AS utc_year,
       seq_period_key('year', 'Europe/Berlin', '2026-12-31 23:30:00+00') AS berlin_year,
       seq_period_key('month', 'Europe/Berlin', '2026-12-31 22:59:59+00') AS berlin_month,
       seq_period_key('day', 'America/New_York', '2027-01-01 04:59:59+00') AS ny_day,
       seq_period_key('none', 'UTC', '2026-01-01 00:00:00+00') AS none;
-- Berlin's 2026-03-29 has 23 hours: 00:00 local is 23:00 UTC the day before,
-- 23:59 local is 21:59 UTC
SELECT seq_period_key('day', 'Europe/Berlin', '2026-03-28 22:59:59+00') AS before,
       seq_period_key('day', 'Europe/Berlin', '2026-03-28 23:00:00+00') AS first,
       seq_period_key('day', 'Europe/Berlin', '2026-03-29 21:59:59+00') AS last,
       seq_period_key('day', 'Europe/Berlin', '2026-03-29 22:00:00+00') AS after;
SELECT pg_temp.err($$SELECT seq_period_key('week', 'UTC', now())$$);
SELECT pg_temp.err($$SELECT seq_period_key('year', 'Mars/Olympus', now())$$);
SELECT pg_temp.err($$SELECT seq_period_key('year', 'UTC', 'infinity')$$);
SELECT pg_temp.err($$SELECT seq_period_key('year', 'UTC', '0999-12-31 00:00:00+00')$$);
-- but every moment of the years 1000 and 9999 has its key (the search for
-- a period's bounds looks up to a year away, where no key is)
SELECT seq_period_key('year', 'UTC', '1000-06-01 00:00:00+00') AS y1000,
       seq_period_key('year', 'UTC', '9999-06-01 00:00:00+00') AS y9999,
       seq_period_key('month', 'UTC', '1000-01-15 00:00:00+00') AS m100001,
       seq_period_key('month', 'UTC', '9999-12-15 00:00:00+00') AS m999912;
-- a date that comes back: Antarctica/Casey went from 02:00 +11 to 23:00 +08
-- on 2010-03-05 (2010-03-04 15:00 UTC), so 2010-03-04 comes back for an hour
SELECT seq_period_key('day', 'Antarctica/Casey', '2010-03-04 14:00:00+00') AS before,
       seq_period_key('day', 'Antarctica/Casey', '2010-03-04 15:30:00+00') AS back,
       seq_period_key('day', 'Antarctica/Casey', '2010-03-04 16:30:00+00') AS again;

-- The bounds the cache carves within (in UTC): a day of 23 hours in
-- Berlin; in Antarctica/Casey the first stretch of 2010-03-05 ends at the
-- change of offset, and the second begins when 2010-03-04 ends again; New
-- York's day of 1999-04-04 (before 2000: negative timestamps, fractions
-- of a second) has bounds at its own midnights and its change to DST;
-- a POSIX rule beyond the zone table's last year (2769) still has its
-- changes of offset found
SET TimeZone = 'UTC';
SELECT * FROM seq_period_bounds('day', 'Europe/Berlin', '2026-03-29 12:00:00+00');
SELECT * FROM seq_period_bounds('day', 'Antarctica/Casey', '2010-03-04 14:00:00+00');
SELECT * FROM seq_period_bounds('day', 'Antarctica/Casey', '2010-03-04 16:30:00+00');
SELECT * FROM seq_period_bounds('day', 'America/New_York', '1999-04-04 06:59:59.5+00');
SELECT * FROM seq_period_bounds('day', 'America/New_York', '1999-04-04 07:00:00.5+00');
SELECT * FROM seq_period_bounds('month', 'EST5EDT,M3.2.0,M11.1.0', '2790-03-20 12:00:00+00');
SELECT * FROM seq_period_bounds('year', 'EST5EDT,M3.2.0,M11.1.0', '2770-01-05 12:00:00+00');
SELECT * FROM seq_period_bounds('none', 'UTC', '2026-01-01 00:00:00+00');
RESET TimeZone;

-- Strategy 'table' per year, counts of 6 digits: the key, then the count
SELECT seq_create('pe_year', reset => 'year', max_value => 999999);
SELECT seq_next('pe_year') - pg_temp.k('year') * 1000000 AS first,
       seq_next('pe_year') - pg_temp.k('year') * 1000000 AS second;
SELECT first_id - pg_temp.k('year') * 1000000 AS first,
       last_id - pg_temp.k('year') * 1000000 AS last
  FROM seq_reserve_block('pe_year', 3);
SELECT next_block_start, period = pg_temp.k('year') AS current, reset, min_value, max_value,
       reset_skip, exhausted
  FROM id_sequences WHERE name = 'pe_year';
-- cached as any sequence of strategy 'table': the shared cache holds the
-- rest of the block of 1000 (next_block_start is its end, in counts)
SELECT next_id - pg_temp.k('year') * 1000000 AS next_count, reserved_ahead
  FROM seq_prefetched() WHERE name = 'pe_year';
-- max_value defaults to the widest count the period leaves
SELECT seq_create('pe_wide', reset => 'day', start => 0);
SELECT max_value, min_value, seq_next('pe_wide') = pg_temp.k('day') * 10000000000 AS first
  FROM id_sequences WHERE name = 'pe_wide';

-- The period ended (moved back by hand): the count restarts at start, and
-- an exhausted flag of the old period is cleared
UPDATE id_sequences SET period = period - 1, next_block_start = 500, exhausted = true
 WHERE name = 'pe_year';
SELECT seq_next('pe_year') - pg_temp.k('year') * 1000000 AS restarted;
SELECT next_block_start, period = pg_temp.k('year') AS current, exhausted
  FROM id_sequences WHERE name = 'pe_year';

-- The row counts in a later period (the clock is behind it): 22008, nothing
-- moves (the UPDATE freed the cached block: a gap)
UPDATE id_sequences SET period = period + 1 WHERE name = 'pe_year';
SELECT pg_temp.err($$SELECT seq_next('pe_year')$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('pe_year', 5)$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('pe_year')$$);
SELECT next_block_start, period - pg_temp.k('year') AS ahead FROM id_sequences WHERE name = 'pe_year';
UPDATE id_sequences SET period = period - 1 WHERE name = 'pe_year';
SELECT seq_next('pe_year') - pg_temp.k('year') * 1000000 AS continues;

-- reset_skip (set by the skip after a promotion near the period's end):
-- the next period starts that many IDs beyond start, on the step
SELECT seq_create('pe_step', start => 2, increment => 3, reset => 'month', max_value => 9999);
UPDATE id_sequences SET period = period - 1, reset_skip = 5 WHERE name = 'pe_step';
SELECT seq_next('pe_step') - pg_temp.k('month') * 10000 AS skipped,
       seq_next('pe_step') - pg_temp.k('month') * 10000 AS next;
SELECT reset_skip FROM id_sequences WHERE name = 'pe_step';
-- set within the current period, it waits for the next one: a refill of
-- the current period leaves it
UPDATE id_sequences SET reset_skip = 7 WHERE name = 'pe_step';
SELECT seq_next('pe_step') - pg_temp.k('month') * 10000 AS same_period;
SELECT reset_skip, next_block_start FROM id_sequences WHERE name = 'pe_step';

-- Exhaustion is per period: max_value 9 leaves counts 1..9
SELECT seq_create('pe_small', reset => 'day', max_value => 9);
SELECT first_id - pg_temp.k('day') * 10 AS first, last_id - pg_temp.k('day') * 10 AS last
  FROM seq_reserve_block('pe_small', 9);
SELECT pg_temp.err($$SELECT seq_next('pe_small')$$);
-- whose hint says the count restarts (not only "raise max_value")
DO $$
DECLARE
    h text;
BEGIN
    PERFORM seq_next('pe_small');
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT;
    RAISE NOTICE '%', h;
END
$$;
UPDATE id_sequences SET period = period - 1 WHERE name = 'pe_small';
SELECT seq_next('pe_small') - pg_temp.k('day') * 10 AS next_day;

-- Gapless per month: a rollback gives the number back; a new period restarts
SELECT seq_create('pe_gap', strategy => 'gapless', reset => 'month', max_value => 9999,
                  format => 'G{YYYY}{MM}-{n:4}');
BEGIN;
SELECT seq_next('pe_gap') - pg_temp.k('month') * 10000 AS taken;
ROLLBACK;
SELECT seq_next('pe_gap') - pg_temp.k('month') * 10000 AS again;
SELECT first_id - pg_temp.k('month') * 10000 AS first, last_id - pg_temp.k('month') * 10000 AS last
  FROM seq_reserve_block('pe_gap', 2);
SELECT seq_next_text('pe_gap') = 'G' || pg_temp.k('month') || '-0004' AS text_ok;
UPDATE id_sequences SET period = period - 1, next_block_start = 77 WHERE name = 'pe_gap';
SELECT seq_next('pe_gap') - pg_temp.k('month') * 10000 AS restarted;
UPDATE id_sequences SET period = period + 1 WHERE name = 'pe_gap';
SELECT pg_temp.err($$SELECT seq_next('pe_gap')$$);
UPDATE id_sequences SET period = period - 1 WHERE name = 'pe_gap';
UPDATE id_sequences SET next_block_start = 9999 WHERE name = 'pe_gap';
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('pe_gap', 2)$$);

-- Formats: the number carries its period's date
SELECT seq_create('pe_inv', reset => 'year', max_value => 999999, format => 'INV-{YYYY}-{n:6}');
SELECT seq_next_text('pe_inv') = 'INV-' || pg_temp.k('year') || '-000001' AS text_ok;
SELECT seq_format('pe_inv', 2025000042) AS old_year, seq_format('pe_gap', 2026030007) AS march;
SELECT pg_temp.err($$SELECT seq_format('pe_inv', 2025000042, now())$$);
SELECT pg_temp.err($$SELECT seq_format('pe_inv', 202500004)$$);
SELECT pg_temp.err($$SELECT seq_format('pe_inv', -1)$$);

-- Errors at creation (before any row is written)
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => 'week')$$);
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => NULL)$$);
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => 'year', strategy => 'sequence')$$);
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => 'year', increment => -1)$$);
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => 'year', start => -1)$$);
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => 'year', start => 5, min_value => 3)$$);
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => 'year', max_value => 100000000000000)$$);
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => 'month', max_value => 1000000000000)$$);
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => 'day', max_value => 10000000000)$$);
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => 'year', format => 'X{MM}-{n}')$$);
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => 'month', format => 'X{DD}-{n}')$$);
SELECT pg_temp.err($$SELECT seq_create('pe_bad', reset => 'year', time_zone => 'Mars/Olympus')$$);
SELECT count(*) AS none_created FROM id_sequences WHERE name = 'pe_bad';
-- the widest allowed, a start equal to its min_value, a day's fields
SELECT seq_create('pe_ok1', reset => 'year', max_value => 99999999999999, start => 7, min_value => 7);
SELECT seq_create('pe_ok2', reset => 'day', format => '{YY}{MM}{DD}-{n36:7}', max_value => 9999999);
SELECT seq_next('pe_ok1') - pg_temp.k('year') * 100000000000000 AS from_seven;

-- seq_alter(): the digits of max_value are fixed; the same digits, a new
-- restart (min_value) and step are fine
SELECT pg_temp.err($$SELECT seq_alter('pe_year', max_value => 9999999)$$);
SELECT pg_temp.err($$SELECT seq_alter('pe_year', max_value => 99999)$$);
SELECT pg_temp.err($$SELECT seq_alter('pe_year', format => 'Y{DD}{n:6}')$$);
SELECT pg_temp.err($$SELECT seq_alter('pe_year', increment => -1)$$);
SELECT pg_temp.err($$SELECT seq_alter('pe_year', max_value => 888888, increment => 2)$$);
SELECT max_value, increment FROM id_sequences WHERE name = 'pe_year';
-- seq_advance(): past is a number (the key, then the count).  One of this
-- period moves the count beyond it on the step (888888 is max_value now);
-- one of an earlier period changes nothing; the next number is returned
SELECT seq_advance('pe_year', pg_temp.k('year') * 1000000 + 5000) - pg_temp.k('year') * 1000000 AS advanced;
SELECT seq_next('pe_year') - pg_temp.k('year') * 1000000 AS next;
SELECT seq_advance('pe_year', (pg_temp.k('year') - 1) * 1000000 + 999999) - pg_temp.k('year') * 1000000 AS older;
SELECT seq_advance('pe_year', pg_temp.k('year') * 1000000 + 3) - pg_temp.k('year') * 1000000 AS below;
-- the row's period ended: the count restarts (at start) and moves beyond past
UPDATE id_sequences SET period = period - 1, next_block_start = 900 WHERE name = 'pe_year';
SELECT seq_advance('pe_year', pg_temp.k('year') * 1000000 + 40) - pg_temp.k('year') * 1000000 AS restarted;
SELECT next_block_start, period = pg_temp.k('year') AS current FROM id_sequences WHERE name = 'pe_year';
SELECT seq_next('pe_year') - pg_temp.k('year') * 1000000 AS next;
-- an ended period, past in it: nothing changes, the next number is the restart's
UPDATE id_sequences SET period = period - 1, next_block_start = 900 WHERE name = 'pe_year';
SELECT seq_advance('pe_year', (pg_temp.k('year') - 1) * 1000000 + 950) - pg_temp.k('year') * 1000000 AS would_restart;
SELECT next_block_start, period = pg_temp.k('year') - 1 AS unchanged FROM id_sequences WHERE name = 'pe_year';
-- beyond the last count: the position after it (exhausted until the period ends)
SELECT seq_advance('pe_year', pg_temp.k('year') * 1000000 + 888885) - pg_temp.k('year') * 1000000 AS last;
SELECT seq_next('pe_year') - pg_temp.k('year') * 1000000 AS last;
SELECT seq_advance('pe_year', pg_temp.k('year') * 1000000 + 888887) - pg_temp.k('year') * 1000000 AS past_last;
SELECT pg_temp.err($$SELECT seq_next('pe_year')$$);
-- refused: a later period, max_value, not a number of it, the clock behind
SELECT pg_temp.err($$SELECT seq_advance('pe_year', (pg_temp.k('year') + 1) * 1000000 + 1)$$);
SELECT pg_temp.err($$SELECT seq_advance('pe_year', pg_temp.k('year') * 1000000 + 888888)$$);
SELECT pg_temp.err($$SELECT seq_advance('pe_year', 12345)$$);
SELECT pg_temp.err($$SELECT seq_advance('pe_year', -1)$$);
UPDATE id_sequences SET period = period + 1 WHERE name = 'pe_year';
SELECT pg_temp.err($$SELECT seq_advance('pe_year', pg_temp.k('year') * 1000000 + 5)$$);

-- A hand-written UPDATE cannot make what seq_create() refuses
SELECT pg_temp.err($$UPDATE id_sequences SET reset = 'week' WHERE name = 'pe_year'$$);
SELECT pg_temp.err($$UPDATE id_sequences SET min_value = -1 WHERE name = 'pe_year'$$);
SELECT seq_create('pe_none');
SELECT pg_temp.err($$UPDATE id_sequences SET period = 2026 WHERE name = 'pe_none'$$);
SELECT pg_temp.err($$UPDATE id_sequences SET reset_skip = -1 WHERE name = 'pe_year'$$);

SELECT seq_drop(name) FROM id_sequences WHERE name LIKE 'pe\_%' ORDER BY name;
