# Guarantee: ALTER EXTENSION uidgen UPDATE from 0.1.0 (through 0.2.0) and
# from 0.2.0 leaves a database with exactly the objects a fresh CREATE
# EXTENSION of the current version makes:
# every function with all its properties, every other member object, the
# id_sequences and id_sequences_timeline tables with their columns,
# defaults, constraints, indexes, triggers and privileges, and what pg_dump
# carries (extconfig and extcondition); both hold the current timeline in
# id_sequences_timeline, so neither skips its block sequences ahead.  Any difference fails.  Objects made under 0.1.0 keep
# working: a column DEFAULT public.uuidv7() still calls uidgen's generator
# after the update, through the same function.  On PostgreSQL 18 and later
# both the install and the update of 0.2.0 raise a NOTICE that an
# unqualified uuidv7() is PostgreSQL's (through the client_min_messages =
# warning that extension scripts run with, unless the session asked for
# error or above, and leaving the session's setting as it was); before 18
# they are silent, and the 0.1.0 install script is silent everywhere.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('extension_update', start => 0);
$node->start;
my $version_num = $node->safe_psql('postgres', 'SHOW server_version_num');
my $pg18 = $version_num >= 180000;

# Run $sql in $db, failing on error; return its stderr (NOTICEs included),
# or (stderr, stdout) in list context.
sub run_sql
{
	my ($db, $sql) = @_;
	my ($out, $err) = ('', '');
	my $ret = $node->psql($db, $sql, stdout => \$out, stderr => \$err,
		on_error_stop => 1);
	(my $name = $sql) =~ s/\s+/ /g;
	$name =~ s/^ | $//g;
	$name = substr($name, 0, 60) . '...' if length($name) > 60;
	is($ret, 0, "$db: $name") or diag($err);
	return wantarray ? ($err, $out) : $err;
}

my $notice = qr/NOTICE:\s+on PostgreSQL 18 and later an unqualified uuidv7\(\) calls PostgreSQL's built-in generator, not uidgen's\n/;
my $hint = qr/HINT:\s+Call uuidv7_next\(\) \(or public\.uuidv7\(\)\) for uidgen's server-wide ordered UUIDv7\./;

# Whether $err holds the PostgreSQL 18 notice exactly when it should
# ($shown: whether client_min_messages lets it through).
sub check_notice
{
	my ($err, $what, $shown) = @_;
	$shown //= 1;
	if ($pg18 && $shown)
	{
		like($err, $notice, "$what: NOTICE on PostgreSQL 18 and later");
		like($err, $hint, "$what: with its HINT");
	}
	else
	{
		is($err, '', "$what: no NOTICE" . ($pg18 ? '' : ' before PostgreSQL 18'));
	}
	return;
}

######## database "updated": 0.1.0, objects using it, then the update
$node->safe_psql('postgres', 'CREATE DATABASE updated');
my $err = run_sql('updated', q{CREATE EXTENSION uidgen VERSION '0.1.0'});
is($err, '', '0.1.0 install: no NOTICE on any version');
run_sql('updated', q{
	CREATE TABLE docs (id uuid PRIMARY KEY DEFAULT public.uuidv7(), n int);
	INSERT INTO docs (n) VALUES (1);
	SELECT seq_create('orders', block_size => 10);
	SELECT * FROM seq_reserve_block('orders')});
my $alias_oid_before = $node->safe_psql('updated',
	q{SELECT 'public.uuidv7()'::regprocedure::oid});

$err = run_sql('updated', q{ALTER EXTENSION uidgen UPDATE TO '0.2.0'});
check_notice($err, 'update from 0.1.0');
is($node->safe_psql('updated', q{SELECT extversion FROM pg_extension WHERE extname = 'uidgen'}),
	'0.2.0', 'updated: extension version is 0.2.0');

# The alias is the same function (not dropped and recreated), and the
# default made under 0.1.0 still reaches uidgen's generator.
is($node->safe_psql('updated', q{SELECT 'public.uuidv7()'::regprocedure::oid}),
	$alias_oid_before, 'updated: public.uuidv7() is the same function as under 0.1.0');
is( $node->safe_psql('updated', q{
	SELECT p.oid = 'public.uuidv7()'::regprocedure
	FROM pg_attrdef ad
	JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
	                AND d.refclassid = 'pg_proc'::regclass
	JOIN pg_proc p ON p.oid = d.refobjid
	WHERE ad.adrelid = 'docs'::regclass}),
	't', 'updated: the 0.1.0 default is bound to public.uuidv7()');
is( $node->safe_psql('updated', q{
	CREATE FUNCTION pg_temp.issued() RETURNS bigint LANGUAGE sql
	    AS 'SELECT uuids_issued FROM uidgen_status()';
	SELECT pg_temp.issued() AS before \gset
	INSERT INTO docs (n) VALUES (2);
	SELECT pg_temp.issued() - :before, count(*), count(DISTINCT id) FROM docs}),
	'1|2|2', 'updated: the 0.1.0 default still calls uidgen\'s generator');
is( $node->safe_psql('updated', q{SELECT * FROM seq_reserve_block('orders')}),
	'11|20', 'updated: block sequences go on');
# The allocator, which prepared its statements for 0.1.0's table, serves
# the new strategy after the update.
$node->safe_psql('updated',
	q{SELECT seq_create('native', block_size => 10, strategy => 'sequence')});
is( $node->safe_psql('updated', q{
	SELECT * FROM seq_reserve_block('native');
	SELECT * FROM seq_reserve_block('native');
	SELECT * FROM seq_reserve_block('orders')}),
	"1|10\n11|20\n21|30", 'updated: strategy "sequence" works at once');

# ... and on to 0.3.0, which changes no SQL object: no NOTICE.
$err = run_sql('updated', q{ALTER EXTENSION uidgen UPDATE});
is($err, '', 'update from 0.2.0 to 0.3.0: no NOTICE');
is($node->safe_psql('updated', q{SELECT extversion FROM pg_extension WHERE extname = 'uidgen'}),
	'0.3.0', 'updated: extension version is 0.3.0');

######## database "from020": 0.2.0 installed, then updated to 0.3.0
$node->safe_psql('postgres', 'CREATE DATABASE from020');
run_sql('from020', q{CREATE EXTENSION uidgen VERSION '0.2.0'});
run_sql('from020', q{SELECT seq_create('orders', block_size => 10);
	SELECT * FROM seq_reserve_block('orders')});
$err = run_sql('from020', q{ALTER EXTENSION uidgen UPDATE});
is($err, '', 'update from 0.2.0: no NOTICE');
is($node->safe_psql('from020', q{SELECT * FROM seq_reserve_block('orders')}),
	'11|20', 'from020: block sequences go on after the update');

######## database "grants020": EXECUTE granted on 0.2.0's seq_create() and
# seq_alter(), which the update replaces: the roles keep it on the new ones
$node->safe_psql('postgres', q{CREATE ROLE "Migrator"; CREATE ROLE helper});
$node->safe_psql('postgres', 'CREATE DATABASE grants020');
run_sql('grants020', q{CREATE EXTENSION uidgen VERSION '0.2.0';
	GRANT EXECUTE ON FUNCTION seq_create(text, bigint, integer, bigint, text) TO "Migrator" WITH GRANT OPTION;
	GRANT EXECUTE ON FUNCTION seq_alter(text, integer, bigint) TO "Migrator", helper});
$err = run_sql('grants020', q{ALTER EXTENSION uidgen UPDATE});
is($err, '', 'grants020: update from 0.2.0: no NOTICE');
is($node->safe_psql('grants020', q{
	SELECT has_function_privilege('Migrator', 'seq_create(text, bigint, integer, bigint, text, text, text, bigint, bigint, text)', 'EXECUTE WITH GRANT OPTION'),
	       has_function_privilege('Migrator', 'seq_alter(text, integer, bigint, text, bigint, bigint)', 'EXECUTE'),
	       has_function_privilege('helper', 'seq_alter(text, integer, bigint, text, bigint, bigint)', 'EXECUTE'),
	       has_function_privilege('helper', 'seq_create(text, bigint, integer, bigint, text, text, text, bigint, bigint, text)', 'EXECUTE')}),
	't|t|t|f', 'grants020: the EXECUTE grants (and grant option) of the replaced seq_create() and seq_alter() are kept, no more');
is($node->safe_psql('grants020', q{SET ROLE "Migrator"; SELECT seq_create('m', format => 'M{n:19}')}), '',
	'grants020: the role granted on 0.2.0 creates a sequence with the new parameters');

######## database "fresh": 0.3.0 installed directly
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$err = run_sql('fresh', 'CREATE EXTENSION uidgen');
check_notice($err, 'install of 0.3.0');
is($node->safe_psql('fresh', q{SELECT extversion FROM pg_extension WHERE extname = 'uidgen'}),
	'0.3.0', 'fresh: extension version is 0.3.0');

######## the NOTICE and client_min_messages
# Extension scripts run with client_min_messages raised to warning; the
# script lowers it to let its NOTICE through, but not below what the
# session asked for, and the session's value is unchanged afterwards.
for my $level ('notice', 'warning', 'error')
{
	$node->safe_psql('postgres', "CREATE DATABASE cmm_$level");
	my ($e, $o) = run_sql("cmm_$level",
		"SET client_min_messages = $level;\nCREATE EXTENSION uidgen;\nSHOW client_min_messages;");
	check_notice($e, "install with client_min_messages = $level", $level ne 'error');
	is($o, $level, "client_min_messages is still $level after CREATE EXTENSION");
}
my ($e, $o) = run_sql('cmm_notice', q{
	BEGIN;
	SET LOCAL client_min_messages = warning;
	DROP EXTENSION uidgen;
	CREATE EXTENSION uidgen VERSION '0.1.0';
	ALTER EXTENSION uidgen UPDATE TO '0.2.0';
	SHOW client_min_messages;
	COMMIT;
	SHOW client_min_messages;});
check_notice($e, 'update in a transaction with SET LOCAL client_min_messages = warning');
is($o, "warning\nnotice", 'client_min_messages unchanged by the update, in and after the transaction');
($e, $o) = run_sql('cmm_error', q{
	BEGIN;
	SET client_min_messages = warning;
	DROP EXTENSION uidgen;
	CREATE EXTENSION uidgen;
	SHOW client_min_messages;
	COMMIT;
	SHOW client_min_messages;});
check_notice($e, 'install in a transaction with SET client_min_messages = warning');
is($o, "warning\nwarning", 'client_min_messages unchanged by the install, in and after the transaction');

######## the two databases hold the same objects
# One line per property; sorted byte-wise.  Nothing here names a database
# or an OID, so the two texts are equal exactly when the objects are.
my $catalog = q{
WITH ext AS (
    SELECT * FROM pg_extension WHERE extname = 'uidgen'
), members AS (
    SELECT d.classid, d.objid, d.objsubid
    FROM pg_depend d, ext
    WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid
      AND d.deptype = 'e'
), tbl AS (
    SELECT unnest(ARRAY['public.id_sequences'::regclass,
                        'public.id_sequences_timeline'::regclass]) AS rel
), lines AS (
    SELECT format('extension version=%s schema=%s relocatable=%s',
                  extversion, extnamespace::regnamespace, extrelocatable) AS line
    FROM ext
    UNION ALL
    -- pg_dump's view of it: configuration tables and their conditions
    SELECT format('extconfig %s condition=%L', c.rel::regclass, c.cond)
    FROM ext, unnest(extconfig, extcondition) AS c(rel, cond)
    UNION ALL
    -- every member object, and its comment
    SELECT format('member %s comment=%L',
                  pg_describe_object(classid, objid, objsubid),
                  obj_description(objid, classid::regclass::name))
    FROM members
    UNION ALL
    -- every function, all its properties
    SELECT format('function %s args=(%s) returns=%s kind=%s lang=%s volatile=%s '
                  'strict=%s parallel=%s secdef=%s leakproof=%s retset=%s cost=%s rows=%s '
                  'acl=%s src=%L bin=%L config=%s owner_is_ext_owner=%s',
                  p.oid::regprocedure, pg_get_function_arguments(p.oid),
                  pg_get_function_result(p.oid), p.prokind, l.lanname, p.provolatile,
                  p.proisstrict, p.proparallel, p.prosecdef, p.proleakproof,
                  p.proretset, p.procost, p.prorows, p.proacl, p.prosrc, p.probin,
                  p.proconfig, p.proowner = (SELECT extowner FROM ext))
    FROM members m
    JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
    JOIN pg_language l ON l.oid = p.prolang
    UNION ALL
    -- the tables
    SELECT format('table %s kind=%s persistence=%s options=%s acl=%s owner_is_ext_owner=%s comment=%L',
                  c.oid::regclass, c.relkind, c.relpersistence, c.reloptions, c.relacl,
                  c.relowner = (SELECT extowner FROM ext), obj_description(c.oid, 'pg_class'))
    FROM pg_class c, tbl WHERE c.oid = tbl.rel
    UNION ALL
    SELECT format('column %s %s %s type=%s notnull=%s default=%s identity=%L generated=%L collation=%s acl=%s',
                  tbl.rel, to_char(a.attnum, 'FM00'), a.attname, format_type(a.atttypid, a.atttypmod),
                  a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid), a.attidentity,
                  a.attgenerated, a.attcollation::regcollation, a.attacl)
    FROM pg_attribute a
    JOIN tbl ON a.attrelid = tbl.rel
    LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
    WHERE a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT format('constraint %s %s %s', tbl.rel, co.conname, pg_get_constraintdef(co.oid))
    FROM pg_constraint co JOIN tbl ON co.conrelid = tbl.rel
    UNION ALL
    SELECT format('index %s', pg_get_indexdef(i.indexrelid))
    FROM pg_index i JOIN tbl ON i.indrelid = tbl.rel
    UNION ALL
    SELECT format('trigger %s function=%s enabled=%s def=%s',
                  t.tgname, t.tgfoid::regprocedure, t.tgenabled, pg_get_triggerdef(t.oid))
    FROM pg_trigger t JOIN tbl ON t.tgrelid = tbl.rel
    WHERE NOT t.tgisinternal
)
SELECT string_agg(line, E'\n' ORDER BY line COLLATE "C") FROM lines
};

# The 0.1.0 database has a table of its own (docs): not an extension
# object, so not in the comparison.
my $updated = $node->safe_psql('updated', $catalog);
my $from020 = $node->safe_psql('from020', $catalog);
my $fresh = $node->safe_psql('fresh', $catalog);
note("the objects of a fresh install:\n$fresh");

# Sanity: the comparison covers what it should.
for my $re (
	qr/^function uuidv7_next\(\) args=\(\) returns=uuid kind=f lang=c volatile=v strict=t parallel=s .* src='uuidv7_next' /m,
	qr/^function uuidv7_at\(timestamp with time zone\) args=\(ts timestamp with time zone\) returns=uuid .*volatile=v strict=t parallel=s .* src='uuidv7_at' /m,
	qr/^function (public\.)?uuidv7\(\) .* src='uuidv7_next' /m,
	qr/^function uuidv7\(timestamp with time zone\) .* src='uuidv7_at' /m,
	qr/^member function (public\.)?uuidv7\(\) comment='deprecated alias of uuidv7_next\(\)/m,
	qr/^member function seq_create\(text,bigint,integer,bigint,text,text,text,bigint,bigint,text\) /m,
	qr/^member function seq_room\(bigint,bigint,bigint,bigint\) /m,
	qr/^column id_sequences \d+ format type=text notnull=f /m,
	qr/^column id_sequences \d+ time_zone type=text notnull=t default='UTC'::text /m,
	qr/^constraint id_sequences id_sequences_format_check CHECK /m,
	qr/^column id_sequences \d+ increment type=bigint notnull=t default=1 /m,
	qr/^column id_sequences \d+ min_value type=bigint notnull=t /m,
	qr/^constraint id_sequences id_sequences_increment_check CHECK /m,
	qr/^constraint id_sequences id_sequences_format_sign_check CHECK /m,
	qr/^function seq_room\(bigint,bigint,bigint,bigint\) .*volatile=i /m,
	qr/^column id_sequences 07 strategy type=text notnull=t default='table'::text /m,
	qr/^column id_sequences 08 sequence type=regclass notnull=f /m,
	qr/^constraint id_sequences id_sequences_sequence_check CHECK /m,
	qr/^member table id_sequences /m,
	qr/^extconfig id_sequences condition=''$/m,
	qr/^column id_sequences 01 name type=text notnull=t /m,
	qr/^member table id_sequences_timeline /m,
	qr/^column id_sequences_timeline 01 timeline type=bigint notnull=t /m,
	qr/^table id_sequences_timeline kind=r persistence=p .*acl=\{/m,
	qr/^index CREATE UNIQUE INDEX id_sequences_pkey /m,
	qr/^trigger id_sequences_invalidate function=id_sequences_invalidate\(\) enabled=A /m,
	qr/^trigger id_sequences_invalidate_all /m,
	qr/^trigger id_sequences_lease_wait function=id_sequences_lease_wait\(\) enabled=A /m,
	qr/^column id_sequences 09 worker_lease_until type=timestamp with time zone notnull=f /m,
	qr/^table id_sequences kind=r persistence=p .*acl=\{/m)
{
	like($fresh, $re, "fresh install lists $re");
}

unlike($fresh, qr/^extconfig id_sequences_timeline /m,
	'pg_dump does not carry id_sequences_timeline');

is($updated, $fresh, '0.1.0 updated to 0.2.0 and 0.3.0 has exactly the objects of a fresh 0.3.0 install');
is($from020, $fresh, '0.2.0 updated to 0.3.0 has exactly the objects of a fresh 0.3.0 install');

# Both record the current timeline (the first eight hexadecimal digits of
# the WAL file's name), so neither skips its block sequences ahead.
my $timeline = q{
	SELECT count(*) || ' ' || bool_and(timeline = ('x' || substr(
	    pg_walfile_name(pg_current_wal_insert_lsn()), 1, 8))::bit(32)::bigint)
	FROM id_sequences_timeline};
is($node->safe_psql('updated', $timeline), '1 true', 'updated: id_sequences_timeline holds the current timeline');
is($node->safe_psql('from020', $timeline), '1 true', 'from020: id_sequences_timeline holds the current timeline');
is($node->safe_psql('fresh', $timeline), '1 true', 'fresh: id_sequences_timeline holds the current timeline');
for my $case (['from 0.1.0', $updated], ['from 0.2.0', $from020])
{
	my ($from, $text) = @$case;
	next if $text eq $fresh;
	my %u = map { $_ => 1 } split /\n/, $text;
	my %f = map { $_ => 1 } split /\n/, $fresh;
	diag("only after the update $from: $_") for grep { !$f{$_} } sort keys %u;
	diag("only in the fresh install: $_") for grep { !$u{$_} } sort keys %f;
}

# And the functions of 0.2.0 are those of 0.1.0 plus the new ones.
$node->safe_psql('postgres', 'CREATE DATABASE old');
run_sql('old', q{CREATE EXTENSION uidgen VERSION '0.1.0'});
my $functions = q{
	SELECT string_agg(p.oid::regprocedure::text, E'\n' ORDER BY p.oid::regprocedure::text COLLATE "C")
	FROM pg_depend d JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'uidgen')};
# (unqualified: where core has a function of the same name, as uuidv7() on
# 18 and uuid_extract_version() on 17, regprocedure adds the schema)
my %old = map { s/^public\.//r => 1 } split /\n/, $node->safe_psql('old', $functions);
my @added = sort grep { !$old{$_} } map { s/^public\.//r }
  split /\n/, $node->safe_psql('fresh', $functions);
# (seq_create() took a strategy argument: a new signature; 0.3.0 added
# seq_prefetched() and seq_unprefetch(), block prefetch; and the seq_*
# helpers of Citus workers, docs/citus.md.)
my @expected_added = (
	'seq_coordinator_call(text,text[])',
	'seq_forget(text)',
	'seq_next_unused(id_sequences)',
	'seq_on_coordinator()',
	'seq_prefetched()',
	'seq_unprefetch(text,bigint)',
	'seq_workers_forget(text)',
	'snowflake_at(timestamp with time zone,integer,integer)',
	'snowflake_sequence(bigint,timestamp with time zone,integer,integer)',
	'snowflake_timestamp(bigint,timestamp with time zone,integer,integer)',
	'snowflake_worker(bigint,timestamp with time zone,integer,integer)',
	# 0.3.0: Citus (docs/citus.md)
	'uidgen_citus_check()',
	'uidgen_citus_refuse(integer[],boolean)',
	'uidgen_citus_worker()',
	'uidgen_take_over()',
	'uuid_extract_timestamp(uuid)',
	'uuid_extract_version(uuid)',
	'uuidv7_at(timestamp with time zone)',
	'uuidv7_next()',
	'uuidv7_next(interval)',
	# 0.3.0: text forms and conversions (issue 23; docs/text-forms.md,
	# docs/converting.md)
	'convert_to_block_sequence(regclass,name,text,integer,text)',
	'convert_to_snowflake(regclass,name)',
	'snowflake_to_text(bigint)',
	'text_to_snowflake(text)',
	'typeid_prefix(text)',
	'typeid_to_uuid(text)',
	'typeid_to_uuid(text,text)',
	'uidgen_column_source(regclass,name)',
	'uidgen_convert_begin(text,regclass,name)',
	'ulid_to_uuid(text)',
	'uuid_to_typeid(text,uuid)',
	'uuid_to_ulid(uuid)',
	# 0.3.0: leases on Citus worker blocks (docs/citus.md)
	'id_sequences_lease_wait()',
	'seq_lease_wait(text,timestamp with time zone)',
	'seq_worker_lease(text)',
	# 0.3.0: formatted numbers (issue 22; docs/block-sequences.md): new
	# last parameters of seq_create() (after strategy, already new in
	# 0.2.0) and seq_alter()
	'seq_alter(text,integer,bigint,text,bigint,bigint)',
	'seq_check_char(text)',
	'seq_create(text,bigint,integer,bigint,text,text,text,bigint,bigint,text)',
	'seq_format(text,bigint,timestamp with time zone)',
	'seq_format_number(text,text,bigint,timestamp with time zone)',
	'seq_format_of(text)',
	'seq_format_valid(text,text,bigint)',
	'seq_next_text(text)',
	# 0.3.0: steps and direction (issue 22), and the new last parameters
	# increment and min_value of seq_create() and seq_alter() above
	'seq_room(bigint,bigint,bigint,bigint)',
	# 0.3.0: numbering per period (issue 22), and the new last parameter
	# reset of seq_create() above
	'seq_advance_period(id_sequences,bigint)',
	'seq_format_finest(text)',
	'seq_format_period(text,text,text,bigint,bigint,timestamp with time zone)',
	'seq_period_bounds(text,text,timestamp with time zone)',
	'seq_period_check(text,text,bigint,bigint,bigint,bigint,text)',
	'seq_period_key(text,text,timestamp with time zone)',
	'seq_period_max(text)');
is(join(' | ', @added), join(' | ', sort @expected_added),
	'0.2.0 and 0.3.0 add their new functions to those of 0.1.0');

$node->stop;
done_testing();
