/*-------------------------------------------------------------------------
 *
 * walmark.h
 *	  The high-water mark in WAL, for standbys and restores.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_WALMARK_H
#define UIDGEN_WALMARK_H

/*
 * uidgen's custom WAL resource manager ID.  IDs 128 to 255 are for
 * extensions; two extensions loaded together must not share one.
 */
#define UIDGEN_RMGR_ID 201

/* What replay does with a mark and the worker id that wrote it. */
typedef void (*WalMarkReplay) (uint64 mark, int32 worker_id);

extern void walmark_register(WalMarkReplay replay);
extern void walmark_log(uint64 mark, int32 worker_id);
extern void walmark_check_stream(void);

#endif							/* UIDGEN_WALMARK_H */
