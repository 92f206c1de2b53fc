/*-------------------------------------------------------------------------
 *
 * allocqueue.c
 *	  The block allocator's request queue: the protocol backends use to ask
 *	  the allocator worker of their database (blocks/allocworker.c) for
 *	  IDs, and the worker's side of it.
 *
 * A backend posts a request in its own slot (indexed by its PGPROC
 * number), wakes or starts its database's allocator (blocks/allocslots.c)
 * and sleeps on its own latch, interruptibly and for at most
 * uidgen.block_timeout (in all, however many times it asks).  A row locked
 * by other transactions comes back with its xmax: the backend waits for
 * that transaction, or for each member of the MultiXactId that conflicts,
 * itself (lock waits like any other, not counted in uidgen.block_timeout),
 * and asks again.  So does a table lock the allocator could not take at
 * once: the backend waits for it.
 *
 * Locking: the allocator lock (UIDGEN_LOCK_ALLOCATOR, core/shmem.h)
 * protects every request, and the slots with them (allocslots.c).  A
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

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "blocks/allocqueue.h"
#include "blocks/allocslots.h"
#include "blocks/outcome.h"
#include "core/compat.h"
#include "core/settings.h"
#include "core/shmem.h"

/* How often a waiting backend checks that its allocator is alive. */
#define ALLOC_CHECK_MS 1000
#define ALLOC_LOCK() shmem_lock(UIDGEN_LOCK_ALLOCATOR)

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

typedef struct QueueShared
{
	int			nrequests;
	AllocRequest requests[FLEXIBLE_ARRAY_MEMBER];
} QueueShared;

static QueueShared *queue = NULL;

/* Wait event of a requester (compat.h). */
static uint32 we_request = 0;

/* Set the queue up (postmaster). */
static void
allocqueue_shmem_init(void *mem)
{
	QueueShared *q = mem;

	q->nrequests = shmem_nprocs();
}

/* Register the queue's shared memory (from _PG_init, when preloaded). */
void
allocqueue_register(void)
{
	shmem_register("uidgen allocator requests", offsetof(QueueShared, requests),
				   sizeof(AllocRequest), allocqueue_shmem_init, (void **) &queue);
}

/* This backend's request slot. */
static inline AllocRequest *
alloc_my_request(void)
{
	return &queue->requests[UIDGEN_MY_PROCNO];
}

/* Post a request; returns its ticket. */
static uint64
alloc_post(AllocRequest *req, const char *name, int64 n)
{
	uint64		ticket;

	LWLockAcquire(ALLOC_LOCK(), LW_EXCLUSIVE);
	ticket = ++req->ticket;
	req->state = REQ_PENDING;
	req->taken_by = 0;
	req->dbid = MyDatabaseId;
	req->n = n;
	strlcpy(req->name, name, NAMEDATALEN);
	LWLockRelease(ALLOC_LOCK());
	return ticket;
}

/* Withdraw a request that is no longer wanted. */
static void
alloc_withdraw(AllocRequest *req, uint64 ticket)
{
	LWLockAcquire(ALLOC_LOCK(), LW_EXCLUSIVE);
	if (req->ticket == ticket)
		req->state = REQ_FREE;
	LWLockRelease(ALLOC_LOCK());
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

	LWLockAcquire(ALLOC_LOCK(), LW_EXCLUSIVE);
	Assert(req->ticket == ticket);
	if (req->state == REQ_DONE)
	{
		*res = req->result;
		req->state = REQ_FREE;
		done = true;
	}
	else if (check && req->state == REQ_TAKEN &&
			 !allocslots_token_alive_locked(req->taken_by))
	{
		req->state = REQ_PENDING;
		orphan = true;
	}
	LWLockRelease(ALLOC_LOCK());
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

/* Leave the slot and wake the backends waiting on it; returns the database. */
Oid
allocator_detach(void)
{
	AllocRequest *reqs = queue->requests;
	Oid			dbid = allocslots_my_dbid();
	int		   *wake = palloc(sizeof(int) * queue->nrequests);
	int			nwake = 0;

	LWLockAcquire(ALLOC_LOCK(), LW_EXCLUSIVE);
	allocslots_detach_locked();
	for (int i = 0; i < queue->nrequests; i++)
		if (reqs[i].dbid == dbid &&
			(reqs[i].state == REQ_PENDING || reqs[i].state == REQ_TAKEN))
			wake[nwake++] = i;
	LWLockRelease(ALLOC_LOCK());

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
	AllocRequest *reqs = queue->requests;
	bool		idle = !other_work(dbid);

	LWLockAcquire(ALLOC_LOCK(), LW_EXCLUSIVE);
	for (int i = 0; idle && i < queue->nrequests; i++)
		if (reqs[i].dbid == dbid && reqs[i].state == REQ_PENDING)
			idle = false;
	if (idle && !other_work(dbid))
		allocslots_retire_locked();
	else
		idle = false;
	LWLockRelease(ALLOC_LOCK());
	return idle;
}

/* How many backend requests can be pending at once. */
int
allocator_max_requests(void)
{
	return queue->nrequests;
}

/* Take the pending requests of the database, at most max, into works. */
int
allocator_take_requests(Oid dbid, AllocWork *works, int max)
{
	AllocRequest *reqs = queue->requests;
	int			n = 0;

	LWLockAcquire(ALLOC_LOCK(), LW_EXCLUSIVE);
	for (int i = 0; i < queue->nrequests && n < max; i++)
	{
		AllocRequest *req = &reqs[i];
		AllocWork  *w;

		if (req->state != REQ_PENDING || req->dbid != dbid)
			continue;
		req->state = REQ_TAKEN;
		req->taken_by = allocator_my_token();
		w = &works[n++];
		memset(w, 0, sizeof(AllocWork));
		strlcpy(w->name, req->name, NAMEDATALEN);
		w->n = req->n;
		w->index = i;
		w->ticket = req->ticket;
	}
	LWLockRelease(ALLOC_LOCK());
	return n;
}

/* Answer the backends' requests among works (not the cache's refills). */
void
allocator_answer(const AllocWork *works, int nworks)
{
	AllocRequest *reqs = queue->requests;
	int		   *wake = palloc(sizeof(int) * nworks);
	int			nwake = 0;

	LWLockAcquire(ALLOC_LOCK(), LW_EXCLUSIVE);
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
	LWLockRelease(ALLOC_LOCK());
	for (int i = 0; i < nwake; i++)
		SetLatch(&ProcGlobal->allProcs[wake[i]].procLatch);
	pfree(wake);
}
