# Guarantee: no snowflake ID is handed out above a mark that is not durable.
# When the state file cannot be written (here its temporary file cannot be
# created: a directory stands in its place), snowflake_next() goes on only
# up to the mark last made durable, then fails with the file's error
# (SQLSTATE 58P02, naming the file) instead of issuing unrecorded IDs; once
# the file can be written again it resumes, and after a kill -9 the server
# restarts above everything it issued.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test';
use UidgenTest;

my $node = uidgen_node('wf', 'uidgen.worker_id' => 1);
my @ids = split /\n/,
  $node->safe_psql('postgres', 'SELECT snowflake_next() FROM generate_series(1, 100)');
my $tmp = $node->data_dir . '/uidgen.state.tmp';
mkdir $tmp or die "mkdir $tmp: $!";

# Generate until the mark runs out (at most a window of 2 s, and a little).
my ($err, $failed) = ('', 0);
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
while (time < $deadline)
{
	my ($e, $ret, $out) = psql_error($node, 'SELECT snowflake_next()');
	if ($ret != 0)
	{
		($err, $failed) = ($e, 1);
		last;
	}
	push @ids, $out;
	usleep(20_000);    # (the clock moves between calls)
}
ok($failed, 'snowflake_next() fails once the mark cannot move');
like($err,
	qr/ERROR:\s+58P02: could not create file "[^"]*uidgen\.state\.tmp": File exists/,
	'with the error of the file that cannot be written (58P02)');
my $max_ms = snowflake_ms((sort { $a <=> $b } @ids)[-1]);
my $state = read_state_file($node);
cmp_ok($max_ms, '<=', $state->{hwm_ms},
	'every ID handed out is below the mark in the state file');

rmdir $tmp or die "rmdir $tmp: $!";
ok( $node->poll_query_until('postgres', 'SELECT snowflake_next() > 0'),
	'the file writable again: snowflake_next() resumes');
push @ids, split /\n/,
  $node->safe_psql('postgres', 'SELECT snowflake_next() FROM generate_series(1, 100)');

kill9_and_wait($node);
$node->start;
my @after = split /\n/,
  $node->safe_psql('postgres', 'SELECT snowflake_next() FROM generate_series(1, 100)');
my $max = (sort { $a <=> $b } @ids)[-1];
is(scalar(grep { $_ <= $max } @after), 0,
	'after kill -9: every ID above everything issued before');

$node->stop;
done_testing();
