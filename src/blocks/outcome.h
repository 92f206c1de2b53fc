/*-------------------------------------------------------------------------
 *
 * outcome.h
 *	  What a caller does with an allocator's answer that is not a range:
 *	  wait for the lock that held the allocator off, or raise the error.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_OUTCOME_H
#define UIDGEN_OUTCOME_H

#include "utils/timestamp.h"

#include "blocks/reservation.h"

extern TimestampTz outcome_wait(const char *name, const AllocResult *res);
extern void outcome_raise(const char *name, const AllocResult *res);
extern void outcome_exhausted(const char *name, const AllocResult *res, const char *what);

#endif							/* UIDGEN_OUTCOME_H */
