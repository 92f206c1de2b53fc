/*-------------------------------------------------------------------------
 *
 * blockcache.h
 *	  The shared cache behind seq_next(): per (database, sequence), the
 *	  range IDs are being served from and the next range, fetched ahead.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_BLOCKCACHE_H
#define UIDGEN_BLOCKCACHE_H

#include "blocks/allocator.h"

extern void blockcache_register(void);
extern int64 blockcache_next(const char *name, Oid funcid);
extern void blockcache_invalidate(Oid dbid, const char *name);
extern int	blockcache_collect(Oid dbid, uint64 token, AllocWork *works, int max);
extern void blockcache_deliver(const AllocWork *work);
extern bool blockcache_has_requests(Oid dbid);
extern void blockcache_wake_database(Oid dbid);

#endif							/* UIDGEN_BLOCKCACHE_H */
