/*-------------------------------------------------------------------------
 *
 * statefile.h
 *	  The durable high-water mark and settings record ($PGDATA/uidgen.state).
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_STATEFILE_H
#define UIDGEN_STATEFILE_H

#include "port/pg_crc32c.h"

#include "clock/clock.h"
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
	pg_crc32c	crc;			/* of everything above */
} StateFileData;

/* Why generation is refused, as found in the state file at start-up. */
typedef enum UidgenStateProblem
{
	UIDGEN_STATE_OK,
	UIDGEN_STATE_SETTINGS_CHANGED,	/* snowflake_next() cannot run */
	/* from here on no generator can run (one test on the hot path) */
	UIDGEN_STATE_CORRUPT,
	UIDGEN_STATE_UPGRADE_UNKNOWN	/* pg_upgrade without a mark */
} UidgenStateProblem;

/* replicas/copies.c's part of the file (statefile_set_copies()). */
typedef void (*StateFileCopiesStart) (const StateFileData *loaded);
typedef void (*StateFileCopiesFill) (StateFileData *d);

/* What reading a state file found. */
typedef enum StateFileRead
{
	STATE_READ_OK,
	STATE_READ_MISSING,
	STATE_READ_CORRUPT
} StateFileRead;

extern StateFileRead statefile_read_at(const char *path, StateFileData *d);
extern bool statefile_write_at(const char *path, StateFileData *d, int elevel);
extern void statefile_register(void);
extern void statefile_set_copies(StateFileCopiesStart start, StateFileCopiesFill fill);
extern uint64 statefile_next_tick(UidgenClockKind kind, uint64 granule, bool precise);
extern void statefile_refresh(void);
extern void statefile_save(int elevel);
extern void statefile_fill(StateFileData *d, uint64 hwm);
extern void statefile_commit(StateFileData *d, uint64 floor);
extern void statefile_check_usable(void);
extern uint64 statefile_mark(void);
extern UidgenStateProblem statefile_problem(void);
extern const UidgenSettings *statefile_recorded(void);
extern uint64 statefile_saved_origin_mark(void);
extern void statefile_set_keeper(int procno);
extern int32 statefile_own_worker(void);
extern int32 statefile_file_worker(const StateFileData *d);
extern int32 statefile_adopted_worker(void);
extern void statefile_adopt_worker(int32 worker);

#endif							/* UIDGEN_STATEFILE_H */
