/*-------------------------------------------------------------------------
 *
 * copies.c
 *	  Keep a copy of a data directory out of its original's ID space.
 *
 * A promoted standby, a clone made with pg_basebackup, a point-in-time
 * restore and a directory copied while stopped all start with the state
 * file, and usually the configuration, of the server they were copied from,
 * which may still be running.  identity.c tells such a copy at start-up; a
 * copy whose uidgen.worker_id is the origin's (from the state file, or for
 * a standby from the primary's WAL, walmark.c), or that would take it from
 * Citus (no uidgen.worker_id and no group id adopted yet: its group id is
 * its origin's, replicated), refuses snowflake_next() and
 * block sequences (state "copy") until an operator gives it its own worker
 * id and restarts it, or runs uidgen_take_over() to say that the original
 * will never issue IDs again.  UUIDs go on: their random bits keep copies
 * apart.  A copy with a worker id of its own is settled at once (so is any
 * copy that leases its worker id from a registry, clock/lease.c): the state
 * file then vouches for this server (system identifier, data directory,
 * timeline) and the copy's origin is forgotten.
 *
 * Block sequences have no worker id to keep them apart: a copy's
 * id_sequences starts where its original's stood.  So a copy other than a
 * promoted standby (a clone, a restore, a copied directory), and any copy
 * that was refused for its worker id, keeps its block sequences fenced
 * until uidgen_take_over(), whatever its worker id.  A standby promoted
 * with its own worker id is the failover a replication cluster is built
 * for: its block sequences serve at once, after the skip that each
 * database makes on a new timeline (failover.c); a take-over makes the
 * same skip (copies_skip_key()).
 *
 * The end of recovery (promotion, or the end of a point-in-time restore)
 * is settled here too, once, by the keeper or the first generator call:
 * the clocks jump above the last mark replayed from the primary's WAL and
 * uidgen.max_clock_drift ahead of this server's clock, and the copy rule
 * above applies.
 *
 * Locking: this module's shared memory holds the copy state in force:
 * vouched, copy_reason, refused, blocks_fenced, skip_nonce, origin_worker,
 * origin_mark, rebase_pending and recovery_signalled.  Every change runs
 * under the state lock (UIDGEN_LOCK_STATE, core/shmem.h), which also
 * serialises the state file's writes, except copies_start(), which runs in
 * the postmaster before any other process exists.  Generators read
 * rebase_pending, and after it refused and blocks_fenced, without the lock
 * (copies_publish() orders the writes); skip_nonce and what
 * uidgen_status() shows are read under it.  origin_mark is written under
 * the lock (by WAL replay, copies_replay_mark()) and read atomically.
 *
 * The state file (clock/statefile.c) records this state: at start-up it
 * hands over what the file says (copies_load()), and it fills the state in
 * force into each file it writes (copies_fill()).
 *
 * What is durable before what.  Each transition builds the state it leads
 * to in a StateFileData, makes it durable with statefile_commit(), and only
 * then publishes it in shared memory (copies_publish()), where generators
 * read it without the lock:
 *
 *	transition			1. durable first				2. then in shared memory
 *	----------			----------------				------------------------
 *	end of recovery		state file: rebase done, the	clocks above the floor;
 *	(copies_end_recovery) copy settled or refused, a	copy state; refused;
 *						new skip nonce (a copy that		rebase_pending cleared
 *						started without a signal), a	last
 *						mark above max(origin mark,
 *						wall + drift); WAL mark record
 *	uidgen_take_over()	state file: vouched for, blocks	clocks; copy state;
 *						unfenced, a new skip nonce,		blocks_fenced cleared
 *						a mark above the floor; WAL mark
 *	timeline change		state file: the timeline, or	copy state (a refusal
 *	(copies_refresh)	the copy found and refused		is set in memory
 *												first: it only takes away)
 *	start-up			state file: the copy found		(postmaster: nobody
 *	(copies_start)		(reason, fenced) or settled		reads it yet)
 *	a mark replayed		state file: the origin's mark	origin_mark and
 *	(copies_replay_mark) and worker id					origin_worker are set
 *						"redo-mark-before-file" before	first (the one exception
 *						the write						to the rule: nothing
 *														generates during replay,
 *														which goes on only once
 *														the file is durable)
 *
 * A crash before step 1 completes leaves the old state file (its rename is
 * atomic): the transition is made again, or the copy still refuses.  A
 * crash between 1 and 2 starts from the new file, whose mark covers every
 * tick step 2 would have allowed.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/atomics.h"

#include "clock/clock.h"
#include "clock/identity.h"
#include "clock/statefile.h"
#include "clock/walmark.h"
#include "core/crashpoint.h"
#include "core/settings.h"
#include "core/shmem.h"
#include "replicas/copies.h"

PG_FUNCTION_INFO_V1(uidgen_take_over);

typedef struct CopiesShared
{
	bool		rebase_pending; /* started in recovery, not yet rebased */
	bool		recovery_signalled; /* started with standby.signal or
									 * recovery.signal: its recovery ends on a
									 * new timeline */
	bool		refused;		/* a copy with its origin's worker id: neither
								 * snowflake_next() nor block sequences run */
	UidgenIdentity vouched;		/* the server the state file vouches for */
	UidgenCopyReason copy_reason;	/* why this is a copy, or NONE */
	bool		blocks_fenced;	/* block sequences wait for uidgen_take_over() */
	uint32		skip_nonce;		/* random, drawn at each take-over: the skip
								 * key of block sequences; 0 if none */
	int32		origin_worker;	/* worker id of the server copied from, or -1 */
	pg_atomic_uint64 origin_mark;	/* highest mark replayed from its WAL */
} CopiesShared;

static CopiesShared *cs = NULL;

#define STATE_LOCK() shmem_lock(UIDGEN_LOCK_STATE)

/*
 * A new key for the skip of block sequences (copies_skip_key()): random, so
 * that two servers that each took over or ended a copy's recovery on one
 * timeline never share it (a count could: each data directory counts its
 * own, and the key recorded in id_sequences_timeline comes from another
 * server's WAL).  Never 0, the key of a server never taken over, nor "old".
 */
static uint32
copies_new_skip_nonce(uint32 old)
{
	uint32		nonce = 0;

	while (nonce == 0 || nonce == old)
	{
		if (!pg_strong_random(&nonce, sizeof(nonce)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate random bits for the block sequences' skip key")));
	}
	return nonce;
}

/* Vouch for this server in "d": it issues IDs in its own right from then on. */
static void
copies_vouch(StateFileData *d)
{
	d->copy_reason = UIDGEN_COPY_NONE;
	d->origin_worker = -1;
	identity_current(&d->vouched);
}

/*
 * Will the copy "d" describes take its worker id from Citus?  A node of a
 * Citus cluster with no uidgen.worker_id (and no registry) that adopted
 * none yet takes its group id at its first ID; a copy's group id is its
 * origin's (pg_dist_local_group is replicated with the rest), whatever
 * the origin had issued when the copy was made.
 */
static bool
copies_takes_origin_group(const StateFileData *d)
{
	return uidgen_citus_preloaded && !uidgen_settings.worker_id_set &&
		d->adopted_worker == 0;
}

/*
 * Settle the copy "d" describes: true if it must refuse, as a copy with its
 * origin's worker id, or one that would take it from Citus (its block
 * sequences stay fenced); otherwise vouch for it, and for every copy that
 * leases its worker id from a registry (it never shares its origin's: its
 * lease is its own).
 */
static bool
copies_settle(StateFileData *d)
{
	if (d->copy_reason == UIDGEN_COPY_NONE)
		return false;
	if (!uidgen_registry_on &&
		((d->origin_worker >= 0 && d->origin_worker == statefile_own_worker()) ||
		 copies_takes_origin_group(d)))
	{
		d->blocks_fenced = true;
		return true;
	}
	copies_vouch(d);
	return false;
}

/*
 * Publish "d", already durable (statefile_commit()), in shared memory:
 * what a copy may do first, and only then that recovery has ended, so that
 * a generator that sees the end of recovery sees the rest.
 */
static void
copies_publish(const StateFileData *d, bool refused)
{
	cs->vouched = d->vouched;
	cs->copy_reason = (UidgenCopyReason) d->copy_reason;
	cs->origin_worker = d->origin_worker;
	cs->skip_nonce = d->skip_nonce;
	cs->blocks_fenced = d->blocks_fenced;
	/* a problem the state file found at start-up comes first */
	cs->refused = refused && statefile_problem() == UIDGEN_STATE_OK;
	pg_write_barrier();
	cs->rebase_pending = d->rebase_pending;
}

/*
 * Postmaster start-up, after the state file is loaded: find out whether
 * the data directory is a copy, settle it unless recovery must end first,
 * and record the outcome, so that a restart before it is settled (the
 * backup label or signal file gone) still knows.
 */
static void
copies_start(int32 file_worker)
{
	UidgenCopyReason found;
	StateFileData d;
	bool		refused = false;

	if (statefile_problem() == UIDGEN_STATE_CORRUPT)
		return;
	statefile_fill(&d, statefile_mark());
	found = identity_copy_at_start(&d.vouched);
	if (found == UIDGEN_COPY_NONE && d.copy_reason == UIDGEN_COPY_NONE)
	{
		d.origin_worker = -1;
		if (d.vouched.sysid != 0)
		{
			copies_publish(&d, false);
			return;
		}
		/* first start, 0.1.0's state file, or just upgraded: vouch for this server */
		identity_current(&d.vouched);
	}
	else if (d.copy_reason == UIDGEN_COPY_NONE ||
			 (d.copy_reason == UIDGEN_COPY_STANDBY &&
			  found != UIDGEN_COPY_NONE && found != UIDGEN_COPY_STANDBY))
	{
		/*
		 * A copy; or a standby's state file found outside standby mode with
		 * a backup label or in another directory than its primary's: a
		 * clone or copied directory of a standby, or the standby itself
		 * restarted without standby.signal, which cannot be told apart.
		 * Its block sequences are fenced, and the standby's own worker id
		 * (the file's) is an origin's too.
		 */
		if (d.copy_reason == UIDGEN_COPY_STANDBY &&
			file_worker == statefile_own_worker())
			d.origin_worker = file_worker;
		d.copy_reason = found;
		if (found != UIDGEN_COPY_STANDBY)
		{
			d.blocks_fenced = true;
			ereport(LOG,
					(errmsg("uidgen found that this data directory is a copy"),
					 errdetail("%s", identity_reason_detail(found))));
		}
	}
	if (!d.rebase_pending)
		refused = copies_settle(&d);
	statefile_commit(&d, 0);
	copies_publish(&d, refused);
}

/*
 * Postmaster start-up, from the state file's set-up (statefile_set_copies()):
 * take what the file read says of copies ("loaded", NULL if there was no
 * sound file), then settle it (copies_start()).
 */
static void
copies_load(const StateFileData *loaded)
{
	int32		file_worker = -1;

	cs->recovery_signalled = access(STANDBY_SIGNAL_FILE, F_OK) == 0 ||
		access(RECOVERY_SIGNAL_FILE, F_OK) == 0;
	cs->rebase_pending = cs->recovery_signalled;
	if (loaded != NULL)
	{
		/* promoted, restarted before the clock moved: the signal file is gone */
		cs->rebase_pending |= loaded->rebase_pending;
		/* who issued the IDs below the mark: compared with this server */
		cs->vouched = loaded->vouched;
		cs->copy_reason = (UidgenCopyReason) loaded->copy_reason;
		cs->blocks_fenced = loaded->blocks_fenced;
		cs->skip_nonce = loaded->skip_nonce;
		cs->origin_worker = loaded->copy_reason != UIDGEN_COPY_NONE ?
			loaded->origin_worker : statefile_file_worker(loaded);
		pg_atomic_write_u64(&cs->origin_mark, loaded->origin_mark);
		/* the worker id of the server that wrote the file */
		file_worker = statefile_file_worker(loaded);
	}
	copies_start(file_worker);
}

/* The state file is being written: fill in the copy state in force. */
static void
copies_fill(StateFileData *d)
{
	d->rebase_pending = cs->rebase_pending;
	d->copy_reason = (uint8) cs->copy_reason;
	d->blocks_fenced = cs->blocks_fenced;
	d->skip_nonce = cs->skip_nonce;
	d->origin_worker = cs->origin_worker;
	d->origin_mark = pg_atomic_read_u64(&cs->origin_mark);
	d->vouched = cs->vouched;
}

/* Set up the copy state's memory (postmaster); copies_load() fills it. */
static void
copies_shmem_init(void *mem)
{
	CopiesShared *c = mem;

	c->copy_reason = UIDGEN_COPY_NONE;
	c->origin_worker = -1;
	pg_atomic_init_u64(&c->origin_mark, 0);
}

/*
 * Register the copy state's shared memory and its part of the state file
 * (from _PG_init, when preloaded, before statefile_register()).
 */
void
copies_register(void)
{
	shmem_register("uidgen copies", sizeof(CopiesShared), 0, copies_shmem_init, (void **) &cs);
	statefile_set_copies(copies_load, copies_fill);
}

/*
 * WAL replay of a mark (clock/walmark.c): remember the mark and who wrote
 * it, if this server is a copy, and make it durable in the state file
 * before replay goes on: a restartpoint past this record would otherwise
 * leave a crash that follows with an older mark than the primary's (replay
 * restarts after the record).
 */
void
copies_replay_mark(uint64 mark, int32 worker_id)
{
	bool		sticky;

	if (cs == NULL)
		return;
	LWLockAcquire(STATE_LOCK(), LW_EXCLUSIVE);

	/*
	 * A copy other than a standby whose origin has this server's own worker
	 * id (a copy of a standby with the standby's worker id, copies_start())
	 * keeps it: its origin issued IDs under it, whatever the records replayed
	 * say.  A standby's origin is its primary's, and a former primary
	 * rejoining as a standby starts with its own worker id there.
	 */
	sticky = cs->copy_reason != UIDGEN_COPY_STANDBY &&
		cs->origin_worker == statefile_own_worker();
	if (cs->copy_reason != UIDGEN_COPY_NONE &&
		(mark > pg_atomic_read_u64(&cs->origin_mark) ||
		 (worker_id != cs->origin_worker && !sticky)))
	{
		if (mark > pg_atomic_read_u64(&cs->origin_mark))
			pg_atomic_write_u64(&cs->origin_mark, mark);
		if (!sticky)
			cs->origin_worker = worker_id;
		CRASH_POINT("redo-mark-before-file");
		if (statefile_problem() != UIDGEN_STATE_CORRUPT)
			statefile_save(ERROR);
	}
	LWLockRelease(STATE_LOCK());
}

/*
 * Recovery has ended: move the clocks past the original server and settle
 * the copy, in one durable step (statefile_commit()) before any generator
 * can use it.  A copy whose recovery ended although it started without a
 * signal file (a standby whose standby.signal was removed, restarted as a
 * primary on its primary's timeline) draws a new skip nonce for the key of
 * block sequences (copies_skip_key()) as a take-over does, so that it skips
 * ahead too; a promotion or the end of a point-in-time recovery starts a
 * new timeline, which changes the key by itself.
 */
void
copies_end_recovery(void)
{
	uint64		origin;
	StateFileData d;
	bool		refused;

	if (RecoveryInProgress())
		return;
	LWLockAcquire(STATE_LOCK(), LW_EXCLUSIVE);
	if (cs->rebase_pending)
	{
		origin = pg_atomic_read_u64(&cs->origin_mark);
		walmark_check_stream();
		statefile_fill(&d, 0);
		d.rebase_pending = false;
		if (d.copy_reason != UIDGEN_COPY_NONE && !cs->recovery_signalled)
			d.skip_nonce = copies_new_skip_nonce(d.skip_nonce);
		refused = copies_settle(&d);
		if (statefile_problem() != UIDGEN_STATE_CORRUPT)
			statefile_commit(&d, clock_rebase_floor(origin));
		else
			clock_raise(clock_rebase_floor(origin));
		copies_publish(&d, refused);
		ereport(LOG,
				(errmsg("uidgen moved its clocks past the former primary after recovery"),
				 errdetail("IDs issued from now on are above the last high-water mark replayed from WAL (%llu ms after the Unix epoch) and uidgen.max_clock_drift (%d ms) ahead of the system clock.",
						   (unsigned long long) UIDGEN_TICKS_TO_MS(origin),
						   uidgen_max_clock_drift)));
	}
	LWLockRelease(STATE_LOCK());
}

/*
 * Keeper: keep the mark replayed from the primary durable (redo saves it
 * too, copies_replay_mark()), and take up the timeline once recovery is
 * over.  A timeline other than the one vouched for, with no recovery in
 * between, means the directory was copied from a server that had moved on:
 * that is a copy, refused with its own worker id as its origin's.
 */
void
copies_refresh(void)
{
	TimeLineID	tli;
	StateFileData d;

	if (statefile_problem() == UIDGEN_STATE_CORRUPT)
		return;
	LWLockAcquire(STATE_LOCK(), LW_EXCLUSIVE);
	if (!RecoveryInProgress() && !cs->rebase_pending &&
		cs->copy_reason == UIDGEN_COPY_NONE &&
		cs->vouched.timeline != (tli = GetWALInsertionTimeLine()))
	{
		statefile_fill(&d, 0);
		if (d.vouched.timeline != 0)
		{
			d.copy_reason = UIDGEN_COPY_TIMELINE;
			d.origin_worker = statefile_own_worker();
			/* its block sequences, too, stand where its original's stood */
			d.blocks_fenced = true;
			ereport(LOG,
					(errmsg("uidgen found that this data directory is a copy"),
					 errdetail("%s", identity_reason_detail(UIDGEN_COPY_TIMELINE))));
		}
		else
			d.vouched.timeline = tli;
		/* refuse in memory first: nothing may use what is not durable yet */
		if (copies_settle(&d) && statefile_problem() == UIDGEN_STATE_OK)
			cs->refused = true;
		statefile_commit(&d, 0);
		copies_publish(&d, cs->refused);
	}
	else if (pg_atomic_read_u64(&cs->origin_mark) != statefile_saved_origin_mark())
		statefile_save(ERROR);
	LWLockRelease(STATE_LOCK());
}

/* The error of a copy that has its origin's worker id. */
void
copies_refuse(void)
{
	StateFileData d;

	statefile_fill(&d, 0);
	if (copies_takes_origin_group(&d))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("this copy of a citus node would generate under the worker id of the server it was copied from"),
				 errdetail("%s It has no uidgen.worker_id and would take its worker id from its Citus group id, which it shares with that server. That server may still be issuing IDs, which this one could repeat.",
						   identity_reason_detail(cs->copy_reason)),
				 errhint("Give this server its own uidgen.worker_id and restart it, or, if the server it was copied from will never issue IDs again, run SELECT uidgen_take_over().")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("uidgen.worker_id %d is the worker id of the server this data directory was copied from",
					cs->origin_worker),
			 errdetail("%s That server may still be issuing IDs, which this one could repeat.",
					   identity_reason_detail(cs->copy_reason)),
			 errhint("Give this server its own uidgen.worker_id and restart it, or, if the server it was copied from will never issue IDs again, run SELECT uidgen_take_over().")));
}

/*
 * Block sequences (failover.c): the key of their skip ahead, the timeline
 * plus 2^32 times the random nonce drawn at the last take-over (0 if none).
 */
uint64
copies_skip_key(void)
{
	uint32		skip_nonce;

	shmem_require();
	LWLockAcquire(STATE_LOCK(), LW_SHARED);
	skip_nonce = cs->skip_nonce;
	LWLockRelease(STATE_LOCK());
	return (uint64) GetWALInsertionTimeLine() | ((uint64) skip_nonce << 32);
}

/* Block sequences: refuse on a copy until it is taken over. */
void
copies_check_blocks(void)
{
	shmem_require();
	copies_guard();
	/* copies_publish() wrote these before it cleared rebase_pending */
	pg_read_barrier();
	if (unlikely(cs->refused))
		copies_refuse();
	if (unlikely(cs->blocks_fenced))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("block sequences of a copied data directory are fenced until it is taken over"),
				 errdetail("This server started from a copy of another server's data directory (a clone, a restore or a copied directory), so its block sequences continue from the values that server had reached. That server may still hand out the same values."),
				 errhint("If the server it was copied from will never hand out block sequence values again, or if the two servers' values will never be mixed, run SELECT uidgen_take_over().")));
}

/*
 * uidgen_take_over(): the operator says the server this one was copied from
 * will never issue IDs again.  This one keeps the worker id, above the last
 * mark it replayed from that server's WAL and a drift ahead of its clock.
 */
Datum
uidgen_take_over(PG_FUNCTION_ARGS)
{
	StateFileData d;

	shmem_require();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot take over a worker id during recovery"),
				 errhint("Promote the server first.")));
	statefile_check_usable();
	copies_end_recovery();
	LWLockAcquire(STATE_LOCK(), LW_EXCLUSIVE);
	if (cs->copy_reason == UIDGEN_COPY_NONE && !cs->blocks_fenced)
	{
		LWLockRelease(STATE_LOCK());
		ereport(NOTICE,
				(errmsg("this server is not a copy: there is no worker id to take over")));
		PG_RETURN_VOID();
	}
	statefile_fill(&d, 0);
	copies_vouch(&d);
	d.blocks_fenced = false;
	d.skip_nonce = copies_new_skip_nonce(d.skip_nonce);
	CRASH_POINT("takeover-before-commit");
	statefile_commit(&d, clock_rebase_floor(pg_atomic_read_u64(&cs->origin_mark)));
	CRASH_POINT("takeover-after-commit");
	copies_publish(&d, false);
	LWLockRelease(STATE_LOCK());
	ereport(LOG,
			(errmsg("uidgen took over the ID space of the server this data directory was copied from"),
			 errdetail("Snowflake IDs (worker id %d) and UUIDs issued from now on are above the last high-water mark replayed from that server's WAL and uidgen.max_clock_drift ahead of the system clock; block sequences skip ahead before they serve.",
					   statefile_own_worker())));
	PG_RETURN_VOID();
}

/* Before a generator runs: settle the end of recovery if it is pending. */
void
copies_guard(void)
{
	if (unlikely(cs->rebase_pending))
		copies_end_recovery();
}

/* Has recovery ended without the clocks moved past the origin yet? */
bool
copies_rebase_pending(void)
{
	return cs->rebase_pending;
}

/*
 * Is this a copy refused for its origin's worker id?  Read after
 * copies_rebase_pending() and a read barrier: copies_publish() wrote it
 * before it cleared rebase_pending.
 */
bool
copies_refused(void)
{
	return cs->refused;
}

/* What uidgen_status() shows of copies, as one consistent view. */
void
copies_describe(CopiesView *v)
{
	LWLockAcquire(STATE_LOCK(), LW_SHARED);
	v->vouched = cs->vouched;
	v->copy_reason = cs->copy_reason;
	v->origin_worker = cs->origin_worker;
	v->origin_mark = pg_atomic_read_u64(&cs->origin_mark);
	v->blocks_fenced = cs->blocks_fenced;
	LWLockRelease(STATE_LOCK());
}
