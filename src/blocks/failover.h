/*-------------------------------------------------------------------------
 *
 * failover.h
 *	  Block sequences across a timeline change (promotion, the end of a
 *	  point-in-time recovery): the skip ahead before the first block.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_FAILOVER_H
#define UIDGEN_FAILOVER_H

#include "blocks/reservation.h"

extern bool failover_prepare_round(AllocWork *works, int nworks);
extern void failover_end_round(bool committed);

#endif							/* UIDGEN_FAILOVER_H */
