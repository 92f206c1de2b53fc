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
#define MAX_AREAS 16			/* uidgen registers 8 */

/* One module's shared memory. */
typedef struct ShmemArea
{
	const char *name;			/* as pg_shmem_allocations names it */
	Size		size;			/* and per_proc for each of shmem_nprocs() */
	Size		per_proc;
	UidgenShmemInit init;
	void	  **mem;			/* where the module keeps its pointer */
} ShmemArea;

static ShmemArea areas[MAX_AREAS];
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

/* The size of an area. */
static Size
shmem_area_size(const ShmemArea *area)
{
	return add_size(area->size, mul_size(area->per_proc, shmem_nprocs()));
}

/* shmem_request_hook: reserve every area and the locks. */
static void
shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	for (int i = 0; i < nareas; i++)
		RequestAddinShmemSpace(shmem_area_size(&areas[i]));
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
		Size		size = shmem_area_size(&areas[i]);
		bool		found;
		void	   *mem = ShmemInitStruct(areas[i].name, size, &found);

		*areas[i].mem = mem;
		if (!found)
		{
			memset(mem, 0, size);
			areas[i].init(mem);
		}
	}
	attached = true;
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Register a module's area (from _PG_init, when preloaded): "size" bytes
 * and "per_proc" more for each process that can call uidgen, set up by
 * "init", its address kept in *mem.  The first call installs the hooks.
 */
void
shmem_register(const char *name, Size size, Size per_proc,
			   UidgenShmemInit init, void **mem)
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
	areas[nareas++] = (ShmemArea) {name, size, per_proc, init, mem};
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
