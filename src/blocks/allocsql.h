/*-------------------------------------------------------------------------
 *
 * allocsql.h
 *	  The statements the block allocator runs on id_sequences.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_ALLOCSQL_H
#define UIDGEN_ALLOCSQL_H

#include "storage/itemptr.h"

#include "blocks/reservation.h"

extern void allocsql_serve_all(AllocWork *works, int nworks);
extern void allocsql_forget(void);
extern Oid	allocsql_table(void);
extern void allocsql_row_locker(Oid relid, ItemPointer tid, AllocResult *r);
extern void allocsql_step_sql(Oid relid, const char *schema, char **increment, char **room);

#endif							/* UIDGEN_ALLOCSQL_H */
