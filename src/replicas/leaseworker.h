/*-------------------------------------------------------------------------
 *
 * leaseworker.h
 *	  The "uidgen lease" background worker, which keeps the worker id lease.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_LEASEWORKER_H
#define UIDGEN_LEASEWORKER_H

extern void leaseworker_register(void);
extern PGDLLEXPORT void uidgen_lease_main(Datum arg);

#endif							/* UIDGEN_LEASEWORKER_H */
