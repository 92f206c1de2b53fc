/*-------------------------------------------------------------------------
 *
 * allocator.c
 *	  The block allocator: background workers that reserve ranges of block
 *	  sequences for backends, and the protocol backends use to ask them.
 *
 * Each database in use has one dynamic background worker, the "uidgen
 * allocator", started by the first backend that needs it (in one of
 * uidgen.block_databases slots) and gone after uidgen.allocator_idle_timeout
 * without work, or when its database is dropped.  A backend posts a request
 * in its own slot (indexed by its PGPROC number), sets the allocator's
 * latch and sleeps on its own latch, interruptibly and for at most
 * uidgen.block_timeout.
 *
 * The allocator takes every pending request of its database, with the
 * refills the seq_next() cache asked for (blockcache.c), and serves them in
 * one REPEATABLE READ transaction: per sequence, however many requests
 * there are, one UPDATE of id_sequences that locks the row with a SKIP
 * LOCKED subquery, or, if that does not apply (row locked, missing or out
 * of room), one SELECT ... FOR UPDATE SKIP LOCKED and one UPDATE.  It
 * commits with a forced synchronous commit and only then hands each
 * requester its own sub-range, so a block is durable before anyone
 * sees it: neither a caller's rollback nor a crash can hand it out twice.
 * A serialization failure retries the whole transaction.  A row locked by
 * another transaction is reported back with the locker's xid; the backend
 * waits for that transaction itself (a lock wait like any other) and asks
 * again, so the allocator never waits on a caller's transaction.
 *
 * Locking: AllocShared.lock protects every slot and every request.  A
 * request moves FREE -> PENDING (its backend) -> TAKEN -> DONE (the
 * allocator) -> FREE (its backend).  The backend may withdraw it at any
 * time; the ticket tells the allocator that the result is no longer wanted
 * (the range is lost: a gap, never a repeat).  A request TAKEN by an
 * allocator that has exited is put back to PENDING by its backend, which
 * starts a new allocator.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "allocator.h"
#include "blockcache.h"
#include "compat.h"
#include "shmem.h"

/* How often a waiting backend checks that its allocator is alive. */
#define ALLOC_CHECK_MS 1000
/* A launched allocator that has not attached after this is given up. */
#define ALLOC_LAUNCH_TIMEOUT_MS 10000

typedef enum AllocState
{
	REQ_FREE,
	REQ_PENDING,
	REQ_TAKEN,
	REQ_DONE
} AllocState;

/* A backend's request, in the slot of its PGPROC number. */
typedef struct AllocRequest
{
	AllocState	state;
	uint64		ticket;			/* bumped by each post */
	uint64		taken_by;		/* token of the allocator that took it */
	Oid			dbid;
	int64		n;				/* 0: the row's block size */
	char		name[NAMEDATALEN];
	AllocResult result;
} AllocRequest;

/* A database slot: which database, and its allocator. */
typedef struct AllocSlot
{
	Oid			dbid;			/* InvalidOid: never used */
	uint32		generation;		/* bumped by each launch */
	int			procno;			/* the attached allocator, or -1 */
	bool		launching;		/* registered, not attached yet */
	TimestampTz launched_at;
	bool		exit_requested; /* its database is being dropped */
} AllocSlot;

typedef struct AllocShared
{
	LWLock	   *lock;
	int			nslots;
	int			nrequests;
	AllocSlot	slots[FLEXIBLE_ARRAY_MEMBER];
	/* followed by nrequests AllocRequest, MAXALIGNed */
} AllocShared;

int			uidgen_block_timeout = 10000;
int			uidgen_block_databases = 4;
int			uidgen_allocator_idle_timeout = 60;

static AllocShared *alloc_shared = NULL;

/* Wait events of a requester and of an idle allocator (compat.h). */
static uint32 we_request = 0;
static uint32 we_idle = 0;

/* The allocator's own state (in the worker process only). */
static int	my_slot = -1;
static uint64 my_token = 0;
static Oid	plan_ext = InvalidOid;
static SPIPlanPtr plan_fast = NULL;
static SPIPlanPtr plan_lock = NULL;
static SPIPlanPtr plan_find = NULL;
static SPIPlanPtr plan_update = NULL;

/* Define uidgen.block_timeout, uidgen.block_databases and the idle timeout. */
void
allocator_define_settings(void)
{
	DefineCustomIntVariable("uidgen.block_timeout",
							"How long a block sequence caller waits for the allocator.",
							"Past it, seq_reserve_block() and seq_next() fail with SQLSTATE 55P03.",
							&uidgen_block_timeout,
							10000, 1, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("uidgen.block_databases",
							"Number of databases that can use block sequences at the same time.",
							"Each runs one allocator background worker, counted in max_worker_processes.",
							&uidgen_block_databases,
							4, 1, 1024,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("uidgen.allocator_idle_timeout",
							"How long an idle block allocator stays before it exits.",
							"0 keeps allocators until shutdown.",
							&uidgen_allocator_idle_timeout,
							60, 0, 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
}

/* Offset of the request array. */
static Size
alloc_requests_offset(void)
{
	return MAXALIGN(add_size(offsetof(AllocShared, slots),
							 mul_size(uidgen_block_databases, sizeof(AllocSlot))));
}

/* Size of the allocator's shared memory. */
Size
allocator_shmem_size(void)
{
	return add_size(alloc_requests_offset(),
					mul_size(shmem_nprocs(), sizeof(AllocRequest)));
}

/* The request slot array. */
static inline AllocRequest *
alloc_requests(void)
{
	return (AllocRequest *) ((char *) alloc_shared + alloc_requests_offset());
}

/* Create or attach the shared state (AddinShmemInitLock held). */
void
allocator_shmem_init(LWLock *lock)
{
	bool		found;

	alloc_shared = ShmemInitStruct("uidgen allocator", allocator_shmem_size(), &found);
	if (found)
		return;
	memset(alloc_shared, 0, allocator_shmem_size());
	alloc_shared->lock = lock;
	alloc_shared->nslots = uidgen_block_databases;
	alloc_shared->nrequests = shmem_nprocs();
	for (int i = 0; i < alloc_shared->nslots; i++)
		alloc_shared->slots[i].procno = -1;
}

/* The token naming one launch of one slot's allocator. */
static inline uint64
alloc_token_of(int slot, uint32 generation)
{
	return ((uint64) (slot + 1) << 32) | generation;
}

/* Is the allocator that a token names still attached?  Lock held. */
static bool
alloc_token_alive_locked(uint64 token)
{
	int			slot = (int) (token >> 32) - 1;
	AllocSlot  *s;

	if (slot < 0 || slot >= alloc_shared->nslots)
		return false;
	s = &alloc_shared->slots[slot];
	return s->generation == (uint32) token && s->procno >= 0;
}

/* Is the allocator that a token names still attached? */
bool
allocator_token_alive(uint64 token)
{
	bool		alive;

	LWLockAcquire(alloc_shared->lock, LW_SHARED);
	alive = alloc_token_alive_locked(token);
	LWLockRelease(alloc_shared->lock);
	return alive;
}

/* The slot serving a database, or -1.  Lock held. */
static int
alloc_slot_of(Oid dbid)
{
	for (int i = 0; i < alloc_shared->nslots; i++)
		if (alloc_shared->slots[i].dbid == dbid)
			return i;
	return -1;
}

/* Is a slot's allocator attached, or launched recently enough to wait? */
static bool
alloc_slot_busy(AllocSlot *s, TimestampTz now)
{
	return s->procno >= 0 ||
		(s->launching &&
		 !TimestampDifferenceExceeds(s->launched_at, now, ALLOC_LAUNCH_TIMEOUT_MS));
}

/* A slot without a running allocator, for another database; -1 if none. */
static int
alloc_slot_claim(TimestampTz now)
{
	for (int i = 0; i < alloc_shared->nslots; i++)
		if (!OidIsValid(alloc_shared->slots[i].dbid))
			return i;
	for (int i = 0; i < alloc_shared->nslots; i++)
		if (!alloc_slot_busy(&alloc_shared->slots[i], now))
			return i;
	return -1;
}

/* Register the allocator worker of a slot; false if the postmaster can't. */
static bool
alloc_launch(int slot, uint32 generation, Oid dbid, bool raise)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strcpy(worker.bgw_library_name, "uidgen");
	strcpy(worker.bgw_function_name, "uidgen_allocator_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "uidgen allocator for database %u", dbid);
	strcpy(worker.bgw_type, "uidgen allocator");
	worker.bgw_main_arg = Int32GetDatum(slot);
	memcpy(worker.bgw_extra, &generation, sizeof(generation));
	if (RegisterDynamicBackgroundWorker(&worker, NULL))
		return true;

	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	if (alloc_shared->slots[slot].generation == generation)
		alloc_shared->slots[slot].launching = false;
	LWLockRelease(alloc_shared->lock);
	if (raise)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not start the uidgen allocator for database \"%s\"",
						get_database_name(dbid)),
				 errdetail("No background worker slot is free."),
				 errhint("Raise \"max_worker_processes\": block sequences use one background worker per database in use.")));
	return false;
}

/* Wake the database's allocator, or launch one; false if that failed. */
static bool
alloc_wake_slow(Oid dbid, bool raise)
{
	TimestampTz now = GetCurrentTimestamp();
	int			slot;
	int			procno = -1;
	uint32		generation = 0;
	bool		launch = false;

	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	slot = alloc_slot_of(dbid);
	if (slot >= 0 && alloc_shared->slots[slot].procno >= 0)
		procno = alloc_shared->slots[slot].procno;
	else if (slot < 0 || !alloc_slot_busy(&alloc_shared->slots[slot], now))
	{
		if (slot < 0)
			slot = alloc_slot_claim(now);
		if (slot >= 0)
		{
			AllocSlot  *s = &alloc_shared->slots[slot];

			s->dbid = dbid;
			generation = ++s->generation;
			s->launching = true;
			s->launched_at = now;
			s->exit_requested = false;
			launch = true;
		}
	}
	LWLockRelease(alloc_shared->lock);

	if (procno >= 0)
		SetLatch(&ProcGlobal->allProcs[procno].procLatch);
	else if (slot < 0)
	{
		if (raise)
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("too many databases are using block sequences"),
					 errdetail("All %d allocator slots (uidgen.block_databases) serve other databases.",
							   alloc_shared->nslots),
					 errhint("Raise uidgen.block_databases, or lower uidgen.allocator_idle_timeout so that idle allocators free their slots sooner.")));
		return false;
	}
	else if (launch)
		return alloc_launch(slot, generation, dbid, raise);
	return true;
}

/*
 * Make sure an allocator serves the database and wake it.  With raise,
 * failing to start one is an error; otherwise it returns false.
 */
bool
allocator_wake(Oid dbid, bool raise)
{
	int			slot;
	int			procno = -1;

	LWLockAcquire(alloc_shared->lock, LW_SHARED);
	slot = alloc_slot_of(dbid);
	if (slot >= 0)
		procno = alloc_shared->slots[slot].procno;
	LWLockRelease(alloc_shared->lock);
	if (procno < 0)
		return alloc_wake_slow(dbid, raise);
	SetLatch(&ProcGlobal->allProcs[procno].procLatch);
	return true;
}

/* Ask the allocator of a database that is being dropped to exit. */
void
allocator_request_exit(Oid dbid)
{
	int			slot;
	int			procno = -1;

	if (alloc_shared == NULL)
		return;
	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	slot = alloc_slot_of(dbid);
	if (slot >= 0)
	{
		alloc_shared->slots[slot].exit_requested = true;
		procno = alloc_shared->slots[slot].procno;
	}
	LWLockRelease(alloc_shared->lock);
	if (procno >= 0)
		SetLatch(&ProcGlobal->allProcs[procno].procLatch);
}

/* This backend's request slot. */
static inline AllocRequest *
alloc_my_request(void)
{
	return &alloc_requests()[UIDGEN_MY_PROCNO];
}

/* Post a request; returns its ticket. */
static uint64
alloc_post(AllocRequest *req, const char *name, int64 n)
{
	uint64		ticket;

	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	ticket = ++req->ticket;
	req->state = REQ_PENDING;
	req->taken_by = 0;
	req->dbid = MyDatabaseId;
	req->n = n;
	strlcpy(req->name, name, NAMEDATALEN);
	LWLockRelease(alloc_shared->lock);
	return ticket;
}

/* Withdraw a request that is no longer wanted. */
static void
alloc_withdraw(AllocRequest *req, uint64 ticket)
{
	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	if (req->ticket == ticket)
		req->state = REQ_FREE;
	LWLockRelease(alloc_shared->lock);
}

/*
 * Has the request been answered?  Then copy the result, free the slot and
 * return true.  With check, also put back a request whose allocator exited.
 */
static bool
alloc_poll(AllocRequest *req, uint64 ticket, AllocResult *res, bool check)
{
	bool		done = false;
	bool		orphan = false;

	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	Assert(req->ticket == ticket);
	if (req->state == REQ_DONE)
	{
		*res = req->result;
		req->state = REQ_FREE;
		done = true;
	}
	else if (check && req->state == REQ_TAKEN &&
			 !alloc_token_alive_locked(req->taken_by))
	{
		req->state = REQ_PENDING;
		orphan = true;
	}
	LWLockRelease(alloc_shared->lock);
	if (check && !done)
		allocator_wake(MyDatabaseId, true);
	if (orphan)
		elog(DEBUG1, "uidgen: allocator exited while serving a request; asking again");
	return done;
}

/* Raise the timeout error of a caller. */
static void
alloc_timeout(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			 errmsg("timed out waiting for the uidgen allocator to reserve IDs from block sequence \"%s\"",
					name),
			 errdetail("No answer came within uidgen.block_timeout (%d ms).",
					   uidgen_block_timeout),
			 errhint("Look for \"uidgen allocator\" in the server log and in pg_stat_activity, and for sessions holding a lock on table id_sequences.")));
}

/* Milliseconds from now to a later time, rounded up; 0 if it has passed. */
static long
alloc_ms_until(TimestampTz when, TimestampTz now)
{
	if (now >= when)
		return 0;
	return (long) ((when - now + 999) / 1000);
}

/* Milliseconds left before a deadline. */
static long
alloc_ms_left(TimestampTz deadline)
{
	return alloc_ms_until(deadline, GetCurrentTimestamp());
}

/* Post one request and wait for its answer (any outcome). */
static void
alloc_ask(const char *name, int64 n, AllocResult *res)
{
	AllocRequest *req = alloc_my_request();
	uint64		ticket = alloc_post(req, name, n);
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz deadline = TimestampTzPlusMilliseconds(now, uidgen_block_timeout);

	PG_TRY();
	{
		TimestampTz next_check = TimestampTzPlusMilliseconds(now, ALLOC_CHECK_MS);
		bool		check = false;

		allocator_wake(MyDatabaseId, true);
		while (!alloc_poll(req, ticket, res, check))
		{
			long		left = alloc_ms_until(deadline, now);

			if (left <= 0)
				alloc_timeout(name);
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 Min(left, ALLOC_CHECK_MS),
							 uidgen_wait_event(&we_request, "UidgenBlockRequest"));
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			now = GetCurrentTimestamp();
			check = now >= next_check;
			if (check)
				next_check = TimestampTzPlusMilliseconds(now, ALLOC_CHECK_MS);
		}
	}
	PG_CATCH();
	{
		alloc_withdraw(req, ticket);
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/*
 * Wait for the transaction that holds a sequence's row locked, as a row
 * lock waiter would; refuse if it is our own.
 */
void
allocator_wait_locker(const char *name, TransactionId locker)
{
	if (TransactionIdIsValid(locker) && TransactionIdIsCurrentTransactionId(locker))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("block sequence \"%s\" was changed by the current transaction", name),
				 errdetail("The allocator reserves IDs in its own transaction, which would have to wait for this one to end."),
				 errhint("Commit the change before reserving IDs from the sequence.")));
	if (TransactionIdIsValid(locker))
		XactLockTableWait(locker, NULL, NULL, XLTW_None);
	/* the lock may be gone already: do not spin on the allocator */
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 1, uidgen_wait_event(&we_request, "UidgenBlockRequest"));
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/* Reserve n IDs (0: a block) of a sequence; any outcome but ALLOC_LOCKED. */
void
allocator_reserve(const char *name, int64 n, AllocResult *res)
{
	for (;;)
	{
		alloc_ask(name, n, res);
		if (res->outcome != ALLOC_LOCKED)
			return;
		allocator_wait_locker(name, res->locker);
	}
}

/* Raise the error a failed reservation stands for. */
void
allocator_raise(const char *name, const AllocResult *res)
{
	switch (res->outcome)
	{
		case ALLOC_UNKNOWN:
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("block sequence \"%s\" does not exist", name),
					 errhint("Create it with seq_create(); a sequence created by a transaction that has not committed yet cannot be used.")));
			break;
		case ALLOC_EXHAUSTED:
			ereport(ERROR,
					(errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED),
					 errmsg("block sequence \"%s\" has reached its maximum value", name),
					 errdetail("The request for " INT64_FORMAT " IDs does not fit: next_block_start is " INT64_FORMAT " and max_value is " INT64_FORMAT ".",
							   res->requested, res->next_block_start, res->max_value),
					 errhint("Raise max_value with seq_alter(), which also clears the exhausted flag.")));
			break;
		case ALLOC_FAILED:
			ereport(ERROR,
					(errcode(res->sqlerrcode),
					 errmsg("uidgen allocator could not reserve IDs from block sequence \"%s\": %s",
							name, res->message)));
			break;
		case ALLOC_OK:
		case ALLOC_LOCKED:
			elog(ERROR, "unexpected allocator outcome %d", (int) res->outcome);
	}
}

/* ---------------------------------------------------------------------
 * The allocator worker
 * ---------------------------------------------------------------------
 */

/* before_shmem_exit callback: leave the slot and wake everyone waiting. */
static void
alloc_detach(int code, Datum arg)
{
	AllocRequest *reqs = alloc_requests();
	AllocSlot  *s = &alloc_shared->slots[my_slot];
	Oid			dbid = s->dbid;
	int		   *wake = palloc(sizeof(int) * alloc_shared->nrequests);
	int			nwake = 0;

	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	if (alloc_token_alive_locked(my_token))
	{
		s->procno = -1;
		s->launching = false;
	}
	for (int i = 0; i < alloc_shared->nrequests; i++)
		if (reqs[i].dbid == dbid &&
			(reqs[i].state == REQ_PENDING || reqs[i].state == REQ_TAKEN))
			wake[nwake++] = i;
	LWLockRelease(alloc_shared->lock);

	for (int i = 0; i < nwake; i++)
		SetLatch(&ProcGlobal->allProcs[wake[i]].procLatch);
	blockcache_wake_database(dbid);
}

/* Take over a slot as its allocator; exit if another launch superseded us. */
static Oid
alloc_attach(int slot, uint32 generation)
{
	AllocSlot  *s = &alloc_shared->slots[slot];
	Oid			dbid = InvalidOid;

	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	if (s->generation == generation && s->procno < 0 && s->launching)
	{
		s->procno = UIDGEN_MY_PROCNO;
		s->launching = false;
		dbid = s->dbid;
	}
	LWLockRelease(alloc_shared->lock);
	if (!OidIsValid(dbid))
		proc_exit(0);
	my_slot = slot;
	my_token = alloc_token_of(slot, generation);
	return dbid;
}

/*
 * Leave the slot if nothing is pending, so that the next request starts a
 * new allocator instead of waking this one as it exits.
 */
static bool
alloc_retire(Oid dbid)
{
	AllocRequest *reqs = alloc_requests();
	bool		idle = !blockcache_has_requests(dbid);

	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; idle && i < alloc_shared->nrequests; i++)
		if (reqs[i].dbid == dbid && reqs[i].state == REQ_PENDING)
			idle = false;
	if (idle && !blockcache_has_requests(dbid))
		alloc_shared->slots[my_slot].procno = -1;
	else
		idle = false;
	LWLockRelease(alloc_shared->lock);
	return idle;
}

/* Is this process an allocator (whose updates invalidate no cache)? */
bool
allocator_is_this_process(void)
{
	return my_slot >= 0;
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
	/* wait for synchronous standbys too, whatever the database sets */
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
	AllocRequest *reqs = alloc_requests();
	int			n = 0;

	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < alloc_shared->nrequests && n < max; i++)
	{
		AllocRequest *req = &reqs[i];
		AllocWork  *w;

		if (req->state != REQ_PENDING || req->dbid != dbid)
			continue;
		req->state = REQ_TAKEN;
		req->taken_by = my_token;
		w = &works[n++];
		memset(w, 0, sizeof(AllocWork));
		strlcpy(w->name, req->name, NAMEDATALEN);
		w->n = req->n;
		w->index = i;
		w->ticket = req->ticket;
	}
	LWLockRelease(alloc_shared->lock);
	n += blockcache_collect(dbid, my_token, works + n, max - n);
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

/* Prepare and keep one statement. */
static SPIPlanPtr
alloc_plan(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, argtypes);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	return plan;
}

/* The schema uidgen is installed in, quoted. */
static char *
alloc_extension_schema(Oid ext)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(ext)};

	if (SPI_execute_with_args("SELECT n.nspname FROM pg_catalog.pg_extension e"
							  " JOIN pg_catalog.pg_namespace n"
							  " ON n.oid OPERATOR(pg_catalog.=) e.extnamespace"
							  " WHERE e.oid OPERATOR(pg_catalog.=) $1",
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not find the schema of extension uidgen");
	return pstrdup(quote_identifier(SPI_getvalue(SPI_tuptable->vals[0],
												 SPI_tuptable->tupdesc, 1)));
}

/* Forget the statements, so that the next round looks the table up again. */
static void
alloc_forget_plans(void)
{
	if (plan_fast != NULL)
	{
		SPI_freeplan(plan_fast);
		SPI_freeplan(plan_lock);
		SPI_freeplan(plan_find);
		SPI_freeplan(plan_update);
	}
	plan_fast = plan_lock = plan_find = plan_update = NULL;
	plan_ext = InvalidOid;
}

/*
 * Build the statements on id_sequences, schema-qualified.  They are kept
 * until a round fails; the plan cache replans them if the table changes.
 */
static void
alloc_prepare(void)
{
	Oid			ext;
	Oid			types[3] = {TEXTOID, INT8OID, BOOLOID};
	Oid			fast_types[3] = {TEXTOID, INT8OID, INT8OID};
	char	   *table;

	if (OidIsValid(plan_ext))
		return;
	ext = get_extension_oid("uidgen", true);
	if (!OidIsValid(ext))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"uidgen\" is not installed in this database")));
	table = psprintf("%s.id_sequences", alloc_extension_schema(ext));
	/* the whole batch in one statement, when it fits ($2 + $3 blocks) */
	plan_fast = alloc_plan(psprintf("UPDATE %s AS t"
									" SET next_block_start = t.next_block_start + ($2 + $3 * t.block_size)"
									" WHERE t.ctid OPERATOR(pg_catalog.=) (SELECT ctid FROM %s"
									" WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE SKIP LOCKED)"
									" AND NOT t.exhausted"
									" AND t.next_block_start::pg_catalog.numeric + ($2 + $3 * t.block_size)"
									" <= LEAST(t.max_value, %lld)::pg_catalog.numeric + 1"
									" RETURNING t.next_block_start - ($2 + $3 * t.block_size), t.block_size",
									table, table, (long long) ALLOC_ID_CEILING),
						   3, fast_types);
	plan_lock = alloc_plan(psprintf("SELECT next_block_start, block_size, max_value, exhausted"
									" FROM %s WHERE name OPERATOR(pg_catalog.=) $1"
									" FOR UPDATE SKIP LOCKED", table), 1, types);
	plan_find = alloc_plan(psprintf("SELECT xmax FROM %s"
									" WHERE name OPERATOR(pg_catalog.=) $1", table),
						   1, types);
	plan_update = alloc_plan(psprintf("UPDATE %s SET next_block_start = $2, exhausted = $3"
									  " WHERE name OPERATOR(pg_catalog.=) $1", table),
							 3, types);
	plan_ext = ext;
}

/*
 * The common case: the whole group fits.  One statement locks the row,
 * checks and moves it; false (and nothing changed) if it does not apply.
 */
static bool
alloc_serve_fast(AllocWork *works, int count, Datum name)
{
	Datum		args[3];
	int64		explicit_ids = 0;
	int64		blocks = 0;
	int64		next;
	int32		block_size;
	bool		isnull;

	for (int i = 0; i < count; i++)
	{
		explicit_ids += works[i].n;
		blocks += works[i].n > 0 ? 0 : 1;
	}
	args[0] = name;
	args[1] = Int64GetDatum(explicit_ids);
	args[2] = Int64GetDatum(blocks);
	if (SPI_execute_plan(plan_fast, args, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "SPI_execute_plan failed on id_sequences");
	if (SPI_processed != 1)
		return false;
	next = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	block_size = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	for (int i = 0; i < count; i++)
	{
		AllocResult *r = &works[i].result;
		int64		n = works[i].n > 0 ? works[i].n : block_size;

		r->outcome = ALLOC_OK;
		r->requested = n;
		r->first = next;
		r->last = next + (n - 1);
		next = r->last + 1;
	}
	return true;
}

/* IDs left from next up to max_value (and below PG_INT64_MAX). */
static uint64
alloc_room(int64 next, int64 max_value)
{
	int64		ceiling = Min(max_value, ALLOC_ID_CEILING);

	if (next > ceiling)
		return 0;
	return (uint64) ceiling - (uint64) next + 1;
}

/* Fill in the outcome of every request of a sequence without a lockable row. */
static void
alloc_group_missing(AllocWork *works, int count, Datum *args)
{
	AllocOutcome outcome = ALLOC_UNKNOWN;
	TransactionId locker = InvalidTransactionId;

	if (SPI_execute_plan(plan_find, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_plan failed on id_sequences");
	if (SPI_processed > 0)
	{
		bool		isnull;

		outcome = ALLOC_LOCKED;
		locker = DatumGetTransactionId(SPI_getbinval(SPI_tuptable->vals[0],
													 SPI_tuptable->tupdesc, 1, &isnull));
	}
	for (int i = 0; i < count; i++)
	{
		works[i].result.outcome = outcome;
		works[i].result.locker = locker;
	}
}

/* Serve every request of one sequence with one row lock and one update. */
static void
alloc_serve_group(AllocWork *works, int count)
{
	Datum		args[3];
	bool		isnull;
	int64		next;
	int64		max_value;
	int32		block_size;
	bool		exhausted;
	bool		changed = false;
	HeapTuple	tup;
	TupleDesc	desc;

	args[0] = CStringGetTextDatum(works[0].name);
	if (alloc_serve_fast(works, count, args[0]))
		return;
	if (SPI_execute_plan(plan_lock, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_plan failed on id_sequences");
	if (SPI_processed == 0)
	{
		alloc_group_missing(works, count, args);
		return;
	}
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	next = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	block_size = DatumGetInt32(SPI_getbinval(tup, desc, 2, &isnull));
	max_value = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
	exhausted = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));

	for (int i = 0; i < count; i++)
	{
		AllocResult *r = &works[i].result;
		int64		n = works[i].n > 0 ? works[i].n : block_size;

		r->requested = n;
		if (!exhausted && alloc_room(next, max_value) >= (uint64) n)
		{
			r->outcome = ALLOC_OK;
			r->first = next;
			r->last = next + (n - 1);
			next = r->last + 1;
			changed = true;
			continue;
		}
		changed |= !exhausted;
		exhausted = true;
		r->outcome = ALLOC_EXHAUSTED;
		r->next_block_start = next;
		r->max_value = max_value;
	}
	if (!changed)
		return;
	args[1] = Int64GetDatum(next);
	args[2] = BoolGetDatum(exhausted);
	if (SPI_execute_plan(plan_update, args, NULL, false, 0) != SPI_OK_UPDATE ||
		SPI_processed != 1)
		elog(ERROR, "could not update block sequence \"%s\"", works[0].name);
}

/* Serve every group, in the current transaction. */
static void
alloc_serve_all(AllocWork *works, int nworks)
{
	int			start = 0;

	alloc_prepare();
	while (start < nworks)
	{
		int			end = start + 1;

		while (end < nworks && strcmp(works[end].name, works[start].name) == 0)
			end++;
		for (int i = start; i < end; i++)
			memset(&works[i].result, 0, sizeof(AllocResult));
		alloc_serve_group(works + start, end - start);
		start = end;
	}
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
alloc_try(AllocWork *works, int nworks, MemoryContext errcxt)
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
		alloc_serve_all(works, nworks);
		SPI_finish();
		PopActiveSnapshot();
		/* durable before anyone sees it, whatever synchronous_commit says */
		ForceSyncCommit();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(errcxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		if (edata->sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE ||
			edata->sqlerrcode == ERRCODE_T_R_DEADLOCK_DETECTED ||
			edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE)
			retry = edata->sqlerrcode;
		else
		{
			ereport(LOG,
					(errmsg("uidgen allocator could not reserve IDs: %s", edata->message)));
			alloc_fail_all(works, nworks, edata);
			alloc_forget_plans();
		}
		MemoryContextReset(errcxt);
	}
	PG_END_TRY();
	return retry;
}

/* Serve a batch, retrying serialization failures with a fresh transaction. */
static void
alloc_serve(AllocWork *works, int nworks, MemoryContext errcxt)
{
	qsort(works, nworks, sizeof(AllocWork), alloc_work_cmp);
	pgstat_report_activity(STATE_RUNNING, "uidgen allocator: reserving blocks");
	for (int attempt = 1; alloc_try(works, nworks, errcxt) != 0; attempt++)
	{
		CHECK_FOR_INTERRUPTS();
		if (attempt > 3)
			pg_usleep(1000L * Min(attempt, 100));
	}
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* Hand out the results: to the backends, and to the cache. */
static void
alloc_deliver(AllocWork *works, int nworks)
{
	AllocRequest *reqs = alloc_requests();
	int		   *wake = palloc(sizeof(int) * nworks);
	int			nwake = 0;

	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < nworks; i++)
	{
		AllocRequest *req = &reqs[works[i].index];

		if (works[i].for_cache || req->state != REQ_TAKEN ||
			req->ticket != works[i].ticket)
			continue;
		req->result = works[i].result;
		req->state = REQ_DONE;
		wake[nwake++] = works[i].index;
	}
	LWLockRelease(alloc_shared->lock);
	for (int i = 0; i < nwake; i++)
		SetLatch(&ProcGlobal->allProcs[wake[i]].procLatch);
	for (int i = 0; i < nworks; i++)
		if (works[i].for_cache)
			blockcache_deliver(&works[i]);
	pfree(wake);
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
	left = alloc_ms_left(TimestampTzPlusMilliseconds(idle_since, limit));
	*nap = Max(Min(left, *nap), 1);
	return left <= 0;
}

/* The allocator's main loop: serve batches until idle or told to exit. */
static void
alloc_loop(Oid dbid)
{
	int			max = alloc_shared->nrequests + uidgen_block_cache_entries;
	AllocWork  *works = MemoryContextAlloc(TopMemoryContext, sizeof(AllocWork) * max);
	MemoryContext errcxt = AllocSetContextCreate(TopMemoryContext, "uidgen allocator errors",
												 ALLOCSET_DEFAULT_SIZES);
	MemoryContext roundcxt = AllocSetContextCreate(TopMemoryContext, "uidgen allocator",
												   ALLOCSET_DEFAULT_SIZES);
	TimestampTz idle_since = GetCurrentTimestamp();

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
		if (alloc_shared->slots[my_slot].exit_requested)
			return;
		nworks = alloc_collect(dbid, works, max);
		if (nworks > 0)
		{
			MemoryContext old = MemoryContextSwitchTo(roundcxt);

			alloc_serve(works, nworks, errcxt);
			alloc_deliver(works, nworks);
			MemoryContextSwitchTo(old);
			MemoryContextReset(roundcxt);
			idle_since = GetCurrentTimestamp();
			continue;
		}
		if (alloc_idle_expired(idle_since, &nap) && alloc_retire(dbid))
			return;
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

	if (alloc_shared == NULL)
		proc_exit(1);
	dbid = alloc_attach(slot, generation);
	before_shmem_exit(alloc_detach, (Datum) 0);
	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, 0);
	alloc_configure();
	pgstat_report_appname("uidgen allocator");
	alloc_loop(dbid);
	proc_exit(0);
}
