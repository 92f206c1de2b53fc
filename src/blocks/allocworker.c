/*-------------------------------------------------------------------------
 *
 * allocworker.c
 *	  The "uidgen allocator" background worker: one per database in use,
 *	  reserving ranges of block sequences for backends.
 *
 * A backend that needs IDs posts a request and starts or wakes its
 * database's allocator (allocqueue.c, allocslots.c).  The allocator takes
 * every pending request of its database, with the refills the seq_next()
 * cache asked for (blockcache.c), and serves them in one REPEATABLE READ
 * transaction (allocsql.c), after the skip ahead that the first round on a
 * new timeline makes (failover.c).  It commits with a forced synchronous
 * commit and only then hands each requester its own sub-range, so a block
 * is durable before anyone sees it: neither a caller's rollback nor a crash
 * can hand it out twice.  A serialization failure, deadlock or SKIP LOCKED
 * race retries the whole transaction; any other error is reported to every
 * requester of the round.  About once a second (ALLOC_SWEEP_MS) it frees
 * the cache entries of its database unused for
 * uidgen.allocator_idle_timeout (cachetable_release_idle()).  The worker
 * exits after uidgen.allocator_idle_timeout without work once no entry of
 * its database holds a range, or when its database is dropped.
 *
 * What is durable before what, in one round (crash points in quotes):
 *	   "alloc-before-round"
 *	0. the refills whose cache entry changed since they were taken left out,
 *	   once the round's snapshot is taken (blockcache_drop_stale())
 *	1. the round's UPDATEs of id_sequences, nextval()s with their WAL flushed
 *	   (allocsql.c) and a skip (failover.c), in its open transaction; the
 *	   refills' ranges noted in flight in the cache (blockcache_stage(), in
 *	   memory, for seq_unprefetch(): not handed out)
 *	   "alloc-before-commit"
 *	2. the commit, flushed before CommitTransactionCommand() returns
 *	   "alloc-after-commit"
 *	3. the skip key known to be committed, in memory (failover_end_round())
 *	   "alloc-before-answer"
 *	4. the ranges answered to the waiting backends (allocator_answer())
 *	   "alloc-before-cache-deliver"
 *	5. the refills stored in the seq_next() cache (blockcache_deliver())
 * A crash before 2 undoes the round, whose ranges nobody has seen; a crash
 * after it loses ranges that nobody will see: gaps, never repeats.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "blocks/allocqueue.h"
#include "blocks/allocslots.h"
#include "blocks/allocsql.h"
#include "blocks/allocworker.h"
#include "blocks/blockcache.h"
#include "blocks/cachetable.h"
#include "core/compat.h"
#include "core/crashpoint.h"
#include "core/settings.h"
#include "blocks/failover.h"

/* How often the allocator looks for cached ranges nobody uses. */
#define ALLOC_SWEEP_MS 1000

/* Wait event of an idle allocator (compat.h). */
static uint32 we_idle = 0;

/* before_shmem_exit callback: leave the slot and wake everyone waiting. */
static void
alloc_detach(int code, Datum arg)
{
	cachetable_wake_database(allocator_detach());
}

/*
 * Settings of the allocator's own sessions, whatever the configuration and
 * the database's own settings (ALTER DATABASE ... SET, which its owner may
 * use) say.
 */
static void
alloc_configure(void)
{
	StartTransactionCommand();
	/* the bootstrap superuser, as connected: not a role the database names */
	SetConfigOption("session_authorization",
					GetUserNameFromId(BOOTSTRAP_SUPERUSERID, false),
					PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("role", "none", PGC_SUSET, PGC_S_OVERRIDE);
	/* errors are caught and retried or reported, not the allocator's end */
	SetConfigOption("exit_on_error", "off", PGC_SUSET, PGC_S_OVERRIDE);
	/* only pg_catalog: the caller's and the database's search_path are moot */
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("default_transaction_read_only", "off", PGC_SUSET, PGC_S_OVERRIDE);
	/* commits flushed, and on synchronous standbys, before results go out */
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("statement_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("lock_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("idle_in_transaction_session_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("application_name", "uidgen allocator", PGC_SUSET, PGC_S_OVERRIDE);
	CommitTransactionCommand();
}

/* Take every pending request of the database, and the cache refills. */
static int
alloc_collect(Oid dbid, AllocWork *works, int max)
{
	int			n = allocator_take_requests(dbid, works, max);

	n += blockcache_collect(dbid, allocator_my_token(), works + n, max - n);
	for (int i = 0; i < n; i++)
		works[i].order = i;
	return n;
}

/* qsort comparator: group the work by sequence, in arrival order. */
static int
alloc_work_cmp(const void *a, const void *b)
{
	const AllocWork *wa = (const AllocWork *) a;
	const AllocWork *wb = (const AllocWork *) b;
	int			c = strcmp(wa->name, wb->name);

	if (c != 0)
		return c;
	return wa->order - wb->order;
}

/* Record a failed transaction as the outcome of every request. */
static void
alloc_fail_all(AllocWork *works, int nworks, ErrorData *edata)
{
	const char *msg = edata->message ? edata->message : "";

	for (int i = 0; i < nworks; i++)
	{
		memset(&works[i].result, 0, sizeof(AllocResult));
		works[i].result.outcome = ALLOC_FAILED;
		works[i].result.sqlerrcode = edata->sqlerrcode;
		/* clipped at a character boundary */
		memcpy(works[i].result.message, msg,
			   pg_mbcliplen(msg, strlen(msg), ALLOC_MSG_LEN - 1));
	}
}

/*
 * One attempt: serve everything in one REPEATABLE READ transaction and
 * commit it durably.  Returns 0, or the SQLSTATE of an error worth a retry
 * (after a failure that is not, the requests carry the error).
 */
static int
alloc_try(AllocWork *works, int *nworks, MemoryContext errcxt)
{
	volatile int retry = 0;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	XactIsoLevel = XACT_REPEATABLE_READ;
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		PushActiveSnapshot(GetTransactionSnapshot());
		/* refills for an entry changed since: served for nobody, a gap */
		*nworks = blockcache_drop_stale(works, *nworks);
		/* on a new timeline, every sequence skips ahead first */
		if (failover_prepare_round(works, *nworks))
			allocsql_serve_all(works, *nworks);
		SPI_finish();
		PopActiveSnapshot();
		/* (for seq_unprefetch() between the commit and the delivery) */
		blockcache_stage(works, *nworks);
		/* durable before anyone sees it (synchronous_commit is on) */
		CRASH_POINT("alloc-before-commit");
		CommitTransactionCommand();
		CRASH_POINT("alloc-after-commit");
		failover_end_round(true);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(errcxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		failover_end_round(false);
		if (edata->sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE ||
			edata->sqlerrcode == ERRCODE_T_R_DEADLOCK_DETECTED ||
			edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE)
			retry = edata->sqlerrcode;
		else
		{
			ereport(LOG,
					(errmsg("uidgen allocator could not reserve IDs: %s", edata->message)));
			alloc_fail_all(works, *nworks, edata);
			allocsql_forget();
		}
		MemoryContextReset(errcxt);
	}
	PG_END_TRY();
	return retry;
}

/*
 * Serve a batch, retrying serialization failures with a fresh transaction;
 * returns how many works were served (stale refills are left out).
 */
static int
alloc_serve(AllocWork *works, int nworks, MemoryContext errcxt)
{
	qsort(works, nworks, sizeof(AllocWork), alloc_work_cmp);
	/* (requests taken, no transaction yet: a test changes a row here) */
	CRASH_POINT("alloc-before-round");
	pgstat_report_activity(STATE_RUNNING, "uidgen allocator: reserving blocks");
	for (int attempt = 1; alloc_try(works, &nworks, errcxt) != 0; attempt++)
	{
		CHECK_FOR_INTERRUPTS();
		if (attempt > 3)
			pg_usleep(1000L * Min(attempt, 100));
	}
	pgstat_report_activity(STATE_IDLE, NULL);
	return nworks;
}

/* Hand out the results: to the backends, and to the cache. */
static void
alloc_deliver(AllocWork *works, int nworks)
{
	CRASH_POINT("alloc-before-answer");
	allocator_answer(works, nworks);
	CRASH_POINT("alloc-before-cache-deliver");
	for (int i = 0; i < nworks; i++)
		if (works[i].for_cache)
			blockcache_deliver(&works[i]);
}

/* Has the allocator been idle for longer than it may stay? */
static bool
alloc_idle_expired(TimestampTz idle_since, long *nap)
{
	long		limit = uidgen_allocator_idle_timeout * 1000L;
	long		left;

	*nap = 10000;
	if (limit <= 0)
		return false;
	left = limit - TimestampDifferenceMilliseconds(idle_since, GetCurrentTimestamp());
	*nap = Max(Min(left, *nap), 1);
	return left <= 0;
}

/* The allocator's main loop: serve batches until idle or told to exit. */
static void
alloc_loop(Oid dbid)
{
	int			max = allocator_max_requests() + uidgen_block_cache_entries;
	AllocWork  *works = MemoryContextAlloc(TopMemoryContext, sizeof(AllocWork) * max);
	MemoryContext errcxt = AllocSetContextCreate(TopMemoryContext, "uidgen allocator errors",
												 ALLOCSET_DEFAULT_SIZES);
	MemoryContext roundcxt = AllocSetContextCreate(TopMemoryContext, "uidgen allocator",
												   ALLOCSET_DEFAULT_SIZES);
	TimestampTz idle_since = GetCurrentTimestamp();
	TimestampTz swept = 0;
	bool		held = false;

	for (;;)
	{
		int			nworks;
		long		nap;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (allocator_exit_requested())
			return;
		/* ranges nobody uses go; the allocator stays while any is held */
		if (TimestampDifferenceExceeds(swept, GetCurrentTimestamp(), ALLOC_SWEEP_MS))
		{
			held = cachetable_release_idle(dbid, uidgen_allocator_idle_timeout);
			swept = GetCurrentTimestamp();
		}
		nworks = alloc_collect(dbid, works, max);
		if (nworks > 0)
		{
			MemoryContext old = MemoryContextSwitchTo(roundcxt);

			nworks = alloc_serve(works, nworks, errcxt);
			alloc_deliver(works, nworks);
			MemoryContextSwitchTo(old);
			MemoryContextReset(roundcxt);
			idle_since = GetCurrentTimestamp();
			continue;
		}
		if (alloc_idle_expired(idle_since, &nap) && !held)
		{
			/* (a test holds it here to post a request: retiring refuses) */
			CRASH_POINT("alloc-before-retire");
			if (allocator_retire(dbid, blockcache_has_requests))
				return;
		}
		/* (idle but holding ranges: the next sweep, not a busy loop) */
		if (held)
			nap = ALLOC_SWEEP_MS;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 nap, uidgen_wait_event(&we_idle, "UidgenAllocatorMain"));
	}
}

/* Entry point of an allocator worker; the argument is its slot. */
void
uidgen_allocator_main(Datum arg)
{
	int			slot = DatumGetInt32(arg);
	uint32		generation;
	Oid			dbid;

	memcpy(&generation, MyBgworkerEntry->bgw_extra, sizeof(generation));
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	dbid = allocator_attach(slot, generation);
	if (!OidIsValid(dbid))
		proc_exit(0);
	before_shmem_exit(alloc_detach, (Datum) 0);
	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, 0);
	alloc_configure();
	pgstat_report_appname("uidgen allocator");
	alloc_loop(dbid);
	proc_exit(0);
}
