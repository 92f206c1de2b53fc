/*-------------------------------------------------------------------------
 *
 * gapless.h
 *	  Block sequences of strategy 'gapless': numbers taken in the caller's
 *	  own transaction.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_GAPLESS_H
#define UIDGEN_GAPLESS_H

extern int64 gapless_take(Oid funcid, const char *name, int64 n, int64 *last);

#endif							/* UIDGEN_GAPLESS_H */
