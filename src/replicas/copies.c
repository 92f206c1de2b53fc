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
 * a standby from the primary's WAL, walmark.c) refuses snowflake_next() and
 * block sequences (state "copy") until an operator gives it its own worker
 * id and restarts it, or runs uidgen_take_over() to say that the original
 * will never issue IDs again.  UUIDs go on: their random bits keep copies
 * apart.  A copy with a worker id of its own is settled at once (so is any
 * copy that leases its worker id from a registry, lease.c): the state
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
 * Everything here runs under UidgenShared->lock, except copies_start(),
 * which runs in the postmaster before any other process exists.
 *
 * What is durable before what.  Each transition builds the state it leads
 * to in a StateFileData, makes it durable with statefile_commit(), and only
 * then publishes it in shared memory (copies_publish()), where generators
 * read it without the lock:
 *
 *	transition			1. durable first				2. then in shared memory
 *	----------			----------------				------------------------
 *	end of recovery		state file: rebase done, the	clocks above the floor;
 *	(copies_end_recovery) copy settled or refused, a	copy state; problem;
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

#include "access/xlog.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "replication/walreceiver.h"
#include "storage/spin.h"

#include "clock/clock.h"
#include "replicas/copies.h"
#include "core/crashpoint.h"
#include "clock/identity.h"
#include "clock/statefile.h"

PG_FUNCTION_INFO_V1(uidgen_take_over);

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
 * Settle the copy "d" describes: true if it must refuse, as a copy with its
 * origin's worker id (its block sequences stay fenced); otherwise vouch for
 * it, and for every copy that leases its worker id from a registry (it
 * never shares its origin's: its lease is its own).
 */
static bool
copies_settle(StateFileData *d)
{
	if (d->copy_reason == UIDGEN_COPY_NONE)
		return false;
	if (!uidgen_registry_on && d->origin_worker >= 0 &&
		d->origin_worker == uidgen_settings.worker_id)
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
copies_publish(UidgenShared *s, const StateFileData *d, bool refused)
{
	s->vouched = d->vouched;
	s->copy_reason = (UidgenCopyReason) d->copy_reason;
	s->origin_worker = d->origin_worker;
	s->skip_nonce = d->skip_nonce;
	s->blocks_fenced = d->blocks_fenced;
	if (refused && s->problem == UIDGEN_STATE_OK)
		s->problem = UIDGEN_STATE_COPY;
	else if (!refused && s->problem == UIDGEN_STATE_COPY)
		s->problem = UIDGEN_STATE_OK;
	pg_write_barrier();
	s->rebase_pending = d->rebase_pending;
}

/*
 * Postmaster start-up, after the state file is loaded: find out whether
 * the data directory is a copy, settle it unless recovery must end first,
 * and record the outcome, so that a restart before it is settled (the
 * backup label or signal file gone) still knows.
 */
void
copies_start(UidgenShared *s)
{
	UidgenCopyReason found;
	StateFileData d;
	bool		refused = false;

	if (s->problem == UIDGEN_STATE_CORRUPT)
		return;
	statefile_fill(s, &d, pg_atomic_read_u64(&s->hwm));
	found = identity_copy_at_start(&d.vouched);
	if (found == UIDGEN_COPY_NONE && d.copy_reason == UIDGEN_COPY_NONE)
	{
		d.origin_worker = -1;
		if (d.vouched.sysid != 0)
		{
			copies_publish(s, &d, false);
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
			s->file_worker == uidgen_settings.worker_id)
			d.origin_worker = s->file_worker;
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
	statefile_commit(s, &d, 0);
	copies_publish(s, &d, refused);
}

/*
 * At promotion: did this server receive all the WAL its primary had
 * written, as of the primary's last message?  If not, a mark it never saw
 * may cover IDs above the one it replayed: say so.
 */
static void
copies_check_stream(void)
{
	XLogRecPtr	received = GetWalRcvFlushRecPtr(NULL, NULL);
	XLogRecPtr	primary_end;

	SpinLockAcquire(&WalRcv->mutex);
	primary_end = WalRcv->latestWalEnd;
	SpinLockRelease(&WalRcv->mutex);
	if (primary_end > received)
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("uidgen may not have the last high-water mark of the former primary"),
				 errdetail("When replication stopped, the primary had written %llu bytes of WAL that this server did not receive.",
						   (unsigned long long) (primary_end - received)),
				 errhint("Snowflake IDs are still unique if this server has its own uidgen.worker_id. Synchronous replication makes sure a promoted standby has the last mark.")));
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
copies_end_recovery(UidgenShared *s)
{
	uint64		origin;
	StateFileData d;
	bool		refused;

	if (RecoveryInProgress())
		return;
	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	if (s->rebase_pending)
	{
		origin = pg_atomic_read_u64(&s->origin_mark);
		copies_check_stream();
		statefile_fill(s, &d, 0);
		d.rebase_pending = false;
		if (d.copy_reason != UIDGEN_COPY_NONE && !s->recovery_signalled)
			d.skip_nonce = copies_new_skip_nonce(d.skip_nonce);
		refused = copies_settle(&d);
		if (s->problem != UIDGEN_STATE_CORRUPT)
			statefile_commit(s, &d, clock_rebase_floor(origin));
		else
			clock_raise(s, clock_rebase_floor(origin));
		copies_publish(s, &d, refused);
		ereport(LOG,
				(errmsg("uidgen moved its clocks past the former primary after recovery"),
				 errdetail("IDs issued from now on are above the last high-water mark replayed from WAL (%llu ms after the Unix epoch) and uidgen.max_clock_drift (%d ms) ahead of the system clock.",
						   (unsigned long long) UIDGEN_TICKS_TO_MS(origin),
						   uidgen_max_clock_drift)));
	}
	LWLockRelease(s->lock);
}

/*
 * Keeper: keep the mark replayed from the primary durable (redo saves it
 * too, walmark.c), and take up the timeline once recovery is over.  A
 * timeline other than the one vouched for, with no recovery in between,
 * means the directory was copied from a server that had moved on: that is
 * a copy, refused with its own worker id as its origin's.
 */
void
copies_refresh(UidgenShared *s)
{
	TimeLineID	tli;
	StateFileData d;

	if (s->problem == UIDGEN_STATE_CORRUPT)
		return;
	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	if (!RecoveryInProgress() && !s->rebase_pending &&
		s->copy_reason == UIDGEN_COPY_NONE &&
		s->vouched.timeline != (tli = GetWALInsertionTimeLine()))
	{
		statefile_fill(s, &d, 0);
		if (d.vouched.timeline != 0)
		{
			d.copy_reason = UIDGEN_COPY_TIMELINE;
			d.origin_worker = uidgen_settings.worker_id;
			/* its block sequences, too, stand where its original's stood */
			d.blocks_fenced = true;
			ereport(LOG,
					(errmsg("uidgen found that this data directory is a copy"),
					 errdetail("%s", identity_reason_detail(UIDGEN_COPY_TIMELINE))));
		}
		else
			d.vouched.timeline = tli;
		/* refuse in memory first: nothing may use what is not durable yet */
		if (copies_settle(&d) && s->problem == UIDGEN_STATE_OK)
			s->problem = UIDGEN_STATE_COPY;
		statefile_commit(s, &d, 0);
		copies_publish(s, &d, s->problem == UIDGEN_STATE_COPY);
	}
	else if (pg_atomic_read_u64(&s->origin_mark) != s->origin_mark_saved)
		statefile_save(s, ERROR);
	LWLockRelease(s->lock);
}

/* The error of a copy that has its origin's worker id. */
void
copies_refuse(UidgenShared *s)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("uidgen.worker_id %d is the worker id of the server this data directory was copied from",
					s->origin_worker),
			 errdetail("%s That server may still be issuing IDs, which this one could repeat.",
					   identity_reason_detail(s->copy_reason)),
			 errhint("Give this server its own uidgen.worker_id and restart it, or, if the server it was copied from will never issue IDs again, run SELECT uidgen_take_over().")));
}

/*
 * Block sequences (failover.c): the key of their skip ahead, the timeline
 * plus 2^32 times the random nonce drawn at the last take-over (0 if none).
 */
uint64
copies_skip_key(void)
{
	UidgenShared *s = shmem_get();
	uint32		skip_nonce;

	LWLockAcquire(s->lock, LW_SHARED);
	skip_nonce = s->skip_nonce;
	LWLockRelease(s->lock);
	return (uint64) GetWALInsertionTimeLine() | ((uint64) skip_nonce << 32);
}

/* Block sequences: refuse on a copy until it is taken over. */
void
copies_check_blocks(void)
{
	UidgenShared *s = shmem_get();

	copies_guard(s);
	/* copies_publish() wrote these before it cleared rebase_pending */
	pg_read_barrier();
	if (unlikely(s->problem == UIDGEN_STATE_COPY))
		copies_refuse(s);
	if (unlikely(s->blocks_fenced))
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
	UidgenShared *s = shmem_get();
	StateFileData d;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot take over a worker id during recovery"),
				 errhint("Promote the server first.")));
	statefile_check_usable(s);
	copies_end_recovery(s);
	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	if (s->copy_reason == UIDGEN_COPY_NONE && !s->blocks_fenced)
	{
		LWLockRelease(s->lock);
		ereport(NOTICE,
				(errmsg("this server is not a copy: there is no worker id to take over")));
		PG_RETURN_VOID();
	}
	statefile_fill(s, &d, 0);
	copies_vouch(&d);
	d.blocks_fenced = false;
	d.skip_nonce = copies_new_skip_nonce(d.skip_nonce);
	CRASH_POINT("takeover-before-commit");
	statefile_commit(s, &d, clock_rebase_floor(pg_atomic_read_u64(&s->origin_mark)));
	CRASH_POINT("takeover-after-commit");
	copies_publish(s, &d, false);
	LWLockRelease(s->lock);
	ereport(LOG,
			(errmsg("uidgen took over the ID space of the server this data directory was copied from"),
			 errdetail("Snowflake IDs (worker id %d) and UUIDs issued from now on are above the last high-water mark replayed from that server's WAL and uidgen.max_clock_drift ahead of the system clock; block sequences skip ahead before they serve.",
					   uidgen_settings.worker_id)));
	PG_RETURN_VOID();
}
