/*-------------------------------------------------------------------------
 *
 * citus.h
 *	  The worker id of a Citus node that has none configured: adopted from
 *	  Citus's group id; and a worker id shared by two nodes, refused.
 *
 * This module keeps no shared memory: the adopted worker id and a worker
 * id refused for a conflict are the state file's (clock/statefile.c),
 * durable before they are published.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_CITUS_H
#define UIDGEN_CITUS_H

extern int32 citus_worker_id(void);
extern bool citus_conflict(void);
extern void citus_refuse_conflict(void);
extern const char *citus_worker_source(void);

#endif							/* UIDGEN_CITUS_H */
