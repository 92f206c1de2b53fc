-- Formatted numbers of block sequences: seq_create(..., format, time_zone),
-- seq_next_text(), seq_format(), the format language and its errors.

-- An error's SQLSTATE, message and detail (no CONTEXT: it differs between
-- PostgreSQL versions).
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    d text;
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' || SQLERRM || coalesce(' / ' || nullif(d, ''), '');
END
$$;

-- every field, with a fixed number and a fixed time (2026-03-05 UTC)
SELECT f, seq_format_number(f, 'UTC', 42, '2026-03-05 10:00+00')
  FROM (VALUES ('INV-{YYYY}-{n:6}'), ('{YY}{MM}{DD}-{n}'), ('{n}'), ('{n:2}'),
               ('{n:19}'), ('{n36}'), ('{n36:4}'), ('{n36:13}'),
               ('{n:6}{check}'), ('{{{n}}}'), ('}}x{{'), ('Nr. {n} vom {DD}.{MM}.{YYYY}'),
               ('{n}-{n36}-{n:3}')) AS t(f);
-- zero and the largest bigint
SELECT seq_format_number('{n:19}|{n36:13}|{n}|{n36}', 'UTC', 9223372036854775807, '2026-03-05'),
       seq_format_number('{n:3}|{n36:2}|{n}|{n36}', 'UTC', 0, '2026-03-05');
-- base 36: 35 is Z, 36 is 10, 1295 is ZZ
SELECT string_agg(seq_format_number('{n36}', 'UTC', v, '2026-01-01'), ' ' ORDER BY v)
  FROM unnest(ARRAY[0, 9, 10, 35, 36, 1295, 1296, 46655, 46656]) v;
-- years below 1000 are padded; {YY} keeps two digits
SELECT seq_format_number('{YYYY}/{YY}-{n}', 'UTC', 1, '0099-12-31 23:00+00'),
       seq_format_number('{YYYY}/{YY}-{n}', 'UTC', 1, '2000-01-01 00:00+00');

-- the check character: ISO/IEC 7064 MOD 37,36 (hybrid system).  Vectors:
-- A12425GABC1234002 -> M (the GRid example, as in python-stdnum's
-- stdnum.iso7064.mod_37_36), and hand-computed ones; lower case and
-- characters other than letters and digits do not count.
SELECT seq_check_char('A12425GABC1234002') AS grid_m,
       seq_check_char('a12425-gabc/1234002') AS same_m,
       seq_check_char('0') AS zero, seq_check_char('1') AS one, seq_check_char('') AS empty;
SELECT seq_format_number('A12425GABC{n:7}{check}', 'UTC', 1234002, '2026-01-01');
-- the check character detects every single changed digit of these
-- numbers, and all but 152 of the 27,000 swaps of two different neighbours
-- (ISO 7064 promises all single substitutions and most transpositions)
SELECT count(*) AS undetected
  FROM generate_series(0, 999) n,
       LATERAL (SELECT seq_format_number('{n:4}{check}', 'UTC', n, '2026-01-01') AS t) s,
       generate_series(1, 4) pos,
       LATERAL (SELECT d FROM regexp_split_to_table('0123456789', '') d) c
 WHERE substr(s.t, pos, 1) <> c.d
   AND seq_check_char(overlay(left(s.t, 4) PLACING c.d FROM pos FOR 1)) = right(s.t, 1);
SELECT count(*) AS swaps, count(*) FILTER (WHERE undetected) AS undetected_swaps
  FROM (SELECT seq_check_char(left(s.t, pos - 1) || substr(s.t, pos + 1, 1) || substr(s.t, pos, 1)
                              || substr(s.t, pos + 2, 4 - pos - 1)) = right(s.t, 1) AS undetected
  FROM generate_series(0, 9999) n,
       LATERAL (SELECT seq_format_number('{n:4}{check}', 'UTC', n, '2026-01-01') AS t) s,
       generate_series(1, 3) pos
 WHERE substr(s.t, pos, 1) <> substr(s.t, pos + 1, 1)) w;

-- every bad format fails with 22023, at seq_format_valid() (the CHECK of
-- id_sequences) as at seq_create()
SELECT left(f, 20) AS f, pg_temp.err(format('SELECT seq_format_valid(%L, %L, 999999)', f, 'UTC'))
  FROM (VALUES ('INV-{YYYY}'), ('plain'), (''), ('{n'), ('{n:6'), ('n}'), ('{n}}'), ('{{n}'),
               ('{x}'), ('{N}'), ('{yyyy}-{n}'), ('{n:}'), ('{n:0}'), ('{n:06}'), ('{n:20}'),
               ('{n:a}'), ('{n36:14}'), ('{n:5}'), ('{n36:3}'), ('{check}{n}'),
               ('{n}{check}{check}'), ('{n:6}{{n}'), ('{ n}'), ('{n }'),
               (repeat('x', 257) || '{n}')) AS t(f);
SELECT pg_temp.err($$SELECT seq_format_valid('{n}', 'UTC', -1)$$);
SELECT seq_format_valid('{n:6}', 'UTC', 999999), seq_format_valid('{n36:4}', 'UTC', 1679615),
       seq_format_valid(repeat('x', 253) || '{n}', 'UTC', 5);
SELECT pg_temp.err($$SELECT seq_format_valid('{n36:4}', 'UTC', 1679616)$$);
-- an unknown time zone: 22023
SELECT pg_temp.err($$SELECT seq_format_valid('{n}', 'Mars/Olympus_Mons', 5)$$);
SELECT pg_temp.err($$SELECT seq_format_valid(NULL, 'Mars/Olympus_Mons', 5)$$);
-- a number that does not fit its field (only seq_format_number(), given
-- any number: a sequence's numbers always fit), a negative number
SELECT pg_temp.err($$SELECT seq_format_number('{n:2}', 'UTC', 100, '2026-01-01')$$);
SELECT pg_temp.err($$SELECT seq_format_number('{n}', 'UTC', -1, '2026-01-01')$$);
SELECT pg_temp.err($$SELECT seq_format_number('{n}', 'UTC', 1, 'infinity')$$);

-- seq_create(): format and time_zone are the last parameters
SELECT seq_create('inv', max_value => 999999, format => 'INV-{YYYY}-{n:6}');
SELECT seq_create('berlin', start => 7, max_value => 99999, block_size => 10,
                  format => '{YYYY}{MM}{DD}-{n:5}{check}', time_zone => 'Europe/Berlin');
SELECT seq_create('plainseq');
SELECT name, max_value, format, time_zone FROM id_sequences
 WHERE name IN ('inv', 'berlin', 'plainseq') ORDER BY name;
-- errors at creation: 22023, and nothing created
SELECT pg_temp.err($$SELECT seq_create('bad', format => 'INV-{n:6}')$$);
SELECT pg_temp.err($$SELECT seq_create('bad', max_value => 999, format => 'INV-{x}')$$);
SELECT pg_temp.err($$SELECT seq_create('bad', max_value => 999, format => 'INV')$$);
SELECT pg_temp.err($$SELECT seq_create('bad', max_value => 999, format => '{n}', time_zone => 'Nowhere/Town')$$);
SELECT pg_temp.err($$SELECT seq_create('bad', time_zone => 'Nowhere/Town')$$);
SELECT pg_temp.err($$SELECT seq_create('bad', start => -5, max_value => 999, format => '{n}')$$);
SELECT pg_temp.err($$SELECT seq_create('bad', max_value => 999, format => '{n}', time_zone => NULL)$$);
SELECT pg_temp.err($$SELECT seq_create('bad', max_value => 999, strategy => 'sequence', format => '{n:2}')$$);
SELECT count(*) AS bad_rows FROM id_sequences WHERE name = 'bad';
-- '' is no format
SELECT seq_create('empty_fmt', format => '');
SELECT format IS NULL AS no_format FROM id_sequences WHERE name = 'empty_fmt';
-- a hand-written UPDATE or INSERT cannot store a bad format or zone
SELECT pg_temp.err($$UPDATE id_sequences SET format = '{n' WHERE name = 'inv'$$);
SELECT pg_temp.err($$UPDATE id_sequences SET time_zone = 'Nowhere/Town' WHERE name = 'inv'$$);
SELECT pg_temp.err($$UPDATE id_sequences SET max_value = 1000000 WHERE name = 'inv'$$);
SELECT pg_temp.err($$INSERT INTO id_sequences (name, next_block_start, block_size, max_value, format)
                     VALUES ('bad', 1, 1, 10, '{n:1}{n')$$);

-- seq_next_text() and seq_format()
SELECT seq_next_text('inv') = 'INV-' || to_char(now() AT TIME ZONE 'UTC', 'YYYY') || '-000001' AS first_ok;
SELECT seq_next('inv');
SELECT seq_format('inv', 3, '2026-12-31 23:59:59+00');
SELECT seq_format('inv', 999999, '2026-12-31 23:59:59+00');
-- the numbers of a reserved block
SELECT seq_format('inv', g, '2026-07-01') FROM seq_reserve_block('inv', 3) b,
       generate_series(b.first_id, b.last_id) g;
-- the date in the sequence's zone: 2026-12-31 23:30 UTC is 2027-01-01 in Berlin
SELECT seq_format('berlin', 7, '2026-12-31 23:30:00+00') AS berlin,
       seq_format_number('{YYYY}{MM}{DD}-{n:5}', 'UTC', 7, '2026-12-31 23:30:00+00') AS utc;
-- whatever the session's TimeZone
SET TIME ZONE 'America/Los_Angeles';
SELECT seq_format('berlin', 7, '2026-12-31 23:30:00+00') AS berlin;
RESET TIME ZONE;
SELECT seq_next_text('berlin') ~ '^\d{8}-00007[0-9A-Z]$' AS berlin_shape;
-- errors: 55000 without a format, 42704 for no sequence; no number taken
SELECT pg_temp.err($$SELECT seq_next_text('plainseq')$$);
SELECT pg_temp.err($$SELECT seq_format('plainseq', 1)$$);
SELECT seq_next('plainseq');
SELECT pg_temp.err($$SELECT seq_next_text('nosuch')$$);
SELECT pg_temp.err($$SELECT seq_format('nosuch', 1)$$);
SELECT seq_format('inv', NULL), seq_format(NULL, 1), seq_next_text(NULL);

-- text order = number order within a period, over 5000 numbers of a
-- sequence, in decimal and in base 36 with a check character
SELECT seq_create('order36', max_value => 1679615, block_size => 100,
                  format => 'O{YY}{n36:4}{check}');
CREATE TEMP TABLE taken AS
    SELECT g, seq_next('inv') AS n, seq_next('order36') AS m FROM generate_series(1, 5000) g;
SELECT count(*) AS numbers,
       bool_and(t_inv COLLATE "C" > prev_inv COLLATE "C") AS inv_sorted,
       bool_and(t36 COLLATE "C" > prev36 COLLATE "C") AS base36_sorted,
       count(DISTINCT length(t_inv)) AS inv_widths, count(DISTINCT length(t36)) AS base36_widths
  FROM (SELECT t_inv, t36, lag(t_inv) OVER (ORDER BY n) AS prev_inv, lag(t36) OVER (ORDER BY m) AS prev36
          FROM (SELECT n, m, seq_format('inv', n, '2026-05-01') AS t_inv,
                       seq_format('order36', m, '2026-05-01') AS t36 FROM taken) f) o
 WHERE prev_inv IS NOT NULL;
-- the largest number still has the width
SELECT seq_format('order36', 1679615, '2026-05-01'), seq_format('order36', 0, '2026-05-01');

-- seq_alter(): a new format for the numbers formatted from then on; a bad
-- one, or a max_value its fields cannot hold, fails with 22023
SELECT seq_alter('inv', format => 'I{YY}{n:6}');
SELECT seq_format('inv', 42, '2026-01-01');
SELECT pg_temp.err($$SELECT seq_alter('inv', format => 'I{n:5}')$$);
SELECT pg_temp.err($$SELECT seq_alter('inv', format => 'I{')$$);
SELECT pg_temp.err($$SELECT seq_alter('inv', max_value => 1000000)$$);
SELECT seq_alter('inv', max_value => 1000000, format => '{n:7}');
SELECT seq_format('inv', 42, '2026-01-01');
SELECT seq_alter('plainseq', format => '#{n}');
SELECT seq_next_text('plainseq');
SELECT seq_alter('plainseq', format => '');
SELECT pg_temp.err($$SELECT seq_next_text('plainseq')$$);
SELECT seq_create('negseq', start => -3, max_value => 100);
SELECT pg_temp.err($$SELECT seq_alter('negseq', format => '{n}')$$);
SELECT seq_alter('inv', block_size => 5);
SELECT format FROM id_sequences WHERE name = 'inv';

-- strategy 'gapless': the number is taken in the caller's transaction,
-- a rollback gives it back
SELECT seq_create('glf', strategy => 'gapless', max_value => 9999, format => 'G-{n:4}');
SELECT seq_next_text('glf');
BEGIN;
SELECT seq_next_text('glf');
SELECT seq_next_text('glf');
ROLLBACK;
SELECT seq_next_text('glf');
BEGIN;
SELECT seq_next_text('glf');
SAVEPOINT sp;
SELECT seq_next_text('glf');
ROLLBACK TO SAVEPOINT sp;
COMMIT;
SELECT seq_next_text('glf');
SELECT next_block_start FROM id_sequences WHERE name = 'glf';
-- strategy 'sequence'
SELECT seq_create('sqf', strategy => 'sequence', max_value => 999, block_size => 2, format => 'S{n:3}');
SELECT seq_next_text('sqf'), seq_next_text('sqf'), seq_next_text('sqf');

-- privileges: PUBLIC may call the readers, not change the format
SELECT p.oid::regprocedure, has_function_privilege('public', p.oid, 'EXECUTE') AS public_exec,
       p.prosecdef
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'uidgen'
 WHERE p.proname IN ('seq_format', 'seq_next_text', 'seq_format_number', 'seq_format_valid',
                     'seq_check_char', 'seq_create', 'seq_alter')
 ORDER BY p.oid::regprocedure::text;

SELECT seq_drop(n) FROM unnest(ARRAY['inv', 'berlin', 'plainseq', 'empty_fmt', 'order36',
                                     'negseq', 'glf', 'sqf']) n;

-- review (steps): a formatted sequence counting down to 0 that has handed
-- out its last number (next_block_start -1) can still be altered
SELECT seq_create('fdown', start => 5, increment => -3, min_value => 0, max_value => 999,
                  format => 'F{n:3}');
SELECT seq_next_text('fdown'), seq_next_text('fdown');
SELECT pg_temp.err($$SELECT seq_next('fdown')$$);
SELECT seq_alter('fdown', block_size => 10);
SELECT seq_alter('fdown', min_value => 0, format => 'G{n:3}');
SELECT next_block_start, block_size, format, exhausted FROM id_sequences WHERE name = 'fdown';
SELECT seq_drop('fdown');
