/*-------------------------------------------------------------------------
 *
 * lease.h
 *	  Worker ids leased from a registry: the lease snowflake_next() checks,
 *	  and the "uidgen lease" background worker that keeps it.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_LEASE_H
#define UIDGEN_LEASE_H

#include "clock/clock.h"
#include "core/shmem.h"

/*
 * A lease in force is one word, UidgenShared->lease: its deadline in
 * milliseconds of the monotonic clock above the worker id (which takes at
 * most UIDGEN_MAX_LAYOUT_BITS bits); 0 when none is held.
 */
#define LEASE_WORKER(lease) \
	((int32) ((lease) & ((UINT64CONST(1) << UIDGEN_MAX_LAYOUT_BITS) - 1)))
#define LEASE_DEADLINE_MS(lease) ((lease) >> UIDGEN_MAX_LAYOUT_BITS)

extern void lease_register(void);
extern void lease_shmem_init(UidgenShared *s);
extern void lease_refuse(UidgenShared *s);
extern void lease_refuse_bound(UidgenShared *s, uint64 lease, uint64 bound);
extern int32 lease_worker_id(UidgenShared *s);
extern bool lease_deadline(UidgenShared *s, TimestampTz *at);
extern PGDLLEXPORT void uidgen_lease_main(Datum arg);

/* Before taking a tick: the lease in force, or an error if none is held. */
static inline uint64
lease_begin(UidgenShared *s)
{
	uint64		lease = pg_atomic_read_u64(&s->lease);

	if (unlikely(lease == 0))
		lease_refuse(s);
	return lease;
}

/*
 * After taking "tick" under "lease" (lease_begin()): false if the lease
 * changed meanwhile, when the tick must not be used (take another); an
 * error if the lease has lapsed or the tick is above the bound the registry
 * confirmed for it.
 */
static inline bool
lease_confirm(UidgenShared *s, uint64 lease, uint64 tick)
{
	uint64		bound;

	pg_read_barrier();
	bound = pg_atomic_read_u64(&s->lease_bound);
	pg_read_barrier();
	if (unlikely(pg_atomic_read_u64(&s->lease) != lease))
		return false;
	if (unlikely(UIDGEN_TICKS_TO_MS(clock_monotonic_ticks()) >= LEASE_DEADLINE_MS(lease)))
		lease_refuse(s);
	if (unlikely(tick > bound))
		lease_refuse_bound(s, lease, bound);
	return true;
}

#endif							/* UIDGEN_LEASE_H */
