/*-------------------------------------------------------------------------
 *
 * statefileio.h
 *	  The state file's format ($PGDATA/uidgen.state), read and written.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_STATEFILEIO_H
#define UIDGEN_STATEFILEIO_H

#include "port/pg_crc32c.h"

#include "clock/identity.h"
#include "core/settings.h"

#define UIDGEN_STATE_FILE "uidgen.state"

/* The file's contents. */
typedef struct StateFileData
{
	uint32		magic;
	uint32		version;
	uint64		hwm;			/* no tick above this was handed out */
	uint64		saved_at;		/* real time when written (clock_save_time) */
	UidgenSettings settings;	/* the settings IDs were issued under */
	bool		rebase_pending; /* recovery ended, clock not yet moved */
	bool		upgrade_unknown;	/* pg_upgrade brought no mark (0.2.0: was
									 * padding, so false in 0.1.0's files) */
	/* from here on new in 0.2.0 (version 3); 0.1.0's CRC came here */
	uint8		copy_reason;	/* UidgenCopyReason: a copy not settled yet */
	bool		blocks_fenced;	/* block sequences wait for a take-over */
	uint32		skip_nonce;		/* random, drawn at each take-over: the skip
								 * key of block sequences (copies.c); 0 if none */
	int32		origin_worker;	/* worker id of the server copied from, or -1 */
	uint32		adopted_worker; /* 0.3.0: worker id adopted from Citus's group
								 * id, plus one; 0 if none (was padding, so 0
								 * in earlier files) */
	uint64		origin_mark;	/* highest mark replayed from its WAL */
	UidgenIdentity vouched;		/* the server IDs were issued by */
	uint32		refused_worker; /* version 4 (0.3.0): a worker id another
								 * node of the Citus cluster also uses, plus
								 * one; 0 if none (version 3 had its CRC
								 * here) */
	pg_crc32c	crc;			/* of everything above */
} StateFileData;

/* What reading a state file found. */
typedef enum StateFileRead
{
	STATE_READ_OK,
	STATE_READ_MISSING,
	STATE_READ_CORRUPT
} StateFileRead;

extern StateFileRead statefile_read_at(const char *path, StateFileData *d);
extern bool statefile_write_at(const char *path, StateFileData *d, int elevel);

#endif							/* UIDGEN_STATEFILEIO_H */
