/*-------------------------------------------------------------------------
 *
 * identity.h
 *	  Which server a data directory belongs to, and why it may be a copy.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_IDENTITY_H
#define UIDGEN_IDENTITY_H

/* Why this data directory may share its ID space with the one it came from. */
typedef enum UidgenCopyReason
{
	UIDGEN_COPY_NONE,
	UIDGEN_COPY_STANDBY,		/* started with standby.signal */
	UIDGEN_COPY_RECOVERY,		/* started with recovery.signal */
	UIDGEN_COPY_BASE_BACKUP,	/* started from a backup_label */
	UIDGEN_COPY_TIMELINE,		/* on another timeline than vouched for */
	UIDGEN_COPY_DIRECTORY,		/* in another data directory */
	UIDGEN_COPY_SYSTEM			/* another system identifier */
} UidgenCopyReason;

/* What the state file vouches for; a zero field is not known yet. */
typedef struct UidgenIdentity
{
	uint64		sysid;			/* pg_control's system identifier */
	uint64		dir_ino;		/* inode of the data directory */
	uint32		timeline;		/* timeline IDs were issued on */
} UidgenIdentity;

extern void identity_current(UidgenIdentity *id);
extern UidgenCopyReason identity_copy_at_start(const UidgenIdentity *vouched);
extern const char *identity_reason_name(UidgenCopyReason reason);
extern const char *identity_reason_detail(UidgenCopyReason reason);

#endif							/* UIDGEN_IDENTITY_H */
