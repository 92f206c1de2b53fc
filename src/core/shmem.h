/*-------------------------------------------------------------------------
 *
 * shmem.h
 *	  The shared memory that every backend's generators work from.
 *
 * Locking:
 *	- clocks[] are the logical clocks, one per kind of ID.  They only move
 *	  forward, by compare-and-swap, and never under a lock.
 *	- hwm (the durable high-water mark) and hwm_refresh_at are written only
 *	  while holding lock, after the state file that holds the new mark has
 *	  been made durable; they are read without it.
 *	- ref_offset, stepped_back, episodes and waits are maintained atomically
 *	  without a lock (see clock.c).
 *	- lock also protects recorded, problem and rebase_pending, and what
 *	  copies.c keeps: vouched, copy_reason, blocks_fenced, skip_nonce,
 *	  origin_worker and
 *	  origin_mark_saved.  origin_mark is written under lock (by WAL replay,
 *	  walmark.c) and read without it.
 *	- keeper_procno is written by the keeper worker alone.
 *	- lease and lease_bound (the worker id lease in force, lease.c) are
 *	  written by the lease worker alone, without a lock, in an order that
 *	  lets generators read them without one; lease_held is the lease
 *	  worker's alone.  lease_holder is written once, by the postmaster,
 *	  before any other process exists.  lock protects lease_confirmed_at,
 *	  lease_lost_worker, lease_lost_to and lease_error.
 *	- each backend writes only its own entry of procs[].
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_SHMEM_H
#define UIDGEN_SHMEM_H

#include "datatype/timestamp.h"
#include "port/atomics.h"
#include "storage/lwlock.h"

#include "clock/identity.h"
#include "core/settings.h"

/* Room for a lease holder's name (lease.c). */
#define UIDGEN_HOLDER_LEN 256

/* Why generation is refused, as found in the state file at start-up. */
typedef enum UidgenStateProblem
{
	UIDGEN_STATE_OK,
	UIDGEN_STATE_SETTINGS_CHANGED,	/* snowflake_next() cannot run */
	UIDGEN_STATE_COPY,			/* a copy with its origin's worker id: neither
								 * snowflake_next() nor block sequences run */
	/* from here on no generator can run (one test on the hot path) */
	UIDGEN_STATE_CORRUPT,
	UIDGEN_STATE_UPGRADE_UNKNOWN	/* pg_upgrade without a mark */
} UidgenStateProblem;

/* Per-process counters: written by their owner only, summed by status. */
typedef struct UidgenProcCounters
{
	pg_atomic_uint64 snowflakes;
	pg_atomic_uint64 uuids;
	pg_atomic_uint64 last_snowflake;
	char		pad[PG_CACHE_LINE_SIZE - 3 * sizeof(pg_atomic_uint64)];
} UidgenProcCounters;

/*
 * The logical clocks: snowflake IDs and UUIDs each have their own, so that a
 * burst of one kind does not run the other's timestamps ahead.
 */
typedef enum UidgenClockKind
{
	UIDGEN_CLOCK_SNOWFLAKE,
	UIDGEN_CLOCK_UUID,
	UIDGEN_NCLOCKS
} UidgenClockKind;

/* One clock, alone on its cache line. */
typedef union UidgenClock
{
	pg_atomic_uint64 last;		/* last tick handed out */
	char		pad[PG_CACHE_LINE_SIZE];
} UidgenClock;

typedef struct UidgenShared
{
	UidgenClock clocks[UIDGEN_NCLOCKS];

	pg_atomic_uint64 hwm;		/* durable: no tick above it was handed out */
	pg_atomic_uint64 hwm_refresh_at;	/* wake the keeper past this tick */
	pg_atomic_uint64 ref_offset;	/* real time minus monotonic time, ticks */
	pg_atomic_uint32 stepped_back;	/* in an episode: real time held */
	pg_atomic_uint64 episodes;	/* wall clock steps backwards seen */
	pg_atomic_uint64 waits;		/* calls that waited for real time */
	int			keeper_procno;	/* keeper's PGPROC number, or -1 */

	LWLock	   *lock;
	bool		rebase_pending; /* started in recovery, not yet rebased */
	bool		recovery_signalled; /* started with standby.signal or
									 * recovery.signal: its recovery ends on a
									 * new timeline */
	UidgenStateProblem problem;
	int32		file_worker;	/* uidgen.worker_id of the server that wrote
								 * the state file found at start-up, or -1 */
	UidgenSettings recorded;	/* settings the state file vouches for */

	/* copies (copies.c) */
	UidgenIdentity vouched;		/* the server the state file vouches for */
	UidgenCopyReason copy_reason;	/* why this is a copy, or NONE */
	bool		blocks_fenced;	/* block sequences wait for uidgen_take_over() */
	uint32		skip_nonce;		/* random, drawn at each take-over: the skip
								 * key of block sequences (copies.c); 0 if none */
	int32		origin_worker;	/* worker id of the server copied from, or -1 */
	pg_atomic_uint64 origin_mark;	/* highest mark replayed from its WAL */
	uint64		origin_mark_saved;	/* origin_mark as the state file holds it */

	/* worker id leases (lease.c) */
	pg_atomic_uint64 lease;		/* deadline and worker id in force, or 0 */
	pg_atomic_uint64 lease_bound;	/* no tick above it is handed out under it */
	int32		lease_held;		/* worker id the registry row names us for, or -1 */
	int32		lease_lost_worker;	/* worker id lost to another server, or -1 */
	TimestampTz lease_confirmed_at; /* last renewal, or 0 */
	char		lease_holder[UIDGEN_HOLDER_LEN];	/* this server, in the registry */
	char		lease_lost_to[UIDGEN_HOLDER_LEN];	/* who took lease_lost_worker */
	char		lease_error[256];	/* why the registry last failed, or "" */

	int			nprocs;
	UidgenProcCounters procs[FLEXIBLE_ARRAY_MEMBER];
} UidgenShared;

extern UidgenShared *uidgen_shared;

extern void shmem_install_hooks(void);
extern int	shmem_nprocs(void);
extern UidgenShared *shmem_get(void);
extern UidgenProcCounters *shmem_my_counters(void);

#endif							/* UIDGEN_SHMEM_H */
