/*-------------------------------------------------------------------------
 *
 * upgrade.h
 *	  Carry the high-water mark across pg_upgrade (binary-upgrade mode).
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_UPGRADE_H
#define UIDGEN_UPGRADE_H

extern void upgrade_refuse_late_load(void);
extern void upgrade_hand_over(void);

#endif							/* UIDGEN_UPGRADE_H */
