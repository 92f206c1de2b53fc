# Guarantee: every mark written to uidgen.state is durable before it is
# relied on, and a mark that cannot be made durable is never relied on.
#
# 1. Write order.  Each write of the state file, by a backend, by the
#    keeper and by the postmaster at a clean stop, goes: write the whole
#    record to uidgen.state.tmp, fsync that same descriptor (an fsync on
#    the descriptor that wrote reports its write-back errors), rename it
#    over uidgen.state, fsync the data directory (which makes the rename
#    itself durable).
# 2. Failed writes are not ignored.  While writing the temporary file fails
#    with ENOSPC, or fsyncing it fails with EIO, IDs within the mark already
#    on disk are still handed out, but a call that needs a new mark fails
#    (SQLSTATE 53100 or 58030, as errcode_for_file_access() maps errno),
#    every later one too, and no ID beyond the mark on disk is ever
#    returned; the failure is in the server log; once writing works again
#    generation resumes above every ID issued before.
#
# An LD_PRELOAD shim (test/fsync_shim.c, compiled here) logs the calls on
# uidgen.state, uidgen.state.tmp and the data directory, and fails them on
# request.  fsync must be on: with fsync = off pg_fsync() does nothing.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test';
use UidgenTest;

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $shim = build_shim('fsync_shim');

my $shim_log = "$tmp/shim.log";
my $trigger = "$tmp/fail";
my $node = uidgen_node('durable', fsync => 'on', start => 0);

# Start the node with the shim; only the server gets it.
sub start_shimmed
{
	local $ENV{LD_PRELOAD} = $shim;
	local $ENV{UIDGEN_SHIM_LOG} = $shim_log;
	local $ENV{UIDGEN_SHIM_FAIL} = $trigger;
	local $ENV{UIDGEN_SHIM_DIR} = $node->data_dir;
	$node->start;
	return;
}

# Shim log lines as [pid, op, args...].
sub shim_events
{
	return [] unless -e $shim_log;
	return [ map { [ split / / ] } split /\n/, slurp_file($shim_log) ];
}

######## 1. write order
start_shimmed();
$node->safe_psql('postgres', 'CREATE EXTENSION uidgen');
my $keeper = keeper_pid($node);
ok(defined $keeper, 'found the keeper process');

# IDs over more than 2 s of clock: the first call writes the mark itself,
# the keeper moves it every time the clock passes the middle of the window.
# The keeper looks once a second, and on a loaded machine later: go on
# until a backend and the keeper have both renamed the file into place.
my $postmaster = postmaster_pid($node);
sub backend_and_keeper_wrote
{
	my %who;
	for (@{ shim_events() })
	{
		next unless $_->[1] eq 'rename' && ($_->[2] // '') eq 'tmp' && ($_->[3] // '') eq 'state';
		$who{ $_->[0] == $keeper ? 'keeper' : $_->[0] == $postmaster ? 'postmaster' : 'backend' } = 1;
	}
	return $who{backend} && $who{keeper};
}
my $t0 = time;
my $deadline = $t0 + $PostgreSQL::Test::Utils::timeout_default;
my @ids;
while (time < $t0 + 2.6 || (!backend_and_keeper_wrote() && time < $deadline))
{
	push @ids, split /\n/,
	  $node->safe_psql('postgres', 'SELECT snowflake_next()');
	usleep(50_000);    # (one call per 50 ms: the clock moves between calls)
}
my $max_id = max_snowflake(@ids);
$node->stop;    # the postmaster saves the exact last tick

my $size = -s $node->data_dir . '/uidgen.state';
my %by_pid;
push @{ $by_pid{ $_->[0] } }, $_ for @{ shim_events() };
my ($writes, %writers) = (0);
for my $pid (sort keys %by_pid)
{
	my @ev = @{ $by_pid{$pid} };
	for my $i (grep { $ev[$_][1] eq 'rename' } 0 .. $#ev)
	{
		my $r = $ev[$i];
		next unless $r->[2] eq 'tmp' && $r->[3] eq 'state';
		$writes++;
		my $role = $pid == $postmaster ? 'postmaster'
		  : $pid == $keeper ? 'keeper' : 'backend';
		$writers{$role}++;
		my $what = "write $writes (pid $pid, $role)";
		my @problems;
		push @problems, "rename failed" unless $r->[4] eq '0';

		# the last write of the temporary file before the rename
		my ($w) = grep { $ev[$_][1] eq 'write' && $ev[$_][2] eq 'tmp' }
		  reverse 0 .. $i - 1;
		if (!defined $w)
		{
			push @problems, 'no write of uidgen.state.tmp before the rename';
		}
		else
		{
			my $fd = $ev[$w][3];
			push @problems, "short write ($ev[$w][5] of $ev[$w][4], file has $size)"
			  unless $ev[$w][5] eq $ev[$w][4] && $ev[$w][4] == $size;
			# then fsync of that descriptor, before it is closed
			my $synced;
			for my $j ($w + 1 .. $i - 1)
			{
				my $e = $ev[$j];
				last if $e->[1] eq 'close' && $e->[3] eq $fd;
				$synced = 1
				  if $e->[1] =~ /^f(data)?sync$/ && $e->[2] eq 'tmp'
				  && $e->[3] eq $fd && $e->[4] eq '0';
			}
			push @problems, "the written descriptor $fd was not fsynced before the rename"
			  unless $synced;
		}

		# after the rename, the data directory is fsynced before the next
		# write begins
		my $dir_synced;
		for my $j ($i + 1 .. $#ev)
		{
			my $e = $ev[$j];
			last if $e->[2] eq 'tmp' || $e->[1] eq 'rename';
			$dir_synced = 1
			  if $e->[1] eq 'fsync' && $e->[2] eq 'dir' && $e->[4] eq '0';
		}
		push @problems, 'the data directory was not fsynced after the rename'
		  unless $dir_synced;
		ok(!@problems, "$what: write, fsync(tmp), rename, fsync(data directory)")
		  or diag(join("\n", @problems, 'calls of this process around it:',
			map { join(' ', @$_) } @ev[ ($i > 20 ? $i - 20 : 0) .. ($i + 12 < $#ev ? $i + 12 : $#ev) ]));
	}
}
cmp_ok($writes, '>=', 3, "the state file was written several times ($writes)");
ok($writers{backend} && $writers{keeper} && $writers{postmaster},
	'a backend, the keeper and the postmaster each wrote it')
  or diag(explain \%writers);
cmp_ok(read_state_file($node)->{hwm_ms}, '>=', snowflake_ms($max_id),
	'the mark saved at the stop covers the last ID');

######## 2. failed writes of the state file are not ignored
# Each case: the system call and errno to inject, the SQLSTATE it becomes,
# the generator called, and strerror's text.
my @cases = (
	[ 'write', 'ENOSPC', '53100', 'snowflake_next()', 'No space left on device' ],
	[ 'fsync', 'EIO', '58030', 'uuidv7_next()', 'Input/output error' ]);
start_shimmed();
$node->safe_psql('postgres', q{
	CREATE TABLE got (n int, ok bool, val text, state text, msg text)});

# Turn the failure on or off.
sub set_trigger
{
	my ($text) = @_;
	if (!defined $text)
	{
		unlink $trigger;
		return;
	}
	open my $fh, '>', "$trigger.tmp" or die "could not write $trigger.tmp: $!";
	print $fh "$text\n";
	close $fh;
	rename "$trigger.tmp", $trigger or die "could not rename $trigger.tmp: $!";
	return;
}

for my $case (@cases)
{
	my ($call, $errno, $sqlstate, $fn, $strerror) = @$case;
	my $what = "$call $errno";
	my $is_uuid = $fn =~ /uuid/;
	my $ms = sub { $is_uuid ? uuid_ms($_[0]) : snowflake_ms($_[0]) };
	my $log_offset = -s $node->logfile;
	my $before = $node->safe_psql('postgres', "SELECT $fn");
	$node->safe_psql('postgres', 'TRUNCATE got');

	set_trigger("$call $errno");
	# Call the generator every 10 ms for up to 6 s, or until 1 s after the
	# first failure, recording each result or error.
	my ($out, $err) = ('', '');
	$node->psql('postgres', qq{
		DO \$\$
		DECLARE
			t0 timestamptz := clock_timestamp();
			failed_at timestamptz;
			i int := 0;
		BEGIN
			LOOP
				i := i + 1;
				BEGIN
					INSERT INTO got (n, ok, val) SELECT i, true, $fn;
				EXCEPTION WHEN OTHERS THEN
					INSERT INTO got VALUES (i, false, NULL, SQLSTATE, SQLERRM);
					failed_at := coalesce(failed_at, clock_timestamp());
				END;
				EXIT WHEN clock_timestamp() > t0 + interval '6 s'
					OR clock_timestamp() > failed_at + interval '1 s';
				PERFORM pg_sleep(0.01);
			END LOOP;
		END \$\$}, stdout => \$out, stderr => \$err);
	is($err, '', "$what: the calling loop ran") or diag($err);
	# still failing: the mark on disk is the last one written
	my $disk = read_state_file($node);
	my @rows = map { [ split /\|/, $_, -1 ] } split /\n/,
	  $node->safe_psql('postgres', 'SELECT n, ok, val, state, msg FROM got ORDER BY n');
	my @good_rows = grep { $_->[1] eq 't' } @rows;
	my @good = map { $_->[2] } @good_rows;
	my @bad = grep { $_->[1] eq 'f' } @rows;
	my $first_bad = @bad ? $bad[0][0] : undef;

	cmp_ok(scalar(@good), '>', 0, "$what: IDs within the mark on disk are still handed out");
	ok(@bad, "$what: a call needing a new mark fails") or diag(scalar(@rows) . ' calls, none failed');
	my @other = grep { $_->[3] ne $sqlstate || $_->[4] !~ /uidgen\.state\.tmp/ } @bad;
	ok(!@other, "$what: with SQLSTATE $sqlstate, naming the file")
	  or diag(join("\n", map { "$_->[3] $_->[4]" } @other[ 0 .. ($#other < 4 ? $#other : 4) ]));
	my @after = grep { $_->[0] > ($first_bad // 1e9) } @good_rows;
	ok(defined $first_bad && !@after && @bad >= 5,
		"$what: every later call fails as well (" . scalar(@bad) . " calls)")
	  or diag(scalar(@after) . ' IDs handed out after the first failure');
	my @beyond = grep { $ms->($_) > $disk->{hwm_ms} } @good;
	ok(!@beyond, "$what: no ID beyond the mark on disk was handed out")
	  or diag(scalar(@beyond) . " IDs beyond $disk->{hwm_ms}, the last "
		  . $ms->($good[-1]));
	ok( count_in_log(
			$node,
			qr/could not write file "uidgen\.state\.tmp": \Q$strerror\E/,
			$log_offset),
		"$what: the failure is in the server log");

	set_trigger(undef);
	my ($after, $e2) = (undef, '');
	$deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my $o = '';
		$node->psql('postgres', "SELECT $fn", stdout => \$o, stderr => \$e2);
		($after = $o), last if $o ne '';
		usleep(100_000);
	}
	ok(defined $after, "$what: generation resumes once writes work again")
	  or diag($e2);
	my $prev_max = $is_uuid ? max_uuid($before, @good) : max_snowflake($before, @good);
	ok(defined $after && ($is_uuid ? $after gt $prev_max : $after > $prev_max),
		"$what: and is above every ID issued before")
	  or diag("after: " . ($after // 'none') . ", before: $prev_max");
	cmp_ok(read_state_file($node)->{hwm_ms}, '>=', $ms->($after // $prev_max),
		"$what: the mark on disk covers it");
}
$node->stop;
done_testing();
