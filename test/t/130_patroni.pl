# A real HA stack: a Patroni cluster of three PostgreSQL nodes on one etcd,
# all on loopback, each node with uidgen preloaded and a uidgen.worker_id of
# its own (in its local postgresql.parameters).  Clients stream
# snowflake_next(), uuidv7_next() and seq_reserve_block() through a
# multi-host connection string (target_session_attrs=read-write) while
#   1. the leader's node crashes: kill -9 of its Patroni, its postmaster and
#      every child of the postmaster at once, while replication lags (its
#      WAL senders stopped, after the clients received more IDs and blocks
#      from it); another node takes over, and the crashed node's Patroni,
#      started again, rejoins it as a replica (pg_rewind, or a new clone);
#   2. a switchover (Patroni's REST API) hands the leadership to that
#      rejoined node.
# Guarantees: no snowflake ID and no UUID is handed out twice, every
# snowflake ID carries the worker id of the node that served it, no two
# reserved blocks overlap, each new leader serves all three kinds, and the
# clients' errors fall within the failover, the rejoin and the switchover
# and are bounded by their durations.
#
# Needs Debian's patroni and etcd-server (scripts/common.sh installs them);
# skipped without them.
use strict;
use warnings FATAL => 'all';
use HTTP::Tiny;
use IPC::Run;
use JSON::PP;
use List::Util qw(min);
use POSIX qw(ceil);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

for my $prog (qw(patroni etcd))
{
	plan skip_all => "$prog is not installed"
	  unless grep { -x "$_/$prog" } split /:/, $ENV{PATH};
}

my $t_start = time;
# A failed client run waits this long before the next one, which bounds the
# errors of an outage (see the end).
my $retry_pause = 0.5;
my $block_size = 100;
my $min_after = 500;    # values of each kind a new leader must serve
my $clients_per_kind = 2;

my ($bindir) = run_command([ 'pg_config', '--bindir' ]);
chomp $bindir;
my $user = getpwuid($<);
my $dir = PostgreSQL::Test::Utils::tempdir();
my $sockdir = PostgreSQL::Test::Utils::tempdir_short();
my $logdir = $PostgreSQL::Test::Utils::log_path;
my $http = HTTP::Tiny->new(timeout => 10);
my %proc;    # name => IPC::Run harness of each process the test started
my @stopped;    # pids of WAL senders the test stopped (SIGSTOP)

chomp(my $patroni_version = `patroni --version`);
chomp(my $etcd_version = (split /\n/, `etcd --version`)[0]);
note "$patroni_version; $etcd_version; PostgreSQL from $bindir";

# Kill everything this test started, also when it fails: the clients, the
# Patronis (kill -9, so that none acts on the others' end), the postmasters
# they started (detached from them, so not among the harnesses), and etcd.
sub teardown
{
	return unless %proc;
	kill 'CONT', @stopped;
	for my $name (grep { $_ ne 'etcd' } sort keys %proc)
	{
		eval { $proc{$name}->signal('KILL') };
	}
	for my $data (glob "$dir/*/data")
	{
		system("$bindir/pg_ctl", '-s', '-D', $data, '-m', 'immediate', 'stop')
		  if -e "$data/postmaster.pid";
	}
	eval { $proc{etcd}->signal('KILL') } if $proc{etcd};
	eval { $_->finish } for values %proc;
	%proc = ();
	return;
}
END
{
	local $?;    # keep the test's exit status
	teardown();
}
$SIG{INT} = $SIG{TERM} = sub { die "killed by SIG$_[0]\n" };

# Poll $check every 0.2 s until it returns true; return its value, or die
# after the default timeout saying what was awaited.
sub wait_for
{
	my ($what, $check) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my $v = $check->();
		return $v if $v;
		usleep(200_000);
	}
	die "timed out waiting for $what";
}

# Run $sql on the node listening on $port (through its Unix socket); its
# output, or undef on failure.
sub psql_at
{
	my ($port, $sql) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run(
		[
			'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d',
			"host=$sockdir port=$port user=$user dbname=postgres connect_timeout=5",
			'-c', $sql
		],
		'<', \undef, '>', \$out, '2>', \$err) or return undef;
	chomp $out;
	return $out;
}

# GET a JSON document from a Patroni REST API; undef unless 200.
sub rest_get
{
	my ($port, $path) = @_;
	my $r = $http->get("http://127.0.0.1:$port$path");
	return $r->{status} == 200 ? decode_json($r->{content}) : undef;
}

# Start a process whose stdout and stderr go to $logdir/130_patroni_$name.log
# (files, not pipes: a postmaster inherits a Patroni's and outlives it).
sub start_proc
{
	my ($name, @cmd) = @_;
	$proc{$name} = IPC::Run::start(\@cmd, '<', '/dev/null',
		'>>', "$logdir/130_patroni_$name.log", '2>&1');
	return;
}

######## etcd
my $etcd_port = PostgreSQL::Test::Cluster::get_free_port();
my $etcd_peer = PostgreSQL::Test::Cluster::get_free_port();
start_proc(
	'etcd', 'etcd',
	'--name' => 'etcd0',
	'--data-dir' => "$dir/etcd",
	'--listen-client-urls' => "http://127.0.0.1:$etcd_port",
	'--advertise-client-urls' => "http://127.0.0.1:$etcd_port",
	'--listen-peer-urls' => "http://127.0.0.1:$etcd_peer",
	'--initial-advertise-peer-urls' => "http://127.0.0.1:$etcd_peer",
	'--initial-cluster' => "etcd0=http://127.0.0.1:$etcd_peer",
	'--initial-cluster-state' => 'new');
wait_for(
	'etcd',
	sub {
		my $r = $http->get("http://127.0.0.1:$etcd_port/health");
		return $r->{status} == 200 && $r->{content} =~ /"health":\s*"true"/;
	});

######## three Patroni nodes
# Settings every member must share come from the DCS (bootstrap.dcs), where
# Patroni takes them from; uidgen's are each node's own.  A failover takes
# about ttl seconds: 20, the least Patroni 4 accepts, with a short loop_wait
# and retry_timeout (loop_wait + 2 * retry_timeout < ttl).  Replication is
# asynchronous (synchronous_mode: false).  fsync is off: the crash below is
# of processes, not of the machine, so nothing written is lost either way.
my @nodes;
for my $i (1 .. 3)
{
	my %n = (
		name => "node$i",
		worker_id => $i,
		port => PostgreSQL::Test::Cluster::get_free_port(),
		rest => PostgreSQL::Test::Cluster::get_free_port(),
		data => "$dir/node$i/data");
	$n{config} = "$dir/node$i.yml";
	mkdir "$dir/node$i" or die "could not create $dir/node$i: $!";
	chmod 0700, "$dir/node$i";
	append_to_file($n{config}, <<"YAML");
scope: uidgen130
name: $n{name}
restapi:
  listen: 127.0.0.1:$n{rest}
  connect_address: 127.0.0.1:$n{rest}
etcd3:
  hosts: 127.0.0.1:$etcd_port
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    maximum_lag_on_failover: 1073741824
    synchronous_mode: false
    postgresql:
      parameters:
        max_connections: 30
        fsync: 'off'
  initdb:
    - encoding: UTF8
    - locale: C
postgresql:
  listen: 127.0.0.1:$n{port}
  connect_address: 127.0.0.1:$n{port}
  data_dir: '$n{data}'
  bin_dir: '$bindir'
  pgpass: '$dir/node$i.pgpass'
  use_unix_socket: true
  use_pg_rewind: true
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    superuser:
      username: $user
    replication:
      username: $user
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
  parameters:
    shared_preload_libraries: uidgen
    uidgen.worker_id: $i
    unix_socket_directories: '$sockdir'
YAML
	push @nodes, \%n;
}
my %by_name = map { $_->{name} => $_ } @nodes;
my %by_port = map { $_->{port} => $_ } @nodes;
start_proc($_->{name}, 'patroni', $_->{config}) for @nodes;

# The name of the member Patroni reports as leader and that runs as a
# primary, asking the REST APIs of @among; undef if there is none.
sub leader
{
	my (@among) = @_;
	for my $n (@among)
	{
		my $c = rest_get($n->{rest}, '/cluster') or next;
		my ($l) = grep { $_->{role} eq 'leader' && $_->{state} eq 'running' }
		  @{ $c->{members} };
		return undef unless $l;
		my $p = $by_name{ $l->{name} }{port};
		return (psql_at($p, 'SELECT pg_is_in_recovery()') // '') eq 'f'
		  ? $l->{name}
		  : undef;
	}
	return undef;
}

# Wait until $leader streams to the members named @names.
sub wait_streaming
{
	my ($leader, @names) = @_;
	my $list = join ',', map { "'$_'" } @names;
	wait_for(
		"$leader to stream to @names",
		sub {
			(psql_at($by_name{$leader}{port},
					"SELECT count(*) FROM pg_stat_replication "
					  . "WHERE state = 'streaming' AND application_name IN ($list)")
				  // '') eq scalar(@names);
		});
	return;
}

my $leader1 = wait_for('a leader', sub { leader(@nodes) });
wait_streaming($leader1, grep { $_ ne $leader1 } keys %by_name);
note sprintf('cluster up after %.1f s, leader %s', time - $t_start, $leader1);
my $lport = $by_name{$leader1}{port};
defined psql_at($lport,
	"CREATE EXTENSION uidgen; SELECT seq_create('invoices', block_size => $block_size)")
  or die 'could not create the extension and the block sequence';

######## clients
# Each client runs psql again and again, through whichever node is the
# read-write one, and appends "start time|port|value..." for every row of a
# run that succeeded; a failed run writes "client error: start end" to its
# stderr (after psql's message) and pauses $retry_pause seconds.  They
# connect through the nodes' Unix sockets: thousands of TCP connections
# would leave as many loopback ports in TIME_WAIT, and a node restarted by
# its Patroni cannot listen on its port while a client socket holds it.
my $client_pl = "$dir/client.pl";
append_to_file($client_pl, <<'PERL');
use strict;
use warnings;
use IO::Handle;
use Time::HiRes qw(time sleep);
my ($conninfo, $sql, $out, $stop, $pause) = @ARGV;
open my $o, '>>', $out or die "could not open $out: $!";
$o->autoflush(1);
STDERR->autoflush(1);
until (-e $stop)
{
	my $start = time;
	open my $p, '-|', 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $conninfo, '-c', $sql
	  or die "could not run psql: $!";
	my @rows = <$p>;
	if (close $p)
	{
		print $o map { sprintf('%.3f|%s', $start, $_) } @rows;
		sleep 0.05;
	}
	else
	{
		printf STDERR "client error: %.3f %.3f\n", $start, time;
		sleep $pause;
	}
}
PERL
my $conninfo =
	'host=' . join(',', ($sockdir) x @nodes)
  . ' port=' . join(',', map { $_->{port} } @nodes)
  . " user=$user dbname=postgres target_session_attrs=read-write connect_timeout=2";
my %query = (
	snowflake => q{SELECT current_setting('port'), snowflake_next() FROM generate_series(1, 100)},
	uuid => q{SELECT current_setting('port'), uuidv7_next() FROM generate_series(1, 100)},
	block => "SELECT current_setting('port'), first_id, last_id FROM seq_reserve_block('invoices', $block_size)"
);
my $stop = "$dir/stop";
my @clients;
for my $kind (sort keys %query)
{
	for my $i (1 .. $clients_per_kind)
	{
		my $c = { kind => $kind, name => "client_${kind}_$i", out => "$dir/${kind}_$i.out" };
		$c->{err} = "$logdir/130_patroni_$c->{name}.err";
		$proc{ $c->{name} } = IPC::Run::start(
			[ $^X, $client_pl, $conninfo, $query{$kind}, $c->{out}, $stop, $retry_pause ],
			'<', '/dev/null', '>', '/dev/null', '2>', $c->{err});
		push @clients, $c;
	}
}

# The rows the clients of $kind got, as [ time, port, value, ... ].
sub rows_of
{
	my ($kind) = @_;
	my @rows;
	for my $c (grep { $_->{kind} eq $kind } @clients)
	{
		next unless -e $c->{out};
		push @rows, map { [ split /\|/ ] } split /\n/, slurp_file($c->{out});
	}
	return @rows;
}

# Wait until the clients of every kind got $min values (blocks count
# $block_size each) from the node on $port in runs started after $since;
# return the time the first of those runs was started.  After 60 s (a few
# hundred runs) give up and return undef: the checks at the end then say
# what was missing, and the clients' errors why.
sub wait_values
{
	my ($port, $since, $min) = @_;
	my $deadline = time + 60;
	while (1)
	{
		my ($enough, $first) = (1, undef);
		for my $kind (sort keys %query)
		{
			my @r = grep { $_->[0] > $since && $_->[1] == $port } rows_of($kind);
			$enough = 0 if ($kind eq 'block' ? $block_size * @r : @r) < $min;
			$first = min(grep { defined } $first, map { $_->[0] } @r);
		}
		return $first if $enough;
		if (time > $deadline)
		{
			note "gave up waiting for $min values of each kind from port $port";
			return undef;
		}
		usleep(200_000);
	}
}

# Seconds from $t0 to $t, or "never".
sub after
{
	my ($t, $t0) = @_;
	return defined $t ? sprintf('%.1f s', $t - $t0) : 'never';
}

wait_values($lport, 0, $min_after);

######## 1. failover: the leader's node crashes
# The pids of $n's postmaster and of its children.
sub node_pids
{
	my ($n) = @_;
	my ($pm) = split /\n/, slurp_file("$n->{data}/postmaster.pid");
	my @pids = ($pm);
	for my $stat (glob '/proc/[0-9]*/stat')
	{
		open my $fh, '<', $stat or next;
		my $line = <$fh> // '';
		push @pids, $1 if $line =~ /^(\d+) \(.*\) \S+ (\d+)/ && $2 == $pm;
	}
	return @pids;
}

# True once none of @pids runs (gone, or a zombie nobody reaps).
sub all_gone
{
	for my $pid (@_)
	{
		open my $fh, '<', "/proc/$pid/stat" or next;
		my $line = <$fh> // '';
		return 0 unless $line =~ /^\d+ \(.*\) Z /;
	}
	return 1;
}

# Asynchronous replication lags: the crash comes while the leader's WAL
# senders are stopped (SIGSTOP), after the clients received more IDs and
# blocks from the leader, whose WAL the replicas then never get.
my $crashed = $by_name{$leader1};
@stopped = split /\n/, psql_at($lport, 'SELECT pid FROM pg_stat_replication') // '';
is(scalar @stopped, 2, 'the leader has two WAL senders');
kill 'STOP', @stopped;
my $t_lag = time;
wait_values($lport, $t_lag, 3 * $block_size);
my @pids = node_pids($crashed);
my $t_kill = time;
$proc{$leader1}->signal('KILL');
kill 'KILL', @pids;
$proc{$leader1}->finish;
@stopped = ();
wait_for("the processes of $leader1 to exit", sub { all_gone(@pids) });
my @survivors = grep { $_->{name} ne $leader1 } @nodes;
my $leader2 = wait_for('a new leader', sub { leader(@survivors) });
my $failover_s = time - $t_kill;
my $first2 = wait_values($by_name{$leader2}{port}, $t_kill, $min_after);
note sprintf('failover from %s to %s: new leader after %.1f s, first values %s after the kill; '
	  . '%d blocks were reserved on %s after its WAL senders stopped',
	$leader1, $leader2, $failover_s, after($first2, $t_kill),
	scalar(grep { $_->[0] > $t_lag && $_->[1] == $lport } rows_of('block')), $leader1);

# The crashed node's Patroni again: it rejoins as a replica.
my $t_rejoin = time;
start_proc($leader1, 'patroni', $crashed->{config});
wait_streaming($leader2, grep { $_ ne $leader2 } keys %by_name);
my $rejoin_s = time - $t_rejoin;
note sprintf('%s streams again %.1f s after its Patroni was restarted', $leader1, $rejoin_s);

######## 2. switchover back to the rejoined node
# Patroni answers once the switchover is done (or failed).
my $t_switch = time;
my $r = HTTP::Tiny->new(timeout => 60)->post(
	"http://127.0.0.1:$by_name{$leader2}{rest}/switchover",
	{
		headers => { 'Content-Type' => 'application/json' },
		content => encode_json({ leader => $leader2, candidate => $leader1 })
	});
is($r->{status}, 200, "switchover to $leader1") or diag($r->{content});
wait_for("$leader1 to lead", sub { (leader(@nodes) // '') eq $leader1 });
my $switchover_s = time - $t_switch;
my $first3 = wait_values($crashed->{port}, $t_switch, $min_after);
note sprintf('switchover from %s to %s: new leader after %.1f s, first values %s after the request',
	$leader2, $leader1, $switchover_s, after($first3, $t_switch));

append_to_file($stop, '');
for my $c (@clients)
{
	my $h = delete $proc{ $c->{name} };
	eval { $h->finish(IPC::Run::timer(60)); 1 } or $h->kill_kill;
}

######## checks
my @ids = rows_of('snowflake');
my @uuids = rows_of('uuid');
my @blocks = sort { $a->[2] <=> $b->[2] } rows_of('block');

my (%seen, @repeats, @wrong_worker);
for my $row (@ids)
{
	my ($t, $port, $id) = @$row;
	push @repeats, $id if $seen{$id}++;
	push @wrong_worker, "$id from port $port"
	  if (($id >> 12) & 1023) != $by_port{$port}{worker_id};
}
is(scalar @repeats, 0, sprintf('no snowflake ID repeats (%d IDs)', scalar @ids))
  or diag("repeated: @repeats[0 .. min(9, $#repeats)]");
is(scalar @wrong_worker, 0, 'every snowflake ID carries the worker id of the node that served it')
  or diag("@wrong_worker[0 .. min(9, $#wrong_worker)]");

%seen = ();
@repeats = grep { $seen{ $_->[2] }++ } @uuids;
is(scalar @repeats, 0, sprintf('no UUID repeats (%d UUIDs)', scalar @uuids));

# Blocks sorted by first_id overlap when one starts at or below the highest
# last_id of those before it.
my ($reached, @overlaps);
for my $b (@blocks)
{
	my ($t, $port, $first, $last) = @$b;
	push @overlaps, sprintf('[%d, %d] from %s at +%.1f s overlaps a block up to %d from %s at +%.1f s',
		$first, $last, $by_port{$port}{name}, $t - $t_start,
		$reached->[3], $by_port{ $reached->[1] }{name}, $reached->[0] - $t_start)
	  if $reached && $first <= $reached->[3];
	$reached = $b if !$reached || $last > $reached->[3];
}
is(scalar @overlaps, 0, sprintf('no two reserved blocks overlap (%d blocks)', scalar @blocks))
  or diag(scalar(@overlaps) . " blocks overlap earlier ones, e.g.\n"
	  . join("\n", @overlaps[0 .. min(9, $#overlaps)]));
is(scalar(grep { $_->[3] - $_->[2] + 1 != $block_size } @blocks),
	0, "every block holds $block_size IDs");

# Each new leader served every kind.
for my $phase ([ 'failover', $leader2, $t_kill ], [ 'switchover', $leader1, $t_switch ])
{
	my ($what, $name, $since) = @$phase;
	my %n;
	for my $kind (sort keys %query)
	{
		my @r = grep { $_->[0] > $since && $_->[1] == $by_name{$name}{port} } rows_of($kind);
		$n{$kind} = $kind eq 'block' ? $block_size * @r : @r;
		cmp_ok($n{$kind}, '>=', $min_after, "after the $what, $name served $kind values");
	}
	note "after the $what, $name served: "
	  . join(', ', map { "$n{$_} $_" } sort keys %n);
}

# Errors.  Clients may fail during three disturbances, each from the test's
# action until it saw the outcome: the failover (kill to new primary), the
# crashed node's rejoin (libpq goes on to the next host when a server
# refuses a connection with an error, but not when it closes one
# unexpectedly, as a node being restarted by its Patroni may), and the
# switchover (request to new primary).  A failed run is followed by a pause
# of $retry_pause s, so a client fails at most (their total) / pause times,
# plus one run per disturbance that started before it and one that ended
# after it.  Every failed run must overlap one of them.
my %window = (
	failover => [ $t_kill, $t_kill + $failover_s ],
	rejoin => [ $t_rejoin, $t_rejoin + $rejoin_s ],
	switchover => [ $t_switch, $t_switch + $switchover_s ]);
my $bound = ceil(($failover_s + $rejoin_s + $switchover_s) / $retry_pause) + 2 * keys %window;
my $errors_total = 0;
for my $c (@clients)
{
	my $text = -e $c->{err} ? slurp_file($c->{err}) : '';
	my (%in, %why, @outside);
	my $n = 0;
	# Each failed run: psql's messages, then "client error: start end".
	while ($text =~ /\G(.*?)^client error: ([\d.]+) ([\d.]+)\n/msg)
	{
		my ($msg, $s, $e) = ($1, $2, $3);
		$n++;
		my @w = grep { $s <= $window{$_}[1] && $e >= $window{$_}[0] } sort keys %window;
		$in{ $w[0] // 'none' }++;
		push @outside, sprintf('%.1f s to %.1f s', $s - $t_start, $e - $t_start) unless @w;
		# Why, per host, leaving the continuation lines (hints) out.
		my %seen_why;
		my @reasons = grep { !$seen_why{$_}++ }
		  map { /failed: (.*)/ ? $1 : /^(?:psql: )?(?:error: )?(\S.*)/ ? $1 : () }
		  split /\n/, $msg;
		$why{ join(' / ', @reasons) }++;
	}
	$errors_total += $n;
	note "$c->{name}: $n failed runs ("
	  . join(', ', map { "$_ $in{$_}" } sort keys %in) . '): '
	  . join('; ', map { "$why{$_} x $_" } sort keys %why);
	cmp_ok($n, '<=', $bound, "$c->{name}: failed runs within the bound of the disturbances");
	is(scalar @outside, 0, "$c->{name}: every failed run overlaps a disturbance")
	  or diag("failed runs outside them (from the start of the test): @outside[0 .. min(9, $#outside)]");
}

note sprintf(
	'%d snowflake IDs, %d UUIDs, %d blocks (%d IDs); %d failed client runs (bound %d per client); '
	  . 'failover %.1f s, rejoin %.1f s, switchover %.1f s; %.1f s in all',
	scalar @ids, scalar @uuids, scalar @blocks, $block_size * @blocks,
	$errors_total, $bound, $failover_s, $rejoin_s, $switchover_s, time - $t_start);

done_testing();
