/*-------------------------------------------------------------------------
 *
 * allocworker.h
 *	  The "uidgen allocator" background worker.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_ALLOCWORKER_H
#define UIDGEN_ALLOCWORKER_H

extern PGDLLEXPORT void uidgen_allocator_main(Datum arg);

#endif							/* UIDGEN_ALLOCWORKER_H */
