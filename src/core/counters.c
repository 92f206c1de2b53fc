/*-------------------------------------------------------------------------
 *
 * counters.c
 *	  Per-process counts of the IDs generated: one cache line per process
 *	  that can call uidgen, in shared memory of their own.
 *
 * Locking: none.  Each process writes only its own slot (indexed by its
 * PGPROC number), with plain atomic reads and writes; uidgen_status() sums
 * every slot, so its totals are as of some moment during the sum.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/atomics.h"
#include "storage/shmem.h"

#include "core/compat.h"
#include "core/counters.h"
#include "core/shmem.h"

/* One process's counters, alone on its cache line. */
typedef struct ProcCounters
{
	pg_atomic_uint64 snowflakes;
	pg_atomic_uint64 uuids;
	pg_atomic_uint64 last_snowflake;
	char		pad[PG_CACHE_LINE_SIZE - 3 * sizeof(pg_atomic_uint64)];
} ProcCounters;

typedef struct CountersShared
{
	int			nprocs;
	ProcCounters procs[FLEXIBLE_ARRAY_MEMBER];
} CountersShared;

static CountersShared *counters = NULL;

/* Set the counters up (postmaster). */
static void
counters_init(void *mem)
{
	CountersShared *c = mem;

	c->nprocs = shmem_nprocs();
	for (int i = 0; i < c->nprocs; i++)
	{
		pg_atomic_init_u64(&c->procs[i].snowflakes, 0);
		pg_atomic_init_u64(&c->procs[i].uuids, 0);
		pg_atomic_init_u64(&c->procs[i].last_snowflake, 0);
	}
}

/* Register the counters' shared memory (from _PG_init, when preloaded). */
void
counters_register(void)
{
	shmem_register("uidgen counters", offsetof(CountersShared, procs),
				   sizeof(ProcCounters), counters_init, (void **) &counters);
}

/* This process generated snowflake ID "id". */
void
counters_count_snowflake(int64 id)
{
	ProcCounters *mine = &counters->procs[UIDGEN_MY_PROCNO];

	pg_atomic_write_u64(&mine->snowflakes, pg_atomic_read_u64(&mine->snowflakes) + 1);
	pg_atomic_write_u64(&mine->last_snowflake, (uint64) id);
}

/* This process generated a UUID. */
void
counters_count_uuid(void)
{
	ProcCounters *mine = &counters->procs[UIDGEN_MY_PROCNO];

	pg_atomic_write_u64(&mine->uuids, pg_atomic_read_u64(&mine->uuids) + 1);
}

/* The totals of every process, and the highest snowflake ID of any. */
void
counters_sum(uint64 *snowflakes, uint64 *uuids, uint64 *last_snowflake)
{
	*snowflakes = *uuids = *last_snowflake = 0;
	for (int p = 0; p < counters->nprocs; p++)
	{
		*snowflakes += pg_atomic_read_u64(&counters->procs[p].snowflakes);
		*uuids += pg_atomic_read_u64(&counters->procs[p].uuids);
		*last_snowflake = Max(*last_snowflake, pg_atomic_read_u64(&counters->procs[p].last_snowflake));
	}
}
