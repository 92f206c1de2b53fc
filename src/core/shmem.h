/*-------------------------------------------------------------------------
 *
 * shmem.h
 *	  Shared-memory registration: each module's own area, the LWLocks
 *	  (tranches as pg_stat_activity names them) and the process count.
 *
 * Each module defines its shared struct in its .c file and registers it
 * from _PG_init (name, size, initialiser, where to keep the pointer); the
 * module then exposes functions, never the struct.  This module only does
 * the server's part, as pg_stat_statements does with its own hooks: it
 * reserves every area in shmem_request_hook and creates or attaches them,
 * in the order they were registered, in shmem_startup_hook.  An initialiser runs once, in the
 * postmaster, before any other process exists, so it may rely on the
 * areas registered before its own.
 *
 * The locks keep the two tranches uidgen always had: "uidgen" (one lock,
 * UIDGEN_LOCK_STATE: the state file and everything it records, the leases'
 * texts; see each module's header for what it protects) and "uidgen
 * blocks" (the allocator's slots and requests, the seq_next() cache).
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_SHMEM_H
#define UIDGEN_SHMEM_H

#include "storage/lwlock.h"

/* uidgen's LWLocks. */
typedef enum UidgenLock
{
	UIDGEN_LOCK_STATE,			/* tranche "uidgen" */
	UIDGEN_LOCK_ALLOCATOR,		/* tranche "uidgen blocks", first lock */
	UIDGEN_LOCK_BLOCK_CACHE		/* tranche "uidgen blocks", second lock */
} UidgenLock;

/* Set up a module's area (postmaster, first time; it is zeroed before). */
typedef void (*UidgenShmemInit) (void *mem);

extern void shmem_register(const char *name, Size size, Size per_proc,
						   UidgenShmemInit init, void **mem);
extern LWLock *shmem_lock(UidgenLock which);
extern int	shmem_nprocs(void);
extern void shmem_require(void);

#endif							/* UIDGEN_SHMEM_H */
