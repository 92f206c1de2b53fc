# Helpers shared by uidgen's TAP tests (test/t/0NN_*.pl).
#
# Nodes with uidgen preloaded, a server clock shifted with libfaketime, and
# psql clients running in the background whose output records every ID
# they were handed.
package UidgenTest;

use strict;
use warnings;
use feature 'state';

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes;
use POSIX ();

our @EXPORT = qw(
  uidgen_node uidgen_status faketime_available faketime_set start_faked
  start_clients stop_clients client_lines client_errors psql_error count_in_log
  max_snowflake max_uuid read_state_file kill9_and_wait uuid_ms snowflake_ms
  postmaster_pid keeper_pid build_shim wait_for_lines
  arm_crash_point disarm_crash_point wait_for_log wait_for_server_exit
  skewed_origin promoted_ids_above stop_keeper kill9_with_keeper
  seq_blocks range_overlap origin_burst check_hwm_above
  set_crash_point wait_crash_restart poll_through_crashes
  citus_available citus_node citus_cluster citus_activate seq_take count_repeats timed_psql
);

our $FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

# On a gcov build (scripts/test.sh with UIDGEN_COVERAGE=1 sets GCOV_PREFIX),
# stop the nodes still running at the end of a test file fast, not
# immediately as PostgreSQL::Test::Cluster's END does: a process that
# receives SIGQUIT leaves with _exit() and never writes its counts, so the
# keeper, the lease worker, the allocators and the backends of every node
# still up at the end would count as having run nothing.
if ($ENV{GCOV_PREFIX})
{
	no warnings 'redefine';
	my $teardown = \&PostgreSQL::Test::Cluster::teardown_node;
	*PostgreSQL::Test::Cluster::teardown_node = sub {
		my ($node, %params) = @_;
		$node->stop('fast', fail_ok => 1);
		return $teardown->($node, %params);
	};
}

# A new node with uidgen preloaded and created in "postgres".  %conf holds
# extra settings (name => value, written as name = 'value'); uidgen.worker_id
# is 0 unless given, or unless a registry is (pass 'uidgen.worker_id' =>
# undef for neither).  Pass start => 0 to leave it stopped (and the extension
# not created), and init => { ... } to pass options to init (e.g.
# allows_streaming => 1).
sub uidgen_node
{
	my ($name, %conf) = @_;
	my $start = exists $conf{start} ? delete $conf{start} : 1;
	my $init = delete $conf{init} // {};
	$conf{'uidgen.worker_id'} = 0
	  unless exists $conf{'uidgen.worker_id'} || exists $conf{'uidgen.worker_id_registry'};
	delete $conf{'uidgen.worker_id'} unless defined $conf{'uidgen.worker_id'};
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%$init);
	my $text = "shared_preload_libraries = 'uidgen'\n";
	$text .= "$_ = '$conf{$_}'\n" for sort keys %conf;
	$node->append_conf('postgresql.conf', $text);
	if ($start)
	{
		$node->start;
		$node->safe_psql('postgres', 'CREATE EXTENSION uidgen');
	}
	return $node;
}

# uidgen_status() as a hash of column => value (NULL as '';
# lease_deadline in seconds since the Unix epoch).
sub uidgen_status
{
	my ($node) = @_;
	my @cols = qw(state worker_id timestamp_bits worker_bits sequence_bits
	  epoch last_id clock_ahead ids_issued uuids_issued
	  clock_backward_episodes waits high_water_mark system_identifier
	  timeline origin_worker_id copy_reason origin_high_water_mark
	  block_sequences_fenced lease_holder lease_deadline worker_id_source);
	my $row = $node->safe_psql('postgres',
		"SELECT state, worker_id, timestamp_bits, worker_bits, sequence_bits, "
		  . "epoch, last_id, extract(epoch FROM clock_ahead), ids_issued, "
		  . "uuids_issued, clock_backward_episodes, waits, high_water_mark, "
		  . "system_identifier, timeline, origin_worker_id, copy_reason, "
		  . "origin_high_water_mark, block_sequences_fenced, lease_holder, "
		  . "extract(epoch FROM lease_deadline), worker_id_source "
		  . "FROM uidgen_status()");
	my @vals = split /\|/, $row, -1;
	my %h;
	@h{@cols} = @vals;
	return \%h;
}

sub faketime_available
{
	return -f $FAKETIME_LIB;
}

# Write a libfaketime offset ("+0", "-1h", "-600s") into $file.
sub faketime_set
{
	my ($file, $offset) = @_;
	open my $fh, '>', "$file.tmp" or die "could not write $file.tmp: $!";
	print $fh "$offset\n";
	close $fh;
	rename "$file.tmp", $file or die "could not rename $file.tmp: $!";
	return;
}

# Start $node with its clock shifted by the offset in $file, re-read on
# every clock read (FAKETIME_NO_CACHE), so that rewriting the file moves
# the server's wall clock at run time.  Monotonic clocks stay real.  Only
# the server gets libfaketime: the variables are removed again at once.
sub start_faked
{
	my ($node, $file, %params) = @_;
	local $ENV{LD_PRELOAD} = $FAKETIME_LIB;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $file;
	local $ENV{FAKETIME_NO_CACHE} = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	return $node->start(%params);
}

# Start background psql clients, one per element of @scripts (SQL text),
# each printing its results unaligned into a file (not a pipe, which would
# fill up and block the client).  Errors (a lost connection) are expected:
# ON_ERROR_STOP is off.
sub start_clients
{
	my ($node, @scripts) = @_;
	my @clients;
	state $n = 0;
	for my $sql (@scripts)
	{
		my $base = $node->basedir . "/client_" . $n++;
		append_to_file("$base.sql", $sql);
		my $c = { out => "$base.out", err => "$base.err" };
		$c->{h} = IPC::Run::start(
			[ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-f', "$base.sql" ],
			'<', \undef, '>', $c->{out}, '2>', $c->{err});
		push @clients, $c;
	}
	return \@clients;
}

# Wait for the clients to end (or kill them after $timeout seconds).
sub stop_clients
{
	my ($clients, $timeout) = @_;
	$timeout //= $PostgreSQL::Test::Utils::timeout_default;
	for my $c (@$clients)
	{
		my $t = IPC::Run::timer($timeout);
		eval { $c->{h}->finish($t); };
		$c->{h}->kill_kill if $@;
	}
	return;
}

# Wait until each of @files holds at least $min lines (or the default
# timeout passes); true if they all do.
sub wait_for_lines
{
	my ($min, @files) = @_;
	my $enough = sub {
		for my $f (@files)
		{
			my $lines = () = slurp_file($f) =~ /\n/g;
			return 0 if $lines < $min;
		}
		return 1;
	};
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
	Time::HiRes::usleep(100_000) while !$enough->() && Time::HiRes::time() < $deadline;
	return $enough->();
}

# Every output line of every client.
sub client_lines
{
	my ($clients) = @_;
	return map { split /\n/, slurp_file($_->{out}) } @$clients;
}

# Everything the clients wrote to stderr.
sub client_errors
{
	my ($clients) = @_;
	return join('', map { slurp_file($_->{err}) } @$clients);
}

# Run $sql expecting an error, with verbose messages (SQLSTATE shown);
# return stderr, or (stderr, exit code, stdout) in list context.
sub psql_error
{
	my ($node, $sql, %params) = @_;
	my ($out, $err) = ('', '');
	my $ret = $node->psql('postgres', $sql,
		stdout => \$out, stderr => \$err,
		extra_params => [ '-v', 'VERBOSITY=verbose' ], %params);
	return wantarray ? ($err, $ret, $out) : $err;
}

# How many times $re matches in the node's log from byte $offset on.
sub count_in_log
{
	my ($node, $re, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset // 0);
	my @m = $log =~ /$re/g;
	return scalar @m;
}

# The largest of a list of snowflake IDs (decimal strings, < 2^63).
sub max_snowflake
{
	my $max;
	for (@_)
	{
		next unless defined $_ && /^\d+$/;
		$max = $_ if !defined $max || $_ > $max;
	}
	return $max;
}

# The largest of a list of UUIDs (same textual format, so lexicographic).
sub max_uuid
{
	my $max;
	for (@_)
	{
		next unless defined $_ && /^[0-9a-f]{8}-[0-9a-f]{4}-/;
		$max = $_ if !defined $max || $_ gt $max;
	}
	return $max;
}

# Compile the LD_PRELOAD shim test/$name.c into a temporary directory and
# return the path of the library; skip the whole test if there is no C
# compiler.
sub build_shim
{
	my ($name) = @_;
	my $cc = $ENV{CC} // 'cc';
	my $lib = PostgreSQL::Test::Utils::tempdir() . "/$name.so";
	plan skip_all => "no C compiler ($cc) to build test/$name.c"
	  if system("$cc --version >/dev/null 2>&1") != 0;
	system("$cc -shared -fPIC -o '$lib' test/$name.c -ldl") == 0
	  or die "could not compile test/$name.c with $cc";
	return $lib;
}

# Arm crash point $point with $action on $node (arm_crash_point()), or
# disarm it ($point ''), and wait until new sessions see it.  A reload, not
# a connection, carries it, so it also reaches a server going through crash
# restarts (restart_after_crash on).
sub set_crash_point
{
	my ($node, $point, $action) = @_;
	if ($point eq '')
	{
		disarm_crash_point($node);
	}
	else
	{
		arm_crash_point($node, $point, $action);
	}
	poll_through_crashes($node, "SELECT current_setting('uidgen.crash_point') = '$point'")
	  or die "crash point \"$point\" did not reach new sessions";
	return;
}

# Like poll_query_until (for 't'), but a crash restart under way, which
# may break the pipe to psql, is no failure: it polls on.
sub poll_through_crashes
{
	my ($node, $sql) = @_;
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
	local $SIG{PIPE} = 'IGNORE';
	while (Time::HiRes::time() < $deadline)
	{
		my $out = '';
		eval {
			$node->psql('postgres', $sql, stdout => \$out, on_error_die => 0);
		};
		return 1 if $out eq 't';
		Time::HiRes::usleep(100_000);
	}
	return 0;
}

# Wait until a process of $node reached crash point $point (logged after
# byte $offset), the server went through a crash restart and accepts
# connections again.
sub wait_crash_restart
{
	my ($node, $point, $offset) = @_;
	$node->wait_for_log(qr/uidgen crash point "\Q$point\E" reached/, $offset);
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $offset);
	poll_through_crashes($node, 'SELECT true')
	  or die 'the server did not come back after crash point ' . $point;
	return;
}

# The pid of $node's postmaster.
sub postmaster_pid
{
	my ($node) = @_;
	my ($pid) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	return $pid;
}

# The pid of $node's "uidgen keeper" (a child of the postmaster, found by
# its process title: it is not in pg_stat_activity on every version), or
# undef if it is not running.
sub keeper_pid
{
	my ($node) = @_;
	my $pm = postmaster_pid($node);
	for my $dir (glob '/proc/[0-9]*')
	{
		my ($stat, $cmd);
		next unless open my $fh, '<', "$dir/stat";
		$stat = <$fh>;
		close $fh;
		next unless defined $stat && $stat =~ /^\d+ \(.*\) \S+ (\d+)/ && $1 == $pm;
		next unless open $fh, '<', "$dir/cmdline";
		$cmd = <$fh> // '';
		close $fh;
		return ($dir =~ m{(\d+)$})[0] if $cmd =~ /uidgen keeper/;
	}
	return undef;
}

# kill -9 the postmaster and wait until it is gone, so that the node can be
# started again at once.
sub kill9_and_wait
{
	my ($node) = @_;
	my $pid = postmaster_pid($node);
	$node->kill9;
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		return if !kill(0, $pid);
		Time::HiRes::usleep(100_000);
	}
	die "postmaster $pid did not exit";
}

# The state file of a stopped node, decoded (see src/clock/statefile.c):
# hwm and saved_at in ticks of 2^-20 ms and in whole ms, the settings,
# whether the post-recovery clock jump is still to be made, and what the
# file says of copies (src/replicas/copies.c), the worker id adopted from
# Citus and the one refused for a conflict (-1: none; version 4).
sub read_state_file
{
	my ($node) = @_;
	my $raw = slurp_file($node->data_dir . '/uidgen.state');
	die "unexpected uidgen.state size " . length($raw) unless length($raw) == 104;
	my ($magic, $version, $hwm, $saved_at, $worker_id, $worker_bits,
		$sequence_bits, $epoch_ms, $rebase_pending, $upgrade_unknown,
		$copy_reason, $blocks_fenced, $skip_nonce, $origin_worker,
		$adopted_worker, $origin_mark, $sysid, $dir_ino, $timeline,
		$refused_worker) =
	  unpack('L L Q Q l l l x4 q C C C C L l L Q Q Q L x4 L', $raw);
	die sprintf("bad magic %x", $magic) unless $magic == 0x55494447;
	return {
		version => $version,
		hwm => $hwm,
		hwm_ms => $hwm >> 20,
		saved_at => $saved_at,
		saved_at_ms => $saved_at >> 20,
		worker_id => $worker_id,
		worker_bits => $worker_bits,
		sequence_bits => $sequence_bits,
		epoch_ms => $epoch_ms,
		rebase_pending => $rebase_pending,
		copy_reason => $copy_reason,
		blocks_fenced => $blocks_fenced,
		skip_nonce => $skip_nonce,
		origin_worker => $origin_worker,
		origin_mark => $origin_mark,
		system_identifier => $sysid,
		dir_ino => $dir_ino,
		timeline => $timeline,
		adopted_worker => $adopted_worker - 1,
		refused_worker => $refused_worker - 1,
	};
}

# Unix milliseconds of a snowflake ID under a layout (default: 2024 epoch,
# 10 worker bits, 12 sequence bits).
sub snowflake_ms
{
	my ($id, %l) = @_;
	my $epoch_ms = $l{epoch_ms} // 1704067200000;
	my $shift = ($l{worker_bits} // 10) + ($l{sequence_bits} // 12);
	return $epoch_ms + ($id >> $shift);
}

# Unix milliseconds of a UUIDv7 (its first 48 bits).
sub uuid_ms
{
	my ($u) = @_;
	(my $hex = $u) =~ s/-//g;
	no warnings 'portable';
	return hex(substr($hex, 0, 12));
}

# Arm crash point $point (test builds only, src/core/crashpoint.c) with $action
# (kill, wait or error; default kill) in $node's postgresql.conf, for every
# process (the keeper, the startup process, new sessions): reloaded if the
# node runs.
sub arm_crash_point
{
	my ($node, $point, $action) = @_;
	$action //= 'kill';
	$node->append_conf('postgresql.conf',
		"uidgen.crash_point = '$point'\nuidgen.crash_action = '$action'\n");
	$node->reload if defined $node->{_pid};
	return;
}

# Disarm the crash point in $node's postgresql.conf.
sub disarm_crash_point
{
	my ($node) = @_;
	$node->append_conf('postgresql.conf', "uidgen.crash_point = ''\n");
	$node->reload if defined $node->{_pid};
	return;
}

# Wait until $re matches in $node's log from byte $offset on (or the
# default timeout passes); true if it did.
sub wait_for_log
{
	my ($node, $re, $offset) = @_;
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
	while (Time::HiRes::time() < $deadline)
	{
		return 1 if count_in_log($node, $re, $offset) > 0;
		Time::HiRes::usleep(100_000);
	}
	return 0;
}

# Wait until $node's postmaster is gone by itself (restart_after_crash is
# off in test clusters: a process that dies at a crash point takes the
# server down), so that it can be started again; true if it went.
sub wait_for_server_exit
{
	my ($node) = @_;
	my $pid = $node->{_pid} // postmaster_pid($node);
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
	Time::HiRes::usleep(100_000)
	  while kill(0, $pid) && Time::HiRes::time() < $deadline;
	return 0 if kill(0, $pid);
	$node->_update_pid(-1);
	return 1;
}

# Stop (SIGSTOP) $node's keeper, so that only the process under test can
# settle what the keeper would otherwise settle within a second; returns
# its pid (SIGCONT it, or kill9_with_keeper()).
sub stop_keeper
{
	my ($node) = @_;
	my $pid = keeper_pid($node) or die 'no uidgen keeper';
	kill 'STOP', $pid or die "could not stop keeper $pid";
	return $pid;
}

# kill -9 $node's postmaster, then its stopped keeper $keeper (which would
# otherwise keep the shared memory attached), and wait until both are
# gone.  The postmaster first: nothing may save the state file on exit.
sub kill9_with_keeper
{
	my ($node, $keeper) = @_;
	my $pm = postmaster_pid($node);
	$node->kill9;
	kill 'KILL', $keeper;
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		return if !kill(0, $pm) && !kill(0, $keeper);
		Time::HiRes::usleep(100_000);
	}
	die "postmaster $pm or keeper $keeper did not exit";
}

# An origin and copies of it: a primary (uidgen.worker_id 1, 16 IDs per
# ms, 1 s drift bound) whose clock runs $ahead (libfaketime, e.g. '+30s')
# ahead, and streaming standbys made from one base backup of it, one per
# element of @$standbys: { name => ..., worker_id => N (default: the
# primary's), conf => extra postgresql.conf text, start => 0 to leave it
# stopped }.  The standbys' state files are removed (only the marks they
# replay may lift them above the primary), and their clocks are real.
# Returns the primary and the standbys.
sub skewed_origin
{
	my ($name, $ahead, $standbys) = @_;
	my $primary = uidgen_node("${name}_primary", init => { allows_streaming => 1 },
		start => 0, 'uidgen.worker_id' => 1, 'uidgen.sequence_bits' => 4,
		'uidgen.max_clock_drift' => '1s');
	my $fake = $primary->basedir . '/faketime';
	faketime_set($fake, $ahead);
	start_faked($primary, $fake);
	$primary->safe_psql('postgres', 'CREATE EXTENSION uidgen');
	$primary->backup('bk');
	my @nodes;
	for my $sb (@$standbys)
	{
		my $node = PostgreSQL::Test::Cluster->new($sb->{name});
		$node->init_from_backup($primary, 'bk', has_streaming => 1);
		my $state = $node->data_dir . '/uidgen.state';
		!-e $state or unlink($state) or die "could not remove $state: $!";
		$node->append_conf('postgresql.conf', "uidgen.worker_id = $sb->{worker_id}\n")
		  if defined $sb->{worker_id};
		$node->append_conf('postgresql.conf', $sb->{conf}) if defined $sb->{conf};
		$node->start unless defined $sb->{start} && !$sb->{start};
		push @nodes, $node;
	}
	return ($primary, @nodes);
}

# $node's high-water mark, before it hands out anything (the clock starts
# above it after a restart), is above the origin's last ID: checked at
# once, whereas IDs above the origin's may wait for the wall clock to come
# within the drift bound of the mark, and by then a server that wrongly
# started at its wall clock would be above them too.  So the check also
# asserts that $node's clock is still below the origin's last ID, without
# which it could not fail (a test calls it for every node before any of
# them hands out IDs, which waits out the origin's lead).
sub check_hwm_above
{
	my ($node, $what, $old) = @_;
	my ($above, $ahead, $lead) = split /\|/, $node->safe_psql('postgres', qq{
		SELECT high_water_mark > snowflake_timestamp($old->{max_id}),
		  extract(epoch FROM high_water_mark - snowflake_timestamp($old->{max_id})),
		  extract(epoch FROM snowflake_timestamp($old->{max_id}) - clock_timestamp())
		FROM uidgen_status()});
	note(sprintf('%s: high-water mark %.3f s from the origin\'s last ID', $what, $ahead));
	cmp_ok($lead, '>', 0, sprintf(
		'%s: precondition: the clock is still %.1f s below the origin\'s last ID', $what, $lead));
	is($above, 't', "$what: the high-water mark is above the origin's last ID");
	return;
}

# $n snowflake IDs and UUIDs from $node (an origin), in one statement,
# recorded for promoted_ids_above(); added to $old if given.
sub origin_burst
{
	my ($node, $n, $old) = @_;
	$old //= { ids => {}, uuids => {} };
	for (split /\n/, $node->safe_psql('postgres',
		"SELECT snowflake_next() || '|' || uuidv7_next() FROM generate_series(1, $n)"))
	{
		my ($id, $u) = split /\|/;
		$old->{ids}{$id} = 1;
		$old->{uuids}{$u} = 1;
		$old->{max_id} = $id if !defined $old->{max_id} || $id > $old->{max_id};
		$old->{max_u} = $u if !defined $old->{max_u} || $u gt $old->{max_u};
	}
	return $old;
}

# Check $n snowflake IDs and UUIDs of $node against what an origin issued
# ($old: { ids => { id => 1 }, uuids => { uuid => 1 }, max_id, max_u }):
# none repeats one, each is above the origin's last, with worker id
# $worker (layout of skewed_origin()).  Returns the first ID.
sub promoted_ids_above
{
	my ($node, $what, $old, $worker, $n) = @_;
	$n //= 2000;
	my @new = split /\n/, $node->safe_psql('postgres',
		"SELECT snowflake_next() || '|' || uuidv7_next() FROM generate_series(1, $n)");
	is(scalar @new, $n, "$what: $n IDs");
	my ($rep, $urep, $below, $ubelow, $other) = (0, 0, 0, 0, 0);
	for (@new)
	{
		my ($id, $u) = split /\|/;
		$rep++ if $old->{ids}{$id};
		$urep++ if $old->{uuids}{$u};
		$below++ if $id <= $old->{max_id};
		$ubelow++ if $u le $old->{max_u};
		$other++ if (($id >> 4) & 1023) != $worker;
	}
	my ($first) = split /\|/, $new[0];
	note(sprintf('%s: first ID %.3f s %s the origin\'s last; %d below, %d repeats',
		$what, abs(snowflake_ms($first, sequence_bits => 4) - snowflake_ms($old->{max_id}, sequence_bits => 4)) / 1000,
		$first > $old->{max_id} ? 'above' : 'BELOW', $below, $rep));
	is($rep, 0, "$what: no snowflake ID repeats one of the origin's");
	is($urep, 0, "$what: no UUID repeats one of the origin's");
	is($below, 0, "$what: every snowflake ID is above the origin's last");
	is($ubelow, 0, "$what: every UUID is above the origin's last");
	is($other, 0, "$what: every snowflake ID has worker id $worker");
	return $first;
}

# $n blocks of block sequence $seq from $node's database $db, as
# [first, last] pairs.
sub seq_blocks
{
	my ($node, $db, $seq, $n) = @_;
	return [ map { [ split /\|/ ] } split /\n/, $node->safe_psql($db, qq{
		SELECT (b).first_id || '|' || (b).last_id FROM (
			SELECT seq_reserve_block('$seq') AS b FROM generate_series(1, $n)
			OFFSET 0) AS s}) ];
}

# How many values of the ranges ([first, last]) in @$new lie in ranges of
# @$old (each list disjoint in itself).
sub range_overlap
{
	my ($old, $new) = @_;
	my @all = sort { $a->[0] <=> $b->[0] } @$old, @$new;
	my ($ids, $reach) = (0, undef);
	for my $r (@all)
	{
		if (defined $reach && $r->[0] <= $reach)
		{
			my $end = $r->[1] < $reach ? $r->[1] : $reach;
			$ids += $end - $r->[0] + 1;
		}
		$reach = $r->[1] if !defined $reach || $r->[1] > $reach;
	}
	return $ids;
}

# Is Citus installed for the PostgreSQL under test (scripts/citus.sh)?
# Returns why not, for skip_all, or undef.
sub citus_available
{
	my $libdir = `pg_config --pkglibdir`;
	chomp $libdir;
	return -f "$libdir/citus.so" ? undef
	  : "Citus is not installed in $libdir (scripts/citus.sh builds it)";
}

# A started node with Citus and uidgen preloaded, no uidgen.worker_id, and
# the citus extension; %conf as for uidgen_node.
sub citus_node
{
	my ($name, %conf) = @_;
	my $node = uidgen_node($name, start => 0, 'uidgen.worker_id' => undef,
		shared_preload_libraries => 'citus,uidgen',
		'citus.node_conninfo' => 'sslmode=disable',
		'citus.shard_count' => 4,
		max_prepared_transactions => 20,
		max_connections => 80,
		%conf);
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	return $node;
}

# citus_activate_node() of $host:$port on $coord, again while Citus says
# the node's metadata is still out of sync (its maintenance daemon syncs
# it in the background: seen on a loaded machine), up to the default
# timeout.  A refused call changes nothing.
sub citus_activate
{
	my ($coord, $host, $port) = @_;
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
	for (;;)
	{
		my ($rc, $out, $err) =
		  $coord->psql('postgres', "SELECT citus_activate_node('$host', $port)");
		return if $rc == 0;
		die "citus_activate_node('$host', $port): $err"
		  unless $err =~ /out of sync/ && Time::HiRes::time() < $deadline;
		Time::HiRes::usleep(200_000);
	}
}

# $coord made the coordinator of @workers, and uidgen created on all.
sub citus_cluster
{
	my ($coord, @workers) = @_;
	$coord->safe_psql('postgres',
		"SELECT citus_set_coordinator_host('" . $coord->host . "', " . $coord->port . ')');
	$coord->safe_psql('postgres',
		"SELECT citus_add_node('" . $_->host . "', " . $_->port . ')') for @workers;
	$coord->safe_psql('postgres', 'CREATE EXTENSION uidgen');
	return;
}

# Values of block sequence $name from $node, $n of them, one statement.
sub seq_take
{
	my ($node, $name, $n) = @_;
	return split /\n/, $node->safe_psql('postgres',
		"SELECT seq_next('$name') FROM generate_series(1, $n)");
}

# How many values occur more than once in @_.
sub count_repeats
{
	my %seen;
	$seen{$_}++ for @_;
	return scalar grep { $seen{$_} > 1 } keys %seen;
}

# Run $sql on $node's database postgres; the seconds it took.
sub timed_psql
{
	my ($node, $sql) = @_;
	my $t = Time::HiRes::time();
	$node->safe_psql('postgres', $sql);
	return Time::HiRes::time() - $t;
}

# Run $sql on $node's database postgres; the seconds its statements took,
# as psql's \timing measures them: without the start of psql and of its
# session, which on a loaded machine can take a second by themselves.  For
# checks that something does not wait (timed_psql() for those that it does).
sub statement_seconds
{
	my ($node, $sql) = @_;
	my $out = $node->safe_psql('postgres', "\\timing on\n$sql");
	my $s = 0;
	$s += $1 / 1000 while $out =~ /^Time: ([\d.]+) ms/mg;
	return $s;
}
push @EXPORT, 'statement_seconds';

# CRC-32C (Castagnoli, reflected), as src/port/pg_crc32c computes it (not
# exported: call it as UidgenTest::crc32c).
sub crc32c
{
	my ($data) = @_;
	my $crc = 0xFFFFFFFF;
	for my $byte (unpack 'C*', $data)
	{
		$crc ^= $byte;
		$crc = ($crc >> 1) ^ (($crc & 1) ? 0x82F63B78 : 0) for 1 .. 8;
	}
	return $crc ^ 0xFFFFFFFF;
}

# The key (YYYYMMDD, UTC) of the day of Unix time $t.
sub day_key { return POSIX::strftime('%Y%m%d', gmtime($_[0])); }

# A POSIX time zone ("XXX+hh:mm:ss") whose midnight falls at Unix time $m
# (whole seconds), and the keys of the days before and after that midnight:
# a period of a sequence in that zone ends when a test wants it to, for
# every process of the server (libfaketime does not reach the allocator on
# PostgreSQL 15).
sub zone_ending_at
{
	my ($m) = @_;
	my $s = $m % 86400;    # local = UTC - $s, |$s| <= 12 h
	$s -= 86400 if $s > 43200;
	my $a = abs($s);
	return (sprintf('XXX%s%02d:%02d:%02d', $s < 0 ? '-' : '+', int($a / 3600), int($a / 60) % 60, $a % 60),
		day_key($m - $s - 1), day_key($m - $s));
}

# Sleep until Unix time $t.
sub sleep_until
{
	my ($t) = @_;
	my $d = $t - Time::HiRes::time();
	Time::HiRes::usleep(int($d * 1e6)) if $d > 0;
	return;
}

# Wait until $check returns true (or the default timeout passes); true if
# it did.
sub wait_until
{
	my ($check) = @_;
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
	while (Time::HiRes::time() < $deadline)
	{
		return 1 if $check->();
		Time::HiRes::usleep(100_000);
	}
	return 0;
}
push @EXPORT, 'wait_until', 'day_key', 'zone_ending_at', 'sleep_until';

1;
