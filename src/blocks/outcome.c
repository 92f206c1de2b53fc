/*-------------------------------------------------------------------------
 *
 * outcome.c
 *	  What a caller does with an allocator's answer that is not a range:
 *	  wait for what held the allocator off, as a lock waiter would, or
 *	  raise the error the answer stands for.
 *
 * The allocator never waits for a lock that a caller's transaction holds
 * or has queued for: it reports the row's locker (a transaction, or a
 * MultiXactId whose conflicting members are waited for one by one, as
 * heapam's MultiXactIdWait() does) or the table lock it could not take,
 * and the caller waits for that itself, in the lock manager: visible in
 * pg_locks, subject to lock_timeout, statement_timeout and deadlock
 * detection, and cancellable.  A caller whose own transaction holds the
 * lock is refused at once (55000) instead of waiting for itself.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/timestamp.h"

#include "core/compat.h"
#include "blocks/outcome.h"

/* Wait event of the pause after a lock wait (compat.h). */
static uint32 we_request = 0;

/* Refuse to wait for our own transaction, which holds the row. */
static void
outcome_refuse_own(const char *name, bool changed)
{
	if (changed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("block sequence \"%s\" was changed by the current transaction", name),
				 errdetail("The allocator reserves IDs in its own transaction, which would have to wait for this one to end."),
				 errhint("Commit the change before reserving IDs from the sequence.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("block sequence \"%s\" is locked by the current transaction", name),
			 errdetail("The allocator reserves IDs in its own transaction, which would have to wait for this one to end."),
			 errhint("Commit before reserving IDs from the sequence, or lock its row with FOR KEY SHARE only.")));
}

/*
 * Wait for the members of a MultiXactId holding a row whose locks conflict
 * with the allocator's FOR NO KEY UPDATE (all but FOR KEY SHARE), as
 * heapam's MultiXactIdWait() does; refuse if one of them is ours, saying
 * "changed" if one of ours updated the row (an UPDATE under another's FOR
 * KEY SHARE is also a member that only locks it, listed first).
 */
static void
outcome_wait_multi(const char *name, MultiXactId multi, bool lock_only)
{
	MultiXactMember *members;
	int			nmembers = GetMultiXactIdMembers(multi, &members, false, lock_only);
	bool		own = false;
	bool		changed = false;

	for (int i = 0; i < nmembers; i++)
		if (members[i].status != MultiXactStatusForKeyShare &&
			TransactionIdIsCurrentTransactionId(members[i].xid))
		{
			own = true;
			changed |= members[i].status == MultiXactStatusNoKeyUpdate ||
				members[i].status == MultiXactStatusUpdate;
		}
	if (own)
		outcome_refuse_own(name, changed);
	for (int i = 0; i < nmembers; i++)
		if (members[i].status != MultiXactStatusForKeyShare)
			XactLockTableWait(members[i].xid, NULL, NULL, XLTW_None);
	if (nmembers > 0)
		pfree(members);
}

/*
 * Wait for the lock on id_sequences that the allocator could not take at
 * once, in the lock queue like the allocator's statements would, and let
 * it go again.  Refuse if this transaction already holds a lock on the
 * table: a request queued behind it would make the allocator wait for us.
 */
static void
outcome_wait_table(const char *name, Oid relid)
{
	Relation	rel = RelationIdGetRelation(relid);
	bool		held = false;

	if (rel != NULL)
	{
		held = CheckRelationLockedByMe(rel, AccessShareLock, true);
		RelationClose(rel);
	}
	if (held)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the uidgen allocator cannot lock table %s for block sequence \"%s\"",
						get_rel_name(relid), name),
				 errdetail("Another session holds or waits for a conflicting lock on the table, and the current transaction holds a lock on it, so the allocator would have to wait for this transaction to end."),
				 errhint("Reserve IDs before reading or changing id_sequences in the transaction, or commit first.")));
	LockRelationOid(relid, RowExclusiveLock);
	UnlockRelationOid(relid, RowExclusiveLock);
}

/*
 * Wait for what kept the allocator from a sequence, as a lock waiter would:
 * the transaction holding its row, each conflicting member of the
 * MultiXactId holding it, or the table's lock.  Refuse if it is our own
 * transaction that holds it.  Returns the time spent in lock waits, which
 * uidgen.block_timeout does not count.
 */
TimestampTz
outcome_wait(const char *name, const AllocResult *res)
{
	TimestampTz start = GetCurrentTimestamp();
	TimestampTz waited;

	if (OidIsValid(res->locked_table))
		outcome_wait_table(name, res->locked_table);
	else if (res->locker_is_multi)
		outcome_wait_multi(name, (MultiXactId) res->locker, res->locker_lock_only);
	else if (TransactionIdIsValid(res->locker))
	{
		if (TransactionIdIsCurrentTransactionId(res->locker))
			outcome_refuse_own(name, !res->locker_lock_only);
		XactLockTableWait(res->locker, NULL, NULL, XLTW_None);
	}
	waited = GetCurrentTimestamp() - start;
	/* the lock may be gone already: do not spin on the allocator */
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 1, uidgen_wait_event(&we_request, "UidgenBlockRequest"));
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	return waited;
}

/*
 * Raise 2200H for a request that does not fit (res: ALLOC_EXHAUSTED):
 * "what" the caller asked for, IDs or numbers; a gapless sequence (numbers)
 * sets no exhausted flag.  Each message is written out whole, per
 * direction, so that it can be translated (no fragments).
 */
void
outcome_exhausted(const char *name, const AllocResult *res, const char *what)
{
	bool		down = res->increment < 0;
	bool		ids = strcmp(what, "IDs") == 0;
	int64		n = res->requested;
	int64		next = res->next_block_start;

	ereport(ERROR,
			(errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED),
			 down ? errmsg("block sequence \"%s\" has reached its minimum value", name) :
			 errmsg("block sequence \"%s\" has reached its maximum value", name),
			 ids ? (down ?
					errdetail("The request for " INT64_FORMAT " IDs does not fit: next_block_start is " INT64_FORMAT " and min_value is " INT64_FORMAT ".", n, next, res->bound) :
					errdetail("The request for " INT64_FORMAT " IDs does not fit: next_block_start is " INT64_FORMAT " and max_value is " INT64_FORMAT ".", n, next, res->bound)) :
			 (down ?
			  errdetail("The request for " INT64_FORMAT " numbers does not fit: next_block_start is " INT64_FORMAT " and min_value is " INT64_FORMAT ".", n, next, res->bound) :
			  errdetail("The request for " INT64_FORMAT " numbers does not fit: next_block_start is " INT64_FORMAT " and max_value is " INT64_FORMAT ".", n, next, res->bound)),
			 res->period != 0 ?
			 errhint("The count restarts with the next period; max_value can be raised with seq_alter() within its number of digits.") :
			 ids ? (down ?
					errhint("Lower min_value with seq_alter(), which also clears the exhausted flag.") :
					errhint("Raise max_value with seq_alter(), which also clears the exhausted flag.")) :
			 (down ?
			  errhint("Lower min_value with seq_alter(); a smaller request may still fit.") :
			  errhint("Raise max_value with seq_alter(); a smaller request may still fit."))));
}

/* Raise the error a failed reservation stands for. */
void
outcome_raise(const char *name, const AllocResult *res)
{
	switch (res->outcome)
	{
		case ALLOC_UNKNOWN:
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("block sequence \"%s\" does not exist", name),
					 errhint("Create it with seq_create(), as the extension's owner or a role granted EXECUTE on seq_create(); a sequence created by a transaction that has not committed yet cannot be used.")));
			break;
		case ALLOC_EXHAUSTED:
			outcome_exhausted(name, res, "IDs");
			break;
		case ALLOC_FAILED:
			ereport(ERROR,
					(errcode(res->sqlerrcode),
					 errmsg("uidgen allocator could not reserve IDs from block sequence \"%s\": %s",
							name, res->message)));
			break;
		case ALLOC_CLOCK_BEHIND:
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("block sequence \"%s\" counts in a period that has not begun by the clock", name),
					 errdetail("It numbers period %d; the time now falls in period %d.",
							   res->period, res->period_now),
					 errhint("Wait until the clock reaches that period, or correct the clock: no number of a period is handed out once a later one has begun.")));
			break;
		case ALLOC_OK:
		case ALLOC_LOCKED:
			elog(ERROR, "unexpected allocator outcome %d", (int) res->outcome);
	}
}
