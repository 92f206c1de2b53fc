/*-------------------------------------------------------------------------
 *
 * leasewait.c
 *	  The coordinator's side of the leases on Citus worker blocks: a change
 *	  of a block sequence waits until no block a worker reserved of it can
 *	  still be served.
 *
 * A worker serves a block it reserved from the coordinator only for
 * uidgen.citus_block_lease, timed on its monotonic clock from before it
 * asked (replicas/citusblocks.c).  Before the range is reserved the
 * coordinator records, in the sequence's row, the latest moment such a
 * block may still be served: seq_worker_lease() sets worker_lease_until to
 * at least clock_timestamp() + the lease, committed in its own statement
 * before the range's.  Then every change of the row that is not the
 * allocator handing out a range or another lease being recorded (one not
 * lower than the last; UPDATE,
 * DELETE: seq_drop(), seq_advance(), seq_alter(), or by hand) and every
 * TRUNCATE waits in a BEFORE trigger, and DROP EXTENSION in the object
 * access hook on id_sequences, with the row (TRUNCATE, DROP: the table)
 * locked, until no such block can be served any more (the table's leases
 * read with the latest snapshot, not the transaction's); then it goes on and
 * commits.  A worker that missed seq_forget() (disabled, removed, or never
 * told: a change by hand) serves its block until its lease ends, which is
 * before the change commits: it never serves a value again, or below an
 * advance, after that.  Other sequences' rows are not held up (TRUNCATE
 * holds the whole table while it waits).
 *
 * The coordinator's clock: worker_lease_until is wall-clock time.  The
 * wait lasts until worker_lease_until + the lease (this node's setting
 * now), measured from now on the monotonic clock.  A forward step of the
 * wall clock of up to one lease between the recording and the wait is
 * covered by that margin; a larger one can cut the wait short.  A backward
 * step makes the wait longer (it is interruptible).  So a change waits up
 * to twice the lease after a worker's last refill, none when the last one
 * is two leases old.  The worker's lease runs on its own monotonic clock;
 * clock rates are assumed to agree within the margin.
 *
 * What is durable before what:
 *
 *	step				1. durable first				2. then
 *	----				----------------				-------
 *	worker refill		worker_lease_until committed	the worker serves the
 *						(seq_worker_lease), after the	range until start +
 *						worker took its start time;		lease
 *						the range: for 'table' carved
 *						from the prefetch cache, whose
 *						range was committed BEFORE the
 *						lease (for 'sequence', nextval,
 *						not transactional); else by the
 *						allocator after the lease
 *	change of a row		nothing: the row locked, the	the change committed
 *	(or TRUNCATE,		wait until the lease is over
 *	DROP EXTENSION)
 *	restart or			nothing: a lease the old		changes wait until two
 *	promotion			server committed may be lost	leases after the start,
 *						(asynchronous standby,			or after the first change
 *						synchronous_commit = off),		seen on the new timeline
 *						its range not (see above)		(shared memory)
 *
 * Crash at each step: the coordinator dies before the lease commits: the
 * worker gets an error and serves nothing.  After the lease, before the
 * range: a lease with no block, which only makes a later change wait.
 * After the range, before its answer: the range is a gap.  A restarted
 * coordinator reads worker_lease_until from the row and still waits, and
 * waits two leases from its start in any case, for a lease it lost (or a
 * promoted standby, which never had it).  The coordinator dies while a
 * change waits: the change is not committed.  A worker dies: its blocks,
 * in shared memory, are a gap.  A change that runs between a worker's
 * lease and its range waits that lease out, so the range, reserved after
 * the change, reaches the worker with its lease already over and is
 * thrown away.  DROP DATABASE does not wait (the leases are in the
 * database): docs/citus.md makes waiting two leases before creating it
 * again a rule.
 *
 * Locking: the row lock the UPDATE or DELETE takes before BEFORE ROW
 * triggers run; TRUNCATE's ACCESS EXCLUSIVE lock.  A refill's lease
 * recording (an UPDATE of the row) waits for them.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "catalog/pg_class.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "blocks/allocslots.h"
#include "clock/clock.h"
#include "core/compat.h"
#include "core/settings.h"
#include "core/shmem.h"
#include "blocks/leasewait.h"
#include "blocks/seqrow.h"

PG_FUNCTION_INFO_V1(seq_lease_trigger);
PG_FUNCTION_INFO_V1(seq_lease_wait);

/* Wait event of a change waiting for worker leases (compat.h). */
static uint32 we_lease = 0;

/*
 * When this server began to accept changes, as far as the leases go: the
 * postmaster's start, or the first change seen on a timeline other than
 * the one before (a promotion).  Changes wait two leases from then.
 */
typedef struct LeaseWaitShared
{
	slock_t		mutex;
	TimeLineID	tli;			/* timeline of the changes seen; 0: none yet */
	uint64		since;			/* monotonic ticks */
	bool		recovering;		/* started as a standby or to recover */
} LeaseWaitShared;

static LeaseWaitShared *lw = NULL;

/* Attribute number of worker_lease_until in "desc"; 0 if it has none. */
static int
leasewait_attno(TupleDesc desc)
{
	int			attno = SPI_fnumber(desc, "worker_lease_until");

	return attno > 0 ? attno : 0;
}

/*
 * Does this row update only record a worker lease (every column but
 * worker_lease_until unchanged)?
 */
bool
leasewait_only_lease(HeapTuple oldtup, HeapTuple newtup, TupleDesc desc)
{
	int			lease = leasewait_attno(desc);

	if (lease == 0)
		return false;
	for (int i = 1; i <= desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i - 1);
		bool		n1;
		bool		n2;
		Datum		d1;
		Datum		d2;

		if (i == lease || att->attisdropped)
			continue;
		d1 = heap_getattr(oldtup, i, desc, &n1);
		d2 = heap_getattr(newtup, i, desc, &n2);
		if (n1 != n2 || (!n1 && !datumIsEqual(d1, d2, att->attbyval, att->attlen)))
			return false;
	}
	return true;
}

/*
 * Is the new lease at least the old one (a recording, not a clearing)?
 * NULL counts as the lowest.
 */
static bool
leasewait_not_lowered(HeapTuple oldtup, HeapTuple newtup, TupleDesc desc, int attno)
{
	bool		n1;
	bool		n2;
	Datum		d1 = heap_getattr(oldtup, attno, desc, &n1);
	Datum		d2 = heap_getattr(newtup, attno, desc, &n2);

	if (n1)
		return true;
	return !n2 && DatumGetTimestampTz(d2) >= DatumGetTimestampTz(d1);
}

/* Set up the restart moment (postmaster): changes wait two leases from it. */
static void
leasewait_shmem_init(void *mem)
{
	LeaseWaitShared *l = mem;

	SpinLockInit(&l->mutex);
	l->tli = 0;
	l->since = clock_monotonic_ticks();
	/*
	 * (the postmaster runs in the data directory) a server that starts to
	 * recover ends it later, by a promotion or at a recovery target with
	 * recovery_target_action = promote, which PromoteIsTriggered() does not
	 * see
	 */
	l->recovering = access(STANDBY_SIGNAL_FILE, F_OK) == 0 ||
		access(RECOVERY_SIGNAL_FILE, F_OK) == 0;
}

/* Register the shared restart moment (from _PG_init, when preloaded). */
void
leasewait_register(void)
{
	shmem_register("uidgen lease wait", sizeof(LeaseWaitShared), 0,
				   leasewait_shmem_init, (void **) &lw);
}

/*
 * The monotonic tick before which no change may commit on a Citus
 * coordinator that restarted or was promoted: two leases after the
 * postmaster's start, or after the first change seen on a new timeline (a
 * promotion; also the first change after a start whose recovery was ended
 * by a promotion).  A lease the old server committed may be lost (an
 * asynchronous standby, synchronous_commit = off) while a worker serves its
 * block; the block's range, carved from a prefetch cache committed before
 * the lease, is in the new server's history.  0 without Citus.
 */
static uint64
leasewait_restart_deadline(void)
{
	TimeLineID	tli;
	uint64		since;

	if (lw == NULL || !OidIsValid(get_extension_oid("citus", true)))
		return 0;
	tli = GetWALInsertionTimeLine();
	SpinLockAcquire(&lw->mutex);
	if (lw->tli != tli)
	{
		if (lw->tli != 0 || lw->recovering || PromoteIsTriggered())
			lw->since = Max(lw->since, clock_monotonic_ticks());
		lw->tli = tli;
	}
	since = lw->since;
	SpinLockRelease(&lw->mutex);
	return since + UIDGEN_MS_TO_TICKS((uint64) uidgen_citus_block_lease * 2);
}

/*
 * Wait until no worker block leased until "until" (0: none recorded) can
 * be served: until "until" + the lease on the wall clock, measured on the
 * monotonic clock, and two leases after a restart or promotion.
 */
static void
leasewait_wait(TimestampTz until)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		lease_us = (int64) uidgen_citus_block_lease * 1000;
	uint64		start = clock_monotonic_ticks();
	uint64		deadline = leasewait_restart_deadline();

	if (until >= DT_NOEND - lease_us)
		until = DT_NOEND - lease_us - 1;
	/* (a lease raised by hand to centuries waits 34 years, not 0: no wrap) */
	if (until != 0 && now < until + lease_us)
		deadline = Max(deadline, start + UIDGEN_MS_TO_TICKS(Min((until + lease_us - now) / 1000 + 1,
															   INT64CONST(1) << 40)));
	if (deadline <= start)
		return;
	ereport(DEBUG1,
			(errmsg_internal("waiting " UINT64_FORMAT " ms for citus worker block leases",
							 (uint64) UIDGEN_TICKS_TO_MS(deadline - start))));
	for (;;)
	{
		uint64		t = clock_monotonic_ticks();

		CHECK_FOR_INTERRUPTS();
		if (t >= deadline)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 (long) Min(UIDGEN_TICKS_TO_MS(deadline - t) + 1, 1000),
						 uidgen_wait_event(&we_lease, "UidgenCitusLeaseWait"));
		ResetLatch(MyLatch);
	}
}

/* The latest worker_lease_until of "rel" (TRUNCATE, DROP); 0 if none. */
static TimestampTz
leasewait_table_max(Relation rel)
{
	char	   *sql;
	TimestampTz until = 0;
	bool		isnull;
	Datum		d;
	SPIPlanPtr	plan;

	sql = psprintf("SELECT max(worker_lease_until) FROM %s",
				   quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
											  RelationGetRelationName(rel)));
	SPI_connect();
	/*
	 * The latest snapshot, not the statement's or the transaction's: a
	 * lease committed after either (TRUNCATE waited for its lock; a
	 * REPEATABLE READ or SERIALIZABLE snapshot taken before) must be seen.
	 */
	plan = SPI_prepare(sql, 0, NULL);
	if (plan == NULL ||
		SPI_execute_snapshot(plan, NULL, NULL, GetLatestSnapshot(), InvalidSnapshot,
							 true, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the worker leases of id_sequences");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
		until = DatumGetTimestampTz(d);
	SPI_finish();
	return until;
}

/*
 * id_sequences of uidgen is about to be dropped (DROP EXTENSION): wait,
 * the table locked, until no worker lease of it can run, as TRUNCATE.  A
 * new id_sequences, created right after, would have no leases.
 */
void
leasewait_before_drop(Oid relid)
{
	Relation	rel;

	if (get_rel_relkind(relid) != RELKIND_RELATION)
		return;
	rel = table_open(relid, AccessExclusiveLock);
	if (strcmp(RelationGetRelationName(rel), "id_sequences") == 0 &&
		leasewait_attno(RelationGetDescr(rel)) > 0)
		leasewait_wait(leasewait_table_max(rel));
	table_close(rel, NoLock);
}

/*
 * BEFORE UPDATE OR DELETE (row) and BEFORE TRUNCATE trigger on
 * id_sequences: wait, locked, until no worker lease of the row (the
 * table) can still run; the allocator's updates and lease recordings
 * pass at once.
 */
Datum
seq_lease_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	HeapTuple	ret;
	int			attno;
	bool		isnull;
	Datum		d;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "seq_lease_trigger: not called by the trigger manager");
	if (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
	{
		if (leasewait_attno(RelationGetDescr(td->tg_relation)) > 0)
			leasewait_wait(leasewait_table_max(td->tg_relation));
		return PointerGetDatum(NULL);
	}
	desc = RelationGetDescr(td->tg_relation);
	ret = TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : td->tg_trigtuple;
	if (allocator_is_this_process() || (attno = leasewait_attno(desc)) == 0)
		return PointerGetDatum(ret);
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event) &&
		((leasewait_only_lease(td->tg_trigtuple, td->tg_newtuple, desc) &&
		  leasewait_not_lowered(td->tg_trigtuple, td->tg_newtuple, desc, attno)) ||
		 (seqrow_is_gapless(td->tg_trigtuple, desc) && seqrow_is_gapless(td->tg_newtuple, desc))))
		return PointerGetDatum(ret);
	/* a 'gapless' row was never served by workers */
	if (seqrow_is_gapless(td->tg_trigtuple, desc))
		return PointerGetDatum(ret);
	d = heap_getattr(td->tg_trigtuple, attno, desc, &isnull);
	/* no lease recorded: one lost in a promotion may still run */
	leasewait_wait(isnull ? 0 : DatumGetTimestampTz(d));
	return PointerGetDatum(ret);
}

/*
 * seq_lease_wait(strategy, worker_lease_until): seq_lock_row()'s wait, the
 * row locked, for the leases of a row it may then leave unchanged.
 */
Datum
seq_lease_wait(PG_FUNCTION_ARGS)
{
	/* a 'gapless' row was never served by workers */
	if (!PG_ARGISNULL(0) && strcmp(text_to_cstring(PG_GETARG_TEXT_PP(0)), "gapless") == 0)
		PG_RETURN_VOID();
	/* no lease recorded: one lost in a promotion may still run */
	leasewait_wait(PG_ARGISNULL(1) ? 0 : PG_GETARG_TIMESTAMPTZ(1));
	PG_RETURN_VOID();
}
