/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  Reserve and initialise uidgen's shared memory (shmem_request_hook and
 *	  shmem_startup_hook).
 *
 * The struct and its locking rules are described in shmem.h.  It is set up
 * once by the postmaster, from the state file, before any backend exists.
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

#include "clock/clock.h"
#include "core/compat.h"
#include "replicas/copies.h"
#include "clock/lease.h"
#include "core/shmem.h"
#include "clock/statefile.h"

#define UIDGEN_TRANCHE "uidgen"

UidgenShared *uidgen_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Processes that can call uidgen functions: one slot each in shared arrays. */
int
shmem_nprocs(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

/* Size of the shared struct. */
static Size
shmem_size(void)
{
	return add_size(offsetof(UidgenShared, procs),
					mul_size(shmem_nprocs(), sizeof(UidgenProcCounters)));
}

/* shmem_request_hook: reserve our memory and our lock. */
static void
shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shmem_size());
	RequestNamedLWLockTranche(UIDGEN_TRANCHE, 1);
}

/* shmem_startup_hook: create the struct and load the state file into it. */
static void
shmem_startup(void)
{
	bool		found;
	UidgenShared *s;
	uint64		floor;
	uint64		saved_at;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	s = ShmemInitStruct("uidgen", shmem_size(), &found);
	if (!found)
	{
		memset(s, 0, shmem_size());
		s->lock = &(GetNamedLWLockTranche(UIDGEN_TRANCHE))->lock;
		s->keeper_procno = -1;
		s->nprocs = shmem_nprocs();
		pg_atomic_init_u64(&s->hwm, 0);
		pg_atomic_init_u64(&s->hwm_refresh_at, 0);
		pg_atomic_init_u64(&s->episodes, 0);
		pg_atomic_init_u64(&s->waits, 0);
		for (int i = 0; i < s->nprocs; i++)
		{
			pg_atomic_init_u64(&s->procs[i].snowflakes, 0);
			pg_atomic_init_u64(&s->procs[i].uuids, 0);
			pg_atomic_init_u64(&s->procs[i].last_snowflake, 0);
		}
		floor = statefile_load(s, &saved_at);
		clock_init(s, floor, saved_at);
		copies_start(s);
		lease_shmem_init(s);
		/* the mark moves only once a tick above the start is handed out */
		pg_atomic_write_u64(&s->hwm_refresh_at, clock_latest(s));
	}
	uidgen_shared = s;
	LWLockRelease(AddinShmemInitLock);
}

/* Install the shared memory hooks (from _PG_init, when preloaded). */
void
shmem_install_hooks(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shmem_startup;
}

/* The shared struct, or an error saying how to load uidgen. */
UidgenShared *
shmem_get(void)
{
	if (unlikely(uidgen_shared == NULL && IsBinaryUpgrade))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uidgen does not generate IDs in binary-upgrade mode")));
	if (unlikely(uidgen_shared == NULL))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uidgen must be loaded via \"shared_preload_libraries\""),
				 errhint("Add uidgen to the \"shared_preload_libraries\" setting in postgresql.conf and restart the server.")));
	return uidgen_shared;
}

/* This process's counters slot. */
UidgenProcCounters *
shmem_my_counters(void)
{
	return &uidgen_shared->procs[UIDGEN_MY_PROCNO];
}
