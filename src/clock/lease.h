/*-------------------------------------------------------------------------
 *
 * lease.h
 *	  The worker id lease in force, leased from a registry: what
 *	  snowflake_next() checks, and what the lease worker publishes.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_LEASE_H
#define UIDGEN_LEASE_H

#include "datatype/timestamp.h"

#include "core/settings.h"

/*
 * A lease in force is one word: its deadline in milliseconds of the
 * monotonic clock above the worker id (which takes at most
 * UIDGEN_MAX_LAYOUT_BITS bits); 0 when none is held.
 */
#define LEASE_WORKER(lease) \
	((int32) ((lease) & ((UINT64CONST(1) << UIDGEN_MAX_LAYOUT_BITS) - 1)))
#define LEASE_DEADLINE_MS(lease) ((lease) >> UIDGEN_MAX_LAYOUT_BITS)

/* Room for a lease holder's name. */
#define LEASE_HOLDER_LEN 256

extern void lease_register(void);
extern int	lease_margin_ms(void);
extern int	lease_period_ms(void);
extern int	lease_timeout_ms(void);
extern const char *lease_tick_str(uint64 tick);

/* For generators and uidgen_status() */
extern uint64 lease_begin(void);
extern bool lease_confirm(uint64 lease, uint64 tick);
extern int32 lease_worker_id(void);
extern bool lease_deadline(TimestampTz *at);
extern const char *lease_holder(void);

/* For the lease worker (replicas/leaseworker.c) */
extern int32 lease_held(void);
extern void lease_clear(void);
extern void lease_note_error(const char *error);
extern void lease_claimed(int32 worker, uint64 floor);
extern void lease_publish(int32 worker, uint64 sent, uint64 bound);
extern void lease_lost(int32 worker, const char *holder);

#endif							/* UIDGEN_LEASE_H */
