/*-------------------------------------------------------------------------
 *
 * citusblocks.h
 *	  Block sequences of a Citus worker: the coordinator's, reserved over
 *	  libpq and served from this node's shared memory.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_CITUSBLOCKS_H
#define UIDGEN_CITUSBLOCKS_H

extern void citusblocks_register(void);
extern bool citusblocks_remote(void);
extern void citusblocks_reserve(const char *name, int64 n, int64 *first, int64 *last);
extern int64 citusblocks_next(const char *name);
extern void citusblocks_forget_database(Oid dbid);

#endif							/* UIDGEN_CITUSBLOCKS_H */
