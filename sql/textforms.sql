-- Text forms (issue 23): ULID, TypeID and the 13-character form of
-- snowflake IDs.  Checked against the specifications' own vectors, against
-- an encoder written here in SQL (bit strings, 5 bits per character), and
-- for order: a UUIDv7 or snowflake ID sorts as its text (COLLATE "C").

-- Declared volatility, parallel safety and strictness.
SELECT p.oid::regprocedure AS function, provolatile, proparallel, proisstrict
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'uidgen'
WHERE proname ~ 'ulid|typeid|snowflake_to_text|text_to_snowflake'
ORDER BY p.oid::regprocedure::text COLLATE "C";

-- The reference encoder: a bit string, padded on the left to a multiple
-- of 5 bits, as Crockford base32 digits (0-9, A-Z without I, L, O, U).
CREATE FUNCTION pg_temp.b32(bits varbit) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ',
                             substring(padded FROM 5 * k + 1 FOR 5)::bit(5)::int + 1, 1),
                      '' ORDER BY k)
    FROM (SELECT lpad(bits::text, (length(bits) + 4) / 5 * 5, '0')::varbit AS padded) p,
         generate_series(0, (length(bits) + 4) / 5 - 1) k
$$;
CREATE FUNCTION pg_temp.uuid_bits(u uuid) RETURNS varbit
LANGUAGE sql IMMUTABLE AS $$ SELECT ('x' || replace(u::text, '-', ''))::bit(128)::varbit $$;

-- ULID -----------------------------------------------------------------------

-- The examples of the ULID specification (https://github.com/ulid/spec,
-- README.md): the example ULID, the largest ULID, whose timestamp is
-- 2^48 - 1, and two of the monotonic examples, one apart.
SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAV') AS example,
       uuid_to_ulid(ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAV')) AS back,
       ulid_to_uuid('7ZZZZZZZZZZZZZZZZZZZZZZZZZ') AS largest,
       ('x' || substr(replace(ulid_to_uuid('7ZZZZZZZZZZZZZZZZZZZZZZZZZ')::text, '-', ''), 1, 12))::bit(48)::bigint
           AS largest_ms,
       ('x' || substr(replace(ulid_to_uuid('01BX5ZZKBKACTAV9WEVGEMMVS0')::text, '-', ''), 17, 16))::bit(64)::bigint
     - ('x' || substr(replace(ulid_to_uuid('01BX5ZZKBKACTAV9WEVGEMMVRZ')::text, '-', ''), 17, 16))::bit(64)::bigint
           AS monotonic_step;
SELECT uuid_to_ulid('00000000-0000-0000-0000-000000000000') AS nil,
       uuid_to_ulid('ffffffff-ffff-ffff-ffff-ffffffffffff') AS max;

-- Either case on input, upper case on output.
SELECT ulid_to_uuid('01arz3ndektsv4rrffq69g5fav') = ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAV') AS lower_ok,
       ulid_to_uuid('01ArZ3nDeKtSv4RrFfQ69g5FaV') = ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAV') AS mixed_ok;

-- 1000 random UUIDs and 1000 UUIDv7s: the reference encoder agrees, and
-- they come back.
CREATE TEMP TABLE u AS
SELECT gen_random_uuid() AS id FROM generate_series(1, 1000)
UNION ALL
SELECT uuidv7_next() FROM generate_series(1, 1000);
SELECT count(*) AS uuids,
       count(*) FILTER (WHERE uuid_to_ulid(id) = pg_temp.b32(pg_temp.uuid_bits(id))) AS as_reference,
       count(*) FILTER (WHERE ulid_to_uuid(uuid_to_ulid(id)) = id) AS round_trips,
       count(*) FILTER (WHERE ulid_to_uuid(lower(uuid_to_ulid(id))) = id) AS lower_round_trips
FROM u;

-- 2000 random ULIDs (first character 0-7, any case): the text comes back,
-- in upper case.
WITH t AS (
    SELECT substr('01234567', 1 + floor(random() * 8)::int, 1)
           || (SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghjkmnpqrstvwxyz',
                                        1 + floor(random() * 54)::int, 1), '')
               FROM generate_series(1, 25) j WHERE i > 0) AS s
    FROM generate_series(1, 2000) i)
SELECT count(*) AS ulids, count(*) FILTER (WHERE uuid_to_ulid(ulid_to_uuid(s)) = upper(s)) AS round_trips
FROM t;

-- Errors: 22P02, naming the character and its position, or the length.
SELECT q, error_of(q) FROM (VALUES
    ($$SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FA')$$),
    ($$SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAVV')$$),
    ($$SELECT ulid_to_uuid('')$$),
    ($$SELECT ulid_to_uuid('8ZZZZZZZZZZZZZZZZZZZZZZZZZ')$$),
    ($$SELECT ulid_to_uuid('ZZZZZZZZZZZZZZZZZZZZZZZZZZ')$$),
    ($$SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAI')$$),
    ($$SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAl')$$),
    ($$SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAO')$$),
    ($$SELECT ulid_to_uuid('01ARZ3NDEKTSV4RRFFQ69G5FAU')$$),
    ($$SELECT ulid_to_uuid('01ARZ3NDEK-SV4RRFFQ69G5FAV')$$),
    ($$SELECT ulid_to_uuid(' 1ARZ3NDEKTSV4RRFFQ69G5FAV')$$)
) v(q);

-- TypeID ---------------------------------------------------------------------

-- Every valid vector of the TypeID specification, copied from
-- https://github.com/jetify-com/typeid/blob/main/spec/valid.yml (last
-- updated 2024-04-10, spec version 0.3.0): decoding gives the prefix and
-- the UUID, encoding gives the TypeID back.
CREATE TEMP TABLE typeid_valid (name text, typeid text, prefix text, id uuid);
INSERT INTO typeid_valid VALUES
    ('nil', '00000000000000000000000000', '', '00000000-0000-0000-0000-000000000000'),
    ('one', '00000000000000000000000001', '', '00000000-0000-0000-0000-000000000001'),
    ('ten', '0000000000000000000000000a', '', '00000000-0000-0000-0000-00000000000a'),
    ('sixteen', '0000000000000000000000000g', '', '00000000-0000-0000-0000-000000000010'),
    ('thirty-two', '00000000000000000000000010', '', '00000000-0000-0000-0000-000000000020'),
    ('max-valid', '7zzzzzzzzzzzzzzzzzzzzzzzzz', '', 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
    ('valid-alphabet', 'prefix_0123456789abcdefghjkmnpqrs', 'prefix', '0110c853-1d09-52d8-d73e-1194e95b5f19'),
    ('valid-uuidv7', 'prefix_01h455vb4pex5vsknk084sn02q', 'prefix', '01890a5d-ac96-774b-bcce-b302099a8057'),
    ('prefix-underscore', 'pre_fix_00000000000000000000000000', 'pre_fix', '00000000-0000-0000-0000-000000000000');
SELECT name, typeid_to_uuid(typeid) = id AS decodes, typeid_prefix(typeid) = prefix AS prefix_ok,
       uuid_to_typeid(prefix, id) = typeid AS encodes,
       typeid_to_uuid(typeid, prefix) = id AS of_its_type
FROM typeid_valid ORDER BY name;

-- Every invalid vector of the TypeID specification, copied from
-- https://github.com/jetify-com/typeid/blob/main/spec/invalid.yml (last
-- updated 2024-05-18, spec version 0.3.0): each fails, with 22P02, in
-- typeid_to_uuid() and typeid_prefix().  The error of 'prefix-non-ascii'
-- quotes a character whose bytes depend on the database encoding: only its
-- position is shown.
CREATE TEMP TABLE typeid_invalid (name text, typeid text);
INSERT INTO typeid_invalid VALUES
    ('prefix-uppercase', 'PREFIX_00000000000000000000000000'),
    ('prefix-numeric', '12345_00000000000000000000000000'),
    ('prefix-period', 'pre.fix_00000000000000000000000000'),
    ('prefix-non-ascii', 'préfix_00000000000000000000000000'),
    ('prefix-spaces', '  prefix_00000000000000000000000000'),
    ('prefix-64-chars', 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl_00000000000000000000000000'),
    ('separator-empty-prefix', '_00000000000000000000000000'),
    ('separator-empty', '_'),
    ('suffix-short', 'prefix_1234567890123456789012345'),
    ('suffix-long', 'prefix_123456789012345678901234567'),
    ('suffix-spaces', 'prefix_1234567890123456789012345 '),
    ('suffix-uppercase', 'prefix_0123456789ABCDEFGHJKMNPQRS'),
    ('suffix-hyphens', 'prefix_123456789-123456789-123456'),
    ('suffix-wrong-alphabet', 'prefix_ooooooiiiiiiuuuuuuulllllll'),
    ('suffix-ambiguous-crockford', 'prefix_i23456789ol23456789oi23456'),
    ('suffix-hyphens-crockford', 'prefix_123456789-0123456789-0123456'),
    ('suffix-overflow', 'prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz'),
    ('prefix-underscore-start', '_prefix_00000000000000000000000000'),
    ('prefix-underscore-end', 'prefix__00000000000000000000000000'),
    ('empty', ''),
    ('prefix-empty', 'prefix_');
SELECT count(*) AS vectors FROM typeid_invalid;
SELECT name,
       CASE WHEN name = 'prefix-non-ascii'
            THEN substring(e FROM '^[0-9A-Z]{5}: invalid character') || ' ... ' || substring(e FROM 'at position [0-9]+')
            ELSE e END AS typeid_to_uuid,
       error_of(format('SELECT typeid_prefix(%L)', typeid)) = e AS typeid_prefix_same
FROM (SELECT name, typeid, error_of(format('SELECT typeid_to_uuid(%L)', typeid)) AS e
      FROM typeid_invalid) t
ORDER BY name;

-- Round trips of 1000 random UUIDs and 1000 UUIDv7s under three prefixes,
-- against the reference encoder.
SELECT count(*) AS typeids,
       count(*) FILTER (WHERE uuid_to_typeid(p, id) = CASE WHEN p = '' THEN '' ELSE p || '_' END
                                                       || lower(pg_temp.b32(pg_temp.uuid_bits(id)))) AS as_reference,
       count(*) FILTER (WHERE typeid_to_uuid(uuid_to_typeid(p, id)) = id) AS round_trips,
       count(*) FILTER (WHERE typeid_prefix(uuid_to_typeid(p, id)) = p) AS prefixes
FROM u, (VALUES (''), ('user'), ('a_b_c')) v(p);

-- The prefix is checked when encoding too (22023); a TypeID of another type
-- is refused where one type is required (22P02).
SELECT q, error_of(q) FROM (VALUES
    ($$SELECT uuid_to_typeid('User', '01890a5d-ac96-774b-bcce-b302099a8057')$$),
    ($$SELECT uuid_to_typeid('user_', '01890a5d-ac96-774b-bcce-b302099a8057')$$),
    ($$SELECT uuid_to_typeid(repeat('a', 64), '01890a5d-ac96-774b-bcce-b302099a8057')$$),
    ($$SELECT typeid_to_uuid('prefix_01h455vb4pex5vsknk084sn02q', 'user')$$),
    ($$SELECT typeid_to_uuid('01h455vb4pex5vsknk084sn02q', 'user')$$)
) v(q);
SELECT uuid_to_typeid(repeat('a', 63), '01890a5d-ac96-774b-bcce-b302099a8057') AS prefix_63;

-- Order ----------------------------------------------------------------------

-- UUIDv7s of this server (a burst, so many share a millisecond) and of
-- instants across 1970..10889: their ULIDs and TypeIDs sort (COLLATE "C")
-- exactly as the UUIDs do, as do random UUIDs'.
CREATE TEMP TABLE o AS
SELECT uuidv7_next() AS id FROM generate_series(1, 10000)
UNION ALL
SELECT uuidv7_at(timestamptz '1970-01-01+00' + random() * interval '3000 years') FROM generate_series(1, 2000)
UNION ALL
SELECT gen_random_uuid() FROM generate_series(1, 2000);
SELECT count(*) AS uuids,
       count(DISTINCT id) AS distinct_uuids,
       count(*) FILTER (WHERE by_uuid = by_ulid) AS ulid_same_rank,
       count(*) FILTER (WHERE by_uuid = by_typeid) AS typeid_same_rank
FROM (SELECT id,
             row_number() OVER (ORDER BY id) AS by_uuid,
             row_number() OVER (ORDER BY uuid_to_ulid(id) COLLATE "C") AS by_ulid,
             row_number() OVER (ORDER BY uuid_to_typeid('order', id) COLLATE "C") AS by_typeid
      FROM o) r;

-- Snowflake IDs in 13 characters -----------------------------------------------

SELECT snowflake_to_text(0) AS zero, snowflake_to_text(1) AS one, snowflake_to_text(32) AS thirty_two,
       snowflake_to_text(9007199254740993) AS two_53_plus_1,
       snowflake_to_text(9223372036854775807) AS max,
       text_to_snowflake('7zzzzzzzzzzzz') AS max_back,
       text_to_snowflake('000000000000Z') AS z;

-- 10000 IDs of this server and 2000 random non-negative bigints: as the
-- reference encoder, back again, and in the same order as text.
CREATE TEMP TABLE s AS
SELECT snowflake_next() AS id FROM generate_series(1, 10000)
UNION ALL
SELECT (random() * 9223372036854775807)::bigint >> (random() * 62)::int FROM generate_series(1, 2000);
SELECT count(*) AS ids,
       count(*) FILTER (WHERE snowflake_to_text(id) = pg_temp.b32(id::bit(64)::varbit)) AS as_reference,
       count(*) FILTER (WHERE text_to_snowflake(snowflake_to_text(id)) = id) AS round_trips,
       count(*) FILTER (WHERE text_to_snowflake(lower(snowflake_to_text(id))) = id) AS lower_round_trips,
       count(*) FILTER (WHERE by_id = by_text) AS same_rank
FROM (SELECT id, row_number() OVER (ORDER BY id) AS by_id,
             row_number() OVER (ORDER BY snowflake_to_text(id) COLLATE "C", id) AS by_text
      FROM s) r;

SELECT q, error_of(q) FROM (VALUES
    ($$SELECT snowflake_to_text(-1)$$),
    ($$SELECT text_to_snowflake('8000000000000')$$),
    ($$SELECT text_to_snowflake('00000000000000')$$),
    ($$SELECT text_to_snowflake('000000000000')$$),
    ($$SELECT text_to_snowflake('00000000000I0')$$)
) v(q);
