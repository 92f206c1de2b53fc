# Guarantee: pg_stat_activity tells which uidgen wait a process is in.  On
# PostgreSQL 17 and later uidgen registers named wait events (type
# Extension): an idle block allocator shows UidgenAllocatorMain.  Before 17
# PostgreSQL has no named extension wait events and it shows the generic
# "Extension".  (The keeper has no database connection, so it is not in
# pg_stat_activity at all.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test';
use UidgenTest;

my $node = uidgen_node('wait_events');
my $named = $node->safe_psql('postgres', 'SHOW server_version_num') >= 170000;

# Wait until the process of $type reports wait event $event of type Extension.
sub shows_wait
{
	my ($type, $event) = @_;
	return $node->poll_query_until('postgres', qq{
		SELECT count(*) = 1 FROM pg_stat_activity
		WHERE backend_type = '$type' AND wait_event_type = 'Extension'
		  AND wait_event = '$event'});
}

$node->safe_psql('postgres', q{SELECT seq_create('w'); SELECT seq_next('w')});
ok(shows_wait('uidgen allocator', $named ? 'UidgenAllocatorMain' : 'Extension'),
	'an idle allocator shows its wait event');

$node->stop;
done_testing();
