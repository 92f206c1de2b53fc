/*-------------------------------------------------------------------------
 *
 * lease.c
 *	  The worker id lease in force (uidgen.worker_id_registry): what
 *	  snowflake_next() checks each tick against, what it is told when
 *	  there is none, and the lease worker's way to publish, lose and clear
 *	  it (replicas/leaseworker.c claims, renews and releases it on the
 *	  registry).
 *
 * Here a lease ends at a deadline on the monotonic clock: the time just
 * before the renewal was sent, plus uidgen.worker_lease, less a margin (a
 * tenth of the lease, at least a second), so it passes before the registry
 * can give the worker id to another server.  No tick above the bound the
 * registry confirmed (lease_bound) is handed out under the lease.
 *
 * Locking: lease (deadline and worker id in one word) and lease_bound are
 * written by the lease worker alone and read without a lock: the bound
 * before the word that makes it valid, the word cleared before another
 * worker id is claimed; a generator reads the word, takes its tick, then
 * reads the bound and the word again (lease_confirm()).  lease_held is the
 * lease worker's own.  lease_holder is written by the postmaster before any
 * other process exists.  The state lock (UIDGEN_LOCK_STATE, core/shmem.h)
 * protects lease_confirmed_at, lease_lost_worker, lease_lost_to and
 * lease_error, and is held while the clocks move above a claimed worker
 * id's bound.  What is made durable before what, for a claim, a renewal
 * and a release, is in the header of replicas/leaseworker.c.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "miscadmin.h"
#include "port/atomics.h"
#include "postmaster/postmaster.h"
#include "utils/timestamp.h"
#include "access/xlog.h"

#include "clock/clock.h"
#include "clock/lease.h"
#include "core/settings.h"
#include "core/shmem.h"
#include "core/timeconv.h"

typedef struct LeaseShared
{
	pg_atomic_uint64 lease;		/* deadline and worker id in force, or 0 */
	pg_atomic_uint64 lease_bound;	/* no tick above it is handed out under it */
	int32		lease_held;		/* worker id the registry row names us for, or -1 */
	int32		lease_lost_worker;	/* worker id lost to another server, or -1 */
	TimestampTz lease_confirmed_at; /* last renewal, or 0 */
	char		lease_holder[LEASE_HOLDER_LEN]; /* this server, in the registry */
	char		lease_lost_to[LEASE_HOLDER_LEN];	/* who took lease_lost_worker */
	char		lease_error[256];	/* why the registry last failed, or "" */
} LeaseShared;

static LeaseShared *ls = NULL;

/* The deadline is this much before the registry's expiry, at the latest. */
int
lease_margin_ms(void)
{
	return Max(1000, uidgen_worker_lease_ms / 10);
}

/* How often the lease is renewed. */
int
lease_period_ms(void)
{
	return uidgen_worker_lease_ms / 3;
}

/* The bound on one call to the registry: up to 5 s, within a period. */
int
lease_timeout_ms(void)
{
	return Max(1000, Min(5000, lease_period_ms()));
}

/* A tick as the timestamp it stands for, for messages. */
const char *
lease_tick_str(uint64 tick)
{
	return timestamptz_to_str(unix_ms_to_timestamptz(UIDGEN_TICKS_TO_MS(tick)));
}

/*
 * Shared memory set-up, in the postmaster: no lease, and this server's name
 * in the registry, unique to this shared memory's lifetime (a restart after
 * a crash makes a new one) by a random nonce.
 */
static void
lease_shmem_init(void *mem)
{
	LeaseShared *s = mem;
	char		host[128];
	uint64		nonce;

	pg_atomic_init_u64(&s->lease, 0);
	pg_atomic_init_u64(&s->lease_bound, 0);
	s->lease_held = -1;
	s->lease_lost_worker = -1;
	s->lease_confirmed_at = 0;
	s->lease_lost_to[0] = '\0';
	s->lease_error[0] = '\0';
	s->lease_holder[0] = '\0';
	if (!uidgen_registry_on)
		return;
	if (gethostname(host, sizeof(host)) != 0)
		strlcpy(host, "unknown host", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	if (!pg_strong_random(&nonce, sizeof(nonce)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random nonce for the worker id lease")));
	snprintf(s->lease_holder, LEASE_HOLDER_LEN,
			 "%s:%d pid %d system %llu nonce %016llx",
			 host, PostPortNumber, (int) MyProcPid,
			 (unsigned long long) GetSystemIdentifier(),
			 (unsigned long long) nonce);
}

/* The error of a generator that holds no lease. */
static void
lease_refuse(void)
{
	uint64		lease = pg_atomic_read_u64(&ls->lease);
	int32		worker = lease != 0 ? LEASE_WORKER(lease) : ls->lease_held;
	int32		lost;
	TimestampTz confirmed;
	char		lost_to[LEASE_HOLDER_LEN];
	char		error[sizeof(ls->lease_error)];
	StringInfoData detail;

	LWLockAcquire(shmem_lock(UIDGEN_LOCK_STATE), LW_SHARED);
	lost = ls->lease_lost_worker;
	confirmed = ls->lease_confirmed_at;
	strlcpy(lost_to, ls->lease_lost_to, sizeof(lost_to));
	strlcpy(error, ls->lease_error, sizeof(error));
	LWLockRelease(shmem_lock(UIDGEN_LOCK_STATE));

	initStringInfo(&detail);
	if (lost >= 0)
		appendStringInfo(&detail, "The lease on worker id %d was taken by %s%s%s.",
						 lost, lost_to[0] ? "\"" : "another server",
						 lost_to, lost_to[0] ? "\"" : "");
	else if (confirmed == 0)
		appendStringInfoString(&detail, "The registry has not granted this server a lease since it started.");
	else
		appendStringInfo(&detail, "The registry last confirmed the lease on worker id %d at %s.",
						 worker, timestamptz_to_str(confirmed));
	/* the server log has libpq's message: it may name the registry's host and user */
	if (error[0] != '\0')
		appendStringInfoString(&detail, " The last attempt to reach the registry failed; the server log says why.");
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("uidgen holds no lease on a worker id"),
			 errdetail("%s", detail.data),
			 errhint("Check that the registry in uidgen.worker_id_registry is reachable; generation resumes when the lease is renewed.")));
}

/* The error of a generator whose tick is above the lease's confirmed bound. */
static void
lease_refuse_bound(uint64 lease, uint64 bound)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the snowflake clock is past the bound the registry confirmed for worker id %d",
					LEASE_WORKER(lease)),
			 errdetail("IDs with this worker id may go up to %s until the next renewal; the system clock may have jumped forward.",
					   lease_tick_str(bound)),
			 errhint("Generation resumes when the lease is renewed, within %d ms.",
					 lease_period_ms())));
}

/* The worker id this server holds a lease on, or -1. */
int32
lease_worker_id(void)
{
	uint64		lease = pg_atomic_read_u64(&ls->lease);

	if (lease == 0 ||
		UIDGEN_TICKS_TO_MS(clock_monotonic_ticks()) >= LEASE_DEADLINE_MS(lease))
		return -1;
	return LEASE_WORKER(lease);
}

/* The wall-clock time the last lease granted lapses (or lapsed); false if none. */
bool
lease_deadline(TimestampTz *at)
{
	uint64		lease = pg_atomic_read_u64(&ls->lease);
	int64		left_ms;

	if (lease == 0)
		return false;
	left_ms = (int64) LEASE_DEADLINE_MS(lease) -
		(int64) UIDGEN_TICKS_TO_MS(clock_monotonic_ticks());
	*at = GetCurrentTimestamp() + left_ms * 1000;
	return true;
}

/* Register the lease's shared memory (from _PG_init, when preloaded). */
void
lease_register(void)
{
	shmem_register("uidgen lease", sizeof(LeaseShared), 0, lease_shmem_init, (void **) &ls);
}

/* Before taking a tick: the lease in force, or an error if none is held. */
uint64
lease_begin(void)
{
	uint64		lease = pg_atomic_read_u64(&ls->lease);

	if (unlikely(lease == 0))
		lease_refuse();
	return lease;
}

/*
 * After taking "tick" under "lease" (lease_begin()): false if the lease
 * changed meanwhile, when the tick must not be used (take another); an
 * error if the lease has lapsed or the tick is above the bound the registry
 * confirmed for it.
 */
bool
lease_confirm(uint64 lease, uint64 tick)
{
	uint64		bound;

	pg_read_barrier();
	bound = pg_atomic_read_u64(&ls->lease_bound);
	pg_read_barrier();
	if (unlikely(pg_atomic_read_u64(&ls->lease) != lease))
		return false;
	if (unlikely(UIDGEN_TICKS_TO_MS(clock_monotonic_ticks()) >= LEASE_DEADLINE_MS(lease)))
		lease_refuse();
	if (unlikely(tick > bound))
		lease_refuse_bound(lease, bound);
	return true;
}

/* This server's name in the registry. */
const char *
lease_holder(void)
{
	return ls->lease_holder;
}

/* Lease worker: the worker id the registry row names us for, or -1. */
int32
lease_held(void)
{
	return ls->lease_held;
}

/* Lease worker: no lease is in force any more; no tick is taken under it. */
void
lease_clear(void)
{
	pg_atomic_write_u64(&ls->lease, 0);
	pg_memory_barrier();
}

/* Lease worker: the registry failed; keep why. */
void
lease_note_error(const char *error)
{
	LWLockAcquire(shmem_lock(UIDGEN_LOCK_STATE), LW_EXCLUSIVE);
	strlcpy(ls->lease_error, error, sizeof(ls->lease_error));
	LWLockRelease(shmem_lock(UIDGEN_LOCK_STATE));
}

/*
 * Lease worker: "worker" is claimed; move the clocks above the bound the
 * registry held for it (and above every tick handed out before, so that
 * IDs stay in order across the change of worker id).
 */
void
lease_claimed(int32 worker, uint64 floor)
{
	LWLockAcquire(shmem_lock(UIDGEN_LOCK_STATE), LW_EXCLUSIVE);
	clock_raise(Max(floor, clock_latest()));
	ls->lease_held = worker;
	LWLockRelease(shmem_lock(UIDGEN_LOCK_STATE));
}

/* Lease worker: publish a renewed lease, sent at "sent", with its bound. */
void
lease_publish(int32 worker, uint64 sent, uint64 bound)
{
	uint64		deadline_ms = UIDGEN_TICKS_TO_MS(sent) + uidgen_worker_lease_ms -
		lease_margin_ms();

	LWLockAcquire(shmem_lock(UIDGEN_LOCK_STATE), LW_EXCLUSIVE);
	ls->lease_confirmed_at = GetCurrentTimestamp();
	ls->lease_lost_worker = -1;
	ls->lease_lost_to[0] = '\0';
	ls->lease_error[0] = '\0';
	LWLockRelease(shmem_lock(UIDGEN_LOCK_STATE));
	pg_atomic_write_u64(&ls->lease_bound, bound);
	pg_write_barrier();
	pg_atomic_write_u64(&ls->lease, (deadline_ms << UIDGEN_MAX_LAYOUT_BITS) | (uint64) worker);
}

/*
 * Lease worker: the registry names another holder for our worker id, or
 * "" if it has no lease on it for us; the caller cleared the lease.
 */
void
lease_lost(int32 worker, const char *holder)
{
	LWLockAcquire(shmem_lock(UIDGEN_LOCK_STATE), LW_EXCLUSIVE);
	ls->lease_held = -1;
	ls->lease_lost_worker = worker;
	strlcpy(ls->lease_lost_to, holder, sizeof(ls->lease_lost_to));
	LWLockRelease(shmem_lock(UIDGEN_LOCK_STATE));
}
