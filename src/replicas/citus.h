/*-------------------------------------------------------------------------
 *
 * citus.h
 *	  The worker id of a Citus node that has none configured: adopted from
 *	  Citus's group id; and a worker id shared by two nodes, refused.
 *
 * Locking: the state lock (UIDGEN_LOCK_STATE, core/shmem.h) protects the
 * conflict this module keeps in shared memory (written by
 * uidgen_citus_refuse(), read by snowflake_next() and uidgen_status()).
 * The adopted worker id itself is the state file's (clock/statefile.c).
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_CITUS_H
#define UIDGEN_CITUS_H

extern void citus_register(void);
extern int32 citus_worker_id(void);
extern bool citus_conflict(void);
extern void citus_refuse_conflict(void);
extern const char *citus_worker_source(void);

#endif							/* UIDGEN_CITUS_H */
