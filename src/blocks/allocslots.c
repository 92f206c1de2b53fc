/*-------------------------------------------------------------------------
 *
 * allocslots.c
 *	  The block allocator's database slots: which "uidgen allocator"
 *	  worker (blocks/allocworker.c) serves which database, and how a
 *	  backend starts or wakes it.
 *
 * Each database in use has one dynamic background worker, started by the
 * first backend that needs it (in one of uidgen.block_databases slots) and
 * gone after uidgen.allocator_idle_timeout without work, or when its
 * database is dropped.  Each launch of a slot has a token (slot and
 * generation): a request or refill taken by an allocator whose token is no
 * longer alive is put back by its backend (blocks/allocqueue.c,
 * blocks/blockcache.c), which starts a new allocator.
 *
 * Locking: the allocator lock (UIDGEN_LOCK_ALLOCATOR, core/shmem.h)
 * protects every slot; blocks/allocqueue.c holds it too for its requests,
 * and calls the *_locked functions here under it.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "blocks/allocslots.h"
#include "core/compat.h"
#include "core/settings.h"
#include "core/shmem.h"

/* A launched allocator that has not attached after this is given up. */
#define ALLOC_LAUNCH_TIMEOUT_MS 10000
#define ALLOC_LOCK() shmem_lock(UIDGEN_LOCK_ALLOCATOR)

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

typedef struct SlotsShared
{
	int			nslots;
	AllocSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} SlotsShared;

static SlotsShared *alloc_shared = NULL;

/* In an allocator worker: its slot, and the token of its launch. */
static int	my_slot = -1;
static uint64 my_token = 0;

/* Set the slots up (postmaster). */
static void
allocslots_shmem_init(void *mem)
{
	SlotsShared *a = mem;

	a->nslots = uidgen_block_databases;
	for (int i = 0; i < a->nslots; i++)
		a->slots[i].procno = -1;
}

/* Register the slots' shared memory (from _PG_init, when preloaded). */
void
allocslots_register(void)
{
	shmem_register("uidgen allocator",
				   add_size(offsetof(SlotsShared, slots),
							mul_size(uidgen_block_databases, sizeof(AllocSlot))),
				   0, allocslots_shmem_init, (void **) &alloc_shared);
}

/* The token naming one launch of one slot's allocator. */
static inline uint64
alloc_token_of(int slot, uint32 generation)
{
	return ((uint64) (slot + 1) << 32) | generation;
}

/* Is the allocator that a token names still attached?  Lock held. */
bool
allocslots_token_alive_locked(uint64 token)
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

	LWLockAcquire(ALLOC_LOCK(), LW_SHARED);
	alive = allocslots_token_alive_locked(token);
	LWLockRelease(ALLOC_LOCK());
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

	LWLockAcquire(ALLOC_LOCK(), LW_EXCLUSIVE);
	if (alloc_shared->slots[slot].generation == generation)
		alloc_shared->slots[slot].launching = false;
	LWLockRelease(ALLOC_LOCK());
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

	LWLockAcquire(ALLOC_LOCK(), LW_EXCLUSIVE);
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
	LWLockRelease(ALLOC_LOCK());

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

	LWLockAcquire(ALLOC_LOCK(), LW_SHARED);
	slot = alloc_slot_of(dbid);
	if (slot >= 0)
		procno = alloc_shared->slots[slot].procno;
	LWLockRelease(ALLOC_LOCK());
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
	LWLockAcquire(ALLOC_LOCK(), LW_EXCLUSIVE);
	slot = alloc_slot_of(dbid);
	if (slot >= 0)
	{
		alloc_shared->slots[slot].exit_requested = true;
		procno = alloc_shared->slots[slot].procno;
	}
	LWLockRelease(ALLOC_LOCK());
	if (procno >= 0)
		SetLatch(&ProcGlobal->allProcs[procno].procLatch);
}

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
	LWLockAcquire(ALLOC_LOCK(), LW_EXCLUSIVE);
	if (s->generation == generation && s->procno < 0 && s->launching)
	{
		s->procno = UIDGEN_MY_PROCNO;
		s->launching = false;
		dbid = s->dbid;
	}
	LWLockRelease(ALLOC_LOCK());
	if (OidIsValid(dbid))
	{
		my_slot = slot;
		my_token = alloc_token_of(slot, generation);
	}
	return dbid;
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

/* The database this allocator serves. */
Oid
allocslots_my_dbid(void)
{
	return alloc_shared->slots[my_slot].dbid;
}

/* Leave this allocator's slot, if its launch is still the slot's.  Lock held. */
void
allocslots_detach_locked(void)
{
	AllocSlot  *s = &alloc_shared->slots[my_slot];

	if (allocslots_token_alive_locked(my_token))
	{
		s->procno = -1;
		s->launching = false;
	}
}

/* This allocator retires: the next request starts a new one.  Lock held. */
void
allocslots_retire_locked(void)
{
	alloc_shared->slots[my_slot].procno = -1;
}
