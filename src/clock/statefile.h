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

#include "clock/clock.h"
#include "clock/statefileio.h"

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
extern int32 statefile_refused_worker(void);
extern void statefile_refuse_worker(int32 worker);

#endif							/* UIDGEN_STATEFILE_H */
