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

#include "blocks/reservation.h"

extern int64 blockcache_next(const char *name, Oid funcid);
extern int	blockcache_collect(Oid dbid, uint64 token, AllocWork *works, int max);
extern void blockcache_deliver(const AllocWork *work);
extern bool blockcache_has_requests(Oid dbid);

#endif							/* UIDGEN_BLOCKCACHE_H */
