/*-------------------------------------------------------------------------
 *
 * leasewait.h
 *	  The coordinator's wait for the leases on Citus worker blocks.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_LEASEWAIT_H
#define UIDGEN_LEASEWAIT_H

#include "access/htup.h"
#include "access/tupdesc.h"

extern void leasewait_before_drop(Oid relid);
extern void leasewait_register(void);
extern bool leasewait_only_lease(HeapTuple oldtup, HeapTuple newtup, TupleDesc desc);

#endif							/* UIDGEN_LEASEWAIT_H */
