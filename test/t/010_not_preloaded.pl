# Guarantee: without shared_preload_libraries = 'uidgen', loading the
# library is harmless: the extension can be created (or stay created after
# the preload was removed), but every function of it that needs the shared
# clock or the uidgen.* settings (generators, uidgen_status(), the snowflake
# decoders, which would silently decode with the wrong layout, and the
# block sequence functions) refuses with SQLSTATE 55000 and a hint to
# preload the library, never returning a value; the backend survives each
# error.  The functions that need no settings (uuidv7_timestamp(),
# uuidv7_floor(), uuidv7_at(timestamptz) and its deprecated alias
# public.uuidv7(timestamptz), uuid_extract_version() and
# uuid_extract_timestamp(), and the snowflake decoders that take the layout
# as arguments) keep working.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

# Created while preloaded, in database "postgres"; the preload is then
# removed.  Database "fresh" creates the extension without it.
my $node = uidgen_node('not_preloaded');
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->stop;
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''");
$node->start;

sub query
{
	my ($db, $sql) = @_;
	my ($o, $e) = ('', '');
	$node->psql($db, $sql, stdout => \$o, stderr => \$e);
	return $o;
}

# Every C function that needs the preload (a call each, with its arguments).
my @refused = (
	'snowflake_next()',
	'uuidv7_next()',
	'public.uuidv7()',
	'* FROM uidgen_status()',
	'snowflake_timestamp(4194304005)',
	'snowflake_worker(4194304005)',
	'snowflake_sequence(4194304005)',
	q{snowflake_floor('2024-01-01 00:00:01+00')},
	q{snowflake_at('2024-01-01 00:00:01+00', 5, 0)},
	q{uuidv7_next('1 hour'::interval)},
	q{* FROM seq_reserve_block('s')},
	q{* FROM seq_reserve_block('s', 10)},
	q{seq_next('s')});

sub check_database
{
	my ($db) = @_;
	for my $call (@refused)
	{
		# One session: the failing call, then a query that must still work.
		my ($out, $err) = ('', '');
		$node->psql($db, "SELECT $call;\nSELECT 'alive';",
			on_error_stop => 0, stdout => \$out, stderr => \$err,
			extra_params => [ '-v', 'VERBOSITY=verbose' ]);
		unlike($err, qr/FATAL|PANIC|server closed the connection/,
			"$db: $call does not end the session");
		like($err,
			qr/ERROR:\s+55000: uidgen must be loaded via "shared_preload_libraries"/,
			"$db: $call fails with SQLSTATE 55000");
		like($err,
			qr/HINT:\s+Add uidgen to the "shared_preload_libraries" setting in postgresql.conf and restart the server\./,
			"$db: $call error carries the hint");
		is($out, 'alive', "$db: $call returned no value and the backend still works");
	}

	# The UUIDv7 helpers need neither the shared clock nor the settings.
	is( query($db,
			q{SELECT uuidv7_timestamp('017f22e2-79b0-7cc3-98c4-dc0c0c07398f'),
			         uuidv7_floor('2022-02-22 19:22:22+00')}),
		'2022-02-22 19:22:22+00|017f22e2-79b0-7000-8000-000000000000',
		"$db: uuidv7_timestamp() and uuidv7_floor() work without preloading");
	for my $f ('uuidv7_at', 'public.uuidv7')
	{
		is( query($db,
				qq{SELECT uuidv7_timestamp(u), substr(u::text, 15, 1),
				         substr(u::text, 20, 1) IN ('8','9','a','b')
				  FROM (SELECT $f('2030-01-01 00:00:00.123+00') AS u) s}),
			'2030-01-01 00:00:00.123+00|7|t',
			"$db: $f(timestamptz) works without preloading");
	}
	# Neither do the decoders that take the layout as arguments, nor the
	# version-independent UUID extractors.
	is( query($db,
			q{SELECT snowflake_timestamp(4194304005, '2024-01-01+00', 10, 12),
			         snowflake_worker(4194304005, '2024-01-01+00', 10, 12),
			         snowflake_sequence(4194304005, '2024-01-01+00', 10, 12),
			         public.uuid_extract_version('017f22e2-79b0-7cc3-98c4-dc0c0c07398f'),
			         public.uuid_extract_timestamp('017f22e2-79b0-7cc3-98c4-dc0c0c07398f')}),
		'2024-01-01 00:00:01+00|0|5|7|2022-02-22 19:22:22+00',
		"$db: the explicit-layout decoders and uuid_extract_*() work without preloading");
	# The shared cache does not exist: seq_prefetched() (and its view) has no
	# rows (its view: no next_id), rather than failing.
	is(query($db, q{SELECT count(*) || '|' || (SELECT count(*) FROM id_sequences_prefetch
	                WHERE next_id IS NOT NULL) FROM seq_prefetched()}),
		'0|0', "$db: seq_prefetched() has no rows without preloading");
	# No error above took the server down.
	is(query($db, 'SELECT 1'), '1', "$db: the server is still up");
	return;
}

######## created while preloaded, preload removed
# (seq_create() is plain SQL: administering block sequences needs no preload)
is(query('postgres', q{SELECT current_setting('shared_preload_libraries')}), '',
	'precondition: uidgen is not preloaded');
$node->safe_psql('postgres', q{SELECT seq_create('s', block_size => 10)});
check_database('postgres');

######## created without preloading
my ($ret, $err) = (0, '');
$ret = $node->psql('fresh',
	"CREATE EXTENSION uidgen;\nSELECT seq_create('s', block_size => 10);",
	stderr => \$err, on_error_stop => 1);
is($ret, 0, 'CREATE EXTENSION works without preloading');
unlike($err, qr/FATAL|ERROR/, 'CREATE EXTENSION raises no error')
  or diag($err);
like($err, qr/NOTICE:\s+uidgen is not in shared_preload_libraries: snowflake_next\(\)[^\n]*fail until it is\n[^\n]*HINT:\s+Add uidgen to shared_preload_libraries and restart the server\./,
	'CREATE EXTENSION says what fails until uidgen is preloaded');
check_database('fresh');

# Nothing crashed along the way.
ok(!$node->log_contains('terminated by signal|server process .* exited with exit code [^0]'),
	'no backend crashed');

$node->stop;
done_testing();
