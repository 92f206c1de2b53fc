-- Steps and direction of block sequences (issue 22, part 1): seq_create(...,
-- increment, min_value), the values start, start + increment, ... up to
-- max_value (ascending) or down to min_value (descending), exhaustion near
-- both ends of bigint without an overflow, seq_alter(), seq_advance() on
-- the lattice, gapless, the prefetch view, and every error.

-- err(sql): 'ok', or the SQLSTATE and message of the error it raised
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- The new columns, their defaults and constraints
SELECT attname, format_type(atttypid, atttypmod), attnotnull,
       pg_get_expr(d.adbin, d.adrelid) AS default
  FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE attrelid = 'id_sequences'::regclass AND attname IN ('increment', 'min_value')
 ORDER BY attnum;
SELECT conname, pg_get_constraintdef(oid)
  FROM pg_constraint
 WHERE conrelid = 'id_sequences'::regclass
   AND conname IN ('id_sequences_increment_check', 'id_sequences_format_sign_check')
 ORDER BY conname;

-- increment 10: 1, 11, 21; a block of 3 is 31..51; seq_next() goes on at 61
SELECT seq_create('st_ten', increment => 10);
SELECT name, next_block_start, increment, min_value FROM id_sequences WHERE name = 'st_ten';
SELECT seq_next('st_ten'), seq_next('st_ten'), seq_next('st_ten');
SELECT * FROM seq_reserve_block('st_ten', 3);
SELECT seq_next('st_ten');
-- a whole block (block_size values): 71 .. 71 + 999 * 10
SELECT * FROM seq_reserve_block('st_ten');
SELECT seq_next('st_ten');
-- given back (seq_advance() below the next value): next_block_start is the
-- next value not handed out
SELECT seq_advance('st_ten', 0);
SELECT next_block_start, seq_next_unused(s) FROM id_sequences s WHERE name = 'st_ten';

-- id_sequences_prefetch: next_id + reserved_ahead * increment =
-- next_block_start, ascending and descending (once a refill that may be
-- under way is stored)
SELECT seq_create('st_pf5', start => 3, increment => 5, block_size => 100);
SELECT seq_create('st_pfd', start => 1000000, increment => -3, block_size => 100);
SELECT seq_next('st_pf5'), seq_next('st_pf5'), seq_next('st_pfd'), seq_next('st_pfd');
DO $$
BEGIN
    FOR i IN 1..300 LOOP
        EXIT WHEN (SELECT bool_and(p.next_id + p.reserved_ahead * s.increment = p.next_block_start)
                     FROM id_sequences_prefetch p JOIN id_sequences s USING (name)
                    WHERE name IN ('st_pf5', 'st_pfd'));
        PERFORM pg_sleep(0.1);
    END LOOP;
END
$$;
SELECT name, p.next_id, p.reserved_ahead > 0 AS holds_ahead,
       p.next_id + p.reserved_ahead * s.increment = p.next_block_start AS adds_up
  FROM id_sequences_prefetch p JOIN id_sequences s USING (name)
 WHERE name IN ('st_pf5', 'st_pfd') ORDER BY name;

-- descending: 100, 93, 86, then 2200H (min_value 86)
SELECT seq_create('st_down', start => 100, increment => -7, min_value => 86);
SELECT seq_next('st_down'), seq_next('st_down'), seq_next('st_down');
SELECT pg_temp.err($$SELECT seq_next('st_down')$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('st_down', 1)$$);
SELECT exhausted FROM id_sequences WHERE name = 'st_down';
-- min_value above the last value handed out (86): 22023
SELECT pg_temp.err($$SELECT seq_alter('st_down', min_value => 87)$$);
-- min_value lowered: no longer exhausted, it goes on at 79
SELECT seq_alter('st_down', min_value => 72);
SELECT exhausted FROM id_sequences WHERE name = 'st_down';
SELECT * FROM seq_reserve_block('st_down', 2);
SELECT pg_temp.err($$SELECT seq_next('st_down')$$);
-- a block that does not fit is refused whole
SELECT seq_create('st_down2', start => 100, increment => -7, min_value => 86);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('st_down2', 4)$$);
SELECT seq_alter('st_down2', min_value => 86);
SELECT * FROM seq_reserve_block('st_down2', 3);

-- near the top of bigint: the last value is 9223372036854775807 - 1000000000
-- (the values up to it), then 2200H, no overflow
SELECT seq_create('st_top', start => 9223372036854775807 - 3000000000, increment => 1000000000);
SELECT seq_next('st_top');
SELECT seq_next('st_top');
SELECT seq_next('st_top');
SELECT pg_temp.err($$SELECT seq_next('st_top')$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('st_top', 1)$$);
-- a block of 3 from the same start: exactly the three values; of 4: 2200H
SELECT seq_create('st_top3', start => 9223372036854775807 - 3000000000, increment => 1000000000);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('st_top3', 4)$$);
SELECT seq_alter('st_top3', max_value => 9223372036854775807);
SELECT * FROM seq_reserve_block('st_top3', 3);
SELECT pg_temp.err($$SELECT seq_next('st_top3')$$);
-- a start within the increment of the top: 22023
SELECT pg_temp.err($$SELECT seq_create('st_bad', start => 9223372036854775807 - 999999999, increment => 1000000000)$$);
SELECT seq_create('st_top1', start => 9223372036854775807 - 1000000000, increment => 1000000000);
SELECT seq_next('st_top1');
SELECT pg_temp.err($$SELECT seq_next('st_top1')$$);

-- the mirror near the bottom of bigint
SELECT seq_create('st_bot', start => -9223372036854775808 + 3000000000, increment => -1000000000);
SELECT seq_next('st_bot');
SELECT seq_next('st_bot');
SELECT seq_next('st_bot');
SELECT pg_temp.err($$SELECT seq_next('st_bot')$$);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('st_bot', 1)$$);
SELECT seq_create('st_bot3', start => -9223372036854775808 + 3000000000, increment => -1000000000);
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('st_bot3', 4)$$);
SELECT seq_alter('st_bot3', min_value => -9223372036854775808);
SELECT * FROM seq_reserve_block('st_bot3', 3);
SELECT pg_temp.err($$SELECT seq_next('st_bot3')$$);
SELECT pg_temp.err($$SELECT seq_create('st_bad', start => -9223372036854775808 + 999999999, increment => -1000000000)$$);
-- gapless near the top, too
SELECT seq_create('st_topg', start => 9223372036854775807 - 2000000000, increment => 1000000000,
                  strategy => 'gapless');
SELECT seq_next('st_topg'), seq_next('st_topg');
SELECT pg_temp.err($$SELECT seq_next('st_topg')$$);

-- seq_alter(increment => 5) after 1, 2, 3: from the next value not handed
-- out (4), then by 5
SELECT seq_create('st_alt', block_size => 10);
SELECT seq_next('st_alt'), seq_next('st_alt'), seq_next('st_alt');
SELECT seq_alter('st_alt', increment => 5);
SELECT increment FROM id_sequences WHERE name = 'st_alt';
SELECT seq_next('st_alt'), seq_next('st_alt'), seq_next('st_alt');
SELECT * FROM seq_reserve_block('st_alt', 2);
-- the direction is fixed: a change of sign is 22023
SELECT pg_temp.err($$SELECT seq_alter('st_alt', increment => -5)$$);
SELECT pg_temp.err($$SELECT seq_alter('st_down', increment => 1)$$);
-- a descending one changes its step (same sign)
SELECT seq_create('st_dalt', start => 0, increment => -1, block_size => 10);
SELECT seq_next('st_dalt'), seq_next('st_dalt');
SELECT seq_alter('st_dalt', increment => -100);
SELECT seq_next('st_dalt'), seq_next('st_dalt');
-- the near bound cannot pass the next ID (22023): it would be handed out
-- outside min_value..max_value
SELECT pg_temp.err($$SELECT seq_alter('st_dalt', max_value => -300)$$);
SELECT pg_temp.err($$SELECT seq_alter('st_alt', min_value => 1000)$$);
SELECT seq_alter('st_dalt', max_value => -201);
-- (the refused calls freed the prefetched values: a gap, whose size the
-- refill sizing decides)
SELECT v <= -201 AS within_max, (v + 2) % 100 = 0 AS on_step
  FROM seq_next('st_dalt') AS v;
SELECT pg_temp.err($$SELECT seq_alter('st_alt', increment => 0)$$);
SELECT pg_temp.err($$SELECT seq_alter('st_alt', increment => 1000000001)$$);

-- strategy 'sequence' with a step: its native sequence's increment is
-- block_size * increment, one nextval() per block.  Increment 10, blocks
-- of 5: blocks reserved 1..41, 51..91, the next unused 101
SELECT seq_create('st_nat', strategy => 'sequence', block_size => 5, increment => 10);
SELECT * FROM seq_reserve_block('st_nat');
SELECT * FROM seq_reserve_block('st_nat');
SELECT s.seqincrement, s.seqmin, s.seqmax, s.seqstart
  FROM id_sequences t JOIN pg_sequence s ON s.seqrelid = t.sequence WHERE t.name = 'st_nat';
SELECT seq_next_unused(s) FROM id_sequences s WHERE name = 'st_nat';
-- counting down by 7 from 100, blocks of 3: a block reserved 100..86, the
-- next unused 79
SELECT seq_create('st_natd', strategy => 'sequence', start => 100, block_size => 3, increment => -7);
SELECT * FROM seq_reserve_block('st_natd');
SELECT s.seqincrement, s.seqmin, s.seqmax, s.seqstart, t.max_value, t.min_value
  FROM id_sequences t JOIN pg_sequence s ON s.seqrelid = t.sequence WHERE t.name = 'st_natd';
SELECT seq_next_unused(s) FROM id_sequences s WHERE name = 'st_natd';
-- seq_next(), over a block's end: 1, 11, ..., 41, 51, 61 and 100, 93, 86, 79
-- (sequences of their own: the cache prefetches the next block in the
-- background, which would make the positions above vary)
SELECT seq_create('st_natn', strategy => 'sequence', block_size => 5, increment => 10);
SELECT string_agg(seq_next('st_natn')::text, ' ' ORDER BY g) FROM generate_series(1, 7) g;
SELECT seq_create('st_natdn', strategy => 'sequence', start => 100, block_size => 3, increment => -7);
SELECT string_agg(seq_next('st_natdn')::text, ' ' ORDER BY g) FROM generate_series(1, 4) g;
-- whole blocks only, as with increment 1
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('st_natd', 2)$$);
-- the increment is part of the native sequence's: not changed (0A000),
-- nor the block size; the same increment is no change; the direction 22023
SELECT pg_temp.err($$SELECT seq_alter('st_nat', increment => 3)$$);
SELECT pg_temp.err($$SELECT seq_alter('st_nat', block_size => 6)$$);
SELECT pg_temp.err($$SELECT seq_alter('st_nat', increment => 10, block_size => 5)$$);
SELECT pg_temp.err($$SELECT seq_alter('st_natd', increment => 7)$$);
SELECT pg_temp.err($$SELECT seq_alter('st_natd', increment => -1)$$);
-- seq_advance() keeps the lattice, by setval(): up, past 235 (next unused
-- 101): 241; past 240 then, behind: unchanged; the next block starts there
SELECT seq_advance('st_nat', 235);
SELECT seq_advance('st_nat', 240);
SELECT * FROM seq_reserve_block('st_nat');
SELECT s.seqincrement FROM id_sequences t JOIN pg_sequence s ON s.seqrelid = t.sequence
 WHERE t.name = 'st_nat';
-- down, past -50 (next unused 79): -54 = 100 - 22 * 7; past -40, behind:
-- unchanged
SELECT seq_advance('st_natd', -50);
SELECT seq_advance('st_natd', -40);
SELECT * FROM seq_reserve_block('st_natd');
-- exhaustion at max_value: 1, 11 / 21, 31 / 41 (and 51 > 45): 2200H
SELECT seq_create('st_natmax', strategy => 'sequence', block_size => 2, increment => 10, max_value => 45);
SELECT * FROM seq_reserve_block('st_natmax');
SELECT * FROM seq_reserve_block('st_natmax');
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('st_natmax')$$);
SELECT exhausted FROM id_sequences WHERE name = 'st_natmax';
-- and at min_value counting down: 0, -7 / -14, -21 / (-28 < -25): 2200H
SELECT seq_create('st_natmin', strategy => 'sequence', start => 0, block_size => 2, increment => -7,
                  min_value => -25);
SELECT * FROM seq_reserve_block('st_natmin');
SELECT * FROM seq_reserve_block('st_natmin');
SELECT pg_temp.err($$SELECT seq_next('st_natmin')$$);
SELECT exhausted FROM id_sequences WHERE name = 'st_natmin';
-- near the ends of bigint, without an overflow: increment 10 from 2^63-1-45
-- hands out 4 values (up to 2^63-1-15; the position after the last, 2^63-1-5,
-- is a bigint), then 2200H; counting down likewise
SELECT seq_create('st_nattop', strategy => 'sequence', start => 9223372036854775762, block_size => 2,
                  increment => 10);
SELECT * FROM seq_reserve_block('st_nattop');
SELECT * FROM seq_reserve_block('st_nattop');
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('st_nattop')$$);
SELECT seq_create('st_natbot', strategy => 'sequence', start => -9223372036854775763, block_size => 2,
                  increment => -10);
SELECT * FROM seq_reserve_block('st_natbot');
SELECT * FROM seq_reserve_block('st_natbot');
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('st_natbot')$$);
SELECT name, exhausted FROM id_sequences WHERE name IN ('st_nattop', 'st_natbot') ORDER BY name;
-- a native sequence counting down set by hand to the first bigint (its
-- next position is below it): 2200H, not nextval()'s error
SELECT seq_create('st_natedge', strategy => 'sequence', start => 0, block_size => 2, increment => -1);
SELECT setval(sequence, -9223372036854775808, true) FROM id_sequences WHERE name = 'st_natedge';
SELECT pg_temp.err($$SELECT * FROM seq_reserve_block('st_natedge')$$);
-- a start within |increment| of the end of bigint: 22023, as for 'table'
SELECT pg_temp.err($$SELECT seq_create('st_natbad', strategy => 'sequence', start => 9223372036854775800, increment => 10)$$);
-- the CHECK lets a row of strategy 'sequence' have a step
SELECT name, increment FROM id_sequences WHERE strategy = 'sequence' AND name LIKE 'st\_%' ORDER BY name;

-- seq_advance() keeps the lattice: ascending, start 1, increment 10
SELECT seq_create('st_adv', increment => 10, max_value => 1000);
SELECT seq_next('st_adv');
-- past 35, the next value not handed out being 11: the first value above 35
SELECT seq_advance('st_adv', 35);
SELECT seq_next('st_adv');
-- past below the next value (51): unchanged
SELECT seq_advance('st_adv', 41);
-- past on the next value: the one after it
SELECT seq_advance('st_adv', 51);
-- past just below a lattice value: that value
SELECT seq_advance('st_adv', 70);
SELECT seq_next('st_adv');
-- past max_value, or on it: 22023
SELECT pg_temp.err($$SELECT seq_advance('st_adv', 1000)$$);
SELECT pg_temp.err($$SELECT seq_advance('st_adv', 5000)$$);
-- past below max_value, its next lattice value above it: exhausted, nothing
-- above max_value is handed out
SELECT seq_advance('st_adv', 995);
SELECT pg_temp.err($$SELECT seq_next('st_adv')$$);
-- descending: start 0, increment -10, min_value -1000
SELECT seq_create('st_dadv', start => 0, increment => -10, min_value => -1000);
SELECT seq_next('st_dadv');
SELECT seq_advance('st_dadv', -35);
SELECT seq_next('st_dadv');
SELECT seq_advance('st_dadv', -20);
SELECT seq_advance('st_dadv', -50);
SELECT seq_advance('st_dadv', -61);
SELECT seq_next('st_dadv');
-- past above min_value, its next lattice value on min_value: handed out,
-- then 2200H
SELECT seq_advance('st_dadv', -995);
SELECT seq_next('st_dadv');
SELECT pg_temp.err($$SELECT seq_next('st_dadv')$$);
-- past min_value, or on it: 22023
SELECT pg_temp.err($$SELECT seq_advance('st_dadv', -1000)$$);
SELECT pg_temp.err($$SELECT seq_advance('st_dadv', -5000)$$);

-- gapless, increment -2: a block of 3, then seq_next(), in the caller's
-- transaction (a rollback gives the numbers back)
SELECT seq_create('st_gl', start => 10, increment => -2, min_value => 0, strategy => 'gapless');
SELECT * FROM seq_reserve_block('st_gl', 3);
SELECT seq_next('st_gl');
BEGIN;
SELECT seq_next('st_gl');
ROLLBACK;
SELECT seq_next('st_gl');
SELECT seq_next('st_gl');
SELECT pg_temp.err($$SELECT seq_next('st_gl')$$);
SELECT next_block_start, exhausted FROM id_sequences WHERE name = 'st_gl';
SELECT seq_alter('st_gl', min_value => -4);
SELECT seq_next('st_gl'), seq_next('st_gl');
SELECT pg_temp.err($$SELECT seq_next('st_gl')$$);
-- seq_advance() in the caller's transaction, on the lattice
SELECT seq_alter('st_gl', min_value => -100);
BEGIN;
SELECT seq_advance('st_gl', -11);
SELECT seq_next('st_gl');
ROLLBACK;
SELECT seq_next('st_gl');
SELECT seq_advance('st_gl', -11);
SELECT seq_next('st_gl');

-- formats: a descending sequence needs min_value >= 0
SELECT pg_temp.err($$SELECT seq_create('st_fmt', start => 100, increment => -1, format => 'N{n}')$$);
SELECT seq_create('st_fmt', start => 12, increment => -5, min_value => 0, max_value => 999,
                  format => 'N{n:3}');
SELECT seq_next_text('st_fmt'), seq_next_text('st_fmt'), seq_next_text('st_fmt');
SELECT pg_temp.err($$SELECT seq_next_text('st_fmt')$$);
-- a format for a descending one that may go below 0 (its next number is
-- positive, its min_value not): 22023; with min_value 0: accepted
SELECT seq_create('st_fmd', start => 50, increment => -1);
SELECT pg_temp.err($$SELECT seq_alter('st_fmd', format => 'N{n}')$$);
SELECT seq_alter('st_fmd', format => 'N{n}', min_value => 0);
SELECT seq_next_text('st_fmd'), seq_next_text('st_fmd');
SELECT pg_temp.err($$SELECT seq_alter('st_fmd', min_value => -1)$$);
SELECT pg_temp.err($$SELECT seq_alter('st_dalt', format => 'N{n}')$$);
-- by hand: the CHECK constraint (23514)
SELECT pg_temp.err($$UPDATE id_sequences SET min_value = -1 WHERE name = 'st_fmt'$$);

-- the arguments
SELECT pg_temp.err($$SELECT seq_create('st_bad', increment => 0)$$);
SELECT pg_temp.err($$SELECT seq_create('st_bad', increment => 1000000001)$$);
SELECT pg_temp.err($$SELECT seq_create('st_bad', increment => -1000000001)$$);
SELECT pg_temp.err($$SELECT seq_create('st_bad', increment => NULL)$$);
SELECT pg_temp.err($$SELECT seq_create('st_bad', min_value => NULL)$$);
SELECT pg_temp.err($$SELECT seq_create('st_bad', start => 5, increment => -1, min_value => 6, max_value => 100)$$);
-- start outside min_value..max_value, in either direction: 22023
SELECT pg_temp.err($$SELECT seq_create('st_bad', start => 5, min_value => 6)$$);
SELECT pg_temp.err($$SELECT seq_create('st_bad', start => 101, increment => -1, max_value => 100)$$);
-- counting down, max_value is start unless given
SELECT seq_create('st_dmax', start => 7, increment => -2);
SELECT max_value, min_value FROM id_sequences WHERE name = 'st_dmax';
SELECT pg_temp.err($$SELECT seq_create('st_bad', start => 5, min_value => 10, max_value => 9)$$);
SELECT count(*) FROM id_sequences WHERE name = 'st_bad';
SELECT seq_create('st_max', increment => 1000000000);
SELECT seq_create('st_min', increment => -1000000000);
SELECT seq_next('st_max'), seq_next('st_max'), seq_next('st_min'), seq_next('st_min');
-- by hand: the CHECK constraint (23514)
SELECT pg_temp.err($$UPDATE id_sequences SET increment = 0 WHERE name = 'st_ten'$$);
SELECT pg_temp.err($$UPDATE id_sequences SET increment = 1000000001 WHERE name = 'st_ten'$$);
-- a row inserted without the new columns: increment 1, min_value -2^63
INSERT INTO id_sequences (name, next_block_start, block_size, max_value) VALUES ('st_old', 5, 10, 100);
SELECT increment, min_value FROM id_sequences WHERE name = 'st_old';
SELECT seq_next('st_old'), seq_next('st_old');

-- after a change of the increment, the far bound still cannot pass an ID
-- handed out with the old one (1, 2, 3 handed out; the next is 4, the
-- increment now 5): max_value -1 refused, 3 taken
SELECT seq_create('st_farup', block_size => 10);
SELECT seq_next('st_farup'), seq_next('st_farup'), seq_next('st_farup');
SELECT seq_alter('st_farup', increment => 5);
SELECT pg_temp.err($$SELECT seq_alter('st_farup', max_value => -1)$$);
SELECT pg_temp.err($$SELECT seq_alter('st_farup', max_value => 2)$$);
SELECT seq_alter('st_farup', max_value => 3);
SELECT max_value FROM id_sequences WHERE name = 'st_farup';
-- counting down: 100, 99, 98 handed out, the next 97, the increment now -5
SELECT seq_create('st_fardown', start => 100, increment => -1, block_size => 10);
SELECT seq_next('st_fardown'), seq_next('st_fardown'), seq_next('st_fardown');
SELECT seq_alter('st_fardown', increment => -5);
SELECT pg_temp.err($$SELECT seq_alter('st_fardown', min_value => 99)$$);
SELECT seq_alter('st_fardown', min_value => 98);
SELECT min_value FROM id_sequences WHERE name = 'st_fardown';

DO $$
DECLARE
    n text;
BEGIN
    FOR n IN SELECT name FROM id_sequences WHERE name LIKE 'st\_%' LOOP
        PERFORM seq_drop(n);
    END LOOP;
END
$$;
SELECT count(*) FROM id_sequences WHERE name LIKE 'st\_%';
