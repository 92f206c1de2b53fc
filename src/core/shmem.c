/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  Reserve and create every module's shared memory and uidgen's LWLocks
 *	  (shmem_request_hook and shmem_startup_hook).
 *
 * What each area holds, and which lock protects what, is said in the
 * header of the module that owns it.  The lock pointers are kept here, in
 * each process, as the startup hook finds them.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/twophase.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "core/shmem.h"

#define STATE_TRANCHE "uidgen"
#define BLOCKS_TRANCHE "uidgen blocks"
#define MAX_AREAS 8

static const UidgenShmemArea *areas[MAX_AREAS];
static int	nareas = 0;
static LWLock *locks[UIDGEN_LOCK_BLOCK_CACHE + 1];
static bool attached = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Processes that can call uidgen functions: one slot each in shared arrays. */
int
shmem_nprocs(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

/* shmem_request_hook: reserve every area and the locks. */
static void
shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	for (int i = 0; i < nareas; i++)
		RequestAddinShmemSpace(areas[i]->size());
	RequestNamedLWLockTranche(STATE_TRANCHE, 1);
	RequestNamedLWLockTranche(BLOCKS_TRANCHE, 2);
}

/* shmem_startup_hook: find the locks, create or attach every area in order. */
static void
shmem_startup(void)
{
	LWLockPadded *blocks;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	locks[UIDGEN_LOCK_STATE] = &(GetNamedLWLockTranche(STATE_TRANCHE))->lock;
	blocks = GetNamedLWLockTranche(BLOCKS_TRANCHE);
	locks[UIDGEN_LOCK_ALLOCATOR] = &blocks[0].lock;
	locks[UIDGEN_LOCK_BLOCK_CACHE] = &blocks[1].lock;
	for (int i = 0; i < nareas; i++)
	{
		bool		found;
		void	   *mem = ShmemInitStruct(areas[i]->name, areas[i]->size(), &found);

		*areas[i]->mem = mem;
		if (!found)
		{
			memset(mem, 0, areas[i]->size());
			areas[i]->init(mem);
		}
	}
	attached = true;
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Register a module's area (from _PG_init, when preloaded); the first call
 * installs the hooks.
 */
void
shmem_register(const UidgenShmemArea *area)
{
	if (nareas == 0)
	{
		prev_shmem_request_hook = shmem_request_hook;
		shmem_request_hook = shmem_request;
		prev_shmem_startup_hook = shmem_startup_hook;
		shmem_startup_hook = shmem_startup;
	}
	if (nareas >= MAX_AREAS)
		elog(ERROR, "uidgen registers too many shared memory areas");
	areas[nareas++] = area;
}

/* One of uidgen's LWLocks. */
LWLock *
shmem_lock(UidgenLock which)
{
	return locks[which];
}

/* Refuse to run, saying how to load uidgen, unless its memory is there. */
void
shmem_require(void)
{
	if (unlikely(!attached && IsBinaryUpgrade))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uidgen does not generate IDs in binary-upgrade mode")));
	if (unlikely(!attached))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uidgen must be loaded via \"shared_preload_libraries\""),
				 errhint("Add uidgen to the \"shared_preload_libraries\" setting in postgresql.conf and restart the server.")));
}
