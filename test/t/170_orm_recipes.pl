# Guarantee: the SQLAlchemy and Django recipes of docs/orms.md work with the
# ORM itself, as packaged by the Debian release under test: the ORM creates
# the tables (SQLAlchemy's create_all(); Django's migrate, whose second
# migration converts a bigserial/identity key that already has rows with
# convert_to_snowflake() and gives a uuid key DEFAULT uuidv7_next()),
# inserts rows leaving the key to the database and reads it back: snowflake
# IDs of this server's worker id, increasing, above the rows from before the
# conversion; UUIDs of version 7, increasing; foreign keys of type bigint
# and uuid.  Each recipe skips, saying what is missing, without its Python
# modules (python3-sqlalchemy, python3-django, python3-psycopg2).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;
use lib 'test';
use UidgenTest;

# Debian's interpreter, which the python3-* packages install into.
my $python = -x '/usr/bin/python3' ? '/usr/bin/python3' : 'python3';

# The missing one of the Python modules @modules, or '' if all import.
sub missing_module
{
	my @modules = @_;
	for my $m (@modules)
	{
		my ($out, $err) = ('', '');
		IPC::Run::run([ $python, '-c', "import $m" ], '>', \$out, '2>', \$err)
		  or return $m;
	}
	return '';
}

my $node = uidgen_node('orm_recipes', 'uidgen.worker_id' => 7);

# Run a recipe script in a fresh database; its JSON facts as a hash.
sub run_recipe
{
	my ($script, $db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION uidgen');
	my ($out, $err) = ('', '');
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGDATABASE} = $db;
	my $ok = IPC::Run::run([ $python, "test/orm/$script" ], '>', \$out, '2>', \$err);
	ok($ok, "$script ran") or diag($err);
	return $ok ? decode_json($out) : {};
}

# The facts both recipes report.
sub check_common
{
	my ($what, $f) = @_;
	is($f->{orders_default}, 'snowflake_next()', "$what: orders default snowflake_next()");
	is($f->{documents_default}, 'uuidv7_next()', "$what: documents default uuidv7_next()");
	ok($f->{orders_ids_read_back}, "$what: snowflake keys read back after INSERT");
	ok($f->{orders_increasing}, "$what: snowflake keys increasing");
	is_deeply($f->{orders_workers}, [7], "$what: snowflake keys of this server's worker id");
	ok($f->{documents_uuid_version_7}, "$what: uuid keys read back, version 7");
	ok($f->{documents_increasing}, "$what: uuid keys increasing");
	return;
}

# Each recipe: its script, database, modules, and the checks of its own
# facts (after those both report), with their count.
my @recipes = (
	[
		'SQLAlchemy', 'sqlalchemy_recipe.py', 'sa', [ 'sqlalchemy', 'psycopg2' ], 2,
		sub {
			my ($f) = @_;
			is($f->{legacy_old_max}, 100, 'SQLAlchemy: 100 rows before the conversion');
			ok($f->{legacy_new_above_old},
				'SQLAlchemy: converted BIGSERIAL key: new IDs above the old');
		}
	],
	[
		'Django', 'django_recipe.py', 'dj', [ 'django', 'psycopg2' ], 6,
		sub {
			my ($f) = @_;
			is($f->{orders_identity}, '', 'Django: no identity left on the converted key');
			is($f->{orders_old_max}, 100, 'Django: 100 rows before the conversion');
			ok($f->{orders_new_above_old}, 'Django: converted key: new IDs above the old');
			is($f->{line_fk_types}, 'document_id uuid, order_id bigint',
				'Django: foreign keys bigint and uuid');
			ok($f->{lines_read_back}, 'Django: rows with both foreign keys read back');
			ok($f->{reload_same_key}, 'Django: a row found again by its key');
		}
	]);

for my $r (@recipes)
{
	my ($name, $script, $db, $modules, $count, $checks) = @$r;
  SKIP:
	{
		my $missing = missing_module(@$modules);
		skip "$name recipe: Python module $missing missing (install the Debian packages python3-"
		  . join(' and python3-', @$modules) . ')', 8 + $count
		  if $missing;
		my $f = run_recipe($script, $db);
		note("$name $f->{lc $name}");
		check_common($name, $f);
		$checks->($f);
	}
}

$node->stop;
done_testing();
