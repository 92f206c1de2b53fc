# Review of issue 22 part 1 (steps): seq_room() has a SQL-standard body,
# whose operators are bound when CREATE EXTENSION or ALTER EXTENSION UPDATE
# runs, with the extension's schema (public) on the search_path.  An
# operator that a non-superuser (here the owner of the database and of its
# schema public) created there beforehand, and that matches exactly where
# pg_catalog's needs a cast (bigint - numeric, numeric + integer), must not
# be bound: seq_room() runs in the allocator, as a superuser, and decides
# which IDs are handed out.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('main');
$node->safe_psql('postgres', q{CREATE ROLE dbo LOGIN});

# A database whose owner plants operators in public, then the superuser
# installs (fresh 0.3.0, or 0.2.0 updated to 0.3.0).
for my $case (['fresh', q{CREATE EXTENSION uidgen}],
	['update', q{CREATE EXTENSION uidgen VERSION '0.2.0'; ALTER EXTENSION uidgen UPDATE}])
{
	my ($db, $install) = @$case;
	$node->safe_psql('postgres', qq{CREATE DATABASE $db OWNER dbo});
	$node->safe_psql($db, q{
		ALTER SCHEMA public OWNER TO dbo;
		SET ROLE dbo;
		CREATE TABLE public.calls (who text);
		GRANT INSERT ON public.calls TO PUBLIC;
		CREATE FUNCTION public.evil_minus(bigint, numeric) RETURNS numeric
			LANGUAGE sql AS $$ INSERT INTO public.calls VALUES (current_user)
			RETURNING pg_catalog.numeric_add(pg_catalog.numeric_sub($1::numeric, $2), 1000) $$;
		CREATE OPERATOR public.- (LEFTARG = bigint, RIGHTARG = numeric, FUNCTION = public.evil_minus);
		CREATE FUNCTION public.evil_plus(numeric, integer) RETURNS numeric
			LANGUAGE sql AS $$ INSERT INTO public.calls VALUES (current_user)
			RETURNING pg_catalog.numeric_add($1, pg_catalog.numeric_add($2::numeric, 1000)) $$;
		CREATE OPERATOR public.+ (LEFTARG = numeric, RIGHTARG = integer, FUNCTION = public.evil_plus);
		RESET ROLE;
	});
	$node->safe_psql($db, $install);
	is($node->safe_psql($db, q{
		SELECT count(*) FROM pg_depend d JOIN pg_operator o ON o.oid = d.refobjid
		 WHERE d.classid = 'pg_proc'::regclass AND d.objid = 'seq_room'::regproc
		   AND d.refclassid = 'pg_operator'::regclass}), '0',
		"$db: seq_room() is bound to no operator outside pg_catalog");
	$node->safe_psql($db, q{SELECT seq_create('s', max_value => 5, block_size => 1)});
	my ($ret, $out, $err) = $node->psql($db,
		q{SELECT seq_next('s') FROM generate_series(1, 10)});
	my @got = split /\n/, $node->safe_psql($db, q{
		SELECT next_block_start FROM id_sequences WHERE name = 's'});
	is($got[0], '6', "$db: nothing handed out past max_value 5");
	is($node->safe_psql($db, q{SELECT count(*) FROM public.calls}), '0',
		"$db: the planted operators never ran");
}

done_testing();
