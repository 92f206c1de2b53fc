/*-------------------------------------------------------------------------
 *
 * allocator.c
 *	  The block allocator's shared state: the database slots its workers
 *	  run in, and the protocol backends use to ask them for IDs.
 *
 * Each database in use has one dynamic background worker, the "uidgen
 * allocator" (allocworker.c), started by the first backend that needs it
 * (in one of uidgen.block_databases slots) and gone after
 * uidgen.allocator_idle_timeout without work, or when its database is
 * dropped.  A backend posts a request in its own slot (indexed by its
 * PGPROC number), sets the allocator's latch and sleeps on its own latch,
 * interruptibly and for at most uidgen.block_timeout (in all, however many
 * times it asks).  A row locked by other transactions comes back with its
 * xmax: the backend waits for that transaction, or for each member of the
 * MultiXactId that conflicts, itself (lock waits like any other, not
 * counted in uidgen.block_timeout), and asks again.  So does a table lock
 * the allocator could not take at once: the backend waits for it.
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
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/lsyscache.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "blocks/allocator.h"
#include "core/compat.h"
#include "core/settings.h"
#include "blocks/outcome.h"
#include "core/shmem.h"

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

static AllocShared *alloc_shared = NULL;

/* Wait event of a requester (compat.h). */
static uint32 we_request = 0;

/* In an allocator worker: its slot, and the token of its launch. */
static int	my_slot = -1;
static uint64 my_token = 0;

/* Offset of the request array. */
static Size
alloc_requests_offset(void)
{
	return MAXALIGN(add_size(offsetof(AllocShared, slots),
							 mul_size(uidgen_block_databases, sizeof(AllocSlot))));
}

/* Size of the allocator's shared memory. */
static Size
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

/* Set up the shared state (postmaster). */
static void
allocator_shmem_init(void *mem)
{
	AllocShared *a = mem;

	a->lock = shmem_lock(UIDGEN_LOCK_ALLOCATOR);
	a->nslots = uidgen_block_databases;
	a->nrequests = shmem_nprocs();
	for (int i = 0; i < a->nslots; i++)
		a->slots[i].procno = -1;
}

static const UidgenShmemArea allocator_area = {
	"uidgen allocator", allocator_shmem_size, allocator_shmem_init, (void **) &alloc_shared
};

/* Register the allocator's shared memory (from _PG_init, when preloaded). */
void
allocator_register(void)
{
	shmem_register(&allocator_area);
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

/* Post one request and wait for its answer (any outcome) until deadline. */
static void
alloc_ask(const char *name, int64 n, AllocResult *res, TimestampTz deadline)
{
	AllocRequest *req = alloc_my_request();
	uint64		ticket = alloc_post(req, name, n);
	TimestampTz now = GetCurrentTimestamp();

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
 * Reserve n IDs (0: a block) of a sequence; any outcome but ALLOC_LOCKED.
 * uidgen.block_timeout bounds the time spent waiting for the allocator in
 * all, across every request; lock waits in between do not count.
 */
void
allocator_reserve(const char *name, int64 n, AllocResult *res)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													   uidgen_block_timeout);

	for (;;)
	{
		alloc_ask(name, n, res, deadline);
		if (res->outcome != ALLOC_LOCKED)
			return;
		deadline += outcome_wait(name, res);
	}
}

/* ---------------------------------------------------------------------
 * For the allocator worker (allocworker.c): its slot and the requests
 * ---------------------------------------------------------------------
 */

/*
 * Take over a slot as its allocator; InvalidOid if the shared state is
 * missing or another launch superseded this one, else the database.
 */
Oid
allocator_attach(int slot, uint32 generation)
{
	AllocSlot  *s;
	Oid			dbid = InvalidOid;

	if (alloc_shared == NULL)
		return InvalidOid;
	s = &alloc_shared->slots[slot];
	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	if (s->generation == generation && s->procno < 0 && s->launching)
	{
		s->procno = UIDGEN_MY_PROCNO;
		s->launching = false;
		dbid = s->dbid;
	}
	LWLockRelease(alloc_shared->lock);
	if (OidIsValid(dbid))
	{
		my_slot = slot;
		my_token = alloc_token_of(slot, generation);
	}
	return dbid;
}

/* Leave the slot and wake the backends waiting on it; returns the database. */
Oid
allocator_detach(void)
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
	return dbid;
}

/*
 * Leave the slot if nothing is pending, neither a request nor other work
 * (checked again under the lock, which backends take to see whether the
 * allocator is alive), so that the next request starts a new allocator
 * instead of waking this one as it exits.
 */
bool
allocator_retire(Oid dbid, bool (*other_work) (Oid dbid))
{
	AllocRequest *reqs = alloc_requests();
	bool		idle = !other_work(dbid);

	LWLockAcquire(alloc_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; idle && i < alloc_shared->nrequests; i++)
		if (reqs[i].dbid == dbid && reqs[i].state == REQ_PENDING)
			idle = false;
	if (idle && !other_work(dbid))
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

/* The token of this allocator's launch. */
uint64
allocator_my_token(void)
{
	return my_token;
}

/* Has this allocator's database been dropped? */
bool
allocator_exit_requested(void)
{
	return alloc_shared->slots[my_slot].exit_requested;
}

/* How many backend requests can be pending at once. */
int
allocator_max_requests(void)
{
	return alloc_shared->nrequests;
}

/* Take the pending requests of the database, at most max, into works. */
int
allocator_take_requests(Oid dbid, AllocWork *works, int max)
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
	return n;
}

/* Answer the backends' requests among works (not the cache's refills). */
void
allocator_answer(const AllocWork *works, int nworks)
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
	pfree(wake);
}
