-- Review of numbering per period (preview branch): cases that fail on
-- 11e0010.  Each expected result below is what docs/block-sequences.md
-- promises, not what the code gives today.

-- 1. Periods are numbered in the years 1000 to 9999 (period.c's own
-- message), but period_of() bisects for the bounds up to 367 days (a
-- year), 32 days (a month) or 2 days (a day) away from the moment, and
-- period_key_in() raises 22008 for a probe outside those years.  So the
-- key of any moment of the year 1000 or 9999 (per year), of the first or
-- last month of them (per month), fails.
SELECT seq_period_key('year', 'UTC', '1000-06-01 00:00:00+00') AS y1000,
       seq_period_key('year', 'UTC', '9999-06-01 00:00:00+00') AS y9999;
SELECT seq_period_key('month', 'UTC', '1000-01-15 00:00:00+00') AS m100001,
       seq_period_key('month', 'UTC', '9999-12-15 00:00:00+00') AS m999912;

-- 2. reset_skip (set after a promotion within an hour of the period's
-- end, failover.c) must survive the allocator's refills within the
-- period: it is for the NEXT period.  allocsql.c's plan_period_update
-- sets reset_skip = 0 on every update of a row numbered per period, so
-- the first refill after the promotion's skip (in the same round, even)
-- throws it away and the next period restarts at min_value: numbers an
-- old primary with a clock ahead handed out are handed out again.
-- (Fixed on branch period by d0b7f53; fails here.)
SELECT seq_create('rv_skip', reset => 'year', max_value => 999999, block_size => 10);
SELECT seq_next('rv_skip') % 1000000 AS first_count;
UPDATE id_sequences SET reset_skip = 500 WHERE name = 'rv_skip';
-- the entry was freed by the UPDATE: this refill is in the same period
SELECT seq_next('rv_skip') % 1000000 > 1 AS next_count_ok;
SELECT reset_skip FROM id_sequences WHERE name = 'rv_skip';
SELECT seq_drop('rv_skip');
