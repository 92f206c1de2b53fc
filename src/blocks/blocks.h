/*-------------------------------------------------------------------------
 *
 * blocks.h
 *	  Block sequences: the SQL-callable functions, and the hooks that give
 *	  the allocator and the seq_next() cache their settings, shared memory
 *	  and invalidations.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_BLOCKS_H
#define UIDGEN_BLOCKS_H

extern void blocks_register(void);

#endif							/* UIDGEN_BLOCKS_H */
